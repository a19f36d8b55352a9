"""The main window driven through its real widgets: create a base, drop files, watch the
badges, search, delete."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QMimeData, QPoint, QPointF, Qt, QUrl
from PySide6.QtGui import QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import QApplication, QLineEdit, QWidget
from pytestqt.modeltest import ModelTester
from pytestqt.qtbot import QtBot

from app.knowledge.jobs import runner
from app.knowledge.jobs.kinds import JobKind
from app.knowledge.types import ItemStatus, OnConflict
from app.ui.context import UiContext
from app.ui.items.item_model import Column, Role
from app.ui.main_window import PAGE_BASE, PAGE_EMPTY, MainWindow
from app.ui.settings.new_base_dialog import NewBaseDialog
from tests.fakes import FakeModels


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


def drop_urls(widget: QWidget, urls: list[QUrl]) -> tuple[QDropEvent, QMimeData]:
    """A drag entering `widget` and dropping `urls` on it, as the window system sends it.
    The mime data is returned too: the event does not keep it alive."""
    mime = QMimeData()
    mime.setUrls(urls)
    args = (
        Qt.DropAction.CopyAction,
        mime,
        Qt.MouseButton.LeftButton,
        Qt.KeyboardModifier.NoModifier,
    )
    enter = QDragEnterEvent(QPoint(20, 20), *args)
    QApplication.sendEvent(widget, enter)
    assert enter.isAccepted()
    drop = QDropEvent(QPointF(20, 20), *args)
    QApplication.sendEvent(widget, drop)
    return drop, mime


def create_base_through_dialog(qtbot: QtBot, window: MainWindow, name: str) -> None:
    dialog = window.open_new_base_dialog()
    assert isinstance(dialog, NewBaseDialog)
    qtbot.waitUntil(lambda: dialog.form.embedding_picker.count() > 0)
    name_edit = dialog.findChild(QLineEdit, "baseName")
    assert name_edit is not None
    qtbot.keyClicks(name_edit, name)
    dialog.form.embedding_picker.set_current_model("fake:bow")
    with qtbot.waitSignal(dialog.baseCreated, timeout=10_000):
        qtbot.mouseClick(dialog.create_button, Qt.MouseButton.LeftButton)


def statuses(window: MainWindow) -> dict[str, ItemStatus]:
    model = window.items.model
    return {Path(item.source).name: item.status for item in model.items()}


def test_first_run_shows_the_empty_state(window: MainWindow) -> None:
    assert window.pages.currentIndex() == PAGE_EMPTY
    assert window.empty.isVisible()


def test_create_drop_search_delete(
    qtbot: QtBot,
    window: MainWindow,
    ui_ctx: UiContext,
    tmp_path: Path,
    qtmodeltester: ModelTester,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    create_base_through_dialog(qtbot, window, "Papers")
    qtbot.waitUntil(
        lambda: window.current_base() is not None and window.current_base().name == "Papers"
    )  # type: ignore[union-attr]
    assert window.pages.currentIndex() == PAGE_BASE
    assert "Papers" in window.windowTitle()

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "otters.md").write_text("# Otters\n\nSea otters hold hands while they sleep.", "utf-8")
    (docs / "kelp.txt").write_text("Kelp forests shelter many fish and otters.", "utf-8")
    event, _mime = drop_urls(
        window.items.view.viewport(),
        [QUrl.fromLocalFile(str(docs / "otters.md")), QUrl.fromLocalFile(str(docs / "kelp.txt"))],
    )
    assert event.isAccepted()
    qtbot.waitUntil(
        lambda: (
            statuses(window)
            == {"otters.md": ItemStatus.COMPLETED, "kelp.txt": ItemStatus.COMPLETED}
        ),
        timeout=20_000,
    )
    qtmodeltester.check(window.items.model)
    qtmodeltester.check(window.bases.model)
    badge = window.items.model.index_of(window.items.model.items()[0].id, Column.STATUS)
    assert badge.data(Role.STATUS) == ItemStatus.COMPLETED
    assert "2 completed" in window.counts_label.text()

    # Ctrl+F focuses the query box; Enter searches.
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)
    qtbot.keyClick(window, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
    query = window.search.findChild(QLineEdit, "searchQuery")
    assert query is not None and query.hasFocus()
    with qtbot.waitSignal(window.search.searchFinished, timeout=10_000) as found:
        qtbot.keyClicks(query, "sea otters sleep")
        qtbot.keyClick(query, Qt.Key.Key_Return)
    assert Path(found.args[0].results[0].source).name == "otters.md"
    assert window.search.model().rowCount() >= 1

    # Dropping the same file again asks once; "skip" keeps one copy.
    asked: list[int] = []

    def answer(skipped: list[tuple[str, str]]) -> OnConflict:
        asked.append(len(skipped))
        return OnConflict.SKIP

    window.items.adder.ask_conflict = answer
    with qtbot.waitSignal(window.items.adder.finished):
        drop_urls(window.items.view.viewport(), [QUrl.fromLocalFile(str(docs / "kelp.txt"))])
    assert asked == [1]
    assert len(window.items.model.items()) == 2

    # Delete both through the running executor: the rows show deleting, then go. The delete
    # jobs wait on a gate until the deleting badges were seen, so the check cannot race.
    gate = threading.Event()
    real_delete = runner.HANDLERS[JobKind.DELETE_SUBTREE]

    def gated_delete(ctx: object, job: object) -> None:
        gate.wait(10)
        real_delete(ctx, job)  # type: ignore[arg-type]

    monkeypatch.setitem(runner.HANDLERS, JobKind.DELETE_SUBTREE, gated_delete)
    window.items.view.selectAll()
    window.items.confirm = lambda title, question: True
    window.items.delete_action.trigger()
    window.items.flush_deletions()  # the engine's part, without waiting out the Undo time
    qtbot.waitUntil(lambda: set(statuses(window).values()) == {ItemStatus.DELETING}, timeout=10_000)
    badge = window.items.model.index_of(window.items.model.items()[0].id, Column.STATUS)
    assert badge.data(Qt.ItemDataRole.DisplayRole) == "Deleting"
    gate.set()
    qtbot.waitUntil(lambda: window.items.model.rowCount() == 0, timeout=10_000)
    assert ui_ctx.service.list_items(window.current_base().id) == []  # type: ignore[union-attr]


def test_threshold_follows_the_rerank_model(
    qtbot: QtBot, window: MainWindow, ui_ctx: UiContext
) -> None:
    base = ui_ctx.service.create_base("Reranked", embedding_model="fake:bow")
    window.bases.reload(select=base.id)
    qtbot.waitUntil(lambda: window.rag.base is not None)
    window.tabs.setCurrentIndex(1)
    threshold = window.rag.findChild(QWidget, "threshold")
    assert threshold is not None
    assert threshold.isHidden()
    picker = window.rag.form.rerank_picker
    picker.set_current_model("fake:rerank")
    qtbot.waitUntil(lambda: not threshold.isHidden())
    picker.set_current_model(None)
    qtbot.waitUntil(threshold.isHidden)


def test_failed_base_offers_restore(qtbot: QtBot, window: MainWindow, ui_ctx: UiContext) -> None:
    from app.knowledge.types import BaseStatus

    base = ui_ctx.service.create_base("Broken")
    ui_ctx.service.catalog.set_base_status(base.id, BaseStatus.FAILED, "index lost")
    window.bases.reload(select=base.id)
    banner = window.items.findChild(QWidget, "failedBaseBanner")
    assert banner is not None
    qtbot.waitUntil(banner.isVisible)
    assert not window.items.add_files_action.isEnabled()
    with qtbot.waitSignal(window.items.baseRestored, timeout=10_000):
        qtbot.mouseClick(window.items._restore_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not banner.isVisible(), timeout=10_000)
    assert ui_ctx.service.get_base(base.id).status is BaseStatus.COMPLETED


def test_base_rename_and_delete(qtbot: QtBot, window: MainWindow, ui_ctx: UiContext) -> None:
    base = ui_ctx.service.create_base("Old name")
    window.bases.reload(select=base.id)
    qtbot.waitUntil(lambda: window.current_base() is not None)
    index = window.bases.model.index(window.bases.model.row_of(base.id))
    window.bases.model.setData(index, "New name")
    qtbot.waitUntil(lambda: window.current_base().name == "New name")  # type: ignore[union-attr]
    window.bases.confirm = lambda title, question: True
    window.bases.delete_action.trigger()
    qtbot.waitUntil(lambda: window.bases.model.rowCount() == 0)
    assert ui_ctx.service.list_bases() == []
    assert window.pages.currentIndex() == PAGE_EMPTY


def test_layout_is_remembered(qtbot: QtBot, ui_ctx: UiContext) -> None:
    first = MainWindow(ui_ctx)
    qtbot.addWidget(first)
    first.resize(790, 560)
    first.show()
    first.splitter.setSizes([210, 570])
    first.close()
    second = MainWindow(ui_ctx)
    qtbot.addWidget(second)
    second.show()
    assert second.size().width() == 790
    assert second.splitter.sizes()[0] == 210


def test_keyboard_habits(
    qtbot: QtBot, window: MainWindow, ui_ctx: UiContext, tmp_path: Path
) -> None:
    base = ui_ctx.service.create_base("Keys")
    doc = tmp_path / "a.txt"
    doc.write_text("alpha beta gamma", encoding="utf-8")
    ui_ctx.service.add(base.id, [doc])
    ui_ctx.service.run_pending_jobs()
    window.bases.reload(select=base.id)
    qtbot.waitUntil(lambda: window.items.model.rowCount() == 1)
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)
    window.items.view.setFocus()
    window.items.view.selectAll()
    before = window.items.model.items()[0].updated_at

    # F5 reindexes the selection.
    qtbot.keyClick(window.items.view, Qt.Key.Key_F5)
    qtbot.waitUntil(
        lambda: (
            window.items.model.items()[0].updated_at > before
            and window.items.model.items()[0].status is ItemStatus.COMPLETED
        ),
        timeout=10_000,
    )

    # Delete asks first; "no" keeps the item.
    asked: list[str] = []

    def refuse(title: str, question: str) -> bool:
        asked.append(question)
        return False

    window.items.confirm = refuse
    window.items.view.selectAll()
    qtbot.keyClick(window.items.view, Qt.Key.Key_Delete)
    assert len(asked) == 1 and "“a”" in asked[0]
    assert window.items.model.rowCount() == 1

    # Ctrl+N opens the new-base dialog.
    qtbot.keyClick(window, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: window.findChild(NewBaseDialog, "newBaseDialog") is not None)


def test_agent_writes_toggle(qtbot: QtBot, window: MainWindow, ui_ctx: UiContext) -> None:
    base = ui_ctx.service.create_base("Agents")
    window.bases.reload(select=base.id)
    qtbot.waitUntil(lambda: window.current_base() is not None)
    action = window.bases.agents_action
    assert action.isEnabled() and not action.isChecked()
    action.trigger()
    qtbot.waitUntil(lambda: ui_ctx.service.get_base(base.id).agent_writes)
    qtbot.waitUntil(lambda: window.current_base().agent_writes)  # type: ignore[union-attr]
    assert action.isChecked()


def test_pausing_and_retrying_the_vector_stage_from_the_base_menu(
    qtbot: QtBot, window: MainWindow, ui_ctx: UiContext
) -> None:
    service = ui_ctx.service
    plain = service.create_base("Words only")
    base = service.create_base("Vectors", embedding_model="fake:bow")
    window.bases.reload(select=plain.id)
    qtbot.waitUntil(lambda: window.current_base() is not None)
    pause = window.bases.pause_vectors_action
    assert not pause.isEnabled()  # a base without an embedding model has no vectors
    window.bases.select(base.id)
    qtbot.waitUntil(lambda: pause.isEnabled())
    assert not pause.isChecked() and not window.bases.retry_vectors_action.isVisible()
    pause.trigger()
    qtbot.waitUntil(lambda: service.vectors_paused(base.id))
    window.bases.reload(select=base.id)  # a read of the state races the next toggle
    assert pause.isChecked()
    pause.trigger()
    qtbot.waitUntil(lambda: not service.vectors_paused(base.id))
    qtbot.waitUntil(lambda: not pause.isChecked())
    # Stopped by its provider: the menu offers to start again, naming why.
    service.catalog.set_setting(
        f"vectors.stopped:{base.id}",
        '{"code": "PROVIDER_AUTH_FAILED", "message": "the key was rejected"}',
    )
    window.bases.select(plain.id)
    window.bases.select(base.id)
    retry = window.bases.retry_vectors_action
    qtbot.waitUntil(lambda: retry.isVisible())
    assert "stopped" in retry.toolTip()
    retry.trigger()
    qtbot.waitUntil(lambda: service.vectors_stopped(base.id) is None)
    assert not retry.isVisible()
    # The base switches above started reads of the settings panel's model lists: they land
    # here, not in the next test's window.
    qtbot.waitUntil(lambda: ui_ctx.tasks.pending == 0)


def test_first_base_defaults_to_the_offline_model(
    qtbot: QtBot, window: MainWindow, ui_ctx: UiContext
) -> None:
    dialog = window.open_new_base_dialog()
    with qtbot.waitSignal(dialog.modelsLoaded):
        pass
    assert dialog.form.embedding_picker.current_model() == ui_ctx.service.offline_model()
    dialog.close()


def test_quitting_while_indexing_asks_first(
    qtbot: QtBot, window: MainWindow, ui_ctx: UiContext
) -> None:
    """Only this window's own running jobs are interrupted by quitting: it asks about them."""
    asked: list[int] = []

    def answer(running: int) -> bool:
        asked.append(running)
        return len(asked) > 1  # "no" the first time, "yes" the second

    gate = threading.Event()
    models = ui_ctx.service.parts.models
    assert isinstance(models, FakeModels)
    models.embedder_instance.before_embed = lambda _texts: gate.wait(10)
    base = ui_ctx.service.create_base("Busy", embedding_model="fake:bow")
    ui_ctx.service.add_note(base.id, "Held", "a note whose embedding waits on the gate")
    ui_ctx.executor.schedule()
    qtbot.waitUntil(lambda: ui_ctx.executor.running_count == 1, timeout=10_000)
    window.confirm_quit = answer
    try:
        assert not window.close()
        assert window.isVisible() and asked == [1]
    finally:
        gate.set()
    qtbot.waitUntil(lambda: ui_ctx.executor.running_count == 0, timeout=10_000)


