"""Run the job executor without a GUI until the queue drains (the CLI's `--wait` path)."""

from __future__ import annotations

import signal
import sys
from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import QCoreApplication, QTimer

from app.knowledge.service import KnowledgeService
from app.runtime.executor import JobExecutor, QueueStall

ProgressSink = Callable[[str, str, str, float], None]


@dataclass(frozen=True, slots=True)
class DrainResult:
    """How a run ended: the queue drained, Ctrl-C, or no job could be claimed any more."""

    interrupted: bool = False
    stall: QueueStall | None = None

    @property
    def finished(self) -> bool:
        return not self.interrupted and self.stall is None


def run_until_drained(
    service: KnowledgeService, on_progress: ProgressSink | None = None
) -> DrainResult:
    """Process every queued job. Ends early on Ctrl-C, and when the queue stalls (the
    catalog refuses every claim: a full disk): the executor would retry for ever, a
    command must return and say what is unfinished."""
    app = QCoreApplication.instance() or QCoreApplication(sys.argv[:1])
    service.open_server_bases()  # their queues count from the first round
    executor = JobExecutor(service)
    interrupted = False
    stall: QueueStall | None = None
    if on_progress is not None:
        executor.itemProgress.connect(on_progress)
    executor.drained.connect(app.quit)

    def on_stalled(why: QueueStall) -> None:
        nonlocal stall
        stall = why
        app.quit()

    executor.stalled.connect(on_stalled)

    def on_sigint(signum: int, frame: object) -> None:
        nonlocal interrupted
        interrupted = True
        app.quit()

    previous = signal.signal(signal.SIGINT, on_sigint)
    # Python runs signal handlers only between bytecodes; a light timer lets Ctrl-C in.
    ticker = QTimer()
    ticker.timeout.connect(lambda: None)
    ticker.start(200)
    QTimer.singleShot(0, executor.start)
    try:
        app.exec()
    finally:
        ticker.stop()
        signal.signal(signal.SIGINT, previous)
        executor.shutdown()
        executor.deleteLater()
    return DrainResult(interrupted=interrupted, stall=None if interrupted else stall)
