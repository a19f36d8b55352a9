"""Portable bases in the window: items dragged onto another base are copied (Shift: moved)
with their vectors; Copy to… from the item menu; Export… and Import knowledge base… with
progress, and the translated refusal of a file from a newer Trove."""

from __future__ import annotations

import json
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QDragEnterEvent, QDragMoveEvent, QDropEvent
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from app.knowledge.types import Base, ItemStatus
from app.ui import i18n
from app.ui.context import UiContext
from app.ui.items.item_drag import dragged_items
from app.ui.main_window import MainWindow
from tests.conftest import write_files
from tests.fakes import FakeModels
from tests.unit.make_files import make_docx

ACTIONS = Qt.DropAction.CopyAction | Qt.DropAction.MoveAction


@pytest.fixture(autouse=True)
def english(qapp: QApplication) -> Iterator[None]:
    translators = i18n.install_translators(qapp, "en")
    yield
    i18n.remove_translators(qapp, translators)


@pytest.fixture
def window(qtbot: QtBot, ui_ctx: UiContext) -> Iterator[MainWindow]:
    win = MainWindow(ui_ctx)
    win.confirm_quit = lambda _running: True
    qtbot.addWidget(win)
    win.show()
    win.start()
    qtbot.waitUntil(lambda: win.bases.loaded)
    yield win
    win.close()


def _two_bases(ui_ctx: UiContext, tmp_path: Path) -> tuple[Base, Base, str]:
    svc = ui_ctx.service
    folder = write_files(
        tmp_path / "shelf",
        {
            "otters.md": "# Otters\n\nSea otters float on kelp and crack shells on stones.",
            "kelp.md": "# Kelp\n\nKelp forests grow fast in cold water.",
        },
    )
    source = svc.create_base("Ocean", embedding_model="fake:bow")
    svc.add(source.id, [folder])
    svc.run_pending_jobs(source.id)
    target = svc.create_base("Archive", embedding_model="fake:bow")
    otters = next(i for i in svc.list_items(source.id) if i.title == "Otters")
    return source, target, otters.id


def _show(qtbot: QtBot, window: MainWindow, base_id: str, rows: int) -> None:
    window.bases.reload(select=base_id)
    qtbot.waitUntil(lambda: len(window.items.model.items()) == rows, timeout=10_000)


def _select(window: MainWindow, item_id: str) -> None:
    index = window.items.proxy.mapFromSource(window.items.model.index_of(item_id))
    window.items.view.setCurrentIndex(index)


def _drop_on_base(window: MainWindow, base_id: str, modifiers: Qt.KeyboardModifier) -> bool:
    """Drop what the item tree would drag (its selection) on a base's row."""
    mime = window.items.view.drag_payload()
    assert mime is not None
    view = window.bases.view
    pos = view.visualRect(window.bases.model.index(window.bases.model.row_of(base_id))).center()
    args = (ACTIONS, mime, Qt.MouseButton.LeftButton, modifiers)
    enter = QDragEnterEvent(pos, *args)
    QApplication.sendEvent(view.viewport(), enter)
    move = QDragMoveEvent(pos, *args)
    QApplication.sendEvent(view.viewport(), move)
    drop = QDropEvent(QPointF(pos), *args)
    QApplication.sendEvent(view.viewport(), drop)
    # Accepted as a copy: the drag source never removes anything itself.
    assert drop.dropAction() == Qt.DropAction.CopyAction or not drop.isAccepted()
    return move.isAccepted() and drop.isAccepted()


def _embed_calls(ui_ctx: UiContext) -> int:
    models = ui_ctx.service.parts.models
    assert isinstance(models, FakeModels)
    return len(models.embedder("fake:bow").calls)


def test_dragging_items_onto_another_base_copies_them_and_shift_moves_them(
    qtbot: QtBot, window: MainWindow, ui_ctx: UiContext, tmp_path: Path
) -> None:
    source, target, otters = _two_bases(ui_ctx, tmp_path)
    _show(qtbot, window, source.id, 3)
    _select(window, otters)
    payload = window.items.view.drag_payload()
    assert payload is not None
    carried = dragged_items(payload)
    assert carried is not None and carried.item_ids == [otters]
    assert not _drop_on_base(window, source.id, Qt.KeyboardModifier.NoModifier), "own base"
    calls = _embed_calls(ui_ctx)

    with qtbot.waitSignal(window.bases.portable.transferred, timeout=10_000):
        assert _drop_on_base(window, target.id, Qt.KeyboardModifier.NoModifier)
    svc = ui_ctx.service
    [copy] = svc.list_items(target.id)
    assert copy.status is ItemStatus.COMPLETED and copy.title == "Otters"
    assert _embed_calls(ui_ctx) == calls, "same model: vectors copied, none computed"
    assert [r.title for r in svc.search(target.id, "otters").results] == ["Otters"]
    calls = _embed_calls(ui_ctx)  # the search embedded its query
    assert otters in {i.id for i in svc.list_items(source.id)}, "a plain drop copies"

    with qtbot.waitSignal(window.bases.portable.transferred, timeout=10_000):
        assert _drop_on_base(window, target.id, Qt.KeyboardModifier.ShiftModifier)
    qtbot.waitUntil(lambda: otters not in {i.id for i in svc.list_items(source.id)}, timeout=10_000)
    assert len(svc.list_items(target.id)) == 2
    assert _embed_calls(ui_ctx) == calls
    assert "Moved 1 item to “Archive”" in [n.title for n in ui_ctx.notifier.history]


