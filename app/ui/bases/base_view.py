"""The base list's view: files, folders and links dropped on a base's name go into that base,
and items dragged from the item tree onto another base are copied there (Shift: moved).

Drops are always accepted as copies: accepting the proposed action could complete as a
move, and the drag source (a file manager) would then delete the originals; a move of
Trove's own items is done by the engine once the copy exists."""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QPoint, Qt, Signal
from PySide6.QtGui import (
    QDragEnterEvent,
    QDragLeaveEvent,
    QDragMoveEvent,
    QDropEvent,
    QPainter,
    QPaintEvent,
    QPen,
)
from PySide6.QtWidgets import QAbstractItemView, QListView, QWidget

from app.knowledge.types import Base, BaseStatus
from app.ui.items.item_drag import dragged_items, wants_move
from app.ui.items.item_view import split_drop

BASE_ROLE = Qt.ItemDataRole.UserRole + 1


class BaseListView(QListView):
    # (base id, local paths, web URLs) dropped on a base's name
    sourcesDropped = Signal(str, list, list)
    # (target base id, source base id, item ids, move) dropped from the item tree
    itemsDropped = Signal(str, str, list, bool)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("baseList")
        self.setAcceptDrops(True)
        self.setDragDropMode(QAbstractItemView.DragDropMode.DropOnly)
        self.setDropIndicatorShown(False)
        self._drop_target = QModelIndex()

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if any(split_drop(event.mimeData())) or dragged_items(event.mimeData()) is not None:
            event.setDropAction(Qt.DropAction.CopyAction)
            event.accept()
        else:
            event.ignore()

    def dragMoveEvent(self, event: QDragMoveEvent) -> None:
        target = self._base_at(event.position().toPoint())
        items = dragged_items(event.mimeData())
        if items is not None:
            # Items go to another base only; their own base is no target.
            base = target.data(BASE_ROLE) if target.isValid() else None
            if not isinstance(base, Base) or base.id == items.base_id:
                target = QModelIndex()
        self._set_drop_target(target)
        if target.isValid() and (items is not None or any(split_drop(event.mimeData()))):
            event.setDropAction(Qt.DropAction.CopyAction)
            event.accept(self.visualRect(target))
        else:
            event.ignore()

    def dragLeaveEvent(self, event: QDragLeaveEvent) -> None:
        self._set_drop_target(QModelIndex())
        event.accept()

    def dropEvent(self, event: QDropEvent) -> None:
        self._set_drop_target(QModelIndex())
        target = self._base_at(event.position().toPoint())
        base = target.data(BASE_ROLE) if target.isValid() else None
        items = dragged_items(event.mimeData())
        if items is not None:
            if not isinstance(base, Base) or base.id == items.base_id:
                event.ignore()
                return
            event.setDropAction(Qt.DropAction.CopyAction)
            event.accept()
            move = wants_move(event.modifiers())
            self.itemsDropped.emit(base.id, items.base_id, items.item_ids, move)
            return
        paths, urls = split_drop(event.mimeData())
        if not isinstance(base, Base) or not (paths or urls):
            event.ignore()
            return
        event.setDropAction(Qt.DropAction.CopyAction)
        event.accept()
        self.sourcesDropped.emit(base.id, paths, urls)

    def paintEvent(self, event: QPaintEvent) -> None:
        super().paintEvent(event)
        if not self._drop_target.isValid():
            return
        # The base that will receive the drop, outlined.
        painter = QPainter(self.viewport())
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        pen = QPen(self.palette().highlight().color(), 2)
        painter.setPen(pen)
        painter.drawRoundedRect(self.visualRect(self._drop_target).adjusted(1, 1, -1, -1), 4, 4)
        painter.end()

    def _base_at(self, pos: QPoint) -> QModelIndex:
        """The row under `pos` when its base can take new content, else an invalid index."""
        index = self.indexAt(pos)
        base = index.data(BASE_ROLE) if index.isValid() else None
        if isinstance(base, Base) and base.status is BaseStatus.COMPLETED:
            return index
        return QModelIndex()

    def _set_drop_target(self, index: QModelIndex) -> None:
        if index != self._drop_target:
            self._drop_target = index
            self.viewport().update()
