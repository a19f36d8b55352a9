"""Linked folders watched while a front end runs: the engine's watch (a thread of its own)
queues sync jobs; this wakes the executor for them from the Qt side."""

from __future__ import annotations

from PySide6.QtCore import QObject, Qt, Signal

from app.knowledge.service import KnowledgeService
from app.runtime.process_executor import Executor


class FolderWatching(QObject):
    # base id of work the watch just queued (emitted on the watch's thread)
    queued = Signal(str)

    def __init__(
        self, service: KnowledgeService, executor: Executor, parent: QObject | None = None
    ) -> None:
        super().__init__(parent)
        self._service = service
        self._executor = executor
        self._connect_signals()

    def _connect_signals(self) -> None:
        # Queued: the watch thread must never run the executor's GUI-side code itself.
        self.queued.connect(self._on_queued, Qt.ConnectionType.QueuedConnection)

    def start(self) -> None:
        """Watch every linked folder (each is synced once now); a read-only data folder
        cannot sync, so it is not watched."""
        if not self._service.read_only:
            self._service.start_watching(self.queued.emit)

    def stop(self) -> None:
        self._service.stop_watching()

    def _on_queued(self, _base_id: str) -> None:
        self._executor.schedule()
