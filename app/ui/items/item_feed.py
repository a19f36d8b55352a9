"""Keeps an ItemTreeModel in step with the catalog for the selected base.

The runtime says *that* items changed (itemsChanged, queueChanged) and how far running ones
are (itemProgress). Progress goes straight into the model; change notices are coalesced and
answered with one catalog read off the GUI thread, whose result the model diffs, so a burst of
finished jobs costs one read and repaints only the rows that changed.

Between full reads (the first, then one every FULL_READ_S) a read takes only the rows changed
since the last one (their updated_at, with a margin for writes that committed late) and the
ids of all: a library of 20,000 documents read whole every 120 ms made the window stall
150-250 ms at each read (20,000 rows decoded, and the full garbage collections they set off).
A full read after the first is compared with the rows shown on the reading thread, so the
window only applies what differs: comparing 40,000 rows on the GUI thread stalled it ~250 ms
every FULL_READ_S.
"""

from __future__ import annotations

import gc
import logging
import time
from collections import deque
from collections.abc import Callable

from PySide6.QtCore import QObject, QTimer, Signal, Slot

from app.knowledge.types import Item, ItemStatus
from app.ui.context import UiContext
from app.ui.items.item_model import ItemTreeModel, parents_first

log = logging.getLogger(__name__)

RELOAD_DELAY_MS = 120
# The delay grows with what a read costs (reading it and showing it), so reads take at most
# about 1 / READ_SPACING of the time: a 40,000-document base costs ~30 ms a read (its ids,
# the rows missing from them), and 8 reads a second took a core's worth with the rest.
READ_SPACING = 5
MAX_RELOAD_DELAY_MS = 2_000
# Rows shown or changed per event-loop turn: thousands at once would freeze the window.
ROW_SLICE = 10
# A full read this often: what a partial read missed (a clock far off) is shown by then.
FULL_READ_S = 30.0
# A partial read also takes the rows written this long before the last read started.
CHANGE_MARGIN_S = 10.0
# Rows shown since the last freeze that make the next one: their objects (items, cells, their
# wrappers) are put out of the garbage collector's reach, as the launcher does with what the
# start built (settle_heap): every full collection would walk them all, 100-200 ms at 20,000
# rows, on whichever thread set it off. Rows dropped later are still freed by their
# reference counts (no cycles).
FREEZE_STEP = 1_000

Read = tuple[list[Item], set[str]]  # the rows read (parents first), every id of the base


def _differing(
    items: list[Item], every: list[Item] | set[str], shown: Callable[[str], Item | None]
) -> Read:
    """The rows read that differ from those shown, and every id (on the reading thread: a
    partial read during a library's import holds every row written in the last seconds,
    tens of thousands, and comparing them on the GUI thread stalled it ~200 ms)."""
    return _ordered([item for item in items if shown(item.id) != item], every)


def _ordered(changed: list[Item], every: list[Item] | set[str]) -> Read:
    """A read as the model takes it (parents first), worked out on the reading thread."""
    ids = every if isinstance(every, set) else {item.id for item in every}
    return parents_first(changed), ids


