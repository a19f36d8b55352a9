"""Bases on a PostgreSQL server, watched while a front end runs: the engine hears of item
changes from the server (LISTEN/NOTIFY, on a thread per base) and this turns them into the
executor's itemsChanged, so the window's rows follow other desktops' work without polling."""

from __future__ import annotations

import threading

from PySide6.QtCore import QObject, Qt, Signal

from app.knowledge.service import KnowledgeService
from app.runtime.process_executor import Executor


class ServerWatching(QObject):
    # base id whose items changed on its server (emitted on a notice thread)
    changed = Signal(str)

    def __init__(
        self, service: KnowledgeService, executor: Executor, parent: QObject | None = None
    ) -> None:
        super().__init__(parent)
        self._service = service
        self._executor = executor
        self._connect_signals()

    def _connect_signals(self) -> None:
        # Queued: the notice thread must never run GUI-side code itself.
        self.changed.connect(self._on_changed, Qt.ConnectionType.QueuedConnection)

    def start(self) -> None:
        """Watch every server base; connecting waits on the network, so it happens on a
        thread of its own (an unreachable server must not hold up the window)."""
        threading.Thread(
            target=self._service.watch_server_changes,
            args=(self.changed.emit,),
            name="trove-server-watch",
            daemon=True,
        ).start()

    def stop(self) -> None:
        self._service.stop_watching_server_changes()

    def _on_changed(self, base_id: str) -> None:
        self._executor.itemsChanged.emit(base_id, [])
        # Another desktop may have queued work this one adopts (or deletions anyone runs).
        self._executor.schedule()
