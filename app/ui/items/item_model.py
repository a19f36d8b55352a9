"""The item tree: one item model over a base's catalog items.

The model never reads the catalog itself: the owner hands it complete item lists
(`apply_items`) and live progress (`set_progress`), and it works out which rows were
inserted, removed or changed, so only those rows are repainted.

A folder item keeps its folders: its files sit under folder rows made from their paths
(`a/b/c.md` under `a`, then `b`). Those rows have no catalog item of their own; like
folder items, they show how their files are doing (status, "12/40", chunks, size).

It keeps the cells in a QStandardItemModel on purpose. A Python QAbstractItemModel answers
every role of every visible cell through a Python call (about 1,200 per paint of the tree);
while worker threads index documents each of those calls waits for the GIL, and painting
took 50-200 ms. With the cells held by Qt a paint makes about 25 Python calls (the status
delegate), and the window stays responsive during big imports (tests/ui/test_responsiveness.py).
The Python `Item` records stay the source of truth: cells are derived from them.
"""

from __future__ import annotations

import time
from collections import Counter, deque
from collections.abc import KeysView, Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from enum import IntEnum
from pathlib import PurePath

import shiboken6
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

from app.knowledge.types import (
    RUNNING_STATUSES,
    Item,
    ItemPhase,
    ItemStatus,
    ItemType,
    WorkCounts,
)
from app.ui import errors
from app.ui.eta import WorkTally
from app.ui.items.file_formats import file_format
from app.ui.items.item_names import display_name, folder_parts, secondary_text, sort_key

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
    # a value that sorts naturally (numbers for sizes and counts, natural order for names)
    SORT = Qt.ItemDataRole.UserRole + 7
    # what the filter box matches: the name and the title found inside
    FILTER = Qt.ItemDataRole.UserRole + 8
    # on a folder row made from paths: "<folder item id>/<path>" (it has no ITEM_ID)
    FOLDER = Qt.ItemDataRole.UserRole + 9
    # a running folder's or sitemap's progress: {"text", "short", "fraction"} (progress.py)
    RUN = Qt.ItemDataRole.UserRole + 10
    # pages of a running document being recognised (OCR), None otherwise
    OCR_PAGES = Qt.ItemDataRole.UserRole + 11


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


def _shows_progress(status: ItemStatus, phase: str) -> bool:
    """Progress is shown for running items, and for completed ones while their vectors
    are computed ("" when the vector stage is done with them)."""
    if status in RUNNING_STATUSES:
        return True
    return status is ItemStatus.COMPLETED and phase in ("", ItemPhase.EMBEDDING.value)


def phase_label(phase: str) -> str:
    labels = {
        "reading": QCoreApplication.translate("ItemTreeModel", "Reading"),
        "embedding": QCoreApplication.translate("ItemTreeModel", "Embedding"),
        "writing": QCoreApplication.translate("ItemTreeModel", "Writing"),
        "waiting": QCoreApplication.translate("ItemTreeModel", "Waiting"),
    }
    return labels.get(phase, phase)


def _ocr_pages(item: Item) -> int | None:
    """How many pages of the document are being recognised (set when they are submitted)."""
    pages = (item.options or {}).get("ocr_pages")
    return pages if isinstance(pages, int) and pages > 0 else None


def recognising_text(percent: float | None, pages: int) -> str:
    """ "Recognising text 3/12 pages": the pages read, from the share the job reports."""
    done = min(pages, round((percent or 0.0) * pages / 100.0))
    return QCoreApplication.translate("ItemTreeModel", "Recognising text {0}/{1} pages").format(
        done, pages
    )


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


def folder_status(counts: Counter[ItemStatus]) -> ItemStatus:
    """What a folder row shows for its files, as a folder item does (working while any is,
    failed when all failed); deleting when only files on their way out are left."""
    live = {s for s, n in counts.items() if n > 0 and s is not ItemStatus.DELETING}
    if not live:
        return ItemStatus.DELETING if counts[ItemStatus.DELETING] else ItemStatus.COMPLETED
    if live & RUNNING_STATUSES:
        return ItemStatus.PROCESSING
    if live == {ItemStatus.FAILED}:
        return ItemStatus.FAILED
    return ItemStatus.COMPLETED


