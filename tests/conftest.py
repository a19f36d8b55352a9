from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from app.knowledge.jobs.reader_pool import InlineExtraction
from app.knowledge.service import KnowledgeService
from tests.fakes import FakeModels

# The PostgreSQL server and per-test schemas (tests/postgres/, tests/unit/test_index_store.py).
pytest_plugins = ["tests.postgres.server"]

SHARED = Path(__file__).resolve().parents[1].parent / "shared"


@pytest.fixture(autouse=True)
def main_thread_gc(request: pytest.FixtureRequest) -> Iterator[None]:
    """A test with a Qt application collects cyclic garbage on its main thread only, from
    the event loop, as Trove's processes do (app/runtime/main_thread_gc.py): the automatic
    collector, run inside a Qt destructor, deadlocked the UI suite."""
    if "qapp" not in request.fixturenames:
        yield
        return
    from app.runtime.main_thread_gc import MainThreadCollector

    request.getfixturevalue("qapp")  # the timer needs the application's event loop
    collector = MainThreadCollector()
    collector.start()
    try:
        yield
    finally:
        collector.stop()


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


@pytest.fixture
def models() -> FakeModels:
    return FakeModels()


@pytest.fixture
def svc(tmp_path: Path) -> Iterator[KnowledgeService]:
    """A service with fake models that reads documents in-process (fast, no workers)."""
    service = KnowledgeService(
        tmp_path / "home", models=FakeModels(), extraction=InlineExtraction()
    )
    yield service
    service.close()


@pytest.fixture
def service(home: Path, models: FakeModels) -> Iterator[KnowledgeService]:
    svc = KnowledgeService(home, models=models)
    yield svc
    svc.close()


def write_files(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root
