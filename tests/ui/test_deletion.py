"""Deletion a person can trust: Delete acts on the focused list, the questions say what goes
and what stays with Cancel as the default, and item deletion can be undone for a few seconds
(hidden at once, out of searches, carried out when the time runs out or the window closes)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from PySide6.QtCore import QModelIndex, Qt, QTimer
from PySide6.QtWidgets import QAbstractItemView, QApplication, QLabel, QMessageBox, QPushButton
from pytestqt.modeltest import ModelTester
from pytestqt.qtbot import QtBot

from app.knowledge.jobs import runner
from app.knowledge.jobs.kinds import JobKind
from app.knowledge.types import Base, Item, ItemStatus, ItemType
from app.ui import i18n
from app.ui.context import UiContext
from app.ui.items import deferred_delete
from app.ui.items.item_model import Column
from app.ui.main_window import MainWindow
from app.ui.toast import Toast


@pytest.fixture(autouse=True)
def english(qapp: QApplication) -> Iterator[None]:
    """The English catalog: it holds the plural forms ("1 document", "3 documents")."""
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


@dataclass
class Library:
    base: Base
    folder: Item
    file: Item
    note: Item


def make_library(ui_ctx: UiContext, tmp_path: Path) -> Library:
    """A base with a folder of three documents, a file beside it and a note, all indexed."""
    service = ui_ctx.service
    base = service.create_base("Reading")
    docs = tmp_path / "papers"
    docs.mkdir()
    for name, text in (
        ("otters.txt", "Sea otters hold hands while they sleep."),
        ("kelp.txt", "Kelp forests shelter many fish."),
        ("whales.txt", "Humpback whales sing long songs."),
    ):
        (docs / name).write_text(text, encoding="utf-8")
    single = tmp_path / "herons.txt"
    single.write_text("Grey herons wait motionless in the shallows.", encoding="utf-8")
    service.add(base.id, [docs, single])
    service.add_note(base.id, "Shopping", "Buy lemons and flour.")
    service.run_pending_jobs()
    items = service.list_items(base.id)
    assert all(i.status is ItemStatus.COMPLETED for i in items), items
    roots = {i.type: i for i in items if i.parent_id is None}
    return Library(base, roots[ItemType.DIRECTORY], roots[ItemType.FILE], roots[ItemType.NOTE])


def open_base(qtbot: QtBot, window: MainWindow, base: Base, rows: int) -> None:
    window.bases.reload(select=base.id)
    qtbot.waitUntil(
        lambda: (
            window.current_base() is not None
            and len(window.items.model.items()) == rows
            and not window.items.feed.loading
        ),
        timeout=10_000,
    )


def select(window: MainWindow, *items: Item) -> None:
    view = window.items.view
    view.clearSelection()
    for item in items:
        index = window.items.proxy.mapFromSource(window.items.model.index_of(item.id))
        assert index.isValid(), item
        view.selectionModel().select(
            index,
            view.selectionModel().SelectionFlag.Select | view.selectionModel().SelectionFlag.Rows,
        )


def shown_ids(window: MainWindow) -> set[str]:
    """Item ids the tree shows (through the proxy), at every depth."""
    proxy = window.items.proxy
    found: set[str] = set()
    stack = [QModelIndex()]
    while stack:
        parent = stack.pop()
        for row in range(proxy.rowCount(parent)):
            index = proxy.index(row, Column.NAME, parent)
            item = window.items.model.item_at(proxy.mapToSource(index))
            assert item is not None
            found.add(item.id)
            stack.append(index)
    return found


def search_titles(qtbot: QtBot, window: MainWindow, text: str) -> list[str]:
    with qtbot.waitSignal(window.search.searchFinished, timeout=10_000) as found:
        window.search.search(text)
    return [r.title for r in found.args[0].results]


class BoxAnswerer:
    """Waits for the modal deletion box, notes what it says, then answers it: Enter (which
    presses the default button) or a click on Delete."""

    def __init__(self, qtbot: QtBot, *, press_enter: bool) -> None:
        self.qtbot = qtbot
        self.press_enter = press_enter
        self.text = ""
        self.detail = ""
        self.default_is_cancel = False
        self.seen = False
        self._timer = QTimer()
        self._timer.timeout.connect(self._look)
        self._timer.start(20)

    def _look(self) -> None:
        box = QApplication.activeModalWidget()
        if not isinstance(box, QMessageBox):
            return
        self._timer.stop()
        self.seen = True
        self.text = box.text()
        self.detail = box.informativeText()
        cancel = box.button(QMessageBox.StandardButton.Cancel)
        self.default_is_cancel = cancel is not None and box.defaultButton() is cancel
        if self.press_enter:
            self.qtbot.keyClick(box, Qt.Key.Key_Return)
        else:
            delete = box.findChild(QPushButton, "confirmDeleteButton")
            assert delete is not None
            delete.click()


def test_delete_key_acts_on_the_focused_list(
    qtbot: QtBot, window: MainWindow, ui_ctx: UiContext, tmp_path: Path
) -> None:
    library = make_library(ui_ctx, tmp_path)
    open_base(qtbot, window, library.base, rows=6)
    asked: list[str] = []
    window.bases.confirm = lambda title, question: asked.append("base") or False
    window.items.confirm = lambda title, question: asked.append("items") or False
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)
    select(window, library.file)
    assert window.items.delete_action.isEnabled()

    # An item is selected, but the base list has the focus: the base is what Delete means.
    window.bases.view.setFocus()
    qtbot.keyClick(window.bases.view, Qt.Key.Key_Delete)
    qtbot.waitUntil(lambda: asked == ["base"])

    window.items.view.setFocus()
    qtbot.keyClick(window.items.view, Qt.Key.Key_Delete)
    assert asked == ["base", "items"]


def test_a_click_on_the_selected_base_does_not_rename_it(
    qtbot: QtBot, window: MainWindow, ui_ctx: UiContext
) -> None:
    base = ui_ctx.service.create_base("Stable name")
    window.bases.reload(select=base.id)
    qtbot.waitUntil(lambda: window.current_base() is not None)
    view = window.bases.view
    center = view.visualRect(window.bases.model.index(0)).center()
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=center)
    # Qt starts the rename of a selected-and-clicked row after the double-click interval.
    qtbot.wait(QApplication.doubleClickInterval() + 300)
    assert view.state() is not QAbstractItemView.State.EditingState

    view.setFocus()
    qtbot.keyClick(view, Qt.Key.Key_F2)
    qtbot.waitUntil(lambda: view.state() is QAbstractItemView.State.EditingState)
    qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Escape)
    qtbot.waitUntil(lambda: view.state() is not QAbstractItemView.State.EditingState)

    qtbot.mouseDClick(view.viewport(), Qt.MouseButton.LeftButton, pos=center)
    qtbot.waitUntil(lambda: view.state() is QAbstractItemView.State.EditingState)


def test_the_item_question_says_what_goes_and_what_stays(
    qtbot: QtBot, window: MainWindow, ui_ctx: UiContext, tmp_path: Path
) -> None:
    library = make_library(ui_ctx, tmp_path)
    open_base(qtbot, window, library.base, rows=6)
    asked: list[str] = []
    window.items.confirm = lambda title, question: asked.append(question) or False

    select(window, library.folder)
    window.items.delete_action.trigger()
    assert "“papers”" in asked[-1] and "“Reading”" in asked[-1]
    assert "3 documents" in asked[-1]
    assert "original files on your disk are kept" in asked[-1]
    assert "Notes" not in asked[-1]

    select(window, library.folder, library.file, library.note)
    window.items.delete_action.trigger()
    assert "Delete 3 items from “Reading”?" in asked[-1]
    assert "5 documents" in asked[-1]  # three in the folder, the file, the note
    assert "Notes exist only in Trove" in asked[-1]

    select(window, library.note)
    window.items.delete_action.trigger()
    assert "“Shopping”" in asked[-1] and "original files" not in asked[-1]
    # Nothing was deleted: every answer was no.
    assert not window.items.deletions.pending
    assert len(shown_ids(window)) == 6


def test_the_item_question_defaults_to_cancel(
    qtbot: QtBot, window: MainWindow, ui_ctx: UiContext, tmp_path: Path
) -> None:
    library = make_library(ui_ctx, tmp_path)
    open_base(qtbot, window, library.base, rows=6)
    select(window, library.folder)

    enter = BoxAnswerer(qtbot, press_enter=True)
    window.items.delete_action.trigger()
    assert enter.seen and enter.default_is_cancel
    assert "“papers”" in enter.text and "3 documents" in enter.detail
    assert not window.items.deletions.pending  # Enter kept everything
    assert len(shown_ids(window)) == 6

    select(window, library.folder)
    delete = BoxAnswerer(qtbot, press_enter=False)
    window.items.delete_action.trigger()
    assert delete.seen and window.items.deletions.pending


def test_the_base_question_says_what_goes_and_defaults_to_cancel(
    qtbot: QtBot, window: MainWindow, ui_ctx: UiContext, tmp_path: Path
) -> None:
    library = make_library(ui_ctx, tmp_path)
    open_base(qtbot, window, library.base, rows=6)

    enter = BoxAnswerer(qtbot, press_enter=True)
    window.bases.delete_action.trigger()
    qtbot.waitUntil(lambda: enter.seen, timeout=10_000)
    assert enter.default_is_cancel
    assert "“Reading”" in enter.text
    assert "5 documents" in enter.detail
    assert "1 note" in enter.detail
    assert "original files on your disk are kept" in enter.detail
    qtbot.waitUntil(lambda: ui_ctx.tasks.pending == 0)
    assert [b.name for b in ui_ctx.service.list_bases()] == ["Reading"]

    delete = BoxAnswerer(qtbot, press_enter=False)
    window.bases.delete_action.trigger()
    qtbot.waitUntil(lambda: ui_ctx.service.list_bases() == [], timeout=10_000)
    assert delete.seen


def undo_button(window: MainWindow) -> QPushButton | None:
    for toast in window.findChildren(Toast):
        if toast.isVisible() and toast.notice.on_action is not None:
            return toast.findChild(type(window.toasts.more), "toastAction")  # type: ignore[return-value]
    return None


def toast_titles(window: MainWindow) -> list[str]:
    titles = []
    for toast in window.toasts.visible:
        label = toast.findChild(QLabel, "toastTitle")
        assert label is not None
        titles.append(label.text())
    return titles


def test_undo_brings_the_items_back_untouched(
    qtbot: QtBot,
    window: MainWindow,
    ui_ctx: UiContext,
    tmp_path: Path,
    qtmodeltester: ModelTester,
) -> None:
    library = make_library(ui_ctx, tmp_path)
    open_base(qtbot, window, library.base, rows=6)
    before = {i.id: i for i in ui_ctx.service.list_items(library.base.id)}
    assert search_titles(qtbot, window, "otters") == ["otters"]

    window.items.confirm = lambda title, question: True
    select(window, library.folder, library.file)
    window.items.delete_action.trigger()

    # Gone from the tree at once (the folder with its documents), still in the engine.
    assert shown_ids(window) == {library.note.id}
    qtmodeltester.check(window.items.proxy)
    assert any("Deleted 2 items" in t for t in toast_titles(window))
    assert search_titles(qtbot, window, "otters") == []  # inside the pending folder
    assert search_titles(qtbot, window, "herons") == []
    assert {i.id: i for i in ui_ctx.service.list_items(library.base.id)} == before

    button = undo_button(window)
    assert button is not None and button.text() == "Undo"
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    assert len(shown_ids(window)) == 6
    assert {i.id for i in window.items.selected_items()} == {library.folder.id, library.file.id}
    assert not window.items.deletions.pending
    qtbot.waitUntil(lambda: undo_button(window) is None)
    assert search_titles(qtbot, window, "otters") == ["otters"]
    assert {i.id: i for i in ui_ctx.service.list_items(library.base.id)} == before


def test_ctrl_z_undoes_the_last_deletion(
    qtbot: QtBot, window: MainWindow, ui_ctx: UiContext, tmp_path: Path
) -> None:
    library = make_library(ui_ctx, tmp_path)
    open_base(qtbot, window, library.base, rows=6)
    window.items.confirm = lambda title, question: True
    assert not window.items.undo_delete_action.isEnabled()
    select(window, library.note)
    window.items.delete_action.trigger()
    assert library.note.id not in shown_ids(window)
    assert window.items.undo_delete_action.isEnabled()
    assert any("Deleted “Shopping”" in t for t in toast_titles(window))
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)
    window.items.view.setFocus()
    qtbot.keyClick(window.items.view, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert library.note.id in shown_ids(window)
    assert not window.items.undo_delete_action.isEnabled()


def test_when_the_time_runs_out_the_engine_deletes(
    qtbot: QtBot,
    window: MainWindow,
    ui_ctx: UiContext,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(deferred_delete, "UNDO_MS", 300)
    library = make_library(ui_ctx, tmp_path)
    open_base(qtbot, window, library.base, rows=6)
    reappeared: list[int] = []
    window.items.proxy.rowsInserted.connect(lambda *_args: reappeared.append(1))
    window.items.confirm = lambda title, question: True
    select(window, library.folder)
    window.items.delete_action.trigger()
    assert shown_ids(window) == {library.file.id, library.note.id}

    remaining = {library.file.id, library.note.id}
    qtbot.waitUntil(
        lambda: {i.id for i in ui_ctx.service.list_items(library.base.id)} == remaining,
        timeout=15_000,
    )
    qtbot.waitUntil(lambda: {i.id for i in window.items.model.items()} == remaining)
    assert undo_button(window) is None  # the offer ended with the time
    assert reappeared == []  # never back in the tree, not even as "deleting"
    assert shown_ids(window) == remaining


def test_closing_the_window_carries_out_a_pending_deletion(
    qtbot: QtBot, window: MainWindow, ui_ctx: UiContext, tmp_path: Path
) -> None:
    library = make_library(ui_ctx, tmp_path)
    open_base(qtbot, window, library.base, rows=6)
    window.items.confirm = lambda title, question: True
    select(window, library.file)
    window.items.delete_action.trigger()
    assert window.items.deletions.pending
    assert ui_ctx.service.get_item(library.file.id).status is ItemStatus.COMPLETED

    window.close()
    qtbot.waitUntil(lambda: ui_ctx.tasks.pending == 0)
    left = {i.id: i.status for i in ui_ctx.service.list_items(library.base.id)}
    # Marked for deletion in the engine (the executor may already have removed it).
    assert left.get(library.file.id, ItemStatus.DELETING) is ItemStatus.DELETING
    assert not window.items.deletions.pending


def test_deleting_the_base_drops_its_pending_deletions(
    qtbot: QtBot, window: MainWindow, ui_ctx: UiContext, tmp_path: Path
) -> None:
    library = make_library(ui_ctx, tmp_path)
    open_base(qtbot, window, library.base, rows=6)
    window.items.confirm = lambda title, question: True
    window.bases.confirm = lambda title, question: True
    select(window, library.file)
    window.items.delete_action.trigger()
    window.bases.delete_action.trigger()
    qtbot.waitUntil(lambda: ui_ctx.service.list_bases() == [], timeout=10_000)
    qtbot.waitUntil(lambda: not window.items.deletions.pending)
    window.close()
    qtbot.waitUntil(lambda: ui_ctx.tasks.pending == 0)
    assert not [n for n in ui_ctx.notifier.history if n.level == "error"]


def test_a_failure_of_an_item_being_deleted_is_no_news(
    qtbot: QtBot,
    window: MainWindow,
    ui_ctx: UiContext,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    base = ui_ctx.service.create_base("Busy")
    window.bases.reload(select=base.id)
    qtbot.waitUntil(lambda: window.current_base() is not None)
    gate = threading.Event()
    real_index = runner.HANDLERS[JobKind.INDEX_DOCUMENTS]

    def gated_index(ctx: object, job: object) -> None:
        gate.wait(10)
        real_index(ctx, job)  # type: ignore[arg-type]

    monkeypatch.setitem(runner.HANDLERS, JobKind.INDEX_DOCUMENTS, gated_index)
    blank = tmp_path / "blank.txt"
    blank.write_text("   \n", encoding="utf-8")  # fails: no text to index
    window.items.add_paths([str(blank)])
    qtbot.waitUntil(lambda: len(window.items.model.items()) == 1, timeout=10_000)
    item = window.items.model.items()[0]
    window.items.confirm = lambda title, question: True
    select(window, item)
    window.items.delete_action.trigger()
    gate.set()
    qtbot.waitUntil(
        lambda: window.items.model.items()[0].status is ItemStatus.FAILED, timeout=10_000
    )
    assert not [n for n in ui_ctx.notifier.history if n.level == "error"]
    assert window.items.deletions.pending
