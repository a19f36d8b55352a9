"""Model downloads for the whole window: the Models dialog, the model pickers and the status
bar start, follow and cancel them here, so a download outlives the dialog that started it.

Each download is one `KnowledgeService.download_model` call on a worker thread (through the
window's BackgroundTasks). The engine reports progress for every chunk it receives; the
worker only records the latest figures, and a timer on the GUI thread reads them a few
times a second, so drawing never keeps pace with the network. Cancelling sets the flag the
engine checks between chunks: the part fetched so far stays for the next download to
resume. One download runs at a time (the others wait their turn), so the window's other
background calls always have a thread.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum

from PySide6.QtCore import QObject, QTimer, Signal, Slot

from app.knowledge.service import KnowledgeService, ModelDownload, ModelDownloadCancelled
from app.ui.eta import RateEstimator
from app.ui.tasks import BackgroundTasks

POLL_MS = 250  # four updates a second at most
LOCAL_PREFIX = "local:"


class DownloadPhase(Enum):
    WAITING = "waiting"  # behind another download
    RUNNING = "running"
    STOPPING = "stopping"  # cancelled; the engine stops at its next chunk


@dataclass(frozen=True, slots=True)
class DownloadProgress:
    """A download as the window shows it."""

    model_id: str  # the bare id: "multilingual-e5-small"
    phase: DownloadPhase
    done: int = 0  # bytes on the disk, a resumed part included
    total: int = 0  # 0 until the hub has said
    rate: float | None = None  # bytes per second, once measured
    resume: bool = False  # started again while stopping: it resumes when it has stopped

    @property
    def fraction(self) -> float | None:
        return min(1.0, self.done / self.total) if self.total else None


class _Job:
    """One download: what the worker writes (the latest figures, read by the timer) and the
    cancel flag the engine reads."""

    def __init__(self, model_id: str) -> None:
        self.model_id = model_id
        self.stop = threading.Event()
        self.latest = (0, 0)  # written by the worker thread, read by the GUI thread
        self.progress = DownloadProgress(model_id, DownloadPhase.WAITING)
        self.rates = RateEstimator(min_seconds=0.0, min_samples=2, window=5.0, smoothing=2.0)

    def report(self, done: int, total: int) -> None:
        """The engine's progress callback (worker thread): one tuple assignment, no Qt."""
        self.latest = (done, total)

    def cancelled(self) -> bool:
        return self.stop.is_set()


