"""Linked folders in the item tree: the actions (link a new folder, keep a folder in sync,
stop, sync now, show the changes) and the sync state shown on each linked folder's row."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QObject, QTimer, Slot
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QStyle, QWidget

from app.knowledge.service import SyncState
from app.knowledge.types import Item, ItemStatus, ItemType
from app.ui.context import UiContext
from app.ui.items.file_picking import pick_folder
from app.ui.items.item_model import ItemTreeModel
from app.ui.items.sync_log_dialog import SyncLogDialog
from app.ui.items.sync_texts import short_state, tooltip_lines

log = logging.getLogger(__name__)

RELOAD_DELAY_MS = 300
# While a sync is queued or running, its "syncing n/m" is read this often.
POLL_MS = 1000


class LinkedFolders(QObject):
    def __init__(
        self,
        ctx: UiContext,
        model: ItemTreeModel,
        selected: Callable[[], Item | None],
        after_queueing: Callable[[object], None],
        parent: QWidget,
    ) -> None:
        super().__init__(parent)
        self._ctx = ctx
        self._model = model
        self._selected = selected
        self._after_queueing = after_queueing
        self._widget = parent
        self._base_id: str | None = None
        self._generation = 0
        self.states: dict[str, SyncState] = {}
        self.log_dialog: SyncLogDialog | None = None
        self._usable = False
        self._reload = QTimer(self)
        self._reload.setSingleShot(True)
        self._reload.setInterval(RELOAD_DELAY_MS)
        self._poll = QTimer(self)
        self._poll.setInterval(POLL_MS)
        self.add_linked_action = self._action(
            self.tr("Link folder (keep in sync)…"), "addLinkedFolderAction"
        )
        # Short beside its icon in the toolbar, in full in the menus.
        self.add_linked_action.setIconText(self.tr("Link folder"))
        self.add_linked_action.setIcon(
            parent.style().standardIcon(QStyle.StandardPixmap.SP_DirLinkIcon)
        )
        self.sync_action = self._action(self.tr("Sync now"), "syncFolderAction")
        self.link_action = self._action(self.tr("Keep in sync with its folder"), "linkFolderAction")
        self.unlink_action = self._action(self.tr("Stop keeping in sync"), "unlinkFolderAction")
        self.changes_action = self._action(self.tr("Sync changes…"), "syncChangesAction")
        self._connect_signals()

    def _action(self, text: str, name: str) -> QAction:
        act = QAction(text, self._widget)
        act.setObjectName(name)
        return act

    def _connect_signals(self) -> None:
        self._reload.timeout.connect(self._on_reload_due)
        self._poll.timeout.connect(self._on_reload_due)
        self._ctx.executor.itemsChanged.connect(self._on_items_changed)
        self._ctx.executor.queueChanged.connect(self._on_queue_changed)
        self.add_linked_action.triggered.connect(self._on_add_linked)
        self.sync_action.triggered.connect(self._on_sync)
        self.link_action.triggered.connect(self._on_link)
        self.unlink_action.triggered.connect(self._on_unlink)
        self.changes_action.triggered.connect(self._on_show_changes)

    # -- public ----------------------------------------------------------------------------

    @property
    def item_actions(self) -> list[QAction]:
        return [self.sync_action, self.link_action, self.unlink_action, self.changes_action]

    def set_base(self, base_id: str | None) -> None:
        if base_id == self._base_id:
            return
        self._base_id = base_id
        self._generation += 1
        self.states = {}
        self._poll.stop()
        self._model.set_sync_states({})
        if base_id is not None:
            self._on_reload_due()

    def reload_soon(self) -> None:
        if self._base_id is not None and not self._reload.isActive():
            self._reload.start()

    def update(self, usable: bool) -> None:
        """Enable what applies to the one selected item."""
        self._usable = usable
        one = self._selected()
        folder = (
            one is not None
            and one.type is ItemType.DIRECTORY
            and one.parent_id is None
            and one.status is not ItemStatus.DELETING
        )
        linked = folder and one is not None and one.id in self.states
        self.add_linked_action.setEnabled(usable)
        self.sync_action.setEnabled(usable and linked)
        self.changes_action.setEnabled(linked)
        self.unlink_action.setEnabled(usable and linked)
        self.link_action.setEnabled(usable and folder and not linked)
        self.sync_action.setVisible(linked)
        self.changes_action.setVisible(linked)
        self.unlink_action.setVisible(linked)
        self.link_action.setVisible(folder and not linked)

    # -- reading states --------------------------------------------------------------------

    @Slot()
    def _on_reload_due(self) -> None:
        base_id = self._base_id
        if base_id is None:
            return
        generation = self._generation
        service = self._ctx.service
        self._ctx.tasks.run(
            lambda: service.sync_states(base_id, service.watching()),
            lambda states: self._on_loaded(generation, states),
            self._on_load_failed,
            owner=self,
        )

    def _on_loaded(self, generation: int, states: dict[str, SyncState]) -> None:
        if generation != self._generation:
            return
        self.states = states
        self._model.set_sync_states(
            {
                item_id: (short_state(state), "\n".join(tooltip_lines(state)))
                for item_id, state in states.items()
            }
        )
        self.update(self._usable)  # linked or not may have changed for the selected row
        busy = any(s.pending or s.link.syncing for s in states.values())
        if busy and not self._poll.isActive():
            self._poll.start()
        elif not busy:
            self._poll.stop()

    def _on_load_failed(self, exc: BaseException) -> None:
        log.warning("reading the sync states of base %s failed: %s", self._base_id, exc)

    @Slot(str, list)
    def _on_items_changed(self, base_id: str, _item_ids: list[str]) -> None:
        if base_id == self._base_id:
            self.reload_soon()

    @Slot(str, int, int)
    def _on_queue_changed(self, base_id: str, _queued: int, _running: int) -> None:
        if base_id == self._base_id:
            self.reload_soon()

    # -- actions ---------------------------------------------------------------------------

    @Slot()
    def _on_add_linked(self) -> None:
        folder = pick_folder(self._widget, self._ctx, self.tr("Link folder"))
        if folder:
            self.add_linked(folder)

    def add_linked(self, folder: str) -> None:
        base_id = self._base_id
        if base_id is None:
            return
        self._queue(lambda: self._ctx.service.add_linked_folders(base_id, [Path(folder)]))

    @Slot()
    def _on_sync(self) -> None:
        one, base_id = self._selected(), self._base_id
        if one is not None and base_id is not None:
            self._queue(lambda: self._ctx.service.request_sync(base_id, [one.id]))

    @Slot()
    def _on_link(self) -> None:
        one, base_id = self._selected(), self._base_id
        if one is not None and base_id is not None:
            self._queue(lambda: self._ctx.service.link_folder(base_id, one.id))

    @Slot()
    def _on_unlink(self) -> None:
        one, base_id = self._selected(), self._base_id
        if one is not None and base_id is not None:
            self._queue(lambda: self._ctx.service.unlink_folder(base_id, one.id))

    def _queue(self, call: Callable[[], object]) -> None:
        self._ctx.tasks.run(call, self._on_queued, self._on_failed, owner=self)

    def _on_queued(self, result: object) -> None:
        self._after_queueing(result)
        self.reload_soon()

    @Slot()
    def _on_show_changes(self) -> None:
        one = self._selected()
        if one is None:
            return
        self._ctx.tasks.run(
            lambda: self._ctx.service.sync_log(one.id),
            lambda entries: self._show_log(one, entries),
            self._on_failed,
            owner=self,
        )

    def _on_failed(self, exc: BaseException) -> None:
        self._ctx.notifier.failure(exc)

    def _show_log(self, item: Item, entries: object) -> None:
        dialog = SyncLogDialog(item.source, list(entries) if isinstance(entries, list) else [])
        dialog.setParent(self._widget, dialog.windowFlags())
        dialog.setModal(False)
        dialog.show()
        self.log_dialog = dialog
