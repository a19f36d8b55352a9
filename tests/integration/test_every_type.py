"""One folder holding a real file of every supported type: each is found by its own word."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.knowledge.jobs.reader_pool import ExtractionPool
from app.knowledge.service import KnowledgeService
from app.knowledge.types import ItemStatus
from tests.fakes import FakeModels
from tests.unit.make_files import make_samples


@pytest.fixture
def pooled_service(home: Path, models: FakeModels) -> KnowledgeService:
    # The real path: documents are read in worker processes.
    pool = ExtractionPool(workers=2)
    svc = KnowledgeService(home, models=models, extraction=pool)
    yield svc  # type: ignore[misc]
    svc.close()
    pool.shutdown()


def test_every_type_is_read_indexed_and_found(
    pooled_service: KnowledgeService, tmp_path: Path
) -> None:
    svc = pooled_service
    samples = make_samples(tmp_path / "everything")
    base = svc.create_base("all types", embedding_model="fake:bow")
    report = svc.add(base.id, [tmp_path / "everything"])
    assert len(report.added) == 1
    svc.run_pending_jobs(base.id)
    items = {Path(i.source).name: i for i in svc.list_items(base.id) if i.parent_id}
    assert len(items) == len(samples)
    for kind, sample in samples.items():
        item = items[sample.path.name]
        assert item.status is ItemStatus.COMPLETED, (kind, item.error_code, item.error_message)
        results = svc.search(base.id, sample.word).results
        assert results, f"{kind}: nothing found for {sample.word!r}"
        assert results[0].item_id == item.id, kind
        assert sample.word.lower() in results[0].text.lower(), kind
        material = (svc.layout.raw_dir(base.id) / results[0].concept_id).read_text(encoding="utf-8")
        top = results[0]
        assert material[top.char_start : top.char_end] == top.text
    pdf = svc.search(base.id, samples["pdf"].word).results[0]
    assert pdf.page in (1, 2)  # a chunk carries the page it starts on


def test_pdf_chunks_carry_their_page(pooled_service: KnowledgeService, tmp_path: Path) -> None:
    samples = make_samples(tmp_path / "everything")
    base = pooled_service.create_base("pages", chunk_size=6, chunk_overlap=0)
    pooled_service.add(base.id, [samples["pdf"].path])
    pooled_service.run_pending_jobs(base.id)
    first = pooled_service.search(base.id, "alphazebra").results[0]
    second = pooled_service.search(base.id, samples["pdf"].word).results[0]
    assert (first.page, second.page) == (1, 2)
