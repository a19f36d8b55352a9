"""The list of knowledge bases on the left of the window: a list model over `Base` records and
the panel with create, attach, rename, detach and delete.

A base whose index lives on a PostgreSQL server carries a network-drive icon (a local one a
hard-drive icon) and names its server in the tooltip; it can be detached (this desktop
stops using it, it stays on the server) as well as deleted, and deleting it says that it
goes for everyone."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import (
    QAbstractListModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
    Signal,
    Slot,
)
from PySide6.QtGui import QAction, QIcon, QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QHBoxLayout,
    QStyle,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.knowledge.types import (
    AddReport,
    Base,
    BaseStatus,
    ImportReport,
    IndexBackend,
    Item,
    ItemType,
    VectorStop,
)
from app.ui import theme
from app.ui.bases.attach_dialog import AttachBaseDialog
from app.ui.bases.base_view import BASE_ROLE, BaseListView
from app.ui.bases.portable_flow import PortableFlow
from app.ui.context import UiContext
from app.ui.errors import item_error_text
from app.ui.items.add_flow import AddFlow
from app.ui.questions import ask_to_delete, ask_to_detach
from app.ui.settings.server_fields import where

Index = QModelIndex | QPersistentModelIndex
__all__ = ["BASE_ROLE", "BaseListModel", "BasesPanel"]


class BaseListModel(QAbstractListModel):
    # (base id, new name) typed into the list
    renameRequested = Signal(str, str)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._bases: list[Base] = []

    def set_bases(self, bases: list[Base]) -> None:
        """Show `bases`; rows that only changed are updated in place (selection survives)."""
        old_ids = [b.id for b in self._bases]
        new_ids = [b.id for b in bases]
        if old_ids != new_ids:
            self.beginResetModel()
            self._bases = list(bases)
            self.endResetModel()
            return
        for row, base in enumerate(bases):
            if base != self._bases[row]:
                self._bases[row] = base
                index = self.index(row)
                self.dataChanged.emit(index, index)

    def base(self, row: int) -> Base | None:
        return self._bases[row] if 0 <= row < len(self._bases) else None

    def row_of(self, base_id: str) -> int:
        return next((i for i, b in enumerate(self._bases) if b.id == base_id), -1)

    def rowCount(self, parent: Index = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self._bases)

    def flags(self, index: Index) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable | Qt.ItemFlag.ItemIsEditable

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> object:
        base = self.base(index.row()) if index.isValid() else None
        if base is None:
            return None
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.EditRole):
            return base.name
        if role == Qt.ItemDataRole.ToolTipRole:
            return self._tooltip(base)
        if role == Qt.ItemDataRole.ForegroundRole and base.status is BaseStatus.FAILED:
            return theme.message_colour("error")
        if role == Qt.ItemDataRole.DecorationRole:
            # Every row has an icon, so local and shared rows are the same height and
            # their names line up (a local row without one looked like a heading).
            return server_icon() if on_server(base) else local_icon()
        if role == BASE_ROLE:
            return base
        return None

    def setData(self, index: Index, value: object, role: int = Qt.ItemDataRole.EditRole) -> bool:
        base = self.base(index.row()) if index.isValid() else None
        if base is None or role != Qt.ItemDataRole.EditRole or not isinstance(value, str):
            return False
        name = value.strip()
        if name and name != base.name:
            self.renameRequested.emit(base.id, name)
        return False  # the list changes when the engine has saved the new name

    def _tooltip(self, base: Base) -> str:
        if base.status is BaseStatus.FAILED:
            said = self.tr("Needs restoring: {0}").format(base.status_reason or "")
        elif base.embedding_model:
            said = self.tr("Hybrid search with {0}").format(base.embedding_model)
        else:
            said = self.tr("Full-text search only")
        if on_server(base):
            shared = self.tr("Shared on the PostgreSQL server {0}").format(where(base.dsn))
            return f"{shared}\n{said}"
        return said


def on_server(base: Base) -> bool:
    return base.backend is IndexBackend.POSTGRES


def server_icon() -> QIcon:
    return QApplication.style().standardIcon(QStyle.StandardPixmap.SP_DriveNetIcon)


def local_icon() -> QIcon:
    return QApplication.style().standardIcon(QStyle.StandardPixmap.SP_DriveHDIcon)


class BasesPanel(QWidget):
    # another base was selected (None when nothing is selected)
    baseSelected = Signal(object)
    # the selected base's record changed (renamed, restored, settings saved)
    baseUpdated = Signal(object)
    newBaseRequested = Signal()
    # a base on a server was attached to this desktop (the Base)
    baseAttached = Signal(object)
    # a base was deleted (its id)
    baseDeleted = Signal(str)
    # items were copied or moved into another base (TransferReport)
    itemsTransferred = Signal(object)
    # an imported base needs a model chosen (its own is not set up here)
    modelNeeded = Signal(str)

    def __init__(self, ctx: UiContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("basesPanel")
        self._ctx = ctx
        self._selected_id: str | None = None
        self._loaded = False
        self._announced = False
        # Reads of the vector stage's state, counted so only the newest one is shown.
        self._vector_reads = 0
        self.model = BaseListModel(self)
        self.view = BaseListView(self)
        self.view.setModel(self.model)
        self.view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        # Rename with F2, a double click or the menu; a click on the selected base only
        # selects it (renaming on that click surprised people).
        self.view.setEditTriggers(
            QAbstractItemView.EditTrigger.EditKeyPressed
            | QAbstractItemView.EditTrigger.DoubleClicked
        )
        self.adder = AddFlow(ctx, self)
        self.portable = PortableFlow(ctx, self)
        self._asking_delete = False
        self.view.setContextMenuPolicy(Qt.ContextMenuPolicy.ActionsContextMenu)
        # Tests answer confirmations without a modal box.
        self.confirm: Callable[[str, str], bool] = self._confirm
        self.confirm_detach: Callable[[str, str], bool] = self._confirm_detach
        self._make_actions()
        self._layout()
        self._connect_signals()

    @property
    def loaded(self) -> bool:
        return self._loaded

    def selected_base(self) -> Base | None:
        indexes = self.view.selectionModel().selectedRows()
        return self.model.base(indexes[0].row()) if indexes else None

    def reload(self, select: str | None = None) -> None:
        """Read the bases again (off the GUI thread); optionally select one afterwards."""
        self._ctx.tasks.run(
            self._ctx.service.list_bases,
            lambda bases: self._on_loaded(bases, select),
            self._on_failed,
            owner=self,
        )

    def select(self, base_id: str) -> None:
        row = self.model.row_of(base_id)
        if row >= 0:
            self.view.setCurrentIndex(self.model.index(row))

    def _make_actions(self) -> None:
        self.new_action = QAction(self.tr("New knowledge base…"), self)
        self.new_action.setObjectName("newBaseAction")
        self.new_action.setShortcut(QKeySequence(QKeySequence.StandardKey.New))
        self.new_action.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
        self.rename_action = QAction(self.tr("Rename"), self)
        self.rename_action.setObjectName("renameBaseAction")
        self.rename_action.setShortcut(QKeySequence(Qt.Key.Key_F2))
        self.rename_action.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
        self.delete_action = QAction(self.tr("Delete knowledge base…"), self)
        self.delete_action.setObjectName("deleteBaseAction")
        self.delete_action.setShortcut(QKeySequence(QKeySequence.StandardKey.Delete))
        self.delete_action.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
        self.agents_action = QAction(self.tr("Allow AI agents to change this base"), self)
        self.agents_action.setObjectName("agentWritesAction")
        self.agents_action.setCheckable(True)
        self.agents_action.setToolTip(
            self.tr(
                "Agents connected through MCP may always search and read; with this on they "
                "may also add, delete and reindex items here."
            )
        )
        self.private_urls_action = QAction(
            self.tr("Let agents' web pages reach this computer and local network"), self
        )
        self.private_urls_action.setObjectName("agentPrivateUrlsAction")
        self.private_urls_action.setCheckable(True)
        self.private_urls_action.setToolTip(
            self.tr(
                "Off: web pages that agents add here, and those of an imported base, may only "
                "come from public internet addresses, never from localhost, your network or a "
                "cloud metadata service. Pages you add yourself may come from anywhere."
            )
        )
        self.pause_vectors_action = QAction(self.tr("Pause computing vectors"), self)
        self.pause_vectors_action.setObjectName("pauseVectorsAction")
        self.pause_vectors_action.setCheckable(True)
        self.pause_vectors_action.setToolTip(
            self.tr(
                "Documents are searchable by their words as soon as they are read; their "
                "vectors are computed afterwards. Pausing keeps the machine free (also after "
                "a restart) until you switch it off again."
            )
        )
        self.retry_vectors_action = QAction(self.tr("Compute vectors again"), self)
        self.retry_vectors_action.setObjectName("retryVectorsAction")
        self.retry_vectors_action.setVisible(False)
        self.export_action = QAction(self.tr("Export…"), self)
        self.export_action.setObjectName("exportBaseAction")
        self.import_action = QAction(self.tr("Import knowledge base…"), self)
        self.import_action.setObjectName("importBaseAction")
        self.attach_action = QAction(self.tr("Attach a shared knowledge base…"), self)
        self.attach_action.setObjectName("attachBaseAction")
        self.attach_action.setToolTip(
            self.tr("Use a knowledge base that another desktop created on a PostgreSQL server")
        )
        self.detach_action = QAction(self.tr("Detach from this desktop…"), self)
        self.detach_action.setObjectName("detachBaseAction")
        self.detach_action.setToolTip(
            self.tr("Stop using this shared knowledge base here; it stays on its server")
        )
        self.detach_action.setVisible(False)
        self.view.addActions(
            [
                self.new_action,
                self.attach_action,
                self.rename_action,
                self.detach_action,
                self.delete_action,
                self.agents_action,
                self.private_urls_action,
                self.pause_vectors_action,
                self.retry_vectors_action,
                self.export_action,
                self.import_action,
            ]
        )

    def _layout(self) -> None:
        buttons = QHBoxLayout()
        buttons.setContentsMargins(0, 0, 0, 0)
        style = self.style()
        for act, icon in (
            (self.new_action, QStyle.StandardPixmap.SP_FileDialogNewFolder),
            (self.rename_action, QStyle.StandardPixmap.SP_FileDialogDetailedView),
            (self.delete_action, QStyle.StandardPixmap.SP_TrashIcon),
        ):
            act.setIcon(style.standardIcon(icon))
            button = QToolButton(self)
            button.setDefaultAction(act)
            button.setObjectName(act.objectName().replace("Action", "Button"))
            buttons.addWidget(button)
        buttons.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.view, 1)
        layout.addLayout(buttons)

    def _connect_signals(self) -> None:
        self.view.selectionModel().selectionChanged.connect(self._on_selection_changed)
        self.model.modelReset.connect(self._on_selection_changed)
        self.model.dataChanged.connect(self._on_data_changed)
        self.model.renameRequested.connect(self._on_rename_requested)
        self.new_action.triggered.connect(self.newBaseRequested)
        self.rename_action.triggered.connect(self._on_rename)
        self.agents_action.toggled.connect(self._on_agents_toggled)
        self.private_urls_action.toggled.connect(self._on_private_urls_toggled)
        self.pause_vectors_action.toggled.connect(self._on_pause_vectors_toggled)
        self.retry_vectors_action.triggered.connect(self._on_retry_vectors)
        self.delete_action.triggered.connect(self._on_delete)
        self.view.sourcesDropped.connect(self._on_sources_dropped)
        self.adder.finished.connect(self._on_dropped_added)
        self.export_action.triggered.connect(self._on_export)
        self.import_action.triggered.connect(self.portable.import_file)
        self.attach_action.triggered.connect(self.open_attach_dialog)
        self.detach_action.triggered.connect(self._on_detach)
        self.view.itemsDropped.connect(self._on_items_dropped)
        self.portable.baseImported.connect(self._on_imported)
        self.portable.transferred.connect(self.itemsTransferred)
        self.portable.modelNeeded.connect(self.modelNeeded)

    def _on_loaded(self, bases: list[Base], select: str | None) -> None:
        self._loaded = True
        keep = select or self._selected_id
        self.model.set_bases(bases)
        if keep is not None and self.model.row_of(keep) >= 0:
            self.select(keep)
        elif bases and self.selected_base() is None:
            self.select(bases[0].id)
        self._on_selection_changed()

    def _on_failed(self, exc: BaseException) -> None:
        self._ctx.notifier.failure(exc)

    @Slot()
    def _on_selection_changed(self) -> None:
        base = self.selected_base()
        self.rename_action.setEnabled(base is not None)
        self.delete_action.setEnabled(base is not None)
        self.detach_action.setVisible(base is not None and on_server(base))
        self.export_action.setEnabled(base is not None)
        self._show_agent_writes(base)
        new_id = base.id if base is not None else None
        if new_id != self._selected_id or not self._announced:
            self._selected_id = new_id
            self._announced = True
            self.baseSelected.emit(base)

    @Slot()
    def _on_data_changed(self) -> None:
        base = self.selected_base()
        if base is not None:
            self._show_agent_writes(base)
            self.baseUpdated.emit(base)

    def _show_agent_writes(self, base: Base | None) -> None:
        self.agents_action.blockSignals(True)
        self.agents_action.setEnabled(base is not None)
        self.agents_action.setChecked(base is not None and base.agent_writes)
        self.agents_action.blockSignals(False)
        self.private_urls_action.blockSignals(True)
        self.private_urls_action.setEnabled(base is not None)
        self.private_urls_action.setChecked(base is not None and base.agent_private_urls)
        self.private_urls_action.blockSignals(False)
        self._show_vectors_paused(base)

    def _show_vectors_paused(self, base: Base | None) -> None:
        """The pause action of a base with an embedding model, checked as the catalog says
        (read off the GUI thread)."""
        action = self.pause_vectors_action
        action.setEnabled(base is not None and base.embedding_model is not None)
        if base is None or base.embedding_model is None:
            action.blockSignals(True)
            action.setChecked(False)
            action.blockSignals(False)
            self.retry_vectors_action.setVisible(False)
            return
        base_id = base.id
        service = self._ctx.service
        self._vector_reads += 1
        read = self._vector_reads
        self._ctx.tasks.run(
            lambda: (service.vectors_paused(base_id), service.vectors_stopped(base_id)),
            lambda state: self._on_vector_state_read(read, base_id, *state),
            self._on_failed,
            owner=self,
        )

    def _on_vector_state_read(
        self, read: int, base_id: str, paused: bool, stop: VectorStop | None
    ) -> None:
        selected = self.selected_base()
        if selected is None or selected.id != base_id:
            return  # another base was chosen meanwhile
        if read != self._vector_reads:
            return  # a later read, or the person's own toggle, came since: this one is stale
        self.pause_vectors_action.blockSignals(True)
        self.pause_vectors_action.setChecked(paused)
        self.pause_vectors_action.blockSignals(False)
        # Stopped by its provider (a rejected key, a model gone): the documents stay
        # searchable by their words; once the cause is fixed, the person starts it again.
        self.retry_vectors_action.setVisible(stop is not None)
        if stop is not None:
            self.retry_vectors_action.setToolTip(
                self.tr("Computing vectors stopped: {0}").format(
                    item_error_text(stop.code, stop.message)
                )
            )

    @Slot()
    def _on_retry_vectors(self) -> None:
        base = self.selected_base()
        if base is None:
            return
        base_id = base.id
        self._ctx.tasks.run(
            lambda: self._ctx.service.resume_vectors(base_id),
            self._on_vectors_resumed,
            self._on_failed,
            owner=self,
        )
        self.retry_vectors_action.setVisible(False)

    @Slot(bool)
    def _on_pause_vectors_toggled(self, paused: bool) -> None:
        base = self.selected_base()
        if base is None:
            return
        base_id = base.id
        service = self._ctx.service
        self._vector_reads += 1  # a read begun before this toggle must not undo it

        def change() -> bool:
            if paused:
                service.pause_vectors(base_id)
                return False
            return service.resume_vectors(base_id)

        self._ctx.tasks.run(change, self._on_vectors_resumed, self._on_failed, owner=self)

    def _on_vectors_resumed(self, queued: object) -> None:
        if queued:
            self._ctx.executor.schedule()  # the resumed stage waits in the queue
        # A read that began while the change was on its way may have shown the old state.
        self._show_vectors_paused(self.selected_base())

    @Slot(bool)
    def _on_agents_toggled(self, allowed: bool) -> None:
        base = self.selected_base()
        if base is None:
            return
        base_id = base.id
        self._ctx.tasks.run(
            lambda: self._ctx.service.set_agent_writes(base_id, allowed),
            lambda _base: self.reload(),
            self._on_failed,
            owner=self,
        )

    @Slot(bool)
    def _on_private_urls_toggled(self, allowed: bool) -> None:
        base = self.selected_base()
        if base is None:
            return
        base_id = base.id
        self._ctx.tasks.run(
            lambda: self._ctx.service.set_agent_private_urls(base_id, allowed),
            lambda _base: self.reload(),
            self._on_failed,
            owner=self,
        )

    @Slot()
    def _on_rename(self) -> None:
        index = self.view.currentIndex()
        if index.isValid():
            self.view.edit(index)

    @Slot(str, str)
    def _on_rename_requested(self, base_id: str, name: str) -> None:
        self._ctx.tasks.run(
            lambda: self._ctx.service.update_base(base_id, name=name),
            lambda _base: self.reload(),
            self._on_failed,
            owner=self,
        )

    @Slot(str, list, list)
    def _on_sources_dropped(self, base_id: str, paths: list[str], urls: list[str]) -> None:
        if paths:
            self.adder.add_paths(base_id, paths)
        if urls:
            self.adder.add_urls(base_id, urls)

    @Slot(object)
    def _on_dropped_added(self, report: AddReport) -> None:
        """Say where a drop went when that base is not the one on show."""
        if not report.added:
            return  # nothing new: failures and duplicates were already reported
        base_id = report.added[0].base_id
        shown = self.selected_base()
        base = self.model.base(self.model.row_of(base_id))
        if base is None or (shown is not None and shown.id == base_id):
            return
        self._ctx.notifier.notify(
            self.tr("Added %n source(s) to “{0}”", "", len(report.added)).format(base.name)
        )

    # -- portable bases and items between bases ----------------------------------------

    def transfer_items(self, source_id: str, item_ids: list[str], *, move: bool) -> None:
        """Copy to… / Move to…: ask which base, then copy (or move) the items there."""
        bases = [b for row in range(self.model.rowCount()) if (b := self.model.base(row))]
        usable = [b for b in bases if b.status is BaseStatus.COMPLETED]
        self.portable.pick_target_and_transfer(source_id, item_ids, usable, move=move)

    @Slot()
    def _on_export(self) -> None:
        base = self.selected_base()
        if base is not None:
            self.portable.export_base(base)

    @Slot(str, str, list, bool)
    def _on_items_dropped(
        self, target_id: str, source_id: str, item_ids: list[str], move: bool
    ) -> None:
        target = self.model.base(self.model.row_of(target_id))
        if target is not None:
            self.portable.transfer(source_id, item_ids, target, move=move)

    @Slot(object)
    def _on_imported(self, report: ImportReport) -> None:
        self.reload(select=report.base.id)

    # -- shared bases on a server -------------------------------------------------------

    @Slot()
    def open_attach_dialog(self) -> AttachBaseDialog:
        dialog = AttachBaseDialog(self._ctx, self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.baseAttached.connect(self._on_attached)
        dialog.open()
        return dialog

    @Slot(object)
    def _on_attached(self, base: Base) -> None:
        self.reload(select=base.id)
        self.baseAttached.emit(base)

    @Slot()
    def _on_detach(self) -> None:
        base = self.selected_base()
        if base is None or not on_server(base):
            return
        question = self.tr("Stop using “{0}” on this desktop?").format(base.name)
        detail = self.tr(
            "It stays on the server {0} for everyone who uses it, and you can attach it "
            "again. Trove's copies of the files added from this desktop are removed here."
        ).format(where(base.dsn))
        if not self.confirm_detach(self.tr("Detach knowledge base"), f"{question}\n\n{detail}"):
            return
        base_id = base.id

        def detached(_none: object) -> None:
            self.baseDeleted.emit(base_id)  # gone from this window as if deleted
            self.reload()

        self._ctx.tasks.run(
            lambda: self._ctx.service.detach_base(base_id), detached, self._on_failed, owner=self
        )

    def _confirm_detach(self, title: str, question: str) -> bool:
        return ask_to_detach(self, title, question)

    # -- deleting -----------------------------------------------------------------------

    @Slot()
    def _on_delete(self) -> None:
        """Count what the base holds (off the GUI thread), then ask."""
        base = self.selected_base()
        if base is None or self._asking_delete:
            return
        self._asking_delete = True
        service = self._ctx.service
        base_id = base.id
        self._ctx.tasks.run(
            lambda: service.list_items(base_id),
            lambda items: self._ask_delete(base, items),
            lambda _exc: self._ask_delete(base, None),
            owner=self,
        )

    def _ask_delete(self, base: Base, items: list[Item] | None) -> None:
        try:
            confirmed = self.confirm(
                self.tr("Delete knowledge base"), self._deletion_question(base, items)
            )
        finally:
            self._asking_delete = False
        if not confirmed:
            return
        base_id = base.id

        def deleted(_none: object) -> None:
            self.baseDeleted.emit(base_id)
            self.reload()

        self._ctx.tasks.run(
            lambda: self._ctx.service.delete_base(base_id), deleted, self._on_failed, owner=self
        )

    def _deletion_question(self, base: Base, items: list[Item] | None) -> str:
        """The base's name, what it holds (when that could be read), and what is kept; for a
        base on a server, that it goes for everyone and that detaching is the other way."""
        detail: list[str] = []
        if on_server(base):
            detail.append(
                self.tr(
                    "It is deleted from the server {0} for everyone who uses it, not only on "
                    "this desktop. To stop using it here only, choose “Detach from this "
                    "desktop” instead."
                ).format(where(base.dsn))
            )
        if items is not None:
            documents = [i for i in items if i.type not in (ItemType.DIRECTORY, ItemType.SITEMAP)]
            notes = sum(1 for i in documents if i.type is ItemType.NOTE)
            detail.append(self.tr("It holds %n document(s).", "", len(documents)))
            if notes:
                detail.append(
                    self.tr("Its %n note(s) exist only in Trove and are deleted too.", "", notes)
                )
        detail.append(
            self.tr(
                "The original files on your disk are kept: only Trove's copies, the index and "
                "the base's settings are removed."
            )
        )
        detail.append(self.tr("This cannot be undone."))
        if on_server(base):
            head = self.tr("Delete the shared knowledge base “{0}” for everyone?").format(base.name)
        else:
            head = self.tr("Delete the knowledge base “{0}”?").format(base.name)
        return head + "\n\n" + "\n".join(detail)

    def _confirm(self, title: str, question: str) -> bool:
        return ask_to_delete(self, title, question)