@dataclass(eq=False)
class _Tally:
    """What a container's files add up to, kept up to date file by file: a big import
    changes a few files per catalog read, and adding up thousands every time would stall
    the window."""

    counts: Counter[ItemStatus] = field(default_factory=Counter)
    chunks: int = 0
    size: int = 0
    updated: float = 0.0
    # the newest file went: `updated` must be found again from the files that are left
    stale: bool = False

    def add(self, item: Item) -> None:
        self.counts[item.status] += 1
        self.chunks += item.chunk_count
        self.size += item.size or 0
        self.updated = max(self.updated, item.updated_at)

    def take(self, item: Item) -> None:
        self.counts[item.status] -= 1
        self.chunks -= item.chunk_count
        self.size -= item.size or 0
        if item.updated_at >= self.updated:
            self.stale = True

    def replace(self, old: Item, new: Item) -> None:
        stale = self.stale
        self.take(old)
        # A file changed later than it was: the newest time is still known.
        self.stale = stale or new.updated_at < old.updated_at
        self.add(new)


@dataclass(eq=False)
class _Row:
    item: Item
    # The Name cell; the row's other cells are made by the model and reached through it
    # (ItemTreeModel._cell). A cell made in Python keeps a wrapper as long as it lives, and
    # every wrapper is an entry in one hash table: at 40,000 rows of 5 such cells, each time
    # that table grew it stalled the window ~100 ms.
    name: QStandardItem
    # the row it is shown under (a container's row, a folder row), None at the top
    parent: _Row | _Folder | None = None
    # containers: what their files add up to
    tally: _Tally = field(default_factory=_Tally)
    # ids of the rows of its catalog children
    kids: set[str] = field(default_factory=set)
    # folder items: their folder rows by path
    folders: dict[tuple[str, ...], _Folder] = field(default_factory=dict)


@dataclass(eq=False)
class _Folder:
    """A folder row made from the paths of a folder item's files."""

    parts: tuple[str, ...]
    name: QStandardItem
    owner: _Row
    parent: _Row | _Folder
    tally: _Tally = field(default_factory=_Tally)


_Node = _Row | _Folder


