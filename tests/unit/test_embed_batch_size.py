"""How many texts the vector stage hands an embedder per call: the configured size, else the
embedder's own preferred size (the built-in model measured its best), else 10 (a remote
provider's request)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from app.knowledge.jobs.index_documents import DEFAULT_EMBED_BATCH_SIZE, job_batch_size
from app.knowledge.jobs.reader_pool import InlineExtraction
from app.knowledge.service import KnowledgeService
from app.knowledge.types import ItemStatus
from tests.fakes import FakeEmbedder, FakeModels

# 25 paragraphs, each its own chunk at a small chunk size.
NOTE = "\n\n".join(
    f"Paragraph {n} is about topic{n} and nothing else at all, so it stands alone."
    for n in range(25)
)


class Preferring:
    def __init__(self, preferred: object) -> None:
        self.preferred_batch_size = preferred


def test_the_configured_size_wins() -> None:
    assert job_batch_size(Preferring(64), 4) == 4
    assert job_batch_size(Preferring(64), 0) == 1


def test_an_embedder_s_preferred_size_is_used_when_none_is_configured() -> None:
    assert job_batch_size(Preferring(48), None) == 48


@pytest.mark.parametrize("preferred", [None, 0, -3, True, 2.5, "32"])
def test_anything_else_gets_the_default(preferred: object) -> None:
    assert job_batch_size(Preferring(preferred), None) == DEFAULT_EMBED_BATCH_SIZE
    assert job_batch_size(object(), None) == DEFAULT_EMBED_BATCH_SIZE == 10


def _batches(tmp_path: Path, models: FakeModels) -> list[int]:
    svc = KnowledgeService(tmp_path / "home", models=models, extraction=InlineExtraction())
    try:
        base = svc.create_base("kb", embedding_model="fake:bow", chunk_size=20, chunk_overlap=0)
        item = svc.add_note(base.id, "topics", NOTE)
        svc.run_pending_jobs(base.id)
        assert svc.get_item(item.id).status is ItemStatus.COMPLETED
    finally:
        svc.close()
    return [len(call) for call in models.embedder_instance.calls[1:]]  # [0]: the probe


class PreferringEmbedder(FakeEmbedder):
    preferred_batch_size = 8


@pytest.fixture
def models() -> Iterator[FakeModels]:
    yield FakeModels()


def test_the_job_embeds_in_batches_of_ten_by_default(tmp_path: Path, models: FakeModels) -> None:
    sizes = _batches(tmp_path, models)
    assert sum(sizes) >= 25
    assert max(sizes) == 10 and all(size == 10 for size in sizes[:-1])


def test_the_job_honours_the_embedder_s_preferred_size(tmp_path: Path, models: FakeModels) -> None:
    models.embedder_instance = PreferringEmbedder()
    sizes = _batches(tmp_path, models)
    assert sum(sizes) >= 25
    assert max(sizes) == 8 and all(size == 8 for size in sizes[:-1])
