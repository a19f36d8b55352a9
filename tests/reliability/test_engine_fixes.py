"""What the crash harness found, pinned down deterministically: leftovers of writes cut
short by a crash are removed with their item, and a deletion by another Trove process
during an item's final write leaves nothing orphaned in the index."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from app.knowledge import path_safety
from app.knowledge.jobs.index_documents import TEMP_SUFFIX, temp_prefix
from app.knowledge.jobs.kinds import JobKind, index_key
from app.knowledge.jobs.reader_pool import InlineExtraction
from app.knowledge.material_paths import material_path
from app.knowledge.service import KnowledgeService
from app.knowledge.types import ErrorCode, Item, ItemStatus, ItemType, SearchMode
from tests.conftest import write_files
from tests.fakes import FakeModels

# pid_max is far below this on Linux, and the start time cannot match: a dead process.
DEAD_OWNER = "999999:1.000"
DOCS = {"one.md": "# One\n\nThe onlyword of one.\n", "two.txt": "Twoword text.\n"}


def _service(home: Path) -> KnowledgeService:
    return KnowledgeService(home, models=FakeModels(), extraction=InlineExtraction())


@pytest.fixture
def svc(tmp_path: Path) -> Iterator[KnowledgeService]:
    service = _service(tmp_path / "home")
    yield service
    service.close()


def _files(svc: KnowledgeService, base_id: str) -> dict[str, Item]:
    return {Path(i.source).name: i for i in svc.list_items(base_id) if i.type is ItemType.FILE}


def _leftover(svc: KnowledgeService, item: Item, name: str = "x1y2z3") -> Path:
    """A temporary file as a write of the item's material leaves it when killed mid-way."""
    target = path_safety.resolve_below(svc.layout.raw_dir(item.base_id), material_path(item) or "")
    path = target.parent / f"{temp_prefix(target)}{name}{TEMP_SUFFIX}"
    path.write_text("half a docu", encoding="utf-8")
    return path


def test_recovery_removes_the_temp_files_of_interrupted_items(
    svc: KnowledgeService, tmp_path: Path
) -> None:
    base = svc.create_base("kb")
    svc.add(base.id, [write_files(tmp_path / "docs", DOCS)])
    svc.run_pending_jobs(base.id)
    one, two = _files(svc, base.id)["one.md"], _files(svc, base.id)["two.txt"]
    # `one` was being reindexed by a process that died mid-write; `two` by a live one.
    svc.catalog.set_item_status(one.id, ItemStatus.PROCESSING)
    svc.catalog.enqueue_job(
        JobKind.INDEX_DOCUMENTS, base.id, item_id=one.id, idempotency_key=index_key(one.id)
    )
    assert svc.catalog.claim_next_job(base.id, owner=DEAD_OWNER) is not None
    dead_write = _leftover(svc, one)
    svc.catalog.set_item_status(two.id, ItemStatus.PROCESSING)
    svc.catalog.enqueue_job(
        JobKind.INDEX_DOCUMENTS, base.id, item_id=two.id, idempotency_key=index_key(two.id)
    )
    live_write = _leftover(svc, two)

    report = svc.recover()

    assert report.interrupted_items == 1
    assert svc.get_item(one.id).error_code == ErrorCode.INDEXING_INTERRUPTED
    assert not dead_write.exists()
    assert live_write.exists()  # its job is queued: the write may be in flight
    svc.run_pending_jobs(base.id)
    live_write.unlink()  # a real write would have replaced it with the material
    assert svc.doctor().clean


def test_deleting_an_item_removes_the_temp_files_of_its_interrupted_writes(
    svc: KnowledgeService, tmp_path: Path
) -> None:
    base = svc.create_base("kb")
    svc.add(base.id, [write_files(tmp_path / "docs", DOCS)])
    svc.run_pending_jobs(base.id)
    one = _files(svc, base.id)["one.md"]
    leftover = _leftover(svc, one)
    svc.delete_items(base.id, [one.id])
    svc.run_pending_jobs(base.id)
    assert not leftover.exists()
    assert svc.doctor().clean


def test_deletion_by_another_process_during_the_final_write_orphans_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    first, second = _service(home), _service(home)  # two processes: two base mutexes
    try:
        base = first.create_base("kb", embedding_model="fake:bow")
        docs = write_files(tmp_path / "docs", {"one.md": DOCS["one.md"]})
        (added,) = first.add(base.id, [docs / "one.md"]).added
        store = first.parts.stores.get(base.id)
        original = store.rebuild_material

        def deleted_meanwhile(*args: Any, **kwargs: Any) -> list[int]:
            # Between the first process's status check and its write, the other process
            # deletes the item: its deletion finds nothing in the index yet.
            second.delete_items(base.id, [added.id])
            second.run_pending_jobs(base.id)
            assert second.catalog.get_item(added.id) is None
            return original(*args, **kwargs)

        monkeypatch.setattr(store, "rebuild_material", deleted_meanwhile)
        first.run_pending_jobs(base.id)

        assert store.material_count() == store.chunk_count() == store.vector_count() == 0
        assert first.catalog.list_jobs() == []  # cancelled as "item gone", not failed
        assert first.search(base.id, "onlyword", mode=SearchMode.BM25).results == []
        assert not list(first.layout.raw_dir(base.id).rglob("*.*"))
        assert first.doctor().clean
    finally:
        first.close()
        second.close()
