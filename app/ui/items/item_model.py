"""The item tree: one QAbstractItemModel over a base's catalog items.

The model holds plain `Item` records (napari style: a thin Qt layer over Python data). It never
reads the catalog itself: the owner hands it complete item lists (`apply_items`) and live
progress (`set_progress`), and it works out which rows were inserted, removed or changed, so
only those rows are repainted.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field
from enum import IntEnum

from PySide6.QtCore import (
    QAbstractItemModel,
    QCoreApplication,
    QDateTime,
    QLocale,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
)

from app.knowledge.types import RUNNING_STATUSES, Item, ItemStatus, ItemType
from app.ui import errors

Index = QModelIndex | QPersistentModelIndex


class Column(IntEnum):
    NAME = 0
    TYPE = 1
    STATUS = 2
    CHUNKS = 3
    SIZE = 4
    UPDATED = 5


_COLUMNS = 6  # len(Column), which is slow to ask in the hot paths


class Role(IntEnum):
    ITEM = Qt.ItemDataRole.UserRole + 1
    STATUS = Qt.ItemDataRole.UserRole + 2
    PHASE = Qt.ItemDataRole.UserRole + 3
    PROGRESS = Qt.ItemDataRole.UserRole + 4
    # Counter of the children's statuses, for directories and sitemaps
    AGGREGATE = Qt.ItemDataRole.UserRole + 5
    ITEM_ID = Qt.ItemDataRole.UserRole + 6
    # a value that sorts naturally (numbers for sizes and counts)
    SORT = Qt.ItemDataRole.UserRole + 7


CONTAINERS = frozenset({ItemType.DIRECTORY, ItemType.SITEMAP})
_ANSWERED_ROLES = frozenset(
    {
        Qt.ItemDataRole.DisplayRole,
        Qt.ItemDataRole.ToolTipRole,
        Qt.ItemDataRole.TextAlignmentRole,
        *Role,
    }
)
_RIGHT = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)


def status_label(status: ItemStatus) -> str:
    labels = {
        ItemStatus.PREPARING: QCoreApplication.translate("ItemTreeModel", "Preparing"),
        ItemStatus.PROCESSING: QCoreApplication.translate("ItemTreeModel", "Processing"),
        ItemStatus.COMPLETED: QCoreApplication.translate("ItemTreeModel", "Completed"),
        ItemStatus.FAILED: QCoreApplication.translate("ItemTreeModel", "Failed"),
        ItemStatus.DELETING: QCoreApplication.translate("ItemTreeModel", "Deleting"),
    }
    return labels[status]


def phase_label(phase: str) -> str:
    labels = {
        "reading": QCoreApplication.translate("ItemTreeModel", "Reading"),
        "embedding": QCoreApplication.translate("ItemTreeModel", "Embedding"),
        "writing": QCoreApplication.translate("ItemTreeModel", "Writing"),
        "waiting": QCoreApplication.translate("ItemTreeModel", "Waiting"),
    }
    return labels.get(phase, phase)


def type_label(kind: ItemType) -> str:
    labels = {
        ItemType.FILE: QCoreApplication.translate("ItemTreeModel", "File"),
        ItemType.DIRECTORY: QCoreApplication.translate("ItemTreeModel", "Folder"),
        ItemType.URL: QCoreApplication.translate("ItemTreeModel", "Web page"),
        ItemType.SITEMAP: QCoreApplication.translate("ItemTreeModel", "Sitemap"),
        ItemType.NOTE: QCoreApplication.translate("ItemTreeModel", "Note"),
    }
    return labels[kind]


def header_label(column: Column) -> str:
    labels = {
        Column.NAME: QCoreApplication.translate("ItemTreeModel", "Name"),
        Column.TYPE: QCoreApplication.translate("ItemTreeModel", "Type"),
        Column.STATUS: QCoreApplication.translate("ItemTreeModel", "Status"),
        Column.CHUNKS: QCoreApplication.translate("ItemTreeModel", "Chunks"),
        Column.SIZE: QCoreApplication.translate("ItemTreeModel", "Size"),
        Column.UPDATED: QCoreApplication.translate("ItemTreeModel", "Updated"),
    }
    return labels[column]


@dataclass(eq=False)
class _Node:
    item: Item | None
    parent: _Node | None
    children: list[_Node] = field(default_factory=list)
    aggregate: Counter[ItemStatus] = field(default_factory=Counter)

    def row(self) -> int:
        assert self.parent is not None
        return self.parent.children.index(self)


class ItemTreeModel(QAbstractItemModel):
    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._root = _Node(None, None)
        self._nodes: dict[str, _Node] = {}
        # item id -> (phase, percent) reported by the runtime since the last catalog read
        self._live: dict[str, tuple[str, float]] = {}
        self._locale = QLocale()

    # -- feeding ---------------------------------------------------------------------------

    def clear(self) -> None:
        self.beginResetModel()
        self._root = _Node(None, None)
        self._nodes.clear()
        self._live.clear()
        self.endResetModel()

    def apply_items(self, items: list[Item]) -> list[tuple[Item | None, Item]]:
        """Make the tree show exactly `items`; returns (old, new) for every item whose record
        changed (old is None for new items), so the owner can react to status changes."""
        wanted = {item.id: item for item in items}
        self._remove_missing(wanted)
        changes = self._update_existing(wanted)
        changes.extend(self._insert_new(items))
        self._refresh_aggregates()
        return changes

    def set_progress(self, item_id: str, phase: str, percent: float) -> None:
        node = self._nodes.get(item_id)
        if node is None or node.item is None or node.item.status not in RUNNING_STATUSES:
            return
        if self._live.get(item_id) == (phase, percent):
            return
        self._live[item_id] = (phase, percent)
        index = self._index_of(node, Column.STATUS)
        self.dataChanged.emit(index, index, [Role.PHASE, Role.PROGRESS])

    # -- lookups ---------------------------------------------------------------------------

    def item(self, index: Index) -> Item | None:
        node = self._node(index)
        return node.item if node is not self._root else None

    def index_of(self, item_id: str, column: int = 0) -> QModelIndex:
        node = self._nodes.get(item_id)
        return self._index_of(node, column) if node is not None else QModelIndex()

    def items(self) -> list[Item]:
        return [n.item for n in self._nodes.values() if n.item is not None]

    def status_counts(self) -> Counter[ItemStatus]:
        return Counter(item.status for item in self.items() if item.type not in CONTAINERS)

    # -- Qt model interface ----------------------------------------------------------------

    def index(self, row: int, column: int, parent: Index = QModelIndex()) -> QModelIndex:
        node = parent.internalPointer() if parent.isValid() else self._root
        if 0 <= row < len(node.children) and 0 <= column < _COLUMNS:
            return self.createIndex(row, column, node.children[row])
        return QModelIndex()

    def parent(self, index: Index = QModelIndex()) -> QModelIndex:  # type: ignore[override]
        if not index.isValid():
            return QModelIndex()
        node = self._node(index)
        parent = node.parent
        if parent is None or parent is self._root:
            return QModelIndex()
        return self.createIndex(parent.row(), 0, parent)

    def rowCount(self, parent: Index = QModelIndex()) -> int:
        if parent.isValid() and parent.column() != 0:
            return 0
        return len(self._node(parent).children)

    def columnCount(self, parent: Index = QModelIndex()) -> int:
        return _COLUMNS

    def hasChildren(self, parent: Index = QModelIndex()) -> bool:
        return self.rowCount(parent) > 0

    def flags(self, index: Index) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.ItemIsDropEnabled
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> object:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return header_label(Column(section))
        return None

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> object:
        # Views ask for a dozen roles per cell on every paint; most are answered here at once.
        if role not in _ANSWERED_ROLES or not index.isValid():
            return None
        node: _Node = index.internalPointer()
        item = node.item
        if item is None:
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return self._display(node, item, Column(index.column()))
        if role == Qt.ItemDataRole.ToolTipRole:
            return self._tooltip(item)
        if role == Qt.ItemDataRole.TextAlignmentRole:
            return _RIGHT if index.column() in (Column.CHUNKS, Column.SIZE) else None
        if role == Role.SORT:
            return self._sort_key(node, item, Column(index.column()))
        return self._custom(node, item, role)

    # -- internals -------------------------------------------------------------------------

    def _node(self, index: Index) -> _Node:
        if not index.isValid():
            return self._root
        node = index.internalPointer()
        assert isinstance(node, _Node)
        return node

    def _index_of(self, node: _Node, column: int = 0) -> QModelIndex:
        if node is self._root or node.parent is None:
            return QModelIndex()
        return self.createIndex(node.row(), column, node)

    def _display(self, node: _Node, item: Item, column: Column) -> object:
        if column is Column.NAME:
            return item.title or item.source
        if column is Column.TYPE:
            return type_label(item.type)
        if column is Column.STATUS:
            return status_label(item.status)
        if column is Column.CHUNKS:
            return self._locale.toString(self._chunks(node)) if self._chunks(node) else ""
        if column is Column.SIZE:
            size = self._size(node)
            return self._locale.formattedDataSize(size) if size else ""
        return self._when(item.updated_at)

    def _tooltip(self, item: Item) -> str:
        if item.status is ItemStatus.FAILED:
            return f"{errors.headline(item.error_code)}\n{item.error_message or ''}".strip()
        return item.source

    def _custom(self, node: _Node, item: Item, role: int) -> object:
        if role == Role.ITEM:
            return item
        if role == Role.ITEM_ID:
            return item.id
        if role == Role.STATUS:
            return item.status
        if role == Role.PHASE:
            live = self._live.get(item.id)
            if item.status not in RUNNING_STATUSES:
                return None
            return live[0] if live else (item.phase.value if item.phase else None)
        if role == Role.PROGRESS:
            live = self._live.get(item.id)
            if item.status not in RUNNING_STATUSES:
                return None
            return live[1] if live else item.progress
        if role == Role.AGGREGATE:
            return node.aggregate if item.type in CONTAINERS else None
        return None

    def _sort_key(self, node: _Node, item: Item, column: Column) -> object:
        keys: dict[Column, object] = {
            Column.NAME: (item.title or item.source).casefold(),
            Column.TYPE: item.type.value,
            Column.STATUS: list(ItemStatus).index(item.status),
            Column.CHUNKS: self._chunks(node),
            Column.SIZE: self._size(node),
            Column.UPDATED: item.updated_at,
        }
        return keys[column]

    def _chunks(self, node: _Node) -> int:
        assert node.item is not None
        if node.item.type in CONTAINERS:
            return sum(self._chunks(c) for c in node.children)
        return node.item.chunk_count

    def _size(self, node: _Node) -> int:
        assert node.item is not None
        if node.item.type in CONTAINERS and node.children:
            return sum(self._size(c) for c in node.children)
        return node.item.size or 0

    def _when(self, stamp: float) -> str:
        fmt = QLocale.FormatType.ShortFormat
        when = QDateTime.fromMSecsSinceEpoch(int(stamp * 1000))
        if time.time() - stamp < 86_400:
            return self._locale.toString(when.time(), fmt)
        return self._locale.toString(when, fmt)

    def _remove_missing(self, wanted: dict[str, Item]) -> None:
        gone = [n for i, n in self._nodes.items() if i not in wanted]
        for node in gone:
            if node.parent is None or node.item is None or node.item.id not in self._nodes:
                continue  # already removed with its parent
            row = node.row()
            self.beginRemoveRows(self._index_of(node.parent), row, row)
            node.parent.children.pop(row)
            self._forget(node)
            self.endRemoveRows()

    def _forget(self, node: _Node) -> None:
        for child in node.children:
            self._forget(child)
        if node.item is not None:
            self._nodes.pop(node.item.id, None)
            self._live.pop(node.item.id, None)

    def _update_existing(self, wanted: dict[str, Item]) -> list[tuple[Item | None, Item]]:
        changes: list[tuple[Item | None, Item]] = []
        for item_id, node in self._nodes.items():
            new = wanted[item_id]
            old = node.item
            if old == new:
                continue
            node.item = new
            if old is not None and (
                new.status is not old.status or new.status not in RUNNING_STATUSES
            ):
                self._live.pop(item_id, None)  # the catalog has newer news than the runtime
            changes.append((old, new))
            self.dataChanged.emit(self._index_of(node, 0), self._index_of(node, _COLUMNS - 1))
        return changes

    def _insert_new(self, items: list[Item]) -> list[tuple[Item | None, Item]]:
        fresh = [i for i in items if i.id not in self._nodes]
        added: list[tuple[Item | None, Item]] = []
        pending = fresh
        # Parents first: a child whose parent is also new waits for the next pass.
        while pending:
            later: list[Item] = []
            batch: dict[str, list[Item]] = {}
            for item in pending:
                parent_id = item.parent_id or ""
                if parent_id and parent_id not in self._nodes:
                    later.append(item)
                else:
                    batch.setdefault(parent_id, []).append(item)
            if not batch:
                # Orphans (parent not in the list): show them at the top level.
                batch[""] = later
                later = []
            for parent_id, group in batch.items():
                self._insert_group(self._nodes[parent_id] if parent_id else self._root, group)
                added.extend((None, item) for item in group)
            pending = later
        return added

    def _insert_group(self, parent: _Node, group: list[Item]) -> None:
        first = len(parent.children)
        self.beginInsertRows(self._index_of(parent), first, first + len(group) - 1)
        for item in group:
            node = _Node(item, parent)
            parent.children.append(node)
            self._nodes[item.id] = node
        self.endInsertRows()

    def _refresh_aggregates(self) -> None:
        for node in self._nodes.values():
            if node.item is None or node.item.type not in CONTAINERS:
                continue
            counts = Counter(c.item.status for c in node.children if c.item is not None)
            if counts != node.aggregate:
                node.aggregate = counts
                first = self._index_of(node, 0)
                self.dataChanged.emit(first, self._index_of(node, _COLUMNS - 1))