def test_copy_to_from_the_item_menu(
    qtbot: QtBot, window: MainWindow, ui_ctx: UiContext, tmp_path: Path
) -> None:
    source, target, otters = _two_bases(ui_ctx, tmp_path)
    _show(qtbot, window, source.id, 3)
    _select(window, otters)
    assert window.items.copy_to_action.isEnabled()
    offered: list[list[str]] = []

    def choose(bases: list[Base], move: bool) -> Base | None:
        offered.append([b.name for b in bases])
        assert move is False
        return next(b for b in bases if b.id == target.id)

    window.bases.portable.choose_target = choose
    with qtbot.waitSignal(window.bases.portable.transferred, timeout=10_000):
        window.items.copy_to_action.trigger()
    assert offered == [["Archive"]], "the items' own base is not offered"
    assert [i.title for i in ui_ctx.service.list_items(target.id)] == ["Otters"]


def test_export_and_import_from_the_window(
    qtbot: QtBot, window: MainWindow, ui_ctx: UiContext, tmp_path: Path
) -> None:
    source, _target, _otters = _two_bases(ui_ctx, tmp_path)
    _show(qtbot, window, source.id, 3)
    flow = window.bases.portable
    out = tmp_path / "ocean"
    flow.choose_export_path = lambda base: str(out)
    flow.choose_strip_sources = lambda base: False
    with qtbot.waitSignal(flow.exported, timeout=20_000) as exported:
        window.bases.export_action.trigger()
    saved = Path(exported.args[0].path)
    assert saved == tmp_path / "ocean.trovebase" and saved.is_file()

    flow.choose_import_path = lambda: str(saved)
    with qtbot.waitSignal(flow.baseImported, timeout=20_000) as imported:
        window.bases.import_action.trigger()
    report = imported.args[0]
    assert report.base.name == "Ocean (2)" and report.model_available
    qtbot.waitUntil(
        lambda: window.current_base() is not None and window.current_base().id == report.base.id,
        timeout=10_000,
    )
    assert "Imported “Ocean (2)”" in [n.title for n in ui_ctx.notifier.history]

    # A file from a newer Trove: refused, said in words, nothing added.
    newer = tmp_path / "newer.trovebase"
    with zipfile.ZipFile(saved) as zin, zipfile.ZipFile(newer, "w") as zout:
        for info in zin.infolist():
            data = zin.read(info)
            if info.filename == "manifest.json":
                manifest = json.loads(data)
                manifest["formatVersion"] = 42
                data = json.dumps(manifest).encode()
            zout.writestr(info, data)
    flow.choose_import_path = lambda: str(newer)
    before = len(ui_ctx.service.list_bases())
    with qtbot.waitSignal(flow.finished, timeout=20_000):
        window.bases.import_action.trigger()
    assert len(ui_ctx.service.list_bases()) == before
    notice = ui_ctx.notifier.history[-1]
    assert notice.title == "The export file needs a newer Trove"
    assert "update Trove" in notice.text


