"""What every part of the window shares: the engine facade, the job runtime, background calls
and the person's settings. Passed to widgets instead of globals."""

from __future__ import annotations

from dataclasses import dataclass, field

from PySide6.QtCore import QSettings

from app.knowledge.service import KnowledgeService
from app.runtime.folder_watching import FolderWatching
from app.runtime.process_executor import Executor
from app.runtime.server_watching import ServerWatching
from app.ui.models.downloads import ModelDownloads
from app.ui.notifications import Notifier
from app.ui.tasks import BackgroundTasks


@dataclass
class UiContext:
    service: KnowledgeService
    executor: Executor
    tasks: BackgroundTasks
    settings: QSettings
    notifier: Notifier
    # Model downloads outlive the dialog or picker that started them (one set per window).
    downloads: ModelDownloads = field(init=False)
    # Linked folders watched while the window runs (started with the executor).
    watching: FolderWatching = field(init=False)
    # Bases on a PostgreSQL server: their rows follow other desktops' changes.
    server_watching: ServerWatching = field(init=False)

    def __post_init__(self) -> None:
        self.downloads = ModelDownloads(self.service, self.tasks, self.tasks)
        self.watching = FolderWatching(self.service, self.executor)
        self.server_watching = ServerWatching(self.service, self.executor)
