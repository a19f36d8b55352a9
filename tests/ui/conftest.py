"""Fixtures for driving the real widgets offscreen against a real engine with fake models."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings

from app.knowledge.jobs.reader_pool import InlineExtraction
from app.knowledge.service import KnowledgeService
from app.runtime.executor import JobExecutor
from app.ui.context import UiContext
from app.ui.notifications import Notifier
from app.ui.tasks import BackgroundTasks
from tests.fakes import FakeModels


@pytest.fixture
def ui_ctx(qtbot: object, tmp_path: Path) -> Iterator[UiContext]:
    """Service (fake models `fake:*`, in-process reading), a started executor, background
    calls, a notifier and settings in a temporary ini file."""
    service = KnowledgeService(
        tmp_path / "home", models=FakeModels(), extraction=InlineExtraction()
    )
    executor = JobExecutor(service, max_workers=2)
    tasks = BackgroundTasks()
    ctx = UiContext(
        service=service,
        executor=executor,
        tasks=tasks,
        settings=QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat),
        notifier=Notifier(),
    )
    executor.start()
    yield ctx
    executor.shutdown()
    tasks.wait()
    service.close()
