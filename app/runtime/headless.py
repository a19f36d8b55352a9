"""Run the job executor without a GUI until the queue drains (the CLI's `--wait` path)."""

from __future__ import annotations

import signal
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import QCoreApplication, QTimer

from app.knowledge.service import KnowledgeService
from app.runtime.executor import JobExecutor, QueueStall
from app.runtime.main_thread_gc import MainThreadCollector

ProgressSink = Callable[[str, str, str, float], None]


@dataclass(frozen=True, slots=True)
class DrainResult:
    """How a run ended: the queue drained, a signal (Ctrl-C, SIGTERM), or no job could be
    claimed any more."""

    interrupted: bool = False
    stall: QueueStall | None = None
    signum: int = signal.SIGINT  # the signal that interrupted it
    # Seconds from the start until `searchable` first held (None: it never did, or no
    # check was given); with `until_searchable` the run ended there.
    searchable_after: float | None = None

    @property
    def exit_code(self) -> int:
        """The shell's code for a command a signal ended: 130 for Ctrl-C, 143 for SIGTERM."""
        return 128 + int(self.signum)

    @property
    def finished(self) -> bool:
        return not self.interrupted and self.stall is None


# How often `searchable` is asked while jobs run (a count in the catalog each time).
SEARCHABLE_CHECK_MS = 250


def run_until_drained(
    service: KnowledgeService,
    on_progress: ProgressSink | None = None,
    *,
    searchable: Callable[[], bool] | None = None,
    until_searchable: bool = False,
) -> DrainResult:
    """Process every queued job. Ends early on Ctrl-C, and when the queue stalls (the
    catalog refuses every claim: a full disk): the executor would retry for ever, a
    command must return and say what is unfinished.

    `searchable` (asked every SEARCHABLE_CHECK_MS) tells when what the command waits for
    is searchable by full text; the moment is reported, and with `until_searchable` the
    run ends there, the vector stage handed back to the queue like any stopped job."""
    started = time.monotonic()
    app = QCoreApplication.instance() or QCoreApplication(sys.argv[:1])
    service.open_server_bases()  # their queues count from the first round
    executor = JobExecutor(service)
    interrupted = False
    stall: QueueStall | None = None
    if on_progress is not None:
        executor.itemProgress.connect(on_progress)

    def on_stalled(why: QueueStall) -> None:
        nonlocal stall
        stall = why
        app.quit()

    executor.stalled.connect(on_stalled)
    searchable_after: float | None = None

    def check_searchable() -> None:
        nonlocal searchable_after
        if searchable is None or searchable_after is not None:
            return
        try:
            ready = searchable()
        except Exception:  # the catalog is busy: ask again at the next tick
            return
        if ready:
            searchable_after = time.monotonic() - started
            if until_searchable:
                app.quit()

    looker = QTimer()
    looker.timeout.connect(check_searchable)
    if searchable is not None:
        looker.start(SEARCHABLE_CHECK_MS)
    executor.drained.connect(check_searchable)  # connected before quit: asked first
    executor.drained.connect(app.quit)

    received = signal.SIGINT

    def on_signal(signum: int, frame: object) -> None:
        nonlocal interrupted, received
        interrupted, received = True, signal.Signals(signum)
        app.quit()

    # SIGTERM (`kill`, a logout, a service manager) ends it as Ctrl-C does: the jobs stop,
    # the reader processes are shut down and their semaphores released. Left to Python's
    # default the process just died, and its resource tracker then reported "5 leaked
    # semaphore objects" (the reader pool's queues) while it removed them.
    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    # Python runs signal handlers only between bytecodes; a light timer lets Ctrl-C in.
    ticker = QTimer()
    ticker.timeout.connect(lambda: None)
    ticker.start(200)
    QTimer.singleShot(0, executor.start)
    collector = MainThreadCollector()
    collector.start()
    try:
        app.exec()
    finally:
        collector.stop()
        ticker.stop()
        looker.stop()
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        executor.shutdown()
        executor.deleteLater()
    return DrainResult(
        interrupted=interrupted,
        stall=None if interrupted else stall,
        signum=received,
        searchable_after=searchable_after,
    )
