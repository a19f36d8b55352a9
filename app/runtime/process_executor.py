"""The window's side of the job executor that runs in its own process (work_process.py).

Same signals and calls as `JobExecutor`, so the window does not know where its jobs run:
`start()` starts the process, `schedule()` asks it to look for work, `shutdown()` stops it
(its running jobs go back to the queue). Its events arrive as lines on a pipe, read by the
GUI thread's event loop in microseconds: nothing here waits on the catalog or a job.

A process that dies unexpectedly is started again after a pause that doubles (up to a
minute); its jobs were handed back by recovery in the new process.
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, QProcess, QTimer, Signal, Slot

from app.knowledge.service import KnowledgeService
from app.runtime.executor import IDLE_POLL_MS, JobExecutor, QueueStall

log = logging.getLogger(__name__)

FIRST_RESTART_MS = 1_000
LAST_RESTART_MS = 60_000


class WorkerStopped(RuntimeError):
    """The job process said it could not claim jobs (the message is its error's)."""


def worker_command(home: Path) -> tuple[str, list[str]]:
    """The program and arguments that start the job process for `home`."""
    return sys.executable, ["-m", "app.runtime.work_process", "--home", str(home)]


class ProcessExecutor(QObject):
    # The same signals as JobExecutor's (see there).
    itemProgress = Signal(str, str, str, float)
    itemsChanged = Signal(str, list)
    queueChanged = Signal(str, int, int)
    drained = Signal()
    stalled = Signal(object)
    # The process is up and has recovered what an earlier run left (tests wait for this).
    ready = Signal()

    def __init__(
        self,
        home: Path,
        *,
        command: tuple[str, Sequence[str]] | None = None,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._program, args = command or worker_command(home)
        self._args = list(args)
        self._process: QProcess | None = None
        self._buffer = b""
        self._running = 0
        self._ready = False
        self._stopping = False
        self._restart_ms = FIRST_RESTART_MS
        self._restart_timer = QTimer(self)
        self._restart_timer.setSingleShot(True)
        self._connect_signals()

    def _connect_signals(self) -> None:
        self._restart_timer.timeout.connect(self._spawn)

    # -- the JobExecutor calls -------------------------------------------------------------

    @property
    def running_count(self) -> int:
        """Jobs the process runs now, as its last event said."""
        return self._running

    @property
    def pid(self) -> int | None:
        process = self._process
        return int(process.processId()) if process is not None and self._alive() else None

    def start(self, *, recover: bool = True) -> None:
        """Start the process (it recovers what a dead process left running, then works)."""
        del recover  # the process always recovers at its start, as a window's executor does
        if self._process is None and not self._stopping:
            self._spawn()

    def schedule(self) -> None:
        """Ask the process to look for work now."""
        self._send(b"schedule\n")

    def shutdown(self, timeout_ms: int = 30_000) -> bool:
        """Stop the process: its running jobs stop at their next step and go back to the
        queue. True when it ended within `timeout_ms` (else it is killed; recovery hands
        its jobs back)."""
        self._stopping = True
        self._restart_timer.stop()
        process = self._process
        if process is None or not self._alive():
            return True
        self._send(b"stop\n")
        process.closeWriteChannel()
        if process.waitForFinished(timeout_ms):
            self._read(process)
            return True
        log.warning("the job process did not stop in %d ms; killing it", timeout_ms)
        process.kill()
        process.waitForFinished(5_000)
        return False

    # -- the process -----------------------------------------------------------------------

    @Slot()
    def _spawn(self) -> None:
        if self._stopping:
            return
        if self._process is not None:
            self._process.deleteLater()  # the one that ended
        process = QProcess(self)
        process.setProcessChannelMode(QProcess.ProcessChannelMode.SeparateChannels)
        process.setStandardErrorFile(QProcess.nullDevice())
        process.readyReadStandardOutput.connect(lambda: self._read(process))
        process.finished.connect(lambda code, status: self._on_finished(process, code, status))
        process.errorOccurred.connect(lambda error: self._on_error(process, error))
        self._process = process
        self._buffer = b""
        self._ready = False
        process.start(self._program, self._args)

    def _alive(self) -> bool:
        process = self._process
        return process is not None and process.state() != QProcess.ProcessState.NotRunning

    def _send(self, line: bytes) -> None:
        process = self._process
        if process is not None and self._alive():
            process.write(line)

    def _read(self, process: QProcess) -> None:
        if process is not self._process:
            return
        self._buffer += bytes(process.readAllStandardOutput().data())
        *lines, self._buffer = self._buffer.split(b"\n")
        for line in lines:
            if line.strip():
                self._dispatch(line)

    def _dispatch(self, line: bytes) -> None:
        try:
            event: dict[str, Any] = json.loads(line)
            kind = event["e"]
        except (ValueError, KeyError, TypeError):
            log.warning("the job process said something unreadable: %r", line[:200])
            return
        if kind == "progress":
            self.itemProgress.emit(event["b"], event["i"], event["p"], float(event["v"]))
        elif kind == "items":
            self.itemsChanged.emit(event["b"], list(event["ids"]))
        elif kind == "queue":
            self._running = int(event.get("n", 0))
            self.queueChanged.emit(event["b"], int(event["q"]), int(event["r"]))
        elif kind == "drained":
            self._running = 0
            self.drained.emit()
        elif kind == "stalled":
            self.stalled.emit(QueueStall(WorkerStopped(str(event["m"])), int(event["f"])))
        elif kind == "ready":
            self._ready = True
            self._restart_ms = FIRST_RESTART_MS  # it came up: a later death starts afresh
            self.ready.emit()

    def _on_finished(self, process: QProcess, code: int, status: QProcess.ExitStatus) -> None:
        if process is not self._process:
            return
        self._read(process)
        self._running = 0
        if self._stopping:
            return
        log.warning(
            "the job process ended (exit code %s, %s); starting it again in %d ms",
            code,
            status.name,
            self._restart_ms,
        )
        self._restart_later()

    def _on_error(self, process: QProcess, error: QProcess.ProcessError) -> None:
        if process is not self._process or error != QProcess.ProcessError.FailedToStart:
            return  # a crash also ends in finished(), which restarts it
        log.warning("the job process could not start (%s)", error.name)
        if not self._stopping:
            self._restart_later()

    def _restart_later(self) -> None:
        self._restart_timer.start(self._restart_ms)
        self._restart_ms = min(LAST_RESTART_MS, self._restart_ms * 2)


# What the window's parts take: its jobs run in this process or in a process of their own.
Executor = JobExecutor | ProcessExecutor


def window_executor(home: Path, service: KnowledgeService) -> Executor:
    """The window's executor: jobs in a process of their own, so the window never shares a
    GIL with indexing. A frozen build (one executable, no `-m`) keeps them in-process."""
    if getattr(sys, "frozen", False):
        return JobExecutor(service, idle_poll_ms=IDLE_POLL_MS)
    return ProcessExecutor(home)
