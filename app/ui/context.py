"""What every part of the window shares: the engine facade, the job runtime, background calls
and the person's settings. Passed to widgets instead of globals."""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QSettings

from app.knowledge.service import KnowledgeService
from app.runtime.executor import JobExecutor
from app.ui.notifications import Notifier
from app.ui.tasks import BackgroundTasks


@dataclass
class UiContext:
    service: KnowledgeService
    executor: JobExecutor
    tasks: BackgroundTasks
    settings: QSettings
    notifier: Notifier