class ItemTreeModel(QStandardItemModel):
    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(0, _COLUMNS, parent)
        self._rows: dict[str, _Row] = {}
        # The same rows' records, Qt-free: a reading thread may look them up (ItemFeed)
        self._items: dict[str, Item] = {}
        # item id -> (phase, percent) reported by the runtime since the last catalog read
        self._live: dict[str, tuple[str, float]] = {}
        # rows whose sums changed since they were last written to their cells
        self._dirty: set[_Row | _Folder] = set()
        # the documents' statuses, kept row by row (the status bar asks after every read)
        self._counts: Counter[ItemStatus] = Counter()
        # the progress line's figures, kept the same way (progress.py)
        self._work = WorkTally()
        self._containers: dict[str, None] = {}  # ids, in the order they came
        # the same figures over each item's children (a linked folder of a library has
        # tens of thousands, and its progress line is refreshed several times a second)
        self._kid_work: dict[str, WorkTally] = {}
        self._locale = QLocale()
        # linked folders: item id -> (state for the Type cell, tooltip lines) (linked_folders.py)
        self._sync: dict[str, tuple[str, str]] = {}
        # rows that got new rows under them in the slice being shown (None: the top level)
        # -> the first new one
        self._grown: dict[_Node | None, int] = {}
        prototype = QStandardItem()
        # Set on the cells, not in a flags() override: the view asks for every cell's flags
        # on every paint, and a Python override would answer each of those.
        prototype.setFlags(_CELL_FLAGS)
        self.setItemPrototype(prototype)
        self._set_headers()

    # -- feeding ---------------------------------------------------------------------------

    def clear(self) -> None:
        self.removeRows(0, self.rowCount())
        self._rows.clear()
        self._items = {}  # a new dict: a reader still holding the old one keeps it whole
        self._live.clear()
        self._dirty.clear()
        self._counts.clear()
        self._work = WorkTally()
        self._containers.clear()
        self._kid_work.clear()

    def apply_items(
        self,
        items: list[Item],
        *,
        max_rows: int | None = None,
        ids: AbstractSet[str] | None = None,
        ordered: bool = False,
    ) -> tuple[list[tuple[Item | None, Item]], deque[Item]]:
        """Make the tree show `items`: returns (old, new) for every item whose record changed
        (old is None for new items), and the items left for later because of `max_rows`,
        parents first (hand them to `show_pending` turn by turn: a big import, or hundreds
        of documents finishing at once, is shown in slices so the window stays responsive).

        With `ids`, `items` are only those that changed and `ids` every item the base has
        (ItemFeed's reads between full ones: a big base is not read whole for each change).
        `ordered`: `items` are parents first already (`parents_first`, which ItemFeed runs on
        its reading thread: at 40,000 new items it took ~40 ms of the GUI thread)."""
        if not shiboken6.isValid(self):
            # A read finished after the window (and with it this model's cells) went.
            return [], deque()
        self._remove_missing(ids if ids is not None else {item.id for item in items})
        wanted = items if ids is None else [i for i in items if i.id in ids]
        pending = deque(wanted if ordered else parents_first(wanted))
        return self.show_pending(pending, max_rows), pending

    def show_pending(
        self, pending: deque[Item], limit: int | None = None
    ) -> list[tuple[Item | None, Item]]:
        """Show up to `limit` of `apply_items`' items left for later (taken from `pending`).

        Each slice costs what it shows, not what is left: taking slices from the whole list
        again made showing a 40,000-document import quadratic, and stalled the window; a
        changed row costs ~0.35 ms (its cells, its folders' sums), and 362 rows changed in
        one read stalled it ~130 ms."""
        if not shiboken6.isValid(self):
            pending.clear()
            return []
        count = len(pending) if limit is None else min(limit, len(pending))
        batch = [pending.popleft() for _ in range(count)]
        changes = self._update_existing([item for item in batch if item.id in self._rows])
        changes.extend(self._insert_new([item for item in batch if item.id not in self._rows]))
        self._write_sums()
        return changes

    def set_progress(self, item_id: str, phase: str, percent: float) -> None:
        if not shiboken6.isValid(self):
            return
        row = self._rows.get(item_id)
        if row is None or not _shows_progress(row.item.status, phase):
            return
        if self._live.get(item_id) == (phase, percent):
            return
        self._live[item_id] = (phase, percent)
        status = self._cell(row.name, Column.STATUS)
        status.setData(phase, Role.PHASE)
        status.setData(percent, Role.PROGRESS)

    def set_run(self, item_id: str, run: dict[str, object] | None) -> None:
        """Show (or clear) a folder's or sitemap's progress line on its status cell."""
        if not shiboken6.isValid(self):
            return
        row = self._rows.get(item_id)
        if row is None:
            return
        status = self._cell(row.name, Column.STATUS)
        if status.data(Role.RUN) != run:
            status.setData(run, Role.RUN)

    def set_sync_states(self, states: dict[str, tuple[str, str]]) -> None:
        """Show linked folders' sync states (short text, tooltip) on their rows."""
        if not shiboken6.isValid(self):
            return
        changed = {
            k for k in states.keys() | self._sync.keys() if states.get(k) != self._sync.get(k)
        }
        self._sync = dict(states)
        for item_id in changed:
            row = self._rows.get(item_id)
            if row is not None:
                self._fill(row)

    def is_linked(self, item_id: str) -> bool:
        return item_id in self._sync

    # -- lookups ---------------------------------------------------------------------------

    def item_at(self, index: Index) -> Item | None:
        """The item of a row; None for a folder row made from paths."""
        if not index.isValid():
            return None
        item_id = self.index(index.row(), 0, index.parent()).data(Role.ITEM_ID)
        row = self._rows.get(str(item_id)) if item_id else None
        return row.item if row is not None else None

    def is_folder_row(self, index: Index) -> bool:
        """Whether the row is a folder made from paths (it has no item of its own)."""
        return index.isValid() and bool(
            self.index(index.row(), 0, index.parent()).data(Role.FOLDER)
        )

    def items_under(self, index: Index) -> list[Item]:
        """The row's item, or for a folder row the items inside it (at any depth)."""
        found: list[Item] = []
        pending = [self.index(index.row(), 0, index.parent())] if index.isValid() else []
        while pending:
            current = pending.pop()
            item = self.item_at(current)
            if item is not None:
                found.append(item)
                continue
            pending.extend(self.index(r, 0, current) for r in range(self.rowCount(current)))
        return found

    def index_of(self, item_id: str, column: int = 0) -> QModelIndex:
        row = self._rows.get(item_id)
        return row.name.index().siblingAtColumn(column) if row is not None else QModelIndex()

    def items(self) -> list[Item]:
        return [row.item for row in self._rows.values()]

    def item_count(self) -> int:
        return len(self._rows)

    def shown_items(self) -> dict[str, Item]:
        """The records shown, by id (a copy: a reader thread may compare against it)."""
        return dict(self._items)

    def shown_records(self) -> Mapping[str, Item]:
        """The records shown, by id: live, and free of Qt objects, so that a reading thread
        may look rows up in it while the owner changes none (a thread that held on to the
        model itself could end up destroying it off the GUI thread)."""
        return self._items

    def status_counts(self) -> Counter[ItemStatus]:
        """How many documents (containers aside) are in each status."""
        return +self._counts

    def item_by_id(self, item_id: str) -> Item | None:
        return self._items.get(item_id)

    def work_counts(self, live: Mapping[str, tuple[str, float]]) -> WorkCounts:
        """count_work of every item shown, without walking them (eta.WorkTally)."""
        return self._work.counts(live, self.item_by_id)

    def containers(self) -> list[Item]:
        """The folders and sitemaps shown."""
        return [self._rows[i].item for i in self._containers]

    def children_work(self, item_id: str, live: Mapping[str, tuple[str, float]]) -> WorkCounts:
        """count_work of the item's shown children, without walking them."""
        tally = self._kid_work.get(item_id)
        return tally.counts(live, self.item_by_id, item_id) if tally is not None else WorkCounts()

    def shown_ids(self) -> KeysView[str]:
        """The ids of the items shown (a live view: cheap to test membership in)."""
        return self._rows.keys()

    # -- cells -----------------------------------------------------------------------------

    def _set_headers(self) -> None:
        self.setHorizontalHeaderLabels([header_label(c) for c in Column])

    @staticmethod
    def _new_name() -> QStandardItem:
        name = QStandardItem()
        name.setFlags(_CELL_FLAGS)
        return name

    def _cell(self, name: QStandardItem, column: int) -> QStandardItem:
        """A shown row's cell in `column` (the model makes it from its prototype if needed)."""
        if column == Column.NAME:
            return name
        return self.itemFromIndex(name.index().siblingAtColumn(column))

    def _show(
        self, name: QStandardItem, node: _Node | None, values: list[tuple[Column, int, object]]
    ) -> None:
        """Append a new row, its cells written: the Name cell before the row is shown (the
        proxy sorts and filters by it), the others once it is, without a signal each (the
        slice's new rows are announced together, _announce_grown)."""
        self._write(name, [v for v in values if v[0] is Column.NAME], fresh=True)
        holder = node.name if node is not None else self.invisibleRootItem()
        if holder.columnCount() < _COLUMNS:
            holder.setColumnCount(_COLUMNS)
        self._grown.setdefault(node, holder.rowCount())
        holder.appendRow(name)
        rest = [v for v in values if v[0] is not Column.NAME]
        rest += [
            (c, Qt.ItemDataRole.TextAlignmentRole, _RIGHT) for c in (Column.CHUNKS, Column.SIZE)
        ]
        blocked = self.blockSignals(True)
        try:
            self._write(name, rest, fresh=True)
        finally:
            self.blockSignals(blocked)

    def _announce_grown(self) -> None:
        grown, self._grown = self._grown, {}
        for node, first in grown.items():
            parent = node.name.index() if node is not None else QModelIndex()
            last = self.rowCount(parent) - 1
            if last >= first:
                self.dataChanged.emit(
                    self.index(first, 1, parent), self.index(last, _COLUMNS - 1, parent), []
                )

    def _fill(self, row: _Row) -> None:
        """Write the cells from the row's Item; unchanged values are left alone (no signal)."""
        self._write(row.name, self._row_values(row), fresh=False)

    def _fill_folder(self, folder: _Folder) -> None:
        self._write(folder.name, self._folder_values(folder), fresh=False)

    def _row_values(self, row: _Row) -> list[tuple[Column, int, object]]:
        item = row.item
        name = display_name(item)
        container = item.type in CONTAINERS
        if container:
            chunks, size = row.tally.chunks, row.tally.size or item.size or 0
        else:
            chunks, size = item.chunk_count, item.size or 0
        kind = file_format(name) if item.type is ItemType.FILE else type_label(item.type)
        sync = self._sync.get(item.id)
        if sync is not None:
            kind = sync[0]
        values: list[tuple[Column, int, object]] = [
            (Column.NAME, Qt.ItemDataRole.DisplayRole, name),
            (Column.NAME, Role.SORT, sort_key(name, folder=container, tie=item.id)),
            (Column.NAME, Role.FILTER, f"{name}\n{item.title}"),
            (Column.TYPE, Qt.ItemDataRole.DisplayRole, kind),
            (Column.TYPE, Role.SORT, kind.casefold()),
            (Column.STATUS, Qt.ItemDataRole.DisplayRole, status_label(item.status)),
            (Column.STATUS, Role.STATUS, item.status.value),
            (Column.STATUS, Role.SORT, _STATUS_ORDER[item.status]),
            *self._number_values(chunks, size),
            (Column.UPDATED, Qt.ItemDataRole.DisplayRole, self._when(item.updated_at)),
            (Column.UPDATED, Role.SORT, item.updated_at),
        ]
        tooltip = self._tooltip(item, name)
        if sync is not None:
            tooltip = f"{tooltip}\n{sync[1]}"
        for column in Column:
            values.append((column, Qt.ItemDataRole.ToolTipRole, tooltip))
        running = item.status in RUNNING_STATUSES
        # A completed document may still wait for its vectors (phase embedding).
        phased = running or (item.status is ItemStatus.COMPLETED and item.phase is not None)
        live = self._live.get(item.id) if phased else None
        phase = live[0] if live else (item.phase.value if item.phase and phased else None)
        progress = live[1] if live else (item.progress if phased else None)
        values.append((Column.STATUS, Role.PHASE, phase))
        values.append((Column.STATUS, Role.PROGRESS, progress))
        values.append((Column.STATUS, Role.OCR_PAGES, _ocr_pages(item) if running else None))
        if container:
            values.append((Column.STATUS, Role.AGGREGATE, _plain(row.tally.counts)))
        return values

    def _folder_values(self, folder: _Folder) -> list[tuple[Column, int, object]]:
        name = folder.parts[-1]
        tally = folder.tally
        status = folder_status(tally.counts)
        kind = type_label(ItemType.DIRECTORY)
        where = str(PurePath(folder.owner.item.source).joinpath(*folder.parts))
        tie = f"{folder.owner.item.id}/{'/'.join(folder.parts)}"
        values: list[tuple[Column, int, object]] = [
            (Column.NAME, Qt.ItemDataRole.DisplayRole, name),
            (Column.NAME, Role.SORT, sort_key(name, folder=True, tie=tie)),
            (Column.NAME, Role.FILTER, name),
            (Column.TYPE, Qt.ItemDataRole.DisplayRole, kind),
            (Column.TYPE, Role.SORT, kind.casefold()),
            (Column.STATUS, Qt.ItemDataRole.DisplayRole, status_label(status)),
            (Column.STATUS, Role.STATUS, status.value),
            (Column.STATUS, Role.SORT, _STATUS_ORDER[status]),
            (Column.STATUS, Role.AGGREGATE, _plain(tally.counts)),
            *self._number_values(tally.chunks, tally.size),
            (Column.UPDATED, Qt.ItemDataRole.DisplayRole, self._when(tally.updated)),
            (Column.UPDATED, Role.SORT, tally.updated),
        ]
        for column in Column:
            values.append((column, Qt.ItemDataRole.ToolTipRole, where))
        return values

    def _number_values(self, chunks: int, size: int) -> list[tuple[Column, int, object]]:
        return [
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
        ]

    def _write(
        self, name: QStandardItem, values: list[tuple[Column, int, object]], fresh: bool
    ) -> None:
        """Write a row's values; a shown row's changes are announced in one signal (a signal
        per value had the proxy sort and filter the row again for each: ~0.4 ms a changed
        row, and 354 rows changed at once stalled the window ~150 ms during an import)."""
        cells: dict[int, QStandardItem] = {}
        columns: set[int] = set()
        roles: set[int] = set()
        blocked = self.blockSignals(True)
        try:
            for column, role, value in values:
                cell = cells.get(column)
                if cell is None:
                    cell = cells[column] = self._cell(name, column)
                if fresh or cell.data(role) != value:
                    cell.setData(value, role)
                    columns.add(column)
                    roles.add(int(role))
        finally:
            self.blockSignals(blocked)
        if columns and not fresh and not blocked:
            index = name.index()
            self.dataChanged.emit(
                index.siblingAtColumn(min(columns)),
                index.siblingAtColumn(max(columns)),
                sorted(roles),
            )

    def _tooltip(self, item: Item, name: str) -> str:
        lines = secondary_text(item, name)
        if item.status is ItemStatus.FAILED:
            lines.insert(0, errors.item_error_text(item.error_code, item.error_message))
        return "\n".join(lines) or name

    def _when(self, stamp: float) -> str:
        if not stamp:
            return ""
        fmt = QLocale.FormatType.ShortFormat
        when = QDateTime.fromMSecsSinceEpoch(int(stamp * 1000))
        if time.time() - stamp < 86_400:
            return self._locale.toString(when.time(), fmt)
        return self._locale.toString(when, fmt)

    # -- diffing ---------------------------------------------------------------------------

    def _remove_missing(self, wanted: AbstractSet[str]) -> None:
        gone = [row for item_id, row in self._rows.items() if item_id not in wanted]
        for row in gone:
            if row.item.id not in self._rows:
                continue  # already removed with its parent
            name = row.name
            holder = name.parent() or self.invisibleRootItem()
            self._forget(row)
            holder.removeRow(name.row())
            self._prune(row.parent)

    def _forget(self, row: _Row) -> None:
        for kid in list(row.kids):
            child = self._rows.get(kid)
            if child is not None:
                self._forget(child)
        gone = self._rows.pop(row.item.id, None)
        self._items.pop(row.item.id, None)
        if gone is not None:
            self._tally(gone.item, -1)
            self._containers.pop(gone.item.id, None)
        self._live.pop(row.item.id, None)
        # Its folder rows go with it (removeRow deletes their cells): never write them again.
        self._dirty.difference_update(row.folders.values())
        row.folders.clear()
        for node in self._above(row):
            node.tally.take(row.item)
        parent = self._rows.get(row.item.parent_id) if row.item.parent_id else None
        if parent is not None:
            parent.kids.discard(row.item.id)

    def _prune(self, node: _Node | None) -> None:
        """Remove folder rows left empty, from the innermost out."""
        while isinstance(node, _Folder) and node.name.rowCount() == 0:
            name = node.name
            holder = name.parent() or self.invisibleRootItem()
            holder.removeRow(name.row())
            node.owner.folders.pop(node.parts, None)
            node = node.parent

    def _update_existing(self, wanted: list[Item]) -> list[tuple[Item | None, Item]]:
        changes: list[tuple[Item | None, Item]] = []
        for new in wanted:
            item_id = new.id
            row = self._rows.get(item_id)
            if row is None:
                continue
            old = row.item
            if old == new:
                continue
            row.item = new
            self._items[item_id] = new
            self._tally(old, -1)
            self._tally(new, 1)
            if new.status is not old.status or new.status not in RUNNING_STATUSES:
                self._live.pop(item_id, None)  # the catalog has newer news than the runtime
            changes.append((old, new))
            for node in self._above(row):
                node.tally.replace(old, new)
            self._fill(row)
        return changes

    def _insert_new(self, fresh: list[Item]) -> list[tuple[Item | None, Item]]:
        """Show new items; `fresh` is parents first (`parents_first`)."""
        added: list[tuple[Item | None, Item]] = []
        for item in fresh:
            row = _Row(item, self._new_name())
            row.name.setData(item.id, Role.ITEM_ID)
            row.parent = self._holder_of(item)
            parent = self._rows.get(item.parent_id) if item.parent_id else None
            if parent is not None:
                parent.kids.add(item.id)
            self._rows[item.id] = row
            self._items[item.id] = item
            self._tally(item, 1)
            if item.type in CONTAINERS:
                self._containers[item.id] = None
            self._show(row.name, row.parent, self._row_values(row))
            for node in self._above(row):
                node.tally.add(item)
            added.append((None, item))
        self._announce_grown()
        return added

    def _tally(self, item: Item, change: int) -> None:
        if item.parent_id is not None:
            kids = self._kid_work.get(item.parent_id)
            if kids is None:
                kids = self._kid_work[item.parent_id] = WorkTally()
            kids.change(item, change)
        if item.type not in CONTAINERS:
            self._counts[item.status] += change
        self._work.change(item, change)

    def _holder_of(self, item: Item) -> _Node | None:
        """The row a new item is shown under: its parent's, or a folder row inside it."""
        parent = self._rows.get(item.parent_id) if item.parent_id else None
        if parent is None:
            return None
        if parent.item.type is not ItemType.DIRECTORY:
            return parent
        node: _Node = parent
        parts = folder_parts(item, parent.item)
        for depth in range(1, len(parts) + 1):
            node = self._folder(parent, parts[:depth], node)
        return node

    def _folder(self, owner: _Row, parts: tuple[str, ...], holder: _Node) -> _Folder:
        folder = owner.folders.get(parts)
        if folder is None:
            folder = _Folder(parts, self._new_name(), owner, holder)
            folder.name.setData(f"{owner.item.id}/{'/'.join(parts)}", Role.FOLDER)
            self._show(folder.name, holder, self._folder_values(folder))
            owner.folders[parts] = folder
        return folder

    def _above(self, row: _Row) -> list[_Node]:
        """The rows whose sums a file counts in (none for containers); marked for writing."""
        if row.item.type in CONTAINERS:
            return []
        nodes: list[_Node] = []
        node = row.parent
        while node is not None:
            nodes.append(node)
            node = node.parent
        self._dirty.update(nodes)
        return nodes

    def _write_sums(self) -> None:
        """Show the changed sums of folders and sitemaps (rows removed meanwhile are skipped)."""
        dirty, self._dirty = self._dirty, set()
        for node in dirty:
            if isinstance(node, _Row):
                if self._rows.get(node.item.id) is node:
                    self._fresh_time(node)
                    self._fill(node)
            elif (
                node.owner.folders.get(node.parts) is node
                and self._rows.get(node.owner.item.id) is node.owner
            ):
                # The owner itself must still be shown: a folder item removed and added again
                # under the same id is a new row, and this folder's cells went with the old.
                self._fresh_time(node)
                self._fill_folder(node)

    def _fresh_time(self, node: _Node) -> None:
        """Find the newest file time again after the newest file went."""
        tally = node.tally
        if tally.stale:
            tally.stale = False
            times = [item.updated_at for item in self._files_under(node)]
            tally.updated = max(times, default=0.0)

    def _files_under(self, node: _Node) -> list[Item]:
        found: list[Item] = []
        pending = [node.name]
        while pending:
            cell = pending.pop()
            for r in range(cell.rowCount()):
                kid = cell.child(r, 0)
                row = self._rows.get(str(kid.data(Role.ITEM_ID) or ""))
                if row is None or row.item.type in CONTAINERS:
                    pending.append(kid)
                else:
                    found.append(row.item)
        return found


def parents_first(items: list[Item]) -> list[Item]:
    """`items` in their order, except that an item whose parent is among them comes after it."""
    ids = {item.id for item in items}
    placed: set[str] = set()
    waiting: dict[str, list[Item]] = {}  # parent id -> its children read before it
    ordered: list[Item] = []
    for item in items:
        parent = item.parent_id
        if parent is not None and parent in ids and parent not in placed and parent != item.id:
            waiting.setdefault(parent, []).append(item)
            continue
        stack = [item]
        while stack:
            ready = stack.pop()
            ordered.append(ready)
            placed.add(ready.id)
            stack.extend(reversed(waiting.pop(ready.id, [])))
    # Children of a parent that never came (a cycle in a hostile catalog) still show, last.
    ordered.extend(child for kids in waiting.values() for child in kids)
    return ordered


def _plain(counts: Counter[ItemStatus]) -> dict[str, int]:
    """Status counts as Qt keeps them (plain strings: the delegate reads them back)."""
    return {status.value: n for status, n in counts.items() if n}