class ItemFeed(QObject):
    # an item turned failed while the window watched it
    itemFailed = Signal(object)
    # the model now shows the catalog as read after the latest change notice
    refreshed = Signal()

    def __init__(self, ctx: UiContext, model: ItemTreeModel, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._ctx = ctx
        self._model = model
        self._base_id: str | None = None
        self._generation = 0
        self._in_flight = False
        self._dirty = False
        self._seen = False
        self._frozen = 0  # rows shown at the last freeze
        # When the last read started (its rows are as of then), and the last full one.
        self._read_at = 0.0
        self._full_at = 0.0
        self._started = 0.0  # when the read in flight started (monotonic)
        self.clock: Callable[[], float] = time.time
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(RELOAD_DELAY_MS)
        self._connect_signals()

    def _connect_signals(self) -> None:
        self._timer.timeout.connect(self._on_reload_due)
        self._ctx.executor.itemsChanged.connect(self._on_items_changed)
        self._ctx.executor.queueChanged.connect(self._on_queue_changed)
        self._ctx.executor.itemProgress.connect(self._on_item_progress)

    @property
    def base_id(self) -> str | None:
        return self._base_id

    @property
    def loading(self) -> bool:
        return self._in_flight or self._timer.isActive()

    def set_base(self, base_id: str | None) -> None:
        if base_id == self._base_id:
            return
        self._base_id = base_id
        self._generation += 1
        self._seen = False
        self._model.clear()
        if base_id is not None:
            self.reload_now()

    def reload_soon(self) -> None:
        """Read the catalog again shortly (several calls in a burst make one read)."""
        if self._base_id is not None and not self._timer.isActive():
            self._timer.start()

    def reload_now(self) -> None:
        self._timer.stop()
        self._on_reload_due()

    @Slot()
    def _on_reload_due(self) -> None:
        base_id = self._base_id
        if base_id is None:
            return
        if self._in_flight:
            self._dirty = True  # read again once the running read lands
            return
        self._in_flight = True
        self._dirty = False
        generation = self._generation
        now = self.clock()
        service = self._ctx.service
        read: Callable[[], Read]
        if not self._seen:
            self._full_at = now

            def read() -> Read:
                items = service.list_items(base_id)
                return _ordered(items, items)
        elif now - self._full_at >= FULL_READ_S:
            self._full_at = now
            # No other read is applied before this one lands (_in_flight), so what is shown
            # now is what its rows are compared with.
            shown = self._model.shown_items()

            def read() -> Read:
                items = service.list_items(base_id)
                return _differing(items, items, shown.get)
        else:
            since = self._read_at - CHANGE_MARGIN_S
            # A copy: the reading thread must not walk the model's live keys.
            known = frozenset(self._model.shown_ids())
            # Looked up live: only ItemFeed changes the model's rows, and it applies no read
            # while this one is in flight (_in_flight), so they hold still meanwhile.
            lookup = self._model.shown_records().get

            def read() -> Read:
                changed, ids = service.item_changes(base_id, since, known)
                return _differing(changed, ids, lookup)

        self._read_at = now
        self._started = time.monotonic()
        self._ctx.tasks.run(
            read,
            lambda got: self._on_loaded(generation, got),
            lambda exc: self._on_load_failed(generation, exc),
            owner=self,
        )

    def _on_loaded(self, generation: int, got: Read) -> None:
        self._in_flight = False
        if generation != self._generation:
            self.reload_soon()  # the base changed while reading: read the new one
            return
        items, ids = got
        self._apply(generation, items, ids, first_read=not self._seen)
        self._seen = True
        cost_ms = (time.monotonic() - self._started) * 1000
        self._timer.setInterval(
            int(min(MAX_RELOAD_DELAY_MS, max(RELOAD_DELAY_MS, READ_SPACING * cost_ms)))
        )

    def _apply(
        self, generation: int, items: list[Item], ids: set[str] | None, *, first_read: bool
    ) -> None:
        """Show a read: what changed at once, new rows a slice per event-loop turn."""
        changes, pending = self._model.apply_items(items, max_rows=ROW_SLICE, ids=ids, ordered=True)
        self._shown(generation, changes, pending, first_read)

    def _shown(
        self,
        generation: int,
        changes: list[tuple[Item | None, Item]],
        pending: deque[Item],
        first_read: bool,
    ) -> None:
        shown = self._model.item_count()
        if shown - self._frozen >= FREEZE_STEP:
            gc.freeze()
        if shown - self._frozen >= FREEZE_STEP or shown < self._frozen:
            self._frozen = shown
        for old, new in changes:
            # Failures found on the first read are old news; only report what happens now.
            changed = old is None or old.status is not new.status
            if new.status is ItemStatus.FAILED and changed and not first_read:
                self.itemFailed.emit(new)
        if pending:
            self._in_flight = True  # a newer read waits until this one is shown whole
            QTimer.singleShot(0, self, lambda: self._continue(generation, pending, first_read))
            return
        if self._dirty:
            self.reload_soon()
        else:
            self.refreshed.emit()

    def _continue(self, generation: int, pending: deque[Item], first_read: bool) -> None:
        self._in_flight = False
        if generation != self._generation:
            self.reload_soon()  # another base was chosen meanwhile
            return
        changes = self._model.show_pending(pending, ROW_SLICE)
        self._shown(generation, changes, pending, first_read)

    def _on_load_failed(self, generation: int, exc: BaseException) -> None:
        self._in_flight = False
        if generation == self._generation:
            log.warning("reading the items of base %s failed: %s", self._base_id, exc)
        if generation != self._generation or self._dirty:
            self.reload_soon()  # another base was chosen, or news came, meanwhile

    @Slot(str, list)
    def _on_items_changed(self, base_id: str, _item_ids: list[str]) -> None:
        if base_id == self._base_id:
            self.reload_soon()

    @Slot(str, int, int)
    def _on_queue_changed(self, base_id: str, _queued: int, _running: int) -> None:
        if base_id == self._base_id:
            self.reload_soon()

    @Slot(str, str, str, float)
    def _on_item_progress(self, base_id: str, item_id: str, phase: str, percent: float) -> None:
        if base_id != self._base_id:
            return
        if self._model.index_of(item_id).isValid():
            self._model.set_progress(item_id, phase, percent)
        else:
            self.reload_soon()  # a child the model has not seen yet