class ModelDownloads(QObject):
    """Starts, follows and cancels model downloads (see the module's docstring)."""

    # a download's figures or phase changed (bare model id)
    changed = Signal(str)
    # model id, ModelDownload: installed
    finished = Signal(str, object)
    # model id, bytes kept for a resume
    cancelled = Signal(str, int)
    # model id, the exception (a TroveError, shown through app/ui/errors.py)
    failed = Signal(str, object)
    # what is installed (or partly downloaded) changed: listings are out of date
    modelsChanged = Signal()
    # the first download began (True) / the last one ended (False)
    activeChanged = Signal(bool)

    def __init__(
        self,
        service: KnowledgeService,
        tasks: BackgroundTasks,
        parent: QObject | None = None,
        *,
        poll_ms: int = POLL_MS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(parent)
        self._service = service
        self._tasks = tasks
        self._clock = clock
        self._jobs: dict[str, _Job] = {}  # in the order they were asked for
        self._resume: set[str] = set()  # started again while stopping
        self._timer = QTimer(self)
        self._timer.setInterval(poll_ms)
        self._connect_signals()

    def _connect_signals(self) -> None:
        self._timer.timeout.connect(self._on_poll)

    # -- public -----------------------------------------------------------------------------

    def start(self, model_id: str) -> None:
        """Download a catalog model (`local:<id>` or `<id>`); a download already asked for
        goes on, and one being stopped resumes once it has stopped."""
        bare = bare_id(model_id)
        job = self._jobs.get(bare)
        if job is not None:
            if job.progress.phase is DownloadPhase.STOPPING:
                self._resume.add(bare)
                self._set(job, resume=True)
            return
        was_active = self.is_active()
        self._jobs[bare] = _Job(bare)
        if not was_active:
            self.activeChanged.emit(True)
        self.changed.emit(bare)
        self._start_next()

    def cancel(self, model_id: str) -> None:
        """Stop a download; what it fetched stays for a resume."""
        bare = bare_id(model_id)
        self._resume.discard(bare)
        job = self._jobs.get(bare)
        if job is None:
            return
        if job.progress.phase is DownloadPhase.WAITING:
            self._end(job)
            self.cancelled.emit(bare, 0)
            return
        job.stop.set()
        self._set(job, phase=DownloadPhase.STOPPING, resume=False)

    def shutdown(self) -> None:
        """Cancel every download (the window closes); their parts stay for a resume."""
        self._resume.clear()
        for model_id in list(self._jobs):
            self.cancel(model_id)

    def progress(self, model_id: str) -> DownloadProgress | None:
        job = self._jobs.get(bare_id(model_id))
        return job.progress if job is not None else None

    def downloads(self) -> list[DownloadProgress]:
        """Every download asked for and not ended, in the order they were asked for."""
        return [job.progress for job in self._jobs.values()]

    def is_active(self) -> bool:
        return bool(self._jobs)

    def models_changed(self) -> None:
        """Say that installed models changed (an import or a removal elsewhere)."""
        self.modelsChanged.emit()

    # -- running ----------------------------------------------------------------------------

    def _start_next(self) -> None:
        if any(job.progress.phase is not DownloadPhase.WAITING for job in self._jobs.values()):
            return
        job = next(iter(self._jobs.values()), None)
        if job is None:
            return
        self._set(job, phase=DownloadPhase.RUNNING)
        service = self._service
        self._tasks.run(
            lambda: service.download_model(job.model_id, progress=job.report, cancel=job.cancelled),
            lambda result: self._on_done(job, result),
            lambda exc: self._on_error(job, exc),
            owner=self,
        )
        self._timer.start()

    def _on_done(self, job: _Job, result: ModelDownload) -> None:
        self._poll(job)
        self._end(job)
        self.finished.emit(job.model_id, result)
        self.modelsChanged.emit()

    def _on_error(self, job: _Job, exc: BaseException) -> None:
        self._poll(job)
        resume = job.model_id in self._resume
        self._resume.discard(job.model_id)
        if resume:  # a fresh download takes the stopped one's place in the queue
            self._jobs[job.model_id] = _Job(job.model_id)
        else:
            self._end(job)
        if isinstance(exc, ModelDownloadCancelled):
            self.cancelled.emit(job.model_id, exc.kept_bytes)
        else:
            self.failed.emit(job.model_id, exc)
        self.modelsChanged.emit()
        if resume:
            self.changed.emit(job.model_id)
            self._start_next()

    def _end(self, job: _Job) -> None:
        self._jobs.pop(job.model_id, None)
        self.changed.emit(job.model_id)
        if not any(j.progress.phase is not DownloadPhase.WAITING for j in self._jobs.values()):
            self._timer.stop()
        self._start_next()
        if not self._jobs:
            self.activeChanged.emit(False)

    @Slot()
    def _on_poll(self) -> None:
        for job in list(self._jobs.values()):
            if job.progress.phase is not DownloadPhase.WAITING:
                self._poll(job)

    def _poll(self, job: _Job) -> None:
        done, total = job.latest
        if (done, total) == (job.progress.done, job.progress.total):
            return
        job.rates.add(self._clock(), float(done))
        self._set(job, done=done, total=total, rate=job.rates.rate())

    def _set(
        self,
        job: _Job,
        *,
        phase: DownloadPhase | None = None,
        done: int | None = None,
        total: int | None = None,
        rate: float | None = None,
        resume: bool | None = None,
    ) -> None:
        was = job.progress
        job.progress = DownloadProgress(
            was.model_id,
            phase or was.phase,
            was.done if done is None else done,
            was.total if total is None else total,
            was.rate if rate is None else rate,
            was.resume if resume is None else resume,
        )
        self.changed.emit(job.model_id)


def bare_id(model_id: str) -> str:
    return model_id.strip().removeprefix(LOCAL_PREFIX)
