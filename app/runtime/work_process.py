"""The window's job executor, in a process of its own (`python -m app.runtime.work_process`).

Indexing runs Python on job threads; in the window's process they share its GIL, so on a busy
machine the window waits for a descheduled job thread (2.3 s measured at load 12-15). Here
the executor has its own interpreter: the window only reads the catalog and this process's
events. The protocol is one JSON object per line:

- stdout, to the window: `{"e": "progress", "b": base, "i": item, "p": phase, "v": percent}`,
  `{"e": "items", "b": base, "ids": [...]}`, `{"e": "queue", "b": base, "q": queued,
  "r": running, "n": running here}`, `{"e": "drained"}`, `{"e": "stalled", "m": message,
  "f": failures}`, `{"e": "ready"}` once started, `{"e": "stopped"}` at the end.
- stdin, from the window: `schedule` (look for work now) and `stop`. The end of stdin is a
  stop too, so a window that dies (even by SIGKILL) never leaves this process behind: its
  running jobs go back to the queue for the next Trove, as at any normal exit.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from PySide6.QtCore import QCoreApplication, QObject, Qt, Signal

from app.knowledge.logs import configure_logging
from app.knowledge.service import open_service
from app.runtime.executor import IDLE_POLL_MS, JobExecutor, QueueStall
from app.runtime.main_thread_gc import MainThreadCollector

log = logging.getLogger(__name__)

# On stop, running jobs are asked to stop at their next step; what does not stop in time is
# handed back by recovery once this process is gone.
STOP_TIMEOUT_MS = 20_000


class _Commands(QObject):
    """Lines read from stdin on a thread, delivered to the main thread."""

    schedule = Signal()
    stop = Signal()

    def read(self, stream: TextIO) -> None:
        for line in stream:
            word = line.strip()
            if word == "schedule":
                self.schedule.emit()
            elif word == "stop":
                break
        self.stop.emit()


class _Events:
    """Writes the executor's signals to stdout, one JSON line each."""

    def __init__(self, executor: JobExecutor, out: TextIO) -> None:
        self._executor = executor
        self._out = out
        executor.itemProgress.connect(self._on_progress)
        executor.itemsChanged.connect(self._on_items)
        executor.queueChanged.connect(self._on_queue)
        executor.drained.connect(self._on_drained)
        executor.stalled.connect(self._on_stalled)

    def send(self, event: dict[str, Any]) -> None:
        try:
            self._out.write(json.dumps(event, separators=(",", ":")) + "\n")
            self._out.flush()
        except (OSError, ValueError):  # the window is gone: stdin's end stops us
            log.debug("could not tell the window about %s", event.get("e"))

    def _on_progress(self, base_id: str, item_id: str, phase: str, percent: float) -> None:
        self.send({"e": "progress", "b": base_id, "i": item_id, "p": phase, "v": percent})

    def _on_items(self, base_id: str, item_ids: list[str]) -> None:
        self.send({"e": "items", "b": base_id, "ids": item_ids})

    def _on_queue(self, base_id: str, queued: int, running: int) -> None:
        here = self._executor.running_count
        self.send({"e": "queue", "b": base_id, "q": queued, "r": running, "n": here})

    def _on_drained(self) -> None:
        self.send({"e": "drained"})

    def _on_stalled(self, why: QueueStall) -> None:
        self.send({"e": "stalled", "m": str(why.error), "f": why.failures})


def serve(home: Path, stdin: TextIO, stdout: TextIO) -> int:
    """Run queued jobs of the data folder `home` until told to stop (or stdin ends)."""
    configure_logging(home)
    app = QCoreApplication.instance() or QCoreApplication(sys.argv[:1])
    service = open_service(home)
    try:
        service.open_server_bases()
        executor = JobExecutor(service, idle_poll_ms=IDLE_POLL_MS)
        events = _Events(executor, stdout)
        commands = _Commands()
        commands.schedule.connect(executor.schedule, Qt.ConnectionType.QueuedConnection)
        commands.stop.connect(app.quit, Qt.ConnectionType.QueuedConnection)
        reader = threading.Thread(
            target=commands.read, args=(stdin,), name="trove-work-commands", daemon=True
        )
        executor.start()  # recovers what a dead process left running, then schedules
        events.send({"e": "ready"})
        reader.start()
        collector = MainThreadCollector()
        collector.start()
        app.exec()
        collector.stop()
        executor.shutdown(STOP_TIMEOUT_MS)
        events.send({"e": "stopped"})
    finally:
        service.close()
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="trove-work")
    parser.add_argument("--home", type=Path, required=True)
    args = parser.parse_args(argv)
    return serve(args.home, sys.stdin, sys.stdout)


if __name__ == "__main__":
    sys.exit(main())
