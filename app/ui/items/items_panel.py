"""The selected base's content: the live item tree with its actions, drops and a banner for a
base that needs restoring."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import (
    QItemSelection,
    QItemSelectionModel,
    QMimeData,
    QModelIndex,
    QPoint,
    Qt,
    QUrl,
    Signal,
    Slot,
)
from PySide6.QtGui import QAction, QGuiApplication, QKeySequence
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMainWindow,
    QMenu,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.knowledge.types import (
    RUNNING_STATUSES,
    SETTLED_STATUSES,
    Base,
    BaseStatus,
    Item,
    ItemStatus,
    ItemType,
)
from app.ui import errors, theme
from app.ui.context import UiContext
from app.ui.items.add_dialogs import NoteDialog, UrlDialog
from app.ui.items.add_flow import AddFlow
from app.ui.items.chunks_dialog import ChunksDialog
from app.ui.items.deferred_delete import DeferredDeletes
from app.ui.items.file_picking import pick_files, pick_folder
from app.ui.items.item_drag import items_mime
from app.ui.items.item_feed import ItemFeed
from app.ui.items.item_filter import ItemFilterProxy
from app.ui.items.item_model import CONTAINERS, Column, ItemTreeModel, Role
from app.ui.items.item_names import display_name
from app.ui.items.item_view import ItemTreeView
from app.ui.items.linked_folders import LinkedFolders
from app.ui.items.note_editing import NoteEditor
from app.ui.items.opening import containing_folder, open_or_explain
from app.ui.items.page_refresh import PageRefresh
from app.ui.items.status_delegate import StatusDelegate
from app.ui.questions import ask_to_delete

# how long a status-bar hint stays
HINT_MS = 5000


class ItemsPanel(QWidget):
    # a failed base was restored (the base list should read it again)
    baseRestored = Signal(str)
    # Copy to… / Move to… chosen for these item ids (True: move)
    transferRequested = Signal(list, bool)

    def __init__(self, ctx: UiContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("itemsPanel")
        self._ctx = ctx
        self._base: Base | None = None
        self.model = ItemTreeModel(self)
        self.proxy = ItemFilterProxy(self)
        self.proxy.setSourceModel(self.model)
        self.proxy.setSortRole(Role.SORT)
        self.proxy.setFilterKeyColumn(Column.NAME)
        self.proxy.setFilterRole(Role.FILTER)
        self.proxy.setFilterCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.proxy.setRecursiveFilteringEnabled(True)
        # a folder that matches shows what is in it
        self.proxy.setAutoAcceptChildRows(True)
        self.view = ItemTreeView(self)
        self.view.setModel(self.proxy)
        self.view.drag_payload = self._drag_payload
        self.view.setItemDelegateForColumn(Column.STATUS, StatusDelegate(self.view))
        self.view.sortByColumn(Column.NAME, Qt.SortOrder.AscendingOrder)
        self.feed = ItemFeed(ctx, self.model, self)
        self.adder = AddFlow(ctx, self)
        self.deletions = DeferredDeletes(ctx.notifier, self._delete_now, self)
        self.note_editor = NoteEditor(ctx, self)
        self.linked = LinkedFolders(ctx, self.model, self._selected_one, self._on_queued, self)
        self.page_refresh = PageRefresh(ctx, self._selected_one, self._on_queued, self)
        # Tests answer confirmations without a modal box.
        self.confirm: Callable[[str, str], bool] = self._confirm
        self._filter = QLineEdit(self)
        self._filter.setObjectName("itemFilter")
        self._filter.setPlaceholderText(self.tr("Filter by name or title"))
        self._filter.setClearButtonEnabled(True)
        self._banner = self._make_banner()
        self._make_actions()
        self._layout()
        self._connect_signals()
        self.set_base(None)

    # -- public --------------------------------------------------------------------------

    @property
    def base(self) -> Base | None:
        return self._base

    def set_base(self, base: Base | None) -> None:
        self._base = base
        self.feed.set_base(base.id if base is not None else None)
        self.linked.set_base(base.id if base is not None else None)
        self._update_banner()
        self.view.set_empty_hint(
            self.tr(
                "Drop files, folders or web links here, or use the Add buttons.\n"
                "Trove reads them, splits them into chunks and indexes them for search."
            )
            if base is not None
            else ""
        )
        self._on_selection_changed()

    def selected_items(self) -> list[Item]:
        """The selected items; a selected folder row stands for the items inside it."""
        items: dict[str, Item] = {}
        for index in self.view.selectionModel().selectedRows(Column.NAME):
            for item in self.model.items_under(self.proxy.mapToSource(index)):
                items.setdefault(item.id, item)
        return list(items.values())

    def single_item(self) -> Item | None:
        """The item of the one selected row (None: several rows, or a folder row)."""
        rows = self.view.selectionModel().selectedRows(Column.NAME)
        return self.model.item_at(self.proxy.mapToSource(rows[0])) if len(rows) == 1 else None

    def _selected_one(self) -> Item | None:
        return self.single_item() if self._base is not None else None

    def add_paths(self, paths: list[str]) -> None:
        if self._base is not None and paths:
            self.adder.add_paths(self._base.id, paths)

    def add_urls(self, urls: list[str], *, sitemap: bool = False) -> None:
        if self._base is not None and urls:
            self.adder.add_urls(self._base.id, urls, sitemap=sitemap)

    def flush_deletions(self) -> None:
        """Hand deletions still waiting for their Undo time to the engine now (on close)."""
        self.deletions.flush()

    # -- building ------------------------------------------------------------------------

    def _make_banner(self) -> QFrame:
        banner = QFrame(self)
        banner.setObjectName("failedBaseBanner")
        banner.setStyleSheet(theme.message_box_style("error", "#failedBaseBanner"))
        self._banner_text = QLabel(banner)
        self._banner_text.setWordWrap(True)
        self._restore_button = QPushButton(self.tr("Restore"), banner)
        self._restore_button.setObjectName("restoreBaseButton")
        row = QHBoxLayout(banner)
        row.addWidget(self._banner_text, 1)
        row.addWidget(self._restore_button)
        return banner

    def _make_actions(self) -> None:
        def action(text: str, name: str, shortcut: QKeySequence | None = None) -> QAction:
            act = QAction(text, self)
            act.setObjectName(name)
            if shortcut is not None:
                act.setShortcut(shortcut)
                act.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
            return act

        self.add_files_action = action(
            self.tr("Add files…"), "addFilesAction", QKeySequence(QKeySequence.StandardKey.Open)
        )
        self.add_folder_action = action(self.tr("Add folder…"), "addFolderAction")
        self.add_url_action = action(self.tr("Add web page…"), "addUrlAction")
        self.add_sitemap_action = action(self.tr("Add sitemap…"), "addSitemapAction")
        self.add_note_action = action(self.tr("New note…"), "addNoteAction")
        self.reindex_action = action(
            self.tr("Reindex"), "reindexAction", QKeySequence(Qt.Key.Key_F5)
        )
        self.delete_action = action(
            self.tr("Delete"), "deleteItemsAction", QKeySequence(QKeySequence.StandardKey.Delete)
        )
        # Delete acts on what has the focus: the base list has a Delete of its own.
        self.delete_action.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
        self.view.addAction(self.delete_action)
        self.undo_delete_action = action(
            self.tr("Undo delete"), "undoDeleteAction", QKeySequence(QKeySequence.StandardKey.Undo)
        )
        self.undo_delete_action.setEnabled(False)
        self.edit_note_action = action(self.tr("Edit note…"), "editNoteAction")
        self.edit_note_action.setShortcut(QKeySequence(Qt.Key.Key_F2))
        # Only while the tree has focus: F2 in the base list renames the base.
        self.edit_note_action.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
        self.view.addAction(self.edit_note_action)
        self.open_action = action(self.tr("Open original"), "openOriginalAction")
        self.show_folder_action = action(self.tr("Show in folder"), "showInFolderAction")
        self.chunks_action = action(self.tr("View chunks"), "viewChunksAction")
        self.copy_error_action = action(self.tr("Copy error"), "copyErrorAction")
        self.copy_to_action = action(self.tr("Copy to…"), "copyToBaseAction")
        self.move_to_action = action(self.tr("Move to…"), "moveToBaseAction")
        self.add_actions = [
            self.add_files_action,
            self.add_folder_action,
            self.add_url_action,
            self.add_sitemap_action,
            self.add_note_action,
            self.linked.add_linked_action,
        ]
        self.item_actions = [
            *self.linked.item_actions,
            *self.page_refresh.item_actions,
            self.reindex_action,
            self.delete_action,
            self.edit_note_action,
            self.open_action,
            self.show_folder_action,
            self.chunks_action,
            self.copy_error_action,
            self.copy_to_action,
            self.move_to_action,
        ]
        for act in [*self.add_actions, *self.item_actions, self.undo_delete_action]:
            self.addAction(act)

    def _layout(self) -> None:
        header = self.view.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(Column.NAME, QHeaderView.ResizeMode.Stretch)
        # Wide enough for a linked folder's state ("Linked · watching") beside the formats.
        header.resizeSection(Column.TYPE, 150)
        header.resizeSection(Column.STATUS, 190)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self._banner)
        layout.addWidget(self._filter)
        layout.addWidget(self.view, 1)

    def _connect_signals(self) -> None:
        self.view.pathsDropped.connect(self._on_paths_dropped)
        self.view.urlsDropped.connect(self._on_urls_dropped)
        self.view.customContextMenuRequested.connect(self._on_context_menu)
        self.view.doubleClicked.connect(self._on_double_clicked)
        self.view.editKeyUnused.connect(self._on_edit_key_unused)
        self.view.selectionModel().selectionChanged.connect(self._on_selection_changed)
        self.feed.refreshed.connect(self._on_selection_changed)
        self.feed.refreshed.connect(self._on_feed_refreshed)
        self.deletions.hiddenChanged.connect(self._on_hidden_changed)
        self.deletions.restored.connect(self._on_deletion_undone)
        self.feed.itemFailed.connect(self._on_item_failed)
        self.adder.finished.connect(self._on_added)
        self.note_editor.saved.connect(self._on_queued)
        self._filter.textChanged.connect(self.proxy.setFilterFixedString)
        self._restore_button.clicked.connect(self._on_restore_base)
        self.add_files_action.triggered.connect(self._on_add_files)
        self.add_folder_action.triggered.connect(self._on_add_folder)
        self.add_url_action.triggered.connect(self._on_add_url)
        self.add_sitemap_action.triggered.connect(self._on_add_sitemap)
        self.add_note_action.triggered.connect(self._on_add_note)
        self.reindex_action.triggered.connect(self._on_reindex)
        self.delete_action.triggered.connect(self._on_delete)
        self.undo_delete_action.triggered.connect(self.deletions.undo_last)
        self.edit_note_action.triggered.connect(self._on_edit_note)
        self.open_action.triggered.connect(self._on_open_original)
        self.show_folder_action.triggered.connect(self._on_show_in_folder)
        self.chunks_action.triggered.connect(self._on_view_chunks)
        self.copy_error_action.triggered.connect(self._on_copy_error)
        self.copy_to_action.triggered.connect(lambda: self._on_transfer(move=False))
        self.move_to_action.triggered.connect(lambda: self._on_transfer(move=True))

    # -- slots ---------------------------------------------------------------------------

    @Slot(list)
    def _on_paths_dropped(self, paths: list[str]) -> None:
        self.add_paths(paths)

    @Slot(list)
    def _on_urls_dropped(self, urls: list[str]) -> None:
        self.add_urls(urls)

    @Slot(object)
    def _on_added(self, _report: object) -> None:
        self.feed.reload_now()

    @Slot(object)
    def _on_item_failed(self, item: Item) -> None:
        if self._hidden(item):
            return  # the person deleted it already; its failure is no news
        self._ctx.notifier.error(
            self.tr("{0} failed").format(display_name(item)),
            errors.item_error_text(item.error_code, item.error_message),
        )

    @Slot()
    def _on_selection_changed(self) -> None:
        usable = self._base is not None and self._base.status is BaseStatus.COMPLETED
        for act in self.add_actions:
            act.setEnabled(usable)
        items = self.selected_items() if self._base is not None else []
        one = self.single_item() if self._base is not None else None
        settled = [i for i in items if i.status is not ItemStatus.DELETING]
        self.reindex_action.setEnabled(usable and bool(settled))
        self.delete_action.setEnabled(bool(settled))
        self.edit_note_action.setEnabled(
            usable
            and one is not None
            and one.type is ItemType.NOTE
            and one.status is not ItemStatus.DELETING
        )
        self.open_action.setEnabled(one is not None)
        self.show_folder_action.setEnabled(one is not None and one.type is not ItemType.URL)
        self.chunks_action.setEnabled(one is not None and one.chunk_count > 0)
        self.copy_error_action.setEnabled(one is not None and one.status is ItemStatus.FAILED)
        self.linked.update(usable)
        self.page_refresh.update(usable)
        movable = bool(items) and all(i.status in SETTLED_STATUSES for i in items)
        self.copy_to_action.setEnabled(movable)
        self.move_to_action.setEnabled(movable)

    def _drag_payload(self) -> QMimeData | None:
        """What a drag of the selected rows carries: their settled items, by id."""
        items = [i for i in self.selected_items() if i.status in SETTLED_STATUSES]
        if self._base is None or not items:
            return None
        return items_mime(self._base.id, [i.id for i in items])

    def _on_transfer(self, *, move: bool) -> None:
        items = [i.id for i in self.selected_items() if i.status in SETTLED_STATUSES]
        if items:
            self.transferRequested.emit(items, move)

    @Slot(QPoint)
    def _on_context_menu(self, pos: QPoint) -> None:
        if self._base is None:
            return
        menu = QMenu(self.view)
        menu.setObjectName("itemContextMenu")
        if self.selected_items():
            # "Edit note…" only where there is a note to edit
            menu.addActions(
                [
                    a
                    for a in self.item_actions
                    if a.isVisible() and (a is not self.edit_note_action or a.isEnabled())
                ]
            )
            menu.addSeparator()
        menu.addActions(self.add_actions)
        menu.popup(self.view.viewport().mapToGlobal(pos))

    @Slot(QModelIndex)
    def _on_double_clicked(self, index: QModelIndex) -> None:
        item = self.model.item_at(self.proxy.mapToSource(index))
        if item is None:
            return  # a folder row: the view opens it
        if item.type is ItemType.NOTE and self.edit_note_action.isEnabled():
            self._on_edit_note()
        elif self.chunks_action.isEnabled():
            self._on_view_chunks()
        elif self.open_action.isEnabled():
            self._on_open_original()

    @Slot()
    def _on_add_files(self) -> None:
        self.add_paths(pick_files(self, self._ctx, self.tr("Add files")))

    @Slot()
    def _on_add_folder(self) -> None:
        folder = pick_folder(self, self._ctx, self.tr("Add folder"))
        if folder:
            self.add_paths([folder])

    @Slot()
    def _on_add_url(self) -> None:
        dialog = UrlDialog(False, self)
        if dialog.exec() == UrlDialog.DialogCode.Accepted:
            self.add_urls(dialog.urls())

    @Slot()
    def _on_add_sitemap(self) -> None:
        dialog = UrlDialog(True, self)
        if dialog.exec() == UrlDialog.DialogCode.Accepted:
            self.add_urls(dialog.urls(), sitemap=True)

    @Slot()
    def _on_add_note(self) -> None:
        dialog = NoteDialog(self)
        if dialog.exec() == NoteDialog.DialogCode.Accepted and self._base is not None:
            self.adder.add_note(self._base.id, dialog.title(), dialog.text())

    @Slot()
    def _on_reindex(self) -> None:
        base = self._base
        items = [i for i in self.selected_items() if i.status is not ItemStatus.DELETING]
        if base is None or not items:
            return
        ids = [i.id for i in items]
        self._ctx.tasks.run(
            lambda: self._ctx.service.reindex(base.id, ids),
            self._on_queued,
            self._on_failed,
            owner=self,
        )

    @Slot()
    def _on_delete(self) -> None:
        base = self._base
        items = [i for i in self.selected_items() if i.status is not ItemStatus.DELETING]
        if base is None or not items:
            return
        if not self.confirm(self.tr("Delete items"), self._deletion_question(base, items)):
            return
        if len(items) == 1:
            title = self.tr("Deleted “{0}”").format(_name(items[0]))
        else:
            title = self.tr("Deleted %n item(s)", "", len(items))
        self.deletions.schedule(base.id, [i.id for i in items], title)

    def _delete_now(self, base_id: str, ids: list[str]) -> None:
        """The engine's deletion, once the Undo time is over."""

        def failed(exc: BaseException) -> None:
            self.deletions.release(ids)
            self._on_failed(exc)

        self._ctx.tasks.run(
            lambda: self._ctx.service.delete_items(base_id, ids),
            self._on_queued,
            failed,
            owner=self,
        )

    @Slot()
    def _on_hidden_changed(self) -> None:
        self.proxy.set_hidden(self.deletions.hidden())
        self.undo_delete_action.setEnabled(self.deletions.pending)

    @Slot()
    def _on_feed_refreshed(self) -> None:
        self.deletions.settle(self.model.shown_ids())

    @Slot(list)
    def _on_deletion_undone(self, item_ids: list[str]) -> None:
        """Select the items that came back, so the person sees what Undo did."""
        selection = QItemSelection()
        for item_id in item_ids:
            index = self.proxy.mapFromSource(self.model.index_of(item_id))
            if index.isValid():
                selection.select(index, index)
        if not selection.isEmpty():
            flags = (
                QItemSelectionModel.SelectionFlag.ClearAndSelect
                | QItemSelectionModel.SelectionFlag.Rows
            )
            self.view.selectionModel().select(selection, flags)
            self.view.scrollTo(selection.indexes()[0])

    def _on_queued(self, _result: object) -> None:
        self._ctx.executor.schedule()
        self.feed.reload_now()

    def _on_failed(self, exc: BaseException) -> None:
        self._ctx.notifier.failure(exc)

    @Slot()
    def _on_edit_note(self) -> None:
        item = self.single_item()
        if self._base is None or item is None or item.type is not ItemType.NOTE:
            self._on_edit_key_unused()
        elif item.status in RUNNING_STATUSES:
            self._hint(self.tr("This note is still being indexed; edit it once it has finished."))
        else:
            self.note_editor.edit(item)

    @Slot()
    def _on_edit_key_unused(self) -> None:
        self._hint(
            self.tr("Only notes can be edited here. Files are renamed on disk, then reindexed.")
        )

    @Slot()
    def _on_open_original(self) -> None:
        item = self.single_item()
        if item is not None:
            url = self._original_url(item)
            open_or_explain(url, display_name(item), self._ctx.notifier, self, offer_folder=True)

    @Slot()
    def _on_show_in_folder(self) -> None:
        item = self.single_item()
        if item is not None:
            folder = containing_folder(Path(self._original_url(item).toLocalFile()))
            url = QUrl.fromLocalFile(str(folder))
            open_or_explain(url, display_name(item), self._ctx.notifier, self, offer_folder=False)

    @Slot()
    def _on_view_chunks(self) -> None:
        item = self.single_item()
        if item is not None:
            dialog = ChunksDialog(self._ctx, item, self)
            dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
            dialog.show()

    @Slot()
    def _on_copy_error(self) -> None:
        item = self.single_item()
        if item is not None and item.status is ItemStatus.FAILED:
            QGuiApplication.clipboard().setText(
                f"{display_name(item)}: {item.error_code}: {item.error_message or ''}"
            )

    @Slot()
    def _on_restore_base(self) -> None:
        base = self._base
        if base is None:
            return
        self._restore_button.setEnabled(False)

        def done(_report: object) -> None:
            self._restore_button.setEnabled(True)
            self._ctx.executor.schedule()
            self.baseRestored.emit(base.id)

        def failed(exc: BaseException) -> None:
            self._restore_button.setEnabled(True)
            self._on_failed(exc)

        self._ctx.tasks.run(
            lambda: self._ctx.service.restore_base(base.id), done, failed, owner=self
        )

    # -- helpers -------------------------------------------------------------------------

    def _original_url(self, item: Item) -> QUrl:
        if item.type in (ItemType.URL, ItemType.SITEMAP):
            return QUrl(item.source)
        # A note's original is its copy; an imported item's source names a place on the
        # computer it came from, so its copy is what opens (imported_sources.py).
        own_copy = item.type is ItemType.NOTE or item.imported
        if own_copy and item.relative_path and self._base is not None:
            copy = self._ctx.service.material_file(self._base.id, item.relative_path)
            return QUrl.fromLocalFile(str(copy))
        return QUrl.fromLocalFile(item.source)

    def _hint(self, text: str) -> None:
        """A short hint in the window's status bar."""
        window = self.window()
        if isinstance(window, QMainWindow):
            window.statusBar().showMessage(text, HINT_MS)

    def _update_banner(self) -> None:
        base = self._base
        failed = base is not None and base.status is BaseStatus.FAILED
        self._banner.setVisible(failed)
        if failed and base is not None:
            self._banner_text.setText(
                self.tr("This knowledge base needs to be restored: {0}").format(
                    base.status_reason or errors.headline("BASE_FAILED")
                )
            )

    def _hidden(self, item: Item) -> bool:
        """Whether the item or a folder above it waits for its deletion (or is being deleted)."""
        hidden = self.deletions.hidden()
        index = self.model.index_of(item.id)
        while index.isValid():
            if index.data(Role.ITEM_ID) in hidden:
                return True
            index = index.parent()
        return False

    def _deletion_question(self, base: Base, items: list[Item]) -> str:
        """What is deleted, how many documents that is, and what stays on the disk."""
        if len(items) == 1:
            head = self.tr("Delete “{0}” from “{1}”?").format(_name(items[0]), base.name)
        else:
            head = self.tr("Delete %n item(s) from “{0}”?", "", len(items)).format(base.name)
        kinds = {i.type for i in items}
        detail: list[str] = []
        if kinds & CONTAINERS:
            documents = self._documents_in(items)
            if len(items) == 1:
                detail.append(self.tr("It holds %n document(s).", "", documents))
            else:
                detail.append(self.tr("Together they hold %n document(s).", "", documents))
        if kinds & {ItemType.FILE, ItemType.DIRECTORY}:
            detail.append(
                self.tr(
                    "The original files on your disk are kept: only Trove's copies and "
                    "their index entries are removed."
                )
            )
        elif kinds & {ItemType.URL, ItemType.SITEMAP}:
            detail.append(
                self.tr("Only Trove's copies of the pages and their index entries are removed.")
            )
        if ItemType.NOTE in kinds:
            detail.append(self.tr("Notes exist only in Trove: their text is deleted too."))
        detail.append(self.tr("You can undo this for a few seconds."))
        return head + "\n\n" + "\n".join(detail)

    def _documents_in(self, items: list[Item]) -> int:
        """Documents among `items` and inside the folders and sitemaps among them."""
        found: set[str] = set()
        stack = [self.model.index_of(i.id) for i in items]
        while stack:
            index = stack.pop()
            item = self.model.item_at(index)
            if item is None:
                continue
            if item.type in CONTAINERS:
                stack.extend(
                    self.model.index(r, 0, index) for r in range(self.model.rowCount(index))
                )
            else:
                found.add(item.id)
        return len(found)

    def _confirm(self, title: str, question: str) -> bool:
        return ask_to_delete(self, title, question)


def _name(item: Item) -> str:
    return item.title or item.source