def test_a_cancelled_export_leaves_no_file(
    qtbot: QtBot,
    window: MainWindow,
    ui_ctx: UiContext,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    source, _target, _otters = _two_bases(ui_ctx, tmp_path)
    _show(qtbot, window, source.id, 3)
    flow = window.bases.portable
    out = tmp_path / "gone.trovebase"
    flow.choose_export_path = lambda base: str(out)
    flow.choose_strip_sources = lambda base: False
    real_export = ui_ctx.service.export_base

    def export_after_cancel(*args: object, **kwargs: object) -> object:
        # The export starts only once Cancel was pressed, so the test never races it.
        run = flow.running
        assert run is not None and run.cancel.wait(10)
        return real_export(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(ui_ctx.service, "export_base", export_after_cancel)
    with qtbot.waitSignal(flow.finished, timeout=20_000):
        window.bases.export_action.trigger()
        # The export starts once the base was checked for in-place files (off the GUI thread).
        qtbot.waitUntil(lambda: flow.running is not None, timeout=10_000)
        assert flow.running is not None
        flow.running.dialog.canceled.emit()  # what its Cancel button sends
    assert not out.exists() and not out.with_name(out.name + ".part").exists()
    assert ui_ctx.notifier.history[-1].title == "Cancelled"


def test_export_asks_about_paths_and_can_leave_them_out(
    qtbot: QtBot, window: MainWindow, ui_ctx: UiContext, tmp_path: Path
) -> None:
    source, _target, _otters = _two_bases(ui_ctx, tmp_path)
    _show(qtbot, window, source.id, 3)
    flow = window.bases.portable
    question = flow.sources_question(source)
    assert "Ocean" in question.text() and "/home/you" in question.informativeText()
    assert question.checkBox() is not None and not question.checkBox().isChecked()
    question.deleteLater()

    out = tmp_path / "private.trovebase"
    asked: list[str] = []
    flow.choose_export_path = lambda base: str(out)
    flow.choose_strip_sources = lambda base: asked.append(base.id) or True
    with qtbot.waitSignal(flow.exported, timeout=20_000):
        window.bases.export_action.trigger()
    assert asked == [source.id]
    shelf = str(tmp_path / "shelf").encode()
    assert out.is_file() and shelf not in out.read_bytes()

    # Cancelled at the question: nothing is written.
    skipped = tmp_path / "skipped.trovebase"
    flow.choose_export_path = lambda base: str(skipped)
    flow.choose_strip_sources = lambda base: None
    window.bases.export_action.trigger()
    assert flow.running is None and not skipped.exists()


def test_export_of_a_linked_folder_asks_about_its_originals(
    qtbot: QtBot, window: MainWindow, ui_ctx: UiContext, tmp_path: Path
) -> None:
    svc = ui_ctx.service
    source, _target, _otters = _two_bases(ui_ctx, tmp_path)
    library = tmp_path / "library"
    library.mkdir()
    make_docx(library / "seals.docx", ["Harbour seals haul out on sandbanks."])
    linked = svc.create_base("Linked", embedding_model="fake:bow")
    svc.add_linked_folders(linked.id, [library])
    svc.run_pending_jobs(linked.id)
    flow = window.bases.portable
    question = flow.originals_question(linked)
    assert "Linked" in question.text() and "not copies" in question.informativeText()
    assert question.defaultButton().objectName() == "textOnly"
    question.deleteLater()

    asked: list[str] = []
    answers: list[bool | None] = [True, None]
    flow.choose_strip_sources = lambda base: False

    def answer(base: Base) -> bool | None:
        asked.append(base.name)
        return answers.pop(0)

    flow.choose_with_originals = answer
    out = tmp_path / "with-originals.trovebase"
    flow.choose_export_path = lambda base: str(out)
    _show(qtbot, window, linked.id, 2)
    with qtbot.waitSignal(flow.exported, timeout=20_000) as exported:
        window.bases.export_action.trigger()
    assert asked == ["Linked"] and exported.args[0].originals_gone == []
    with zipfile.ZipFile(out) as zf:
        assert any(n.endswith("seals.docx") for n in zf.namelist()), zf.namelist()

    # Cancelled at the question: nothing is written.
    skipped = tmp_path / "skipped.trovebase"
    flow.choose_export_path = lambda base: str(skipped)
    window.bases.export_action.trigger()
    qtbot.waitUntil(lambda: len(asked) == 2, timeout=10_000)
    assert flow.running is None and not skipped.exists()

    # A base without linked folders indexed in place is not asked.
    _show(qtbot, window, source.id, 3)
    plain = tmp_path / "plain.trovebase"
    flow.choose_export_path = lambda base: str(plain)
    with qtbot.waitSignal(flow.exported, timeout=20_000):
        window.bases.export_action.trigger()
    assert asked == ["Linked", "Linked"] and plain.is_file()


def test_an_imported_document_opens_its_copy_not_the_path_it_names(
    qtbot: QtBot, window: MainWindow, ui_ctx: UiContext, tmp_path: Path
) -> None:
    from app.ui.search.open_original import original_url
    from tests.portable import hostile

    svc = ui_ctx.service
    source, _target, _otters = _two_bases(ui_ctx, tmp_path)
    secret = tmp_path / "secret.md"
    secret.write_text("not for the archive's author to open")
    exported = tmp_path / "ocean.trovebase"
    svc.export_base(source.id, exported)
    pointed = hostile.with_items(
        exported,
        tmp_path / "pointed.trovebase",
        lambda rows: [dict(r, source=str(secret)) if r["type"] == "file" else r for r in rows],
    )
    base = svc.import_base(pointed).base
    hit = svc.search(base.id, "otters kelp shells").results[0]
    opened = original_url(svc, base.id, hit)
    assert opened.isLocalFile() and opened.toLocalFile() != str(secret)
    assert Path(opened.toLocalFile()).is_relative_to(svc.layout.raw_dir(base.id))
    # Its own original, for a document added here, still opens as before.
    mine = svc.search(source.id, "otters kelp shells").results[0]
    assert original_url(svc, source.id, mine).toLocalFile() == str(tmp_path / "shelf" / "otters.md")
