"""Progress a person can read: what indexing is doing in the selected base and in all bases,
in the status bar and on running folders' rows, with counts, sizes and an ETA.

Fed by what the window already gets, never by polling faster than it: the item tree's
records and the runtime's progress signals for the selected base (`ItemFeed`), the
executor's queue counts, and for the other bases (and other Trove processes: a `trove add`
in a terminal) one grouped catalog count, read off the GUI thread when the executor reports
a change and every few seconds meanwhile, as the executor itself re-checks other processes'
work. The arithmetic lives in the Qt-free `app.ui.eta`, the words in `progress_texts`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace

import shiboken6
from PySide6.QtCore import QObject, QTimer, Signal, Slot
from PySide6.QtWidgets import QHBoxLayout, QLabel, QProgressBar, QWidget

from app.knowledge.types import RUNNING_STATUSES, Item, WorkCounts
from app.ui.context import UiContext
from app.ui.eta import (
    RunProgress,
    RunTracker,
    add_counts,
    count_work,
    is_active,
)
from app.ui.items.item_feed import ItemFeed
from app.ui.items.item_model import ItemTreeModel
from app.ui.progress_texts import WorkReport, texts

# While a run goes on its numbers are recomputed once a second (the ETA counts down and a
# stall slows the measured rate); bursts of progress signals make one recomputation.
TICK_MS = 1000
RECOMPUTE_DELAY_MS = 250
# Executor notices are answered with one catalog count after this delay.
SUMMARY_DELAY_MS = 500
# Between notices: every 2 s while work is known (the executor's own re-check period for
# other processes' jobs), every 5 s otherwise, to notice a terminal starting work.
PROBE_ACTIVE_MS = 2000
PROBE_IDLE_MS = 5000
BAR_STEPS = 1000


# -- the watcher -------------------------------------------------------------------------------


class ProgressWatcher(QObject):
    """Turns the window's signals into a WorkReport and running folders' progress lines."""

    changed = Signal(object)  # WorkReport

    def __init__(
        self,
        ctx: UiContext,
        model: ItemTreeModel,
        feed: ItemFeed,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._ctx = ctx
        self._model = model
        self._feed = feed
        self.clock: Callable[[], float] = time.monotonic  # tests move time themselves
        self._base_id: str | None = None
        self._live: dict[str, tuple[str, float]] = {}
        # The shown base's counts, and its running folders' (counted again only after the
        # items or their progress changed: a tick on a big idle base costs nothing)
        self._dirty = True
        self._base_counts = WorkCounts()
        self._folder_counts: list[tuple[Item, WorkCounts]] = []
        self._jobs: dict[str, tuple[int, int]] = {}  # base id -> (queued, running) jobs
        self._summary: dict[str, WorkCounts] = {}
        self._reading = False
        self._base_run = RunTracker()
        self._overall_run = RunTracker()
        self._folder_runs: dict[str, RunTracker] = {}
        self.report = WorkReport(None, None)
        self._recompute = self._timer(RECOMPUTE_DELAY_MS, single=True)
        self._tick = self._timer(TICK_MS, single=False)
        self._summary_due = self._timer(SUMMARY_DELAY_MS, single=True)
        self._probe = self._timer(PROBE_IDLE_MS, single=False)
        self._connect_signals()
        self._probe.start()
        self._summary_due.start()

    def _timer(self, interval: int, *, single: bool) -> QTimer:
        timer = QTimer(self)
        timer.setInterval(interval)
        timer.setSingleShot(single)
        return timer

    def _connect_signals(self) -> None:
        executor = self._ctx.executor
        executor.itemProgress.connect(self._on_item_progress)
        executor.itemsChanged.connect(self._on_items_changed)
        executor.queueChanged.connect(self._on_queue_changed)
        executor.drained.connect(self._on_drained)
        self._feed.refreshed.connect(self._on_feed_refreshed)
        self._recompute.timeout.connect(self.refresh)
        self._tick.timeout.connect(self.refresh)
        self._summary_due.timeout.connect(self.read_summary)
        self._probe.timeout.connect(self.read_summary)

    # -- public ------------------------------------------------------------------------------

    @Slot()
    def read_summary(self) -> None:
        """Count every base's work in the catalog (off the GUI thread)."""
        self._summary_due.stop()
        if self._reading:
            return
        self._reading = True
        self._ctx.tasks.run(
            self._ctx.service.work_counts, self._on_summary, self._on_summary_failed, owner=self
        )

    @Slot()
    def refresh(self) -> None:
        """Recompute the report and the folders' lines from what is known now."""
        self._recompute.stop()
        self._follow_base()
        if self._dirty:
            self._recount()
        now = self.clock()
        counts = dict(self._summary)
        if self._base_id is not None:
            counts[self._base_id] = replace(
                self._base_counts,
                queued_jobs=self._queued(self._base_id),
                running_jobs=self._running(self._base_id),
            )
        base_run = self._update_base(now, counts)
        overall_run = self._update_overall(now, counts)
        folders = self._update_folders(now)
        report = WorkReport(base_run, overall_run)
        active = base_run is not None or overall_run is not None or folders
        if active and not self._tick.isActive():
            self._tick.start()
        elif not active:
            self._tick.stop()
        self._probe.setInterval(PROBE_ACTIVE_MS if active else PROBE_IDLE_MS)
        if report != self.report:
            self.report = report
            self.changed.emit(report)

    # -- scopes ------------------------------------------------------------------------------

    def _follow_base(self) -> None:
        """The item tree shows another base: its run starts from scratch."""
        if self._feed.base_id != self._base_id:
            self._base_id = self._feed.base_id
            self._live.clear()
            self._base_run.reset()
            self._folder_runs.clear()
            self._dirty = True

    def _recount(self) -> None:
        """Count the shown base's items and its running folders' children (the model keeps
        both as rows change: a linked folder of 40,000 files is not walked at every refresh)."""
        self._prune_live()
        model = self._model
        if self._base_id is None:
            self._base_counts = count_work([], self._live)
            self._folder_counts = []
            self._dirty = False
            return
        self._base_counts = model.work_counts(self._live)
        running = [f for f in model.containers() if f.status in RUNNING_STATUSES]
        self._folder_counts = [
            (folder, model.children_work(folder.id, self._live)) for folder in running
        ]
        self._dirty = False

    def _update_base(self, now: float, counts: dict[str, WorkCounts]) -> RunProgress | None:
        if self._base_id is None:
            self._base_run.reset()
            return None
        mine = counts[self._base_id]
        return self._base_run.update(now, mine, running=mine.running_jobs > 0)

    def _update_overall(self, now: float, counts: dict[str, WorkCounts]) -> RunProgress | None:
        """All bases' run; shown only while a base besides the selected one has work."""
        total = add_counts(counts.values())
        run = self._overall_run.update(now, total, running=total.running_jobs > 0)
        others = any(is_active(c) for b, c in counts.items() if b != self._base_id)
        return run if others else None

    def _update_folders(self, now: float) -> bool:
        """Write running folders' and sitemaps' progress lines; True if any runs."""
        jobs_running = self._base_id is not None and self._running(self._base_id) > 0
        seen: set[str] = set()
        for folder, counts in self._folder_counts:
            tracker = self._folder_runs.setdefault(folder.id, RunTracker(whole=True))
            run = tracker.update(now, counts, running=jobs_running)
            if run is None or not run.total:
                self._model.set_run(folder.id, None)
                continue
            seen.add(folder.id)
            self._model.set_run(
                folder.id,
                {
                    "text": texts().run_line(run, folder.type),
                    "short": texts().short_line(run),
                    "fraction": run.fraction,
                },
            )
        for gone in set(self._folder_runs) - {f.id for f, _ in self._folder_counts}:
            del self._folder_runs[gone]
            self._model.set_run(gone, None)
        return bool(seen)

    def _queued(self, base_id: str) -> int:
        return self._jobs.get(base_id, (0, 0))[0]

    def _running(self, base_id: str) -> int:
        return self._jobs.get(base_id, (0, 0))[1]

    def _prune_live(self) -> None:
        """Forget live progress of items no longer running (or no longer shown)."""
        for item_id in list(self._live):
            item = self._model.item_by_id(item_id)
            if item is None or item.status not in RUNNING_STATUSES:
                del self._live[item_id]

    def _schedule_refresh(self) -> None:
        if not self._recompute.isActive():
            self._recompute.start()

    def _schedule_summary(self) -> None:
        if not self._summary_due.isActive():
            self._summary_due.start()

    # -- slots -------------------------------------------------------------------------------

    @Slot(str, str, str, float)
    def _on_item_progress(self, base_id: str, item_id: str, phase: str, percent: float) -> None:
        if base_id == self._feed.base_id and base_id == self._base_id:
            self._live[item_id] = (phase, percent)
            self._dirty = True
            self._schedule_refresh()

    @Slot(str, list)
    def _on_items_changed(self, _base_id: str, _item_ids: list[str]) -> None:
        self._schedule_summary()

    @Slot(str, int, int)
    def _on_queue_changed(self, base_id: str, queued: int, running: int) -> None:
        self._jobs[base_id] = (queued, running)
        self._schedule_refresh()
        self._schedule_summary()

    @Slot()
    def _on_drained(self) -> None:
        self._jobs.clear()
        self._schedule_refresh()
        self._schedule_summary()

    @Slot()
    def _on_feed_refreshed(self) -> None:
        self._dirty = True
        self._schedule_refresh()

    def _on_summary(self, counts: dict[str, WorkCounts]) -> None:
        self._reading = False
        if not shiboken6.isValid(self):
            return  # the window closed while the count was read
        self._summary = counts
        self._jobs = {b: (c.queued_jobs, c.running_jobs) for b, c in counts.items()}
        self._follow_base()
        if self._dirty:
            self._recount()
        self._follow_other_processes(counts)
        self.refresh()

    def _on_summary_failed(self, _exc: BaseException) -> None:
        self._reading = False  # the next probe tries again; a status bar never raises an error

    def _follow_other_processes(self, counts: dict[str, WorkCounts]) -> None:
        """The selected base changed in the catalog without this window's executor saying so
        (another Trove process indexes it): read its items again so the tree follows."""
        base_id = self._base_id
        if base_id is None or self._feed.loading:
            return
        catalog = counts.get(base_id, WorkCounts())
        shown = self._base_counts
        fields = ("settled", "pending", "preparing", "deleting")
        differs = any(getattr(catalog, f) != getattr(shown, f) for f in fields)
        foreign = catalog.running_jobs > 0 and self._ctx.executor.running_count == 0
        if differs or (foreign and round(catalog.partial_bytes) != round(shown.partial_bytes)):
            self._feed.reload_soon()


# -- the status bar part -----------------------------------------------------------------------


class WorkStatus(QWidget):
    """The status bar's progress: a bar and a line for the selected base and all bases."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("workStatus")
        self.bar = QProgressBar(self)
        self.bar.setObjectName("workProgress")
        self.bar.setRange(0, BAR_STEPS)
        self.bar.setTextVisible(False)
        self.bar.setFixedWidth(110)
        self.bar.hide()
        self.label = QLabel(self)
        self.label.setObjectName("queueStatus")
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.bar)
        row.addWidget(self.label)
        self.show_report(WorkReport(None, None))

    @Slot(object)
    def show_report(self, report: WorkReport) -> None:
        self.label.setText(texts().report(report))
        run = report.shown
        if run is not None:
            self.bar.setValue(round(run.fraction * BAR_STEPS))
            self.bar.show()
        else:
            self.bar.hide()
        self.setToolTip(texts().tooltip(report))
        # While work goes on the line only grows, so the status bar does not jump with
        # every digit; once idle it shrinks back.
        active = report.base is not None or report.overall is not None
        width = self.label.sizeHint().width()
        self.label.setMinimumWidth(max(width, self.label.minimumWidth()) if active else 0)
