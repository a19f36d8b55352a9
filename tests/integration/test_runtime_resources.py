"""Long queues must not leak: connections, memory and file descriptors stay bounded."""

from __future__ import annotations

from pathlib import Path

import psutil
from pytestqt.qtbot import QtBot

from app.knowledge.jobs.extraction import InlineExtraction
from app.knowledge.service import KnowledgeService
from app.runtime.executor import JobExecutor
from tests.conftest import write_files
from tests.fakes import FakeModels


def test_many_jobs_reuse_connections(qtbot: QtBot, tmp_path: Path) -> None:
    # Qt pool threads get a fresh Python thread state per job; per-thread SQLite readers
    # once leaked a connection (and its file descriptors) for every job.
    svc = KnowledgeService(tmp_path / "home", models=FakeModels(), extraction=InlineExtraction())
    base = svc.create_base("kb", embedding_model="fake:bow")
    files = {f"d{i:03d}.md": f"document number {i} about topic{i % 7}" for i in range(120)}
    svc.add(base.id, [write_files(tmp_path / "docs", files)])
    executor = JobExecutor(svc, max_workers=3)
    fds_before = psutil.Process().num_fds()
    with qtbot.waitSignal(executor.drained, timeout=120_000):
        executor.start()
    executor.shutdown()
    store = svc.parts.stores.get(base.id)
    assert store.chunk_count() == 120
    assert len(svc.catalog._readers) <= 3 + 2  # workers, the GUI thread, a spare
    assert len(store._readers) <= 3 + 2
    assert psutil.Process().num_fds() - fds_before < 40
    svc.close()
