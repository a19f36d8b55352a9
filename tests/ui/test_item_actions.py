"""Item actions in the window: drops copy, opening an original that the desktop cannot open
says so and offers the path, notes are edited (F2, double-click, context menu), F2 on other
items explains itself, and Add files opens where the person was last with a documents
filter."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QMimeData, QPoint, QPointF, QStandardPaths, Qt, QUrl
from PySide6.QtGui import QDesktopServices, QDragEnterEvent, QDragMoveEvent, QDropEvent
from PySide6.QtWidgets import (
    QApplication,
    QDialogButtonBox,
    QFileDialog,
    QLabel,
    QLineEdit,
    QMenu,
    QPlainTextEdit,
    QPushButton,
    QWidget,
)
from pytestqt.qtbot import QtBot

from app.knowledge.types import ErrorCode, Item, ItemStatus, SearchMode, TroveError
from app.ui.context import UiContext
from app.ui.items.add_dialogs import NoteDialog
from app.ui.items.file_picking import LAST_FOLDER_SETTING
from app.ui.items.item_view import ItemTreeView
from app.ui.items.opening import OpenFailedDialog
from app.ui.main_window import MainWindow


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


@pytest.fixture
def opened(monkeypatch: pytest.MonkeyPatch) -> list[QUrl]:
    """A desktop without a launcher: openUrl records the URL and reports failure."""
    asked: list[QUrl] = []

    def open_url(url: QUrl) -> bool:
        asked.append(QUrl(url))
        return False

    monkeypatch.setattr(QDesktopServices, "openUrl", open_url)
    return asked


def show_base(qtbot: QtBot, window: MainWindow, ui_ctx: UiContext, base_id: str, rows: int) -> None:
    window.bases.reload(select=base_id)
    qtbot.waitUntil(lambda: len(window.items.model.items()) == rows, timeout=10_000)
    qtbot.waitUntil(
        lambda: all(i.status is ItemStatus.COMPLETED for i in window.items.model.items()),
        timeout=10_000,
    )


def select(window: MainWindow, item_id: str) -> None:
    index = window.items.proxy.mapFromSource(window.items.model.index_of(item_id))
    window.items.view.setCurrentIndex(index)
    window.items.view.setFocus()


def row_centre(window: MainWindow, item_id: str) -> QPoint:
    index = window.items.proxy.mapFromSource(window.items.model.index_of(item_id))
    return window.items.view.visualRect(index).center()


def double_click(qtbot: QtBot, window: MainWindow, item_id: str) -> None:
    # A double click as the view receives it: press, release, then the double click.
    where = row_centre(window, item_id)
    viewport = window.items.view.viewport()
    qtbot.mouseClick(viewport, Qt.MouseButton.LeftButton, pos=where)
    qtbot.mouseDClick(viewport, Qt.MouseButton.LeftButton, pos=where)


def note_dialog(window: MainWindow) -> NoteDialog | None:
    found = [d for d in window.items.findChildren(NoteDialog) if d.isVisible()]
    return found[-1] if found else None


def activate(qtbot: QtBot, window: MainWindow) -> None:
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)


# -- 7. drops copy -----------------------------------------------------------------------------


def drag_events(
    mime: QMimeData, actions: Qt.DropAction, modifiers: Qt.KeyboardModifier
) -> tuple[QDragEnterEvent, QDragMoveEvent, QDropEvent]:
    args = (actions, mime, Qt.MouseButton.LeftButton, modifiers)
    return (
        QDragEnterEvent(QPoint(20, 20), *args),
        QDragMoveEvent(QPoint(25, 25), *args),
        QDropEvent(QPointF(25, 25), *args),
    )


def test_a_drop_is_a_copy_even_when_the_source_proposes_a_move(
    qtbot: QtBot, tmp_path: Path
) -> None:
    view = ItemTreeView()
    qtbot.addWidget(view)
    view.show()
    doc = tmp_path / "doc.md"
    doc.write_text("# Doc", encoding="utf-8")
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(doc))])
    # Shift held over a source that can copy or move: the proposed action is a move.
    events = drag_events(
        mime,
        Qt.DropAction.CopyAction | Qt.DropAction.MoveAction,
        Qt.KeyboardModifier.ShiftModifier,
    )
    assert all(e.proposedAction() == Qt.DropAction.MoveAction for e in events)
    enter, move, drop = events
    QApplication.sendEvent(view.viewport(), enter)
    QApplication.sendEvent(view.viewport(), move)
    with qtbot.waitSignal(view.pathsDropped) as dropped:
        QApplication.sendEvent(view.viewport(), drop)
    for event in events:
        assert event.isAccepted() and event.dropAction() == Qt.DropAction.CopyAction
    assert dropped.args == [[str(doc)]]


def test_a_source_that_can_only_move_is_refused(qtbot: QtBot, tmp_path: Path) -> None:
    view = ItemTreeView()
    qtbot.addWidget(view)
    view.show()
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(tmp_path / "doc.md"))])
    enter, _, drop = drag_events(mime, Qt.DropAction.MoveAction, Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(view.viewport(), enter)
    assert not enter.isAccepted()
    with qtbot.assertNotEmitted(view.pathsDropped):
        QApplication.sendEvent(view.viewport(), drop)
    assert not drop.isAccepted()


# -- 8. opening without a launcher -------------------------------------------------------------


def test_open_original_without_a_launcher_says_so_and_offers_the_path(
    qtbot: QtBot,
    window: MainWindow,
    ui_ctx: UiContext,
    tmp_path: Path,
    opened: list[QUrl],
) -> None:
    doc = tmp_path / "papers" / "otters.md"
    doc.parent.mkdir()
    doc.write_text("# Otters\n\nSea otters hold hands.", encoding="utf-8")
    base = ui_ctx.service.create_base("Open")
    (added,) = ui_ctx.service.add(base.id, [doc]).added
    ui_ctx.service.run_pending_jobs()
    show_base(qtbot, window, ui_ctx, base.id, 1)
    select(window, added.id)

    window.items.open_action.trigger()
    assert [u.toLocalFile() for u in opened] == [str(doc)]
    notice = ui_ctx.notifier.history[-1]
    assert notice.level == "warning" and "otters.md" in notice.title and str(doc) in notice.text
    dialog = window.items.findChild(OpenFailedDialog, "openFailedDialog")
    assert dialog is not None and dialog.isVisible()
    assert QApplication.activeModalWidget() is None  # never a modal box
    path = dialog.findChild(QLineEdit, "openFailedPath")
    assert path is not None and path.text() == str(doc) and path.isReadOnly()

    copy = dialog.findChild(QPushButton, "copyPathButton")
    assert copy is not None
    QApplication.clipboard().clear()
    qtbot.mouseClick(copy, Qt.MouseButton.LeftButton)
    assert QApplication.clipboard().text() == str(doc)

    folder = dialog.findChild(QPushButton, "showFolderButton")
    assert folder is not None
    qtbot.mouseClick(folder, Qt.MouseButton.LeftButton)
    assert opened[-1].toLocalFile() == str(doc.parent)
    status = dialog.findChild(QLabel, "openFailedStatus")
    assert status is not None and str(doc.parent) in status.text()
    dialog.close()


def test_double_click_and_show_in_folder_without_a_launcher(
    qtbot: QtBot,
    window: MainWindow,
    ui_ctx: UiContext,
    tmp_path: Path,
    opened: list[QUrl],
) -> None:
    blank = tmp_path / "blank.txt"
    blank.write_text("   \n", encoding="utf-8")  # fails: no chunks to show, so it opens
    base = ui_ctx.service.create_base("Twice")
    (added,) = ui_ctx.service.add(base.id, [blank]).added
    ui_ctx.service.run_pending_jobs()
    assert ui_ctx.service.get_item(added.id).status is ItemStatus.FAILED
    window.bases.reload(select=base.id)
    qtbot.waitUntil(lambda: len(window.items.model.items()) == 1, timeout=10_000)
    select(window, added.id)

    double_click(qtbot, window, added.id)
    assert [u.toLocalFile() for u in opened] == [str(blank)]
    assert "blank.txt" in ui_ctx.notifier.history[-1].title

    window.items.show_folder_action.trigger()
    assert opened[-1].toLocalFile() == str(tmp_path)
    dialogs = [d for d in window.items.findChildren(OpenFailedDialog) if d.isVisible()]
    assert len(dialogs) == 2
    shown = dialogs[-1].findChild(QLineEdit, "openFailedPath")
    assert shown is not None and shown.text() == str(tmp_path)
    # The folder itself failed to open: no button to try it again.
    assert dialogs[-1].findChild(QPushButton, "showFolderButton") is None
    for dialog in dialogs:
        dialog.close()


# -- 11. notes are edited ----------------------------------------------------------------------


def test_f2_edits_a_note_and_saving_reindexes_it(
    qtbot: QtBot, window: MainWindow, ui_ctx: UiContext
) -> None:
    base = ui_ctx.service.create_base("Notes")
    note = ui_ctx.service.add_note(base.id, "Garden", "The quasarwort grows by the fence.")
    ui_ctx.service.run_pending_jobs()
    show_base(qtbot, window, ui_ctx, base.id, 1)
    activate(qtbot, window)
    select(window, note.id)
    assert window.items.edit_note_action.isEnabled()

    qtbot.keyClick(window.items.view, Qt.Key.Key_F2)
    dialog = note_dialog(window)
    assert dialog is not None and dialog.windowTitle() == "Edit note"
    assert (dialog.title(), dialog.text()) == ("Garden", "The quasarwort grows by the fence.")
    title = dialog.findChild(QLineEdit, "noteTitle")
    text = dialog.findChild(QPlainTextEdit, "noteText")
    assert title is not None and text is not None
    title.setText("Garden plans")
    text.setPlainText("Plant nebulaberry in May.")
    with qtbot.waitSignal(dialog.accepted, timeout=10_000):
        _save(dialog)

    def reindexed() -> bool:
        current = ui_ctx.service.get_item(note.id)
        return current.status is ItemStatus.COMPLETED and current.title == "Garden plans"

    qtbot.waitUntil(reindexed, timeout=10_000)
    hits = ui_ctx.service.search(base.id, "nebulaberry", mode=SearchMode.BM25).results
    assert [h.item_id for h in hits] == [note.id]
    assert ui_ctx.service.search(base.id, "quasarwort", mode=SearchMode.BM25).results == []
    qtbot.waitUntil(
        lambda: window.items.model.data(window.items.model.index_of(note.id)) == "Garden plans"
    )


def _save(dialog: NoteDialog) -> None:
    buttons = dialog.findChild(QDialogButtonBox)
    assert buttons is not None
    buttons.button(QDialogButtonBox.StandardButton.Save).click()


def test_double_click_and_context_menu_edit_notes_only(
    qtbot: QtBot, window: MainWindow, ui_ctx: UiContext, tmp_path: Path
) -> None:
    base = ui_ctx.service.create_base("Menus")
    note = ui_ctx.service.add_note(base.id, "Recipe", "flour and water")
    doc = tmp_path / "doc.md"
    doc.write_text("# Doc\n\nwords", encoding="utf-8")
    (file_item,) = ui_ctx.service.add(base.id, [doc]).added
    ui_ctx.service.run_pending_jobs()
    show_base(qtbot, window, ui_ctx, base.id, 2)

    select(window, note.id)
    double_click(qtbot, window, note.id)
    dialog = note_dialog(window)
    assert dialog is not None and dialog.text() == "flour and water"
    dialog.reject()

    def menu_texts(item_id: str) -> list[str]:
        select(window, item_id)
        window.items.view.customContextMenuRequested.emit(row_centre(window, item_id))
        menu = window.items.view.findChildren(QMenu, "itemContextMenu")[-1]
        texts = [a.text() for a in menu.actions() if not a.isSeparator()]
        menu.close()
        menu.deleteLater()
        return texts

    assert "Edit note…" in menu_texts(note.id)
    assert "Edit note…" not in menu_texts(file_item.id)
    edit = next(a for a in window.items.item_actions if a.objectName() == "editNoteAction")
    select(window, note.id)
    edit.trigger()
    dialog = note_dialog(window)
    assert dialog is not None and dialog.title() == "Recipe"
    dialog.reject()


def test_a_refused_edit_keeps_the_dialog_and_the_text(
    qtbot: QtBot, window: MainWindow, ui_ctx: UiContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    base = ui_ctx.service.create_base("Busy")
    note = ui_ctx.service.add_note(base.id, "Draft", "first words")
    ui_ctx.service.run_pending_jobs()
    show_base(qtbot, window, ui_ctx, base.id, 1)
    select(window, note.id)

    def busy(base_id: str, item_id: str, title: str, text: str) -> Item:
        raise TroveError(ErrorCode.INVALID_ARGUMENT, "the note 'Draft' is still being indexed")

    monkeypatch.setattr(ui_ctx.service, "update_note", busy)
    window.items.edit_note_action.trigger()
    dialog = note_dialog(window)
    assert dialog is not None
    text = dialog.findChild(QPlainTextEdit, "noteText")
    assert text is not None
    text.setPlainText("second words, not to be lost")
    _save(dialog)
    error = dialog.findChild(QLabel, "noteError")
    assert error is not None
    qtbot.waitUntil(error.isVisible)
    assert "still being indexed" in error.text()
    assert dialog.isVisible() and dialog.text() == "second words, not to be lost"
    assert not text.isReadOnly()
    dialog.reject()


def test_f2_on_a_file_explains_that_only_notes_are_edited(
    qtbot: QtBot, window: MainWindow, ui_ctx: UiContext, tmp_path: Path
) -> None:
    doc = tmp_path / "doc.md"
    doc.write_text("# Doc\n\nwords", encoding="utf-8")
    base = ui_ctx.service.create_base("Files")
    (added,) = ui_ctx.service.add(base.id, [doc]).added
    ui_ctx.service.run_pending_jobs()
    show_base(qtbot, window, ui_ctx, base.id, 1)
    activate(qtbot, window)
    select(window, added.id)
    assert not window.items.edit_note_action.isEnabled()

    qtbot.keyClick(window.items.view, Qt.Key.Key_F2)
    assert "Only notes can be edited" in window.statusBar().currentMessage()
    assert note_dialog(window) is None
    assert window.current_base() is not None and window.current_base().name == "Files"  # type: ignore[union-attr]


# -- 11. Ctrl+O --------------------------------------------------------------------------------


def test_ctrl_o_opens_in_the_last_folder_with_a_documents_filter(
    qtbot: QtBot,
    window: MainWindow,
    ui_ctx: UiContext,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    doc = docs / "kelp.txt"
    doc.write_text("Kelp forests shelter fish.", encoding="utf-8")
    calls: list[tuple[str, str]] = []

    def choose(parent: QWidget, caption: str, folder: str, filters: str) -> tuple[list[str], str]:
        calls.append((folder, filters))
        # The first time a file is chosen; then the dialog is cancelled.
        return ([str(doc)] if len(calls) == 1 else []), filters.split(";;")[0]

    monkeypatch.setattr(QFileDialog, "getOpenFileNames", choose)
    base = ui_ctx.service.create_base("Add")
    window.bases.reload(select=base.id)
    qtbot.waitUntil(lambda: window.items.add_files_action.isEnabled())
    activate(qtbot, window)

    qtbot.keyClick(window, Qt.Key.Key_O, Qt.KeyboardModifier.ControlModifier)
    assert len(calls) == 1
    first_folder, filters = calls[0]
    documents = QStandardPaths.StandardLocation.DocumentsLocation
    assert first_folder == QStandardPaths.writableLocation(documents)
    documents_filter, all_files = filters.split(";;")
    assert documents_filter.startswith("Documents (*.md *.txt *.pdf *.docx ")
    patterns = set(documents_filter.removeprefix("Documents (").removesuffix(")").split())
    assert patterns == {f"*{e}" for e in ui_ctx.service.supported_extensions()}
    assert all_files == "All files (*)"
    qtbot.waitUntil(lambda: len(window.items.model.items()) == 1, timeout=10_000)

    # The next time it opens where the last file came from.
    assert ui_ctx.settings.value(LAST_FOLDER_SETTING) == str(docs)
    qtbot.keyClick(window, Qt.Key.Key_O, Qt.KeyboardModifier.ControlModifier)
    assert calls[-1][0] == str(docs)

    folders: list[str] = []

    def choose_folder(parent: QWidget, caption: str, folder: str) -> str:
        folders.append(folder)
        return ""

    monkeypatch.setattr(QFileDialog, "getExistingDirectory", choose_folder)
    window.items.add_folder_action.trigger()
    assert folders == [str(docs)]