def test_work_of_another_process_does_not_hold_the_window(
    qtbot: QtBot, window: MainWindow, ui_ctx: UiContext
) -> None:
    """A `trove add` in a terminal keeps running when the window quits: nothing to ask."""
    asked: list[int] = []
    window.confirm_quit = lambda running: asked.append(running) or False
    # The catalog's counts include the other process's running job; this window runs none.
    window.ctx.executor.queueChanged.emit("some-base", 4, 2)
    assert ui_ctx.executor.running_count == 0
    assert window.close()
    assert asked == []


def test_choosing_a_language_offers_a_restart(
    qtbot: QtBot, window: MainWindow, ui_ctx: UiContext
) -> None:
    chinese = next(a for a in window.language_group.actions() if a.data() == "zh_CN")
    window.ask_restart = lambda: False
    chinese.trigger()
    assert ui_ctx.settings.value("language") == "zh_CN"
    assert window.isVisible() and not window.restart_requested
    window.ask_restart = lambda: True
    chinese.trigger()
    assert window.restart_requested and not window.isVisible()


def test_a_failure_while_watching_becomes_a_notification(
    qtbot: QtBot, window: MainWindow, ui_ctx: UiContext, tmp_path: Path
) -> None:
    from PySide6.QtWidgets import QLabel

    from app.ui.toast import Toast

    base = ui_ctx.service.create_base("Watched")
    window.bases.reload(select=base.id)
    qtbot.waitUntil(lambda: window.current_base() is not None)
    blank = tmp_path / "blank.txt"
    blank.write_text("   \n", encoding="utf-8")
    window.items.add_paths([str(blank)])
    qtbot.waitUntil(
        lambda: any(n.level == "error" for n in ui_ctx.notifier.history), timeout=10_000
    )
    notice = ui_ctx.notifier.history[-1]
    assert "blank" in notice.title and "no text" in notice.text
    toasts = window.findChildren(Toast)
    assert toasts and toasts[-1].isVisible()
    title = toasts[-1].findChild(QLabel, "toastTitle")
    assert title is not None and "blank" in title.text()
    assert QApplication.activeModalWidget() is None  # never a modal box


def test_busy_indicator_only_for_slow_background_calls(qtbot: QtBot, window: MainWindow) -> None:
    release = threading.Event()
    with qtbot.waitSignal(window.ctx.tasks.idle):
        window.ctx.tasks.run(lambda: None)
    assert window.busy.isHidden()  # a quick call never shows it
    window.ctx.tasks.run(lambda: release.wait(10))
    qtbot.waitUntil(lambda: not window.busy.isHidden(), timeout=3000)
    with qtbot.waitSignal(window.ctx.tasks.idle):
        release.set()
    assert window.busy.isHidden()
