"""Drops on a base's name add to that base; drops on the welcome page create a base first.
Every drop completes as a copy, so the drag source never deletes the originals."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
from PySide6.QtCore import QMimeData, QPoint, QPointF, Qt, QUrl
from PySide6.QtGui import QDragEnterEvent, QDragMoveEvent, QDropEvent
from PySide6.QtWidgets import QApplication, QLineEdit, QWidget
from pytestqt.qtbot import QtBot

from app.knowledge.types import BaseStatus, ItemType
from app.ui import i18n
from app.ui.context import UiContext
from app.ui.main_window import PAGE_EMPTY, MainWindow
from app.ui.settings.new_base_dialog import NewBaseDialog

# Shift proposes a move in a file manager's drag; the drop must still be a copy.
ACTIONS = Qt.DropAction.CopyAction | Qt.DropAction.MoveAction
BUTTONS = Qt.MouseButton.LeftButton
MOVE_MODIFIER = Qt.KeyboardModifier.ShiftModifier


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


def mime_of(paths: list[Path], urls: Sequence[str] = ()) -> QMimeData:
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(p)) for p in paths] + [QUrl(u) for u in urls])
    return mime


def drag_over(widget: QWidget, pos: QPoint, mime: QMimeData) -> bool:
    """Enter and move over `pos`; whether the widget would take the drop there."""
    enter = QDragEnterEvent(pos, ACTIONS, mime, BUTTONS, MOVE_MODIFIER)
    QApplication.sendEvent(widget, enter)
    if not enter.isAccepted():
        return False
    move = QDragMoveEvent(pos, ACTIONS, mime, BUTTONS, MOVE_MODIFIER)
    QApplication.sendEvent(widget, move)
    return move.isAccepted()


def drop_on(widget: QWidget, pos: QPoint, mime: QMimeData) -> QDropEvent:
    drag_over(widget, pos, mime)
    drop = QDropEvent(QPointF(pos), ACTIONS, mime, BUTTONS, MOVE_MODIFIER)
    assert drop.proposedAction() == Qt.DropAction.MoveAction  # what a careless accept would do
    QApplication.sendEvent(widget, drop)
    return drop


def documents(tmp_path: Path) -> list[Path]:
    folder = tmp_path / "dropped"
    folder.mkdir()
    paths = [folder / "otters.txt", folder / "kelp.txt"]
    for path in paths:
        path.write_text(f"About {path.stem}: a short note.", encoding="utf-8")
    return paths


def test_a_drop_on_a_base_name_adds_to_that_base(
    qtbot: QtBot, window: MainWindow, ui_ctx: UiContext, tmp_path: Path
) -> None:
    shown = ui_ctx.service.create_base("Shown")
    target = ui_ctx.service.create_base("Target")
    window.bases.reload(select=shown.id)
    qtbot.waitUntil(
        lambda: window.bases.model.rowCount() == 2 and window.current_base() is not None
    )
    view = window.bases.view
    row = window.bases.model.row_of(target.id)
    pos = view.visualRect(window.bases.model.index(row)).center()
    paths = documents(tmp_path)

    mime = mime_of(paths)
    drop = drop_on(view.viewport(), pos, mime)
    assert drop.isAccepted() and drop.dropAction() == Qt.DropAction.CopyAction

    qtbot.waitUntil(lambda: len(ui_ctx.service.list_items(target.id)) == 2, timeout=10_000)
    assert {Path(i.source) for i in ui_ctx.service.list_items(target.id)} == set(paths)
    assert ui_ctx.service.list_items(shown.id) == []
    assert all(p.exists() for p in paths)  # the originals stay where they were
    assert window.current_base().id == shown.id  # type: ignore[union-attr]
    qtbot.waitUntil(
        lambda: any("Added 2 sources to “Target”" in n.title for n in ui_ctx.notifier.history)
    )


def test_a_drop_on_the_shown_base_name_needs_no_notice(
    qtbot: QtBot, window: MainWindow, ui_ctx: UiContext, tmp_path: Path
) -> None:
    base = ui_ctx.service.create_base("Only")
    window.bases.reload(select=base.id)
    qtbot.waitUntil(lambda: window.current_base() is not None)
    view = window.bases.view
    pos = view.visualRect(window.bases.model.index(0)).center()
    mime = mime_of(documents(tmp_path), ["http://127.0.0.1:9/page.html"])
    with qtbot.waitSignal(window.bases.adder.finished, timeout=10_000):
        drop_on(view.viewport(), pos, mime)
    qtbot.waitUntil(lambda: len(ui_ctx.service.list_items(base.id)) == 3, timeout=10_000)
    kinds = sorted(i.type.value for i in ui_ctx.service.list_items(base.id))
    assert kinds == [ItemType.FILE.value, ItemType.FILE.value, ItemType.URL.value]
    qtbot.waitUntil(lambda: len(window.items.model.items()) == 3, timeout=10_000)
    assert not any("Added" in n.title for n in ui_ctx.notifier.history)


def test_drops_that_have_no_base_to_go_to_are_refused(
    qtbot: QtBot, window: MainWindow, ui_ctx: UiContext, tmp_path: Path
) -> None:
    broken = ui_ctx.service.create_base("Broken")
    ui_ctx.service.catalog.set_base_status(broken.id, BaseStatus.FAILED, "index lost")
    window.bases.reload(select=broken.id)
    qtbot.waitUntil(lambda: window.current_base() is not None)
    view = window.bases.view
    mime = mime_of(documents(tmp_path))
    on_failed = view.visualRect(window.bases.model.index(0)).center()
    below = QPoint(on_failed.x(), view.viewport().height() - 5)
    assert not drag_over(view.viewport(), on_failed, mime)  # a base that needs restoring
    assert not drag_over(view.viewport(), below, mime)  # no base under the pointer
    assert not drop_on(view.viewport(), below, mime).isAccepted()
    text_only = QMimeData()
    text_only.setText("just words")
    assert not drag_over(view.viewport(), on_failed, text_only)
    qtbot.waitUntil(lambda: ui_ctx.tasks.pending == 0)
    assert ui_ctx.service.list_items(broken.id) == []


def test_a_drop_on_the_welcome_page_fills_the_new_base(
    qtbot: QtBot, window: MainWindow, ui_ctx: UiContext, tmp_path: Path
) -> None:
    assert window.pages.currentIndex() == PAGE_EMPTY
    paths = documents(tmp_path)
    mime = mime_of(paths)
    assert drag_over(window.empty, QPoint(30, 30), mime)
    drop = drop_on(window.empty, QPoint(30, 30), mime)
    assert drop.isAccepted() and drop.dropAction() == Qt.DropAction.CopyAction

    dialog = window.findChild(NewBaseDialog, "newBaseDialog")
    assert dialog is not None and dialog.isVisible()
    qtbot.waitUntil(lambda: dialog.form.embedding_picker.count() > 0)
    name = dialog.findChild(QLineEdit, "baseName")
    assert name is not None
    qtbot.keyClicks(name, "Dropped")
    dialog.form.embedding_picker.set_current_model(None)
    with qtbot.waitSignal(dialog.baseCreated, timeout=10_000) as created:
        qtbot.mouseClick(dialog.create_button, Qt.MouseButton.LeftButton)
    base = created.args[0]
    qtbot.waitUntil(lambda: len(ui_ctx.service.list_items(base.id)) == 2, timeout=10_000)
    assert {Path(i.source) for i in ui_ctx.service.list_items(base.id)} == set(paths)
    qtbot.waitUntil(lambda: len(window.items.model.items()) == 2, timeout=10_000)


def test_a_cancelled_new_base_adds_nothing(
    qtbot: QtBot, window: MainWindow, ui_ctx: UiContext, tmp_path: Path
) -> None:
    drop_on(window.empty, QPoint(30, 30), mime_of(documents(tmp_path)))
    dialog = window.findChild(NewBaseDialog, "newBaseDialog")
    assert dialog is not None
    dialog.reject()
    qtbot.waitUntil(lambda: ui_ctx.tasks.pending == 0)
    assert ui_ctx.service.list_bases() == []
    assert window.pages.currentIndex() == PAGE_EMPTY
