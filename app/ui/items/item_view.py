"""The item tree view: drops of files, folders and URLs, and a hint while the base is empty.

A drop is always taken as a copy: Trove keeps copies of what it indexes, and a drag source
told "moved" (a file manager, a mail client) may delete the person's original. A source that
offers only a move is refused for the same reason.
"""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import urlsplit

from PySide6.QtCore import QMimeData, QRect, Qt, Signal
from PySide6.QtGui import (
    QDrag,
    QDragEnterEvent,
    QDragMoveEvent,
    QDropEvent,
    QKeyEvent,
    QPainter,
    QPaintEvent,
)
from PySide6.QtWidgets import QAbstractItemView, QTreeView, QWidget

WEB_SCHEMES = ("http", "https")


def split_drop(mime: QMimeData) -> tuple[list[str], list[str]]:
    """(local paths, web URLs) carried by a drop; other schemes are ignored."""
    paths: list[str] = []
    urls: list[str] = []
    for url in mime.urls():
        if url.isLocalFile():
            paths.append(url.toLocalFile())
        elif url.scheme() in WEB_SCHEMES:
            urls.append(url.toString())
    if not paths and not urls and mime.hasText():
        # Browsers and editors often drag a link as plain text.
        for line in mime.text().split():
            if urlsplit(line).scheme in WEB_SCHEMES:
                urls.append(line)
    return paths, urls


def accept_as_copy(event: QDropEvent) -> None:
    """Accept a drag or drop as a copy, whatever the source proposed."""
    if not event.possibleActions() & Qt.DropAction.CopyAction:
        event.ignore()
        return
    event.setDropAction(Qt.DropAction.CopyAction)
    event.accept()


class ItemTreeView(QTreeView):
    pathsDropped = Signal(list)
    urlsDropped = Signal(list)
    # F2 that no enabled action took (only notes can be edited)
    editKeyUnused = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("itemTree")
        self.setAcceptDrops(True)
        # Items drag out (onto another base in the base list); only sources drop in.
        self.setDragDropMode(QAbstractItemView.DragDropMode.DragDrop)
        self.setDragEnabled(True)
        self.setDropIndicatorShown(False)
        # What a drag of the selected rows carries (None: nothing to drag); set by the panel.
        self.drag_payload: Callable[[], QMimeData | None] = lambda: None
        self.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setUniformRowHeights(True)
        self.setAlternatingRowColors(True)
        self.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.setSortingEnabled(True)
        self._empty_hint = ""

    def set_empty_hint(self, text: str) -> None:
        self._empty_hint = text
        self.viewport().update()

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if any(split_drop(event.mimeData())):
            accept_as_copy(event)
        else:
            event.ignore()

    def dragMoveEvent(self, event: QDragMoveEvent) -> None:
        if any(split_drop(event.mimeData())):
            accept_as_copy(event)
        else:
            event.ignore()

    def dropEvent(self, event: QDropEvent) -> None:
        paths, urls = split_drop(event.mimeData())
        if not paths and not urls:
            event.ignore()
            return
        accept_as_copy(event)
        if not event.isAccepted():
            return
        if paths:
            self.pathsDropped.emit(paths)
        if urls:
            self.urlsDropped.emit(urls)

    def startDrag(self, supportedActions: Qt.DropAction) -> None:
        # Trove's own payload, never the model's rows: a drop must not remove rows here
        # (a move deletes through the engine, once the copy exists).
        mime = self.drag_payload()
        if mime is None:
            return
        drag = QDrag(self)
        drag.setMimeData(mime)
        drag.exec(Qt.DropAction.CopyAction | Qt.DropAction.MoveAction, Qt.DropAction.CopyAction)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        # An enabled "Edit note" action takes F2 as a shortcut before it gets here.
        if event.key() == Qt.Key.Key_F2 and not event.modifiers():
            event.accept()
            self.editKeyUnused.emit()
            return
        super().keyPressEvent(event)

    def paintEvent(self, event: QPaintEvent) -> None:
        super().paintEvent(event)
        model = self.model()
        if self._empty_hint and (model is None or model.rowCount() == 0):
            painter = QPainter(self.viewport())
            painter.setPen(self.palette().placeholderText().color())
            area: QRect = self.viewport().rect().adjusted(24, 24, -24, -24)
            painter.drawText(
                area, int(Qt.AlignmentFlag.AlignCenter | Qt.TextFlag.TextWordWrap), self._empty_hint
            )
            painter.end()
