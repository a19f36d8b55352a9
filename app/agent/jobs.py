"""kb_manage's queued work, run on the runtime's `JobExecutor` like the window's and the CLI's.

The executor needs a Qt event loop for its signals and timers, while the MCP server's loop is
asyncio in the main thread and tool calls arrive on worker threads. So the executor lives in
a `QThread` of its own, running that thread's event loop; tool threads wake it with a queued
signal, and only ever read the catalog to see how the work went. The thread starts on the
first request, so a read-only session never processes (or recovers) anything.
"""

from __future__ import annotations

import logging
import sys
import threading

from PySide6.QtCore import QCoreApplication, Qt, QThread, Signal

from app.agent.errors import ToolError, ToolErrorCode
from app.knowledge.service import KnowledgeService
from app.runtime.executor import IDLE_POLL_MS, JobExecutor

log = logging.getLogger(__name__)

START_TIMEOUT_S = 30.0
# On close, running jobs are asked to stop at their next step and go back to the queue; what
# does not stop in time is marked so that recovery hands it back once this process is gone.
STOP_TIMEOUT_MS = 10_000


class _ExecutorThread(QThread):
    wake = Signal()

    def __init__(self, service: KnowledgeService) -> None:
        super().__init__()
        self._service = service
        self.started_up = threading.Event()

    def run(self) -> None:
        executor = JobExecutor(self._service, idle_poll_ms=IDLE_POLL_MS)
        self.wake.connect(executor.schedule, Qt.ConnectionType.QueuedConnection)
        try:
            executor.start()  # recovers what a dead process left running, then schedules
        except Exception:  # the catalog refused recovery: claiming may still work
            log.exception("starting the job executor for agent tools failed")
        finally:
            self.started_up.set()
        self.exec()
        executor.shutdown(STOP_TIMEOUT_MS)


class BackgroundJobs:
    """Processes queued jobs in the background on a `JobExecutor` in its own Qt thread.

    Create it in the main thread (it makes the QCoreApplication the executor's thread needs
    when there is none); `request` and `close` may be called from any thread.
    """

    def __init__(self, service: KnowledgeService) -> None:
        self._app = QCoreApplication.instance() or QCoreApplication(sys.argv[:1])
        self._service = service
        self._lock = threading.Lock()
        self._thread: _ExecutorThread | None = None
        self._closed = False

    def request(self) -> None:
        """Make sure queued jobs get claimed soon (starting the executor the first time)."""
        with self._lock:
            if self._closed:
                raise ToolError(ToolErrorCode.INTERNAL_ERROR, "the job runner has stopped")
            thread = self._thread
            if thread is None:
                thread = self._thread = _ExecutorThread(self._service)
                thread.start()
        thread.started_up.wait(START_TIMEOUT_S)
        thread.wake.emit()

    def close(self) -> None:
        """Stop the executor: running jobs stop at their next step and go back to the queue
        for the next Trove process; nothing new starts."""
        with self._lock:
            self._closed = True
            thread, self._thread = self._thread, None
        if thread is not None:
            thread.quit()
            thread.wait(STOP_TIMEOUT_MS + 5_000)
