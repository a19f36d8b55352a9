"""The job executor: catalog jobs run on a QThreadPool, progress published as Qt signals.

QtCore only, so the headless CLI drives the same executor under a QCoreApplication.
Handlers are the engine's Qt-free functions (`app.knowledge.jobs.runner.run_job`); this
module decides what runs when:

- one queue per base, a concurrency limit per (base, job kind) from the job policies, and
  a global cap sized to the machine;
- memory-aware throttling: no new job starts while the process is over its memory budget
  or the machine is short of memory (one job always may, so the queue never stalls);
- retries wait for their backoff on a timer, never by sleeping in a thread;
- cooperative cancellation: handlers poll a flag (shutdown, per-job timeout);
- progress from worker threads is persisted in steps and emitted at most every
  `progress_interval_ms`, so a burst of progress never floods the GUI;
- a job whose outcome could not be written (the runner released it to recovery, or could
  not even do that) counts as finished here: it never keeps `drained` from coming;
- a queue that cannot be read or claimed from (a full disk refuses the claim's commit, a
  locked or failing catalog) is tried again with a growing pause, and after
  `STALL_AFTER` failed rounds in a row `stalled` says so: a waiter (`--wait`) ends there
  instead of waiting for a drain that cannot come, while the window keeps retrying.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import apsw
import psutil
from PySide6.QtCore import QObject, QRunnable, QThread, QThreadPool, QTimer, Signal, Slot

from app.knowledge.catalog import Job
from app.knowledge.jobs import runner
from app.knowledge.jobs.context import JobContext
from app.knowledge.jobs.errors import storage_failure
from app.knowledge.jobs.kinds import policy_for
from app.knowledge.jobs.owner import current_owner
from app.knowledge.service import KnowledgeService
from app.knowledge.types import CancelReason, ItemPhase

log = logging.getLogger(__name__)

Clock = Callable[[], float]

# Pauses before looking at a queue again after a round whose claim (or count) failed:
# doubling from the first, capped, so a full disk costs one claim a minute, not one a second.
TROUBLE_FIRST_PAUSE_S = 0.5
TROUBLE_MAX_PAUSE_S = 60.0
# Failed rounds in a row after which `stalled` is emitted (about 1.5 s of retries): one
# refused claim (a lock held a moment too long) is no reason to stop a `--wait`.
STALL_AFTER = 3


# How often the window's and an MCP session's executor look for work while they have none
# (another process's queued or handed-back jobs): one claim query every few seconds.
IDLE_POLL_MS = 5_000

# The idle reason of a worker whose claim (or the counts after it) failed.
TROUBLE = "trouble"


def trouble_pause(failures: int) -> float:
    """Seconds to wait after the `failures`-th failed round in a row (1, 2, ...)."""
    return min(TROUBLE_MAX_PAUSE_S, TROUBLE_FIRST_PAUSE_S * 2.0 ** max(0, failures - 1))


@dataclass(frozen=True, slots=True)
class QueueStall:
    """Why no job can be claimed: the last error, and how many rounds in a row failed."""

    error: BaseException
    failures: int


def default_worker_cap() -> int:
    """One job thread per core, plus one. Jobs mostly wait on reader processes, models in
    native code and remote providers, so threads beyond the cores add overlap; but their
    Python parts share one GIL with the GUI thread. On 2 cores indexing 300 files with the
    offline model (tests/bench/responsiveness.py): 2 threads 22.5 s, longest GUI stall
    78 ms, p99 gap 32 ms; 3 threads 21.4-23.2 s, 66-75 ms, 41-44 ms; 5 threads 20.5 s,
    73-102 ms, 49-60 ms."""
    return max(3, min(16, (os.cpu_count() or 2) + 1))


@dataclass(slots=True)
class MemoryBudget:
    """Start no new job while RSS is above `max_rss` or free memory below `min_available`.

    Measured at most every `interval` seconds: asking the OS per job start is not free.
    """

    max_rss: int = 1536 * 1024 * 1024
    min_available: int = 512 * 1024 * 1024
    interval: float = 0.25
    _checked_at: float = -1.0
    _verdict: bool = False

    def exceeded(self) -> bool:
        now = time.monotonic()
        if now - self._checked_at < self.interval:
            return self._verdict
        self._checked_at = now
        try:
            self._verdict = (
                psutil.Process().memory_info().rss > self.max_rss
                or psutil.virtual_memory().available < self.min_available
            )
        except psutil.Error:
            self._verdict = False
        return self._verdict


class _ProgressHub:
    """Collects progress from worker threads; persists it in steps, emits it in batches."""

    PERSIST_STEP = 10.0  # percent

    def __init__(self, service: KnowledgeService) -> None:
        self._service = service
        self._lock = threading.Lock()
        self._pending: dict[str, tuple[str, str, float]] = {}
        self._persisted: dict[str, tuple[str, float]] = {}

    def report(
        self, base_id: str, item_id: str, phase: ItemPhase | None, percent: float | None
    ) -> None:
        phase_text = str(phase) if phase else ""
        pct = -1.0 if percent is None else float(percent)
        with self._lock:
            self._pending[item_id] = (base_id, phase_text, pct)
            last = self._persisted.get(item_id)
            persist = (
                last is None or last[0] != phase_text or abs(pct - last[1]) >= self.PERSIST_STEP
            )
            if persist:
                self._persisted[item_id] = (phase_text, pct)
        if persist:
            # Another process (`trove status --watch`, the GUI) reads phases from the catalog.
            try:
                self._service.jobs.set_item_phase(item_id, phase, percent)
            except Exception:  # the item may have been deleted or settled meanwhile
                log.debug("progress for %s not persisted", item_id, exc_info=True)

    def take(self) -> dict[str, tuple[str, str, float]]:
        with self._lock:
            pending, self._pending = self._pending, {}
            return pending

    def forget(self, item_id: str | None) -> None:
        if item_id is None:
            return
        with self._lock:
            self._persisted.pop(item_id, None)


class _WorkerSignals(QObject):
    # a job ended: job, outcome, (queued, running) of its base afterwards
    finished = Signal(object, str, object)
    # a job started: job, (queued, running) of its base
    started = Signal(object, object)
    # a worker found nothing to claim and ended: why ("empty", "memory", "stopping", or
    # "trouble": the queue could not be read), the next due time of a queued job (None:
    # none queued), (queued, running) over all bases
    idle = Signal(str, object, object)


JOB_THREAD_NICENESS = 5


def lower_thread_priority() -> None:
    """Jobs are background work: when the cores are busy, the window's thread runs first.
    Measured on 2 cores during a 300-file import: the longest GUI stall went from 77-87 ms to
    45-58 ms and the p99 gap from ~50 to ~27 ms, at the same throughput."""
    thread = QThread.currentThread()
    if thread is not None:
        thread.setPriority(QThread.Priority.LowPriority)  # Windows and macOS
    if sys.platform.startswith("linux"):
        # Qt cannot lower a normal thread's priority on Linux; its niceness is per thread.
        try:
            tid = threading.get_native_id()
            current = os.getpriority(os.PRIO_PROCESS, tid)
            os.setpriority(os.PRIO_PROCESS, tid, min(19, current + JOB_THREAD_NICENESS))
        except OSError:
            log.debug("could not lower the priority of a job thread", exc_info=True)


class _Worker(QRunnable):
    """Claims jobs and runs them until none is claimable, so the GUI thread never waits on
    the catalog: claims, counts and recovery all happen here."""

    def __init__(self, executor: JobExecutor) -> None:
        super().__init__()
        self._executor = executor

    def run(self) -> None:
        lower_thread_priority()
        executor = self._executor
        why = TROUBLE
        try:
            while True:
                job, why = executor._claim()
                if job is None:
                    break
                executor._run_claimed(job)
        except BaseException as exc:  # never let a worker thread die silently
            executor._note_trouble(exc)
            why = TROUBLE
        finally:
            executor._report_idle(why)


class JobExecutor(QObject):
    # base id, item id, phase ("" when none), percent (-1 when unknown)
    itemProgress = Signal(str, str, str, float)
    # base id, ids of items whose status or fields may have changed
    itemsChanged = Signal(str, list)
    # base id, queued jobs, running jobs
    queueChanged = Signal(str, int, int)
    # no job is queued or running in this process's view of the catalog
    drained = Signal()
    # no job could be claimed STALL_AFTER rounds in a row (QueueStall); retries go on, with
    # a growing pause, until a claim works again
    stalled = Signal(object)

    def __init__(
        self,
        service: KnowledgeService,
        *,
        max_workers: int | None = None,
        clock: Clock = time.time,
        memory: MemoryBudget | None = None,
        progress_interval_ms: int = 100,
        idle_poll_ms: int | None = None,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._service = service
        self._clock = clock
        self._memory = memory or MemoryBudget()
        self._cap = max_workers or default_worker_cap()
        self._pool = QThreadPool(self)
        self._pool.setMaxThreadCount(self._cap)
        # Guards the fields below: worker threads claim jobs and update them.
        self._lock = threading.Lock()
        self._claim_lock = threading.Lock()
        self._running: dict[int, Job] = {}
        # Jobs this process ran but could not record the end of (see runner.run_job): their
        # rows may still say running, yet nobody here works on them. Value: whether the
        # release landed (False: the row still names this process; it is tried again).
        self._given_up: dict[int, tuple[Job, bool]] = {}
        self._workers = 0
        # Failed rounds in a row (a claim or a count the catalog refused), and the last error.
        self._failures = 0
        self._failure: BaseException | None = None
        # Failures noted so far, ever: a success clears the streak only when no failure was
        # noted while it ran (a count read that waited on a lock must not clear a failure a
        # later claim met meanwhile: the warning would then be said twice in one streak).
        self._noted = 0
        self._stopping = threading.Event()
        self._started = False
        self._progress = _ProgressHub(service)
        self._owner = current_owner()
        self._signals = _WorkerSignals()
        self._due_timer = QTimer(self)
        self._due_timer.setSingleShot(True)
        # A long-lived executor (the window, an MCP session) looks for work another process
        # queued or handed back (`trove add --until-searchable` leaves the vector stage)
        # every `idle_poll_ms` while it has none; a command's executor ends at its drain.
        self._idle_poll_ms = idle_poll_ms
        self._poll_timer = QTimer(self)
        self._poll_timer.setSingleShot(True)
        # `drained` is said once per stretch of idleness, not at every idle poll.
        self._drained_said = False
        self._flush_timer = QTimer(self)
        self._flush_timer.setInterval(progress_interval_ms)
        self._connect_signals()

    def _connect_signals(self) -> None:
        self._signals.finished.connect(self._on_job_finished)
        self._signals.started.connect(self._on_job_started)
        self._signals.idle.connect(self._on_worker_idle)
        self._due_timer.timeout.connect(self.schedule)
        self._poll_timer.timeout.connect(self._start_worker)
        self._flush_timer.timeout.connect(self._on_flush_progress)

    # -- public --------------------------------------------------------------------------

    @property
    def running_count(self) -> int:
        with self._lock:
            return len(self._running)

    def start(self, *, recover: bool = True) -> None:
        """Recover from an interrupted run (once per process), then start working."""
        if not self._started:
            self._started = True
            self._flush_timer.start()
            if recover:
                self._recover_at_start()
        self.schedule()

    def _recover_at_start(self) -> None:
        # A catalog that refuses recovery's writes (a full disk) must not keep the queue
        # from being looked at: claims then fail too, and `stalled` says so.
        try:
            self._service.recover()
        except Exception as exc:
            if storage_failure(exc, self._service.layout.home) is None and not isinstance(
                exc, apsw.Error
            ):
                raise
            log.warning(
                "recovery at start failed (%s: %s); it runs again at the next start",
                type(exc).__name__,
                exc,
            )

    @Slot()
    def schedule(self) -> None:
        """Make sure a worker looks for claimable jobs; workers add more workers while they
        find work, up to the cap. Cheap: no catalog access on the calling (GUI) thread."""
        self._drained_said = False  # whoever asks is told when the queue is empty again
        self._start_worker()

    @Slot()
    def _start_worker(self) -> None:
        if self._stopping.is_set():
            return
        with self._lock:
            if self._workers >= self._cap:
                return
            self._workers += 1
        self._pool.start(_Worker(self))

    def shutdown(self, timeout_ms: int = 30_000) -> bool:
        """Ask running jobs to stop at their next step and wait for them: each stopped job
        goes back to the queue (hand_back.py). Those still running after the wait are
        marked so that recovery hands them back once this process is gone."""
        self._stopping.set()
        self._due_timer.stop()
        self._poll_timer.stop()
        self._flush_timer.stop()
        done = self._pool.waitForDone(timeout_ms)
        self._on_flush_progress()
        if not done:
            self._mark_stopped_at_exit()
        return bool(done)

    def _mark_stopped_at_exit(self) -> None:
        with self._lock:
            late = list(self._running.values())
        for job in late:
            try:
                self._service.jobs.mark_stopped_at_exit(job.id, self._owner)
            except Exception:  # the catalog refuses writes: recovery abandons it instead
                log.warning("job %s could not be marked for hand-back", job.id, exc_info=True)

    # -- worker side (called on pool threads) ---------------------------------------------

    def _claim(self) -> tuple[Job | None, str]:
        # One claim at a time; `_lock` is never held across catalog calls, so the GUI
        # thread (schedule, running_count) never waits on the database.
        with self._claim_lock:
            with self._lock:
                if self._stopping.is_set():
                    return None, "stopping"
                if self._running and self._memory.exceeded():
                    log.info("memory budget reached; new jobs wait for running ones to finish")
                    return None, "memory"
                skip = self._full_queues()
                noted = self._noted
            try:
                job = self._service.jobs.claim_next(now=self._clock(), owner=self._owner, skip=skip)
            except Exception as exc:  # a full disk refuses even the claim's commit
                self._note_trouble(exc)
                return None, TROUBLE
            if job is None:
                return None, "empty"  # the round is a good one if its counts can be read too
            with self._lock:
                self._clear_trouble(noted)  # work goes on
                self._running[job.id] = job
                more = self._workers < self._cap
                if more:
                    self._workers += 1
        if more:
            # There was work: let another worker look for more while this one runs.
            self._pool.start(_Worker(self))
        self._signals.started.emit(job, self._counts_or_none(job.base_id))
        return job, "claimed"

    def _run_claimed(self, job: Job) -> None:
        ctx = self._context(job)
        try:
            outcome = runner.run_job(ctx, job, clock=self._clock)
        except BaseException:
            log.exception("job %s crashed outside its handler", job.id)
            outcome = runner.release_job(ctx, job, "crashed outside its handler")
        with self._lock:
            self._running.pop(job.id, None)
            if outcome in (runner.RELEASED, runner.UNRECORDED):
                self._given_up[job.id] = (job, outcome == runner.RELEASED)
        self._progress.forget(job.item_id)
        self._signals.finished.emit(job, outcome, self._counts_or_none(job.base_id))

    def _note_trouble(self, exc: BaseException) -> None:
        """Count a round whose claim or counts failed; say it once per streak, in one line
        when the storage refused (a traceback when it is something else: a bug)."""
        with self._lock:
            self._noted += 1
            self._failures += 1
            self._failure = exc
            first = self._failures == 1
        if not first:
            log.debug("the job queue still cannot be read", exc_info=exc)
        elif storage_failure(exc, self._service.layout.home) is not None or isinstance(
            exc, apsw.Error
        ):
            log.warning(
                "the job queue cannot be read or claimed from (%s: %s); trying again with a "
                "growing pause",
                type(exc).__name__,
                exc,
            )
        else:
            log.error("job worker crashed", exc_info=exc)

    def _clear_trouble(self, noted: int) -> None:
        """End the failure streak, unless a failure was noted after `noted` was read (the
        success is then older than it). Called with `_lock` held."""
        if self._noted == noted:
            self._failures = 0
            self._failure = None

    def _report_idle(self, why: str) -> None:
        """A worker ends: tell the GUI thread when to look again. Never raises: a worker
        that ends by an exception would leave `_workers` counting it for ever."""
        with self._lock:
            self._workers -= 1
            alone = self._workers == 0 and not self._running
            noted = self._noted
        self._release_unrecorded()
        due: float | None = None
        totals = (0, 0)
        try:
            totals = self._job_counts()
            if alone and why == "empty" and totals[1]:
                # Jobs marked running by another process: if that process died, recovery
                # (which checks owners) releases them.
                try:
                    self._service.recover()
                except Exception:  # the catalog refuses writes: the next start recovers
                    log.exception("recovery of jobs left by another process failed")
                totals = self._job_counts()
            due = self._service.jobs.next_due_time() if totals[0] else None
            if why != TROUBLE:
                with self._lock:
                    self._clear_trouble(noted)
        except Exception as exc:  # the counts are the catalog's too
            if why != TROUBLE:
                self._note_trouble(exc)
            why = TROUBLE
        self._signals.idle.emit(why, due, totals)

    def _counts_or_none(self, base_id: str) -> tuple[int, int] | None:
        """A base's counts for the queue display; None when the catalog cannot say (the
        job's own bookkeeping must go on: it is what lets `drained` come)."""
        try:
            return self._job_counts(base_id)
        except Exception:
            log.debug("the job counts of %s cannot be read", base_id, exc_info=True)
            return None

    def _job_counts(self, base_id: str | None = None) -> tuple[int, int]:
        """(queued, running) jobs as this process waits on them: the catalog's counts,
        less the jobs given up here whose rows still say running."""
        queued, running = self._service.jobs.counts(base_id)
        with self._lock:
            given_up = {job.id: job.created_at for job, _ in self._given_up.values()}
        if not running or not given_up:
            return queued, running
        rows = self._service.jobs.running(base_id)
        # Ids of deleted rows can be reused: the creation time tells a new job apart.
        still = {j.id for j in rows if given_up.get(j.id) == j.created_at}
        if base_id is None:
            with self._lock:  # rows recovery has settled meanwhile need no more care
                for job_id in set(given_up) - still:
                    self._given_up.pop(job_id, None)
        return queued, running - len(still)

    def _release_unrecorded(self) -> None:
        """Try again to release the given-up jobs whose rows still name this process, so
        another Trove process does not wait on them until this one exits."""
        with self._lock:
            pending = [job for job, released in self._given_up.values() if not released]
        for job in pending:
            try:
                self._service.jobs.release(job.id, "its end could not be recorded")
            except Exception:
                log.debug("job %s still cannot be released", job.id, exc_info=True)
                continue
            with self._lock:
                if job.id in self._given_up:
                    self._given_up[job.id] = (job, True)

    def _full_queues(self) -> list[tuple[str, str]]:
        counts: dict[tuple[str, str], int] = {}
        for job in self._running.values():
            key = (job.base_id, job.kind)
            counts[key] = counts.get(key, 0) + 1
        return [key for key, n in counts.items() if n >= policy_for(key[1]).concurrency]

    def _context(self, job: Job) -> JobContext:
        policy = policy_for(job.kind)
        deadline = self._clock() + policy.timeout_s
        stopping = self._stopping
        clock = self._clock

        def cancelled() -> CancelReason | None:
            if stopping.is_set():
                return CancelReason.SHUTDOWN
            if clock() > deadline:
                return CancelReason.TIMEOUT
            return None

        def progress(item_id: str, phase: ItemPhase | None, percent: float | None) -> None:
            self._progress.report(job.base_id, item_id, phase, percent)

        return self._service.jobs.context(progress=progress, cancelled=cancelled)

    # -- GUI side ------------------------------------------------------------------------

    @Slot(object, object)
    def _on_job_started(self, job: Job, counts: tuple[int, int] | None) -> None:
        self._drained_said = False  # a stretch of work: its end is said
        if counts is not None:
            self.queueChanged.emit(job.base_id, *counts)

    @Slot(object, str, object)
    def _on_job_finished(self, job: Job, outcome: str, counts: tuple[int, int] | None) -> None:
        self._on_flush_progress()
        changed = [job.item_id] if job.item_id else []
        roots = job.payload.get("roots")
        if isinstance(roots, list):
            changed.extend(str(r) for r in roots)
        self.itemsChanged.emit(job.base_id, list(dict.fromkeys(changed)))
        if counts is not None:
            self.queueChanged.emit(job.base_id, *counts)
        log.debug("job %s (%s) %s", job.id, job.kind, outcome)

    @Slot(str, object, object)
    def _on_worker_idle(self, why: str, due: float | None, totals: tuple[int, int]) -> None:
        if self._stopping.is_set():
            return
        with self._lock:
            busy = self._workers > 0 or bool(self._running)
        if why == TROUBLE:
            self._on_trouble(busy)
            return
        if why == "memory":
            self._due_timer.start(250)
        elif due is not None and not self._due_timer.isActive():
            wait_s = due - self._clock()
            if wait_s > 0:
                self._due_timer.start(max(10, int(wait_s * 1000)))
            elif not busy:
                # Due but not claimed (enqueued just after the claim): look again soon.
                # While jobs run, their workers claim it when they finish.
                self._due_timer.start(50)
        if busy:
            return
        queued, running = totals
        if not queued and not running:
            if not self._drained_said:
                self._drained_said = True
                self.drained.emit()
        elif running and not self._due_timer.isActive():
            self._due_timer.start(2000)  # another process is working: look again shortly
        if self._idle_poll_ms is not None and not self._due_timer.isActive():
            self._poll_timer.start(self._idle_poll_ms)

    def _on_trouble(self, busy: bool) -> None:
        """Look again after a pause that doubles with each failed round; once no worker is
        left and STALL_AFTER rounds failed, say the queue is stalled (a `--wait` ends)."""
        with self._lock:
            failures, error = self._failures, self._failure
        if failures == 0 or error is None:  # a claim worked meanwhile
            self.schedule()
            return
        pause = trouble_pause(failures)
        self._due_timer.stop()
        self._due_timer.start(int(pause * 1000))
        if not busy and failures >= STALL_AFTER:
            self.stalled.emit(QueueStall(error, failures))

    @Slot()
    def _on_flush_progress(self) -> None:
        for item_id, (base_id, phase, percent) in self._progress.take().items():
            self.itemProgress.emit(base_id, item_id, phase, percent)
