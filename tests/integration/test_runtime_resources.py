"""Long queues must not leak: connections, memory and file descriptors stay bounded."""

from __future__ import annotations

from pathlib import Path

import psutil
from pytestqt.qtbot import QtBot

from app.knowledge.jobs.reader_pool import InlineExtraction
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


_CRASHING_PARENT = """
import os, sys
sys.path.insert(0, {root!r})
from app.knowledge.jobs.reader_pool import ExtractionPool
from app.knowledge.pipeline.indexing.token_count import ChunkSizing
from app.knowledge.pipeline.text_extraction import chunk_document

if __name__ == "__main__":
    pool = ExtractionPool(workers=2)
    pool.run(chunk_document, "some text", "t", (), ChunkSizing(64, 8), cancelled=lambda: None)
    print(" ".join(str(p) for p in pool._executor()._processes), flush=True)
    os._exit(9)  # die without shutting the pool down, like a crash
"""


def test_reader_workers_exit_when_trove_dies(tmp_path: Path) -> None:
    import subprocess
    import sys
    import time

    script = tmp_path / "parent.py"
    script.write_text(_CRASHING_PARENT.format(root=str(Path(__file__).resolve().parents[2])))
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60)
    workers = [int(p) for p in out.stdout.split()]
    assert workers, out.stderr
    deadline = time.monotonic() + 15
    alive = workers
    while alive and time.monotonic() < deadline:
        alive = [
            p for p in workers if psutil.pid_exists(p) and psutil.Process(p).status() != "zombie"
        ]
        if alive:
            time.sleep(0.2)  # polling another process's exit; there is no signal to wait on
    assert alive == [], "reader workers outlived their parent"
