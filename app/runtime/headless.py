"""Run the job executor without a GUI until the queue drains (the CLI's `--wait` path)."""

from __future__ import annotations

import signal
import sys
from collections.abc import Callable

from PySide6.QtCore import QCoreApplication, QTimer

from app.knowledge.service import KnowledgeService
from app.runtime.executor import JobExecutor

ProgressSink = Callable[[str, str, str, float], None]


def run_until_drained(service: KnowledgeService, on_progress: ProgressSink | None = None) -> bool:
    """Process every queued job; returns False if interrupted (Ctrl-C) before the end."""
    app = QCoreApplication.instance() or QCoreApplication(sys.argv[:1])
    service.open_server_bases()  # their queues count from the first round
    executor = JobExecutor(service)
    interrupted = False
    if on_progress is not None:
        executor.itemProgress.connect(on_progress)
    executor.drained.connect(app.quit)

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
    return not interrupted
