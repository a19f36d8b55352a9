"""The arithmetic behind progress displays: how much of a run of indexing is done, how fast
it goes, when it should end, and sizes and durations rounded to what a person reads at a
glance. Qt-free, so it is tested without a window; the words around these numbers are
translated by the widgets (`app/ui/progress.py`).

A *run* starts when documents begin waiting for indexing and ends when none is left. Its
total is what settled since it started plus what is still pending, so a base that already
holds 10,000 documents shows "120 of 480" for the 480 just added, not "9,620 of 10,480".
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import NamedTuple

from app.knowledge.types import Item, ItemStatus, ItemType, WorkCounts

# No ETA during a run's first seconds: the first documents finish in a burst (small files,
# warm caches) and would promise far too early an end.
MIN_SECONDS = 5.0
MIN_SAMPLES = 3
# The speed is measured over the last half minute and then smoothed with this time
# constant, so one big file or a burst of small ones does not make the ETA jump.
WINDOW_SECONDS = 30.0
SMOOTHING_SECONDS = 10.0

CONTAINERS = frozenset({ItemType.DIRECTORY, ItemType.SITEMAP})
_SETTLED = frozenset({ItemStatus.COMPLETED, ItemStatus.FAILED})


# -- how much is done ------------------------------------------------------------------------


def partial_share(phase: str | None, percent: float | None) -> float:
    """The share of a running document's size that is done: its embedded percentage, all of
    it once it is being written, nothing while it is read (the same rule as the catalog's
    `work_counts`)."""
    if phase == "writing":
        return 1.0
    if phase == "embedding" and percent is not None and percent > 0:
        return min(percent, 100.0) / 100.0
    return 0.0


def count_work(items: Iterable[Item], live: Mapping[str, tuple[str, float]]) -> WorkCounts:
    """WorkCounts of these items; `live` holds newer (phase, percent) of running ones than
    their records (the runtime's progress signals)."""
    settled = settled_bytes = pending = pending_bytes = unsized = preparing = deleting = 0
    partial = 0.0
    for item in items:
        status = item.status
        if item.type in CONTAINERS:
            preparing += status is ItemStatus.PREPARING
        elif status in _SETTLED:
            settled += 1
            settled_bytes += item.size or 0
        elif status is ItemStatus.DELETING:
            deleting += 1
        elif item.size is None:
            pending += 1
            unsized += 1
        else:
            pending += 1
            pending_bytes += item.size
            phase, percent = live.get(item.id) or (
                item.phase.value if item.phase else None,
                item.progress,
            )
            partial += item.size * partial_share(phase, percent)
    return WorkCounts(
        settled=settled,
        settled_bytes=settled_bytes,
        pending=pending,
        pending_bytes=pending_bytes,
        unsized=unsized,
        partial_bytes=partial,
        preparing=preparing,
        deleting=deleting,
    )


class WorkTally:
    """count_work's figures kept item by item (`change` +1 as an item comes, -1 as it goes),
    so a shown base of 40,000 documents is not walked at every refresh: only the documents
    that may be part way (a phase on their record, or live progress) are looked at."""

    def __init__(self) -> None:
        self.settled = self.settled_bytes = self.pending = self.pending_bytes = 0
        self.unsized = self.preparing = self.deleting = 0
        # pending documents of known size whose record names a phase
        self.phased: set[str] = set()

    def change(self, item: Item, sign: int) -> None:
        status = item.status
        if item.type in CONTAINERS:
            self.preparing += sign * (status is ItemStatus.PREPARING)
        elif status in _SETTLED:
            self.settled += sign
            self.settled_bytes += sign * (item.size or 0)
        elif status is ItemStatus.DELETING:
            self.deleting += sign
        elif item.size is None:
            self.pending += sign
            self.unsized += sign
        else:
            self.pending += sign
            self.pending_bytes += sign * item.size
            if item.phase is not None:
                if sign > 0:
                    self.phased.add(item.id)
                else:
                    self.phased.discard(item.id)

    def counts(
        self,
        live: Mapping[str, tuple[str, float]],
        lookup: Callable[[str], Item | None],
        parent: str | None = None,
    ) -> WorkCounts:
        """What count_work gives for the items tallied; `lookup` finds an item by id, and a
        tally of one item's children names it (`parent`: `live` holds other items too)."""
        partial = 0.0
        for item_id in self.phased | live.keys():
            item = lookup(item_id)
            if item is None or item.size is None or item.type in CONTAINERS:
                continue
            if parent is not None and item.parent_id != parent:
                continue
            if item.status in _SETTLED or item.status is ItemStatus.DELETING:
                continue
            phase, percent = live.get(item_id) or (
                item.phase.value if item.phase else None,
                item.progress,
            )
            partial += item.size * partial_share(phase, percent)
        return WorkCounts(
            settled=self.settled,
            settled_bytes=self.settled_bytes,
            pending=self.pending,
            pending_bytes=self.pending_bytes,
            unsized=self.unsized,
            partial_bytes=partial,
            preparing=self.preparing,
            deleting=self.deleting,
        )


def add_counts(counts: Iterable[WorkCounts]) -> WorkCounts:
    """The sum of several bases' counts."""
    total = WorkCounts()
    for c in counts:
        total = WorkCounts(
            settled=total.settled + c.settled,
            settled_bytes=total.settled_bytes + c.settled_bytes,
            pending=total.pending + c.pending,
            pending_bytes=total.pending_bytes + c.pending_bytes,
            unsized=total.unsized + c.unsized,
            partial_bytes=total.partial_bytes + c.partial_bytes,
            preparing=total.preparing + c.preparing,
            deleting=total.deleting + c.deleting,
            queued_jobs=total.queued_jobs + c.queued_jobs,
            running_jobs=total.running_jobs + c.running_jobs,
        )
    return total


def is_active(counts: WorkCounts) -> bool:
    """Something of this is not finished: documents to index, sources to expand or delete."""
    return bool(counts.pending or counts.preparing or counts.deleting)


# -- how fast it goes ------------------------------------------------------------------------


class RateEstimator:
    """Units (bytes or documents) per second over a sliding window, exponentially smoothed.

    `add` takes the amount done so far at a moment; `eta` answers only once the run has
    gone on for `min_seconds` with `min_samples` samples, never with a negative time."""

    def __init__(
        self,
        *,
        min_seconds: float = MIN_SECONDS,
        min_samples: int = MIN_SAMPLES,
        window: float = WINDOW_SECONDS,
        smoothing: float = SMOOTHING_SECONDS,
    ) -> None:
        self._min_seconds = min_seconds
        self._min_samples = min_samples
        self._window = window
        self._smoothing = smoothing
        self._samples: deque[tuple[float, float]] = deque()
        self._count = 0
        self._started: float | None = None
        self._rate: float | None = None
        # The smoothed rate as it stood before the newest sample's moment: a sample taken
        # again at that moment (a later look at the same instant) is smoothed from it anew,
        # so how often the display looks does not change the result.
        self._before: tuple[float | None, float] = (None, 0.0)

    def reset(self) -> None:
        self._samples.clear()
        self._count = 0
        self._started = None
        self._rate = None
        self._before = (None, 0.0)

    def add(self, now: float, done: float) -> None:
        samples = self._samples
        if samples and (done < samples[-1][1] or now < samples[-1][0]):
            self.reset()  # less done than before (documents removed) or a clock gone back
            samples = self._samples
        if self._started is None:
            self._started = now
        if samples and now == samples[-1][0]:
            samples[-1] = (now, done)
        else:
            if samples:
                self._before = (self._rate, samples[-1][0])
            samples.append((now, done))
            self._count += 1
        # Keep one sample at or before the window's start, so the span covers the window.
        while len(samples) > 2 and samples[1][0] <= now - self._window:
            samples.popleft()
        self._smooth(now)

    def _smooth(self, now: float) -> None:
        first, last = self._samples[0], self._samples[-1]
        span = last[0] - first[0]
        if span <= 0:
            return
        measured = (last[1] - first[1]) / span
        rate, since = self._before
        if rate is None:
            self._rate = measured
            return
        weight = 1.0 - math.exp(-(now - since) / self._smoothing)
        self._rate = rate + weight * (measured - rate)

    def rate(self) -> float | None:
        """Units per second, or None before two samples a moment apart."""
        return self._rate

    def eta(self, now: float, remaining: float) -> float | None:
        """Seconds until `remaining` units are done at the smoothed rate; None while there are
        too few samples, too little time has passed, or nothing moves."""
        if self._started is None or self._rate is None or self._rate <= 0:
            return None
        if now - self._started < self._min_seconds or self._count < self._min_samples:
            return None
        return max(0.0, remaining / self._rate)


# -- a run ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RunProgress:
    """One scope's run (a base, all bases, a folder) as a display shows it."""

    done: int  # documents settled since the run began
    total: int  # done plus pending
    done_bytes: int | None  # None when a document of the run has no known size
    total_bytes: int | None
    running: bool  # a job works on it now (False: it waits)
    eta: float | None  # seconds; None until enough samples and whenever nothing runs
    rate: float | None  # bytes per second when sizes are known, else documents per second
    preparing: int
    deleting: int

    @property
    def fraction(self) -> float:
        """0..1, by size when every size is known, else by documents."""
        if self.done_bytes is not None and self.total_bytes:
            return min(1.0, self.done_bytes / self.total_bytes)
        return min(1.0, self.done / self.total) if self.total else 0.0

    @property
    def by_bytes(self) -> bool:
        return self.done_bytes is not None and bool(self.total_bytes)


class RunTracker:
    """Follows one scope from snapshot to snapshot: where its run began (its baseline), how
    far it is, and its ETA. `whole` counts every settled document (a folder's children all
    belong to its run); otherwise only what settled since the run began."""

    def __init__(self, *, whole: bool = False, estimator: RateEstimator | None = None) -> None:
        self._whole = whole
        self._rate = estimator or RateEstimator()
        self._baseline: tuple[int, int] | None = None
        self._last = (0, 0)  # (settled, settled bytes) at the previous snapshot
        self._sized = True
        self._by_bytes = False

    @property
    def active(self) -> bool:
        return self._baseline is not None

    def reset(self) -> None:
        self._baseline = None
        self._sized = True
        self._by_bytes = False
        self._rate.reset()

    def update(self, now: float, counts: WorkCounts, *, running: bool) -> RunProgress | None:
        """The run after this snapshot; None when nothing is left to do (the run ended)."""
        if not is_active(counts):
            self.reset()
            return None
        if self._baseline is None:
            self._baseline = (0, 0) if self._whole else (counts.settled, counts.settled_bytes)
            self._rate.reset()
        elif not self._whole and counts.settled < self._last[0]:
            # Settled documents left: deleted, or reindexed (they join this run as pending).
            # Either way what this run did stays done: move the baseline down with them.
            drop = self._last[0] - counts.settled
            drop_bytes = max(0, self._last[1] - counts.settled_bytes)
            self._baseline = (
                max(0, self._baseline[0] - drop),
                max(0, self._baseline[1] - drop_bytes),
            )
        self._last = (counts.settled, counts.settled_bytes)
        self._sized = self._sized and counts.unsized == 0
        done = max(0, counts.settled - self._baseline[0])
        total = done + counts.pending
        done_bytes: int | None = None
        total_bytes: int | None = None
        if self._sized:
            settled_bytes = max(0, counts.settled_bytes - self._baseline[1])
            total_bytes = settled_bytes + counts.pending_bytes
            done_bytes = min(total_bytes, settled_bytes + round(counts.partial_bytes))
        by_bytes = done_bytes is not None and bool(total_bytes)
        if by_bytes != self._by_bytes:
            self._by_bytes = by_bytes
            self._rate.reset()  # another unit: earlier samples no longer compare
        eta: float | None = None
        if running and total > done:
            if by_bytes and done_bytes is not None and total_bytes is not None:
                self._rate.add(now, done_bytes)
                eta = self._rate.eta(now, total_bytes - done_bytes)
            else:
                self._rate.add(now, done)
                eta = self._rate.eta(now, total - done)
        else:
            self._rate.reset()  # nothing moves: no ETA, and a fresh measure once it does
        return RunProgress(
            done=done,
            total=total,
            done_bytes=done_bytes,
            total_bytes=total_bytes,
            running=running,
            eta=eta,
            rate=self._rate.rate() if running else None,
            preparing=counts.preparing,
            deleting=counts.deleting,
        )


# -- sizes and durations ---------------------------------------------------------------------

_UNITS = ("B", "KiB", "MiB", "GiB", "TiB")


def format_size(size: float) -> str:
    """Binary units like the item tree's Size column, 3 significant digits at most:
    "980 B", "1.5 KiB", "35 MiB", "140 MiB", "2.1 GiB"."""
    value = max(0.0, float(size))
    unit = 0
    while value >= 1000 and unit < len(_UNITS) - 1:
        value /= 1024
        unit += 1
    if unit == 0:
        return f"{int(value)} B"
    if value < 10:
        text = f"{value:.1f}".removesuffix(".0")
        return f"{text} {_UNITS[unit]}"
    return f"{round(value)} {_UNITS[unit]}"


class Duration(NamedTuple):
    """A duration rounded for reading: at most two of the parts are non-zero."""

    hours: int
    minutes: int
    seconds: int


def approx_duration(seconds: float) -> Duration:
    """Rounded to what matters at that length: 5-second steps under a minute, minutes under
    an hour, 5-minute steps under ten hours, then hours. Never negative, never zero."""
    s = max(0.0, seconds)
    if s < 55:
        # (less a hair: 30.000000001 s of float arithmetic is 30 s, not 35)
        return Duration(0, 0, max(5, 5 * math.ceil(s / 5 - 1e-9)))
    if s < 59.5 * 60:
        return Duration(0, max(1, round(s / 60)), 0)
    if s < 10 * 3600:
        steps = round(s / 300)  # 5-minute steps
        hours, minutes = divmod(steps * 5, 60)
        return Duration(hours, minutes, 0)
    return Duration(round(s / 3600), 0, 0)
