"""The item tree: one item model over a base's catalog items.

The model never reads the catalog itself: the owner hands it complete item lists
(`apply_items`) and live progress (`set_progress`), and it works out which rows were
inserted, removed or changed, so only those rows are repainted.

It keeps the cells in a QStandardItemModel on purpose. A Python QAbstractItemModel answers
every role of every visible cell through a Python call (about 1,200 per paint of the tree);
while worker threads index documents each of those calls waits for the GIL, and painting
took 50-200 ms. With the cells held by Qt a paint makes about 25 Python calls (the status
delegate), and the window stays responsive during big imports (tests/ui/test_responsiveness.py).
The Python `Item` records stay the source of truth: cells are derived from them.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field
from enum import IntEnum

from PySide6.QtCore import (
    QCoreApplication,
    QDateTime,
    QLocale,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
)
from PySide6.QtGui import QStandardItem, QStandardItemModel

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
    # a running folder's or sitemap's progress: {"text", "short", "fraction"} (progress.py)
    RUN = Qt.ItemDataRole.UserRole + 8


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
_STATUS_ORDER = {status: n for n, status in enumerate(ItemStatus)}
_CELL_FLAGS = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable


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
class _Row:
    item: Item
    cells: list[QStandardItem]
    aggregate: Counter[ItemStatus] = field(default_factory=Counter)


class ItemTreeModel(QStandardItemModel):
    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(0, _COLUMNS, parent)
        self._rows: dict[str, _Row] = {}
        # item id -> (phase, percent) reported by the runtime since the last catalog read
        self._live: dict[str, tuple[str, float]] = {}
        self._locale = QLocale()
        self._set_headers()

    # -- feeding ---------------------------------------------------------------------------

    def clear(self) -> None:
        self.removeRows(0, self.rowCount())
        self._rows.clear()
        self._live.clear()

    def apply_items(
        self, items: list[Item], *, max_inserts: int | None = None
    ) -> tuple[list[tuple[Item | None, Item]], bool]:
        """Make the tree show `items`: returns (old, new) for every item whose record changed
        (old is None for new items), and whether new items were left out because of
        `max_inserts` (call again with the same list to add them: a big import is shown in
        slices so the window stays responsive)."""
        wanted = {item.id: item for item in items}
        self._remove_missing(wanted)
        changes = self._update_existing(wanted)
        fresh = [i for i in items if i.id not in self._rows]
        batch = fresh if max_inserts is None else self._first_insertable(fresh, max_inserts)
        changes.extend(self._insert_new(batch))
        self._refresh_aggregates()
        return changes, len(batch) < len(fresh)

    def set_progress(self, item_id: str, phase: str, percent: float) -> None:
        row = self._rows.get(item_id)
        if row is None or row.item.status not in RUNNING_STATUSES:
            return
        if self._live.get(item_id) == (phase, percent):
            return
        self._live[item_id] = (phase, percent)
        status = row.cells[Column.STATUS]
        status.setData(phase, Role.PHASE)
        status.setData(percent, Role.PROGRESS)

    def set_run(self, item_id: str, run: dict[str, object] | None) -> None:
        """Show (or clear) a folder's or sitemap's progress line on its status cell."""
        row = self._rows.get(item_id)
        if row is not None and row.cells[Column.STATUS].data(Role.RUN) != run:
            row.cells[Column.STATUS].setData(run, Role.RUN)

    # -- lookups ---------------------------------------------------------------------------

    def item_at(self, index: Index) -> Item | None:
        if not index.isValid():
            return None
        item_id = self.index(index.row(), 0, index.parent()).data(Role.ITEM_ID)
        row = self._rows.get(str(item_id)) if item_id else None
        return row.item if row is not None else None

    def index_of(self, item_id: str, column: int = 0) -> QModelIndex:
        row = self._rows.get(item_id)
        return row.cells[column].index() if row is not None else QModelIndex()

    def items(self) -> list[Item]:
        return [row.item for row in self._rows.values()]

    def status_counts(self) -> Counter[ItemStatus]:
        return Counter(item.status for item in self.items() if item.type not in CONTAINERS)

    # -- cells -----------------------------------------------------------------------------

    def _set_headers(self) -> None:
        self.setHorizontalHeaderLabels([header_label(c) for c in Column])

    def _new_cells(self, item: Item) -> list[QStandardItem]:
        cells = [QStandardItem() for _ in range(_COLUMNS)]
        for cell in cells:
            # Set on the cells, not in a flags() override: the view asks for every cell's
            # flags on every paint, and a Python override would answer each of those.
            cell.setFlags(_CELL_FLAGS)
        cells[Column.NAME].setData(item.id, Role.ITEM_ID)
        for column in (Column.CHUNKS, Column.SIZE):
            cells[column].setData(_RIGHT, Qt.ItemDataRole.TextAlignmentRole)
        return cells

    def _fill(self, row: _Row, *, fresh: bool = False) -> None:
        """Write the cells from the row's Item; unchanged values are left alone (no signal).
        `fresh` cells are not in the model yet: write them without comparing."""
        item = row.item
        chunks, size = self._totals(row)
        values: list[tuple[Column, int, object]] = [
            (Column.NAME, Qt.ItemDataRole.DisplayRole, item.title or item.source),
            (Column.NAME, Role.SORT, (item.title or item.source).casefold()),
            (Column.TYPE, Qt.ItemDataRole.DisplayRole, type_label(item.type)),
            (Column.TYPE, Role.SORT, item.type.value),
            (Column.STATUS, Qt.ItemDataRole.DisplayRole, status_label(item.status)),
            (Column.STATUS, Role.STATUS, item.status.value),
            (Column.STATUS, Role.SORT, _STATUS_ORDER[item.status]),
            (
                Column.CHUNKS,
                Qt.ItemDataRole.DisplayRole,
                self._locale.toString(chunks) if chunks else "",
            ),
            (Column.CHUNKS, Role.SORT, chunks),
            (
                Column.SIZE,
                Qt.ItemDataRole.DisplayRole,
                self._locale.formattedDataSize(size) if size else "",
            ),
            (Column.SIZE, Role.SORT, size),
            (Column.UPDATED, Qt.ItemDataRole.DisplayRole, self._when(item.updated_at)),
            (Column.UPDATED, Role.SORT, item.updated_at),
        ]
        tooltip = self._tooltip(item)
        for column in Column:
            values.append((column, Qt.ItemDataRole.ToolTipRole, tooltip))
        live = self._live.get(item.id) if item.status in RUNNING_STATUSES else None
        running = item.status in RUNNING_STATUSES
        phase = live[0] if live else (item.phase.value if item.phase and running else None)
        progress = live[1] if live else (item.progress if running else None)
        values.append((Column.STATUS, Role.PHASE, phase))
        values.append((Column.STATUS, Role.PROGRESS, progress))
        if item.type in CONTAINERS:
            values.append(
                (Column.STATUS, Role.AGGREGATE, {s.value: n for s, n in row.aggregate.items()})
            )
        for column, role, value in values:
            cell = row.cells[column]
            if fresh or cell.data(role) != value:
                cell.setData(value, role)

    def _totals(self, row: _Row) -> tuple[int, int]:
        """(chunks, size) of an item; folders and sitemaps add up their children."""
        if row.item.type not in CONTAINERS:
            return row.item.chunk_count, row.item.size or 0
        chunks = size = 0
        for child in self._children(row):
            c, s = self._totals(child)
            chunks += c
            size += s
        return chunks, size if size else (row.item.size or 0)

    def _children(self, row: _Row) -> list[_Row]:
        name = row.cells[Column.NAME]
        found = []
        for r in range(name.rowCount()):
            child_id = name.child(r, 0).data(Role.ITEM_ID)
            child = self._rows.get(str(child_id))
            if child is not None:
                found.append(child)
        return found

    def _tooltip(self, item: Item) -> str:
        if item.status is ItemStatus.FAILED:
            return f"{errors.headline(item.error_code)}\n{item.error_message or ''}".strip()
        return item.source

    def _when(self, stamp: float) -> str:
        fmt = QLocale.FormatType.ShortFormat
        when = QDateTime.fromMSecsSinceEpoch(int(stamp * 1000))
        if time.time() - stamp < 86_400:
            return self._locale.toString(when.time(), fmt)
        return self._locale.toString(when, fmt)

    # -- diffing ---------------------------------------------------------------------------

    def _parent_cell(self, item: Item) -> QStandardItem:
        parent = self._rows.get(item.parent_id) if item.parent_id else None
        return parent.cells[Column.NAME] if parent is not None else self.invisibleRootItem()

    def _remove_missing(self, wanted: dict[str, Item]) -> None:
        gone = [row for item_id, row in self._rows.items() if item_id not in wanted]
        for row in gone:
            if row.item.id not in self._rows:
                continue  # already removed with its parent
            name = row.cells[Column.NAME]
            holder = name.parent() or self.invisibleRootItem()
            self._forget(row)
            holder.removeRow(name.row())

    def _forget(self, row: _Row) -> None:
        for child in self._children(row):
            self._forget(child)
        self._rows.pop(row.item.id, None)
        self._live.pop(row.item.id, None)

    def _update_existing(self, wanted: dict[str, Item]) -> list[tuple[Item | None, Item]]:
        changes: list[tuple[Item | None, Item]] = []
        for item_id, row in self._rows.items():
            new = wanted[item_id]
            old = row.item
            if old == new:
                continue
            row.item = new
            if new.status is not old.status or new.status not in RUNNING_STATUSES:
                self._live.pop(item_id, None)  # the catalog has newer news than the runtime
            changes.append((old, new))
            self._fill(row)
        return changes

    def _first_insertable(self, fresh: list[Item], limit: int) -> list[Item]:
        """Up to `limit` new items whose parents are shown or come along in this slice."""
        fresh_ids = {i.id for i in fresh}
        chosen: list[Item] = []
        taken: set[str] = set()
        for item in fresh:
            if len(chosen) >= limit:
                break
            parent = item.parent_id
            if parent is None or parent in self._rows or parent in taken or parent not in fresh_ids:
                chosen.append(item)
                taken.add(item.id)
        return chosen

    def _insert_new(self, fresh: list[Item]) -> list[tuple[Item | None, Item]]:
        added: list[tuple[Item | None, Item]] = []
        pending = fresh
        # Parents first: a child whose parent is also new waits for the next pass.
        while pending:
            later: list[Item] = []
            ready: list[Item] = []
            for item in pending:
                if (
                    item.parent_id
                    and item.parent_id not in self._rows
                    and any(p.id == item.parent_id for p in pending)
                ):
                    later.append(item)
                else:
                    ready.append(item)
            for item in ready:
                row = _Row(item, self._new_cells(item))
                self._rows[item.id] = row
                self._fill(row, fresh=True)
                self._parent_cell(item).appendRow(row.cells)
                added.append((None, item))
            pending = later
        return added

    def _refresh_aggregates(self) -> None:
        for row in list(self._rows.values()):
            if row.item.type not in CONTAINERS:
                continue
            counts = Counter(child.item.status for child in self._children(row))
            if counts != row.aggregate:
                row.aggregate = counts
                self._fill(row)
