"""The ingestion engine end to end: adding, conflicts, jobs, retries, recovery, reindex,
restore/backfill, deletion, notes, web sources and the Qt job executor.

Most tests drive the queue with `service.run_pending_jobs` (synchronous, in the test
thread); the executor tests run the real QThreadPool runtime and wait on its signals.
No fixed sleeps: time is injected where a delay matters, threads wait on conditions.
"""

from __future__ import annotations

import shutil
import threading
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from app.knowledge import ingestion, path_safety
from app.knowledge.catalog import Catalog, Job
from app.knowledge.jobs import runner
from app.knowledge.jobs.context import JobContext
from app.knowledge.jobs.kinds import POLICIES, JobKind
from app.knowledge.material_paths import material_path, stored_files
from app.knowledge.pipeline.indexing.token_count import embedding_input
from app.knowledge.service import KnowledgeService
from app.knowledge.source_check import SourceCheck
from app.knowledge.types import (
    RUNNING_STATUSES,
    ErrorCode,
    Item,
    ItemPhase,
    ItemStatus,
    ItemType,
    OnConflict,
    SearchMode,
    TroveError,
)
from app.runtime import executor as executor_module
from app.runtime.executor import JobExecutor, MemoryBudget
from tests.conftest import write_files
from tests.fakes import FakeModels
from tests.httpserver import LoopbackServer, Response

# pid_max is far below this on Linux, and the start time cannot match: a dead process.
DEAD_OWNER = "999999:1.000"
DRAIN_TIMEOUT_MS = 30_000


# -- helpers ---------------------------------------------------------------------------------


def items_by_name(service: KnowledgeService, base_id: str) -> dict[str, Item]:
    """Live leaf items of a base keyed by the file name of their source."""
    return {
        Path(i.source).name: i
        for i in service.list_items(base_id)
        if i.type is ItemType.FILE and i.status is not ItemStatus.DELETING
    }


def found(service: KnowledgeService, base_id: str, word: str) -> set[str]:
    """Item ids a BM25 search for `word` returns (vector hits would match anything)."""
    return {r.item_id for r in service.search(base_id, word, mode=SearchMode.BM25).results}


def raw_files(service: KnowledgeService, base_id: str) -> list[str]:
    raw = service.layout.raw_dir(base_id)
    if not raw.exists():
        return []
    return sorted(p.relative_to(raw).as_posix() for p in raw.rglob("*") if p.is_file())


def raw_path(service: KnowledgeService, item: Item, rel: str | None = None) -> Path:
    rel = rel if rel is not None else item.relative_path
    assert rel is not None
    return path_safety.resolve_below(service.layout.raw_dir(item.base_id), rel)


def live_jobs(service: KnowledgeService, base_id: str) -> list[Job]:
    return service.catalog.list_jobs(base_id, ("queued", "running"))


def claim_job(catalog: Catalog, job_id: int, *, owner: str | None = DEAD_OWNER) -> Job:
    """Claim one specific queued job as running; jobs claimed on the way go back."""
    others: list[Job] = []
    try:
        while True:
            job = catalog.claim_next_job(owner=owner)
            assert job is not None, f"job {job_id} is not queued"
            if job.id == job_id:
                return job
            others.append(job)
    finally:
        for other in others:
            catalog.requeue_job(other.id)


def job_for(service: KnowledgeService, base_id: str, kind: JobKind, item_id: str) -> Job:
    (job,) = [
        j
        for j in live_jobs(service, base_id)
        if j.kind == kind and (j.item_id == item_id or item_id in j.payload.get("roots", []))
    ]
    return job


def make_docx(path: Path, paragraphs: Sequence[str]) -> Path:
    import docx

    document = docx.Document()
    for text in paragraphs:
        document.add_paragraph(text)
    path.parent.mkdir(parents=True, exist_ok=True)
    document.save(str(path))
    return path


def blank_pdf(path: Path) -> Path:
    """A PDF whose only page has no text, like a scanned page."""
    from pypdf import PdfWriter

    writer = PdfWriter()
    writer.add_blank_page(width=612, height=792)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as fh:
        writer.write(fh)
    return path


class Concurrency:
    """Counts how many calls of the wrapped functions run at once (max and total)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.current = 0
        self.max = 0
        self.total = 0

    def wrap(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            with self._lock:
                self.current += 1
                self.total += 1
                self.max = max(self.max, self.current)
            try:
                return fn(*args, **kwargs)
            finally:
                with self._lock:
                    self.current -= 1

        return wrapped


@pytest.fixture
def make_executor(service: KnowledgeService, qtbot: Any) -> Iterator[Callable[..., JobExecutor]]:
    made: list[JobExecutor] = []

    def make(**kwargs: Any) -> JobExecutor:
        executor = JobExecutor(service, **kwargs)
        made.append(executor)
        return executor

    yield make
    for executor in made:
        assert executor.shutdown(10_000)
        executor.deleteLater()


@pytest.fixture
def server() -> Iterator[LoopbackServer]:
    with LoopbackServer() as srv:
        yield srv


def html_page(title: str, body: str) -> Response:
    return Response.text(
        f"<!doctype html><html><head><title>{title}</title></head>"
        f"<body><h1>{title}</h1><p>{body}</p></body></html>",
        content_type="text/html",
    )


def urlset(urls: Sequence[str]) -> Response:
    entries = "".join(f"<url><loc>{u}</loc></url>" for u in urls)
    return Response.text(
        '<?xml version="1.0" encoding="UTF-8"?>'
        f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{entries}</urlset>',
        content_type="application/xml",
    )


# -- 1. idempotent enqueue and add conflicts --------------------------------------------------


def test_enqueue_with_same_idempotency_key_returns_the_live_job(service: KnowledgeService) -> None:
    base = service.create_base("kb")
    catalog = service.catalog
    first = catalog.enqueue_job(
        JobKind.INDEX_DOCUMENTS, base.id, item_id="x", idempotency_key="index-documents:x"
    )
    again = catalog.enqueue_job(
        JobKind.INDEX_DOCUMENTS, base.id, item_id="x", idempotency_key="index-documents:x"
    )
    assert again.id == first.id
    assert len(catalog.list_jobs(base.id)) == 1

    running = catalog.claim_next_job(base.id)
    assert running is not None and running.id == first.id and running.status == "running"
    while_running = catalog.enqueue_job(
        JobKind.INDEX_DOCUMENTS, base.id, item_id="x", idempotency_key="index-documents:x"
    )
    assert while_running.id == first.id
    assert len(catalog.list_jobs(base.id)) == 1

    catalog.finish_job(first.id, "done")
    assert catalog.list_jobs(base.id) == []  # finished jobs leave no rows behind
    fresh = catalog.enqueue_job(
        JobKind.INDEX_DOCUMENTS, base.id, item_id="x", idempotency_key="index-documents:x"
    )
    assert fresh.status == "queued" and fresh.attempts == 0
    assert [j.status for j in catalog.list_jobs(base.id)] == ["queued"]


def test_adding_the_same_file_twice_is_reported_not_duplicated(
    service: KnowledgeService, tmp_path: Path
) -> None:
    base = service.create_base("kb")
    src = write_files(tmp_path / "src", {"a.md": "# A\n\nalpha apricot\n"})
    first = service.add(base.id, [src / "a.md"])
    assert len(first.added) == 1 and not first.skipped

    # Still processing: the second add must not queue a second job either.
    second = service.add(base.id, [src / "a.md"])
    assert second.added == []
    assert [s for s, _ in second.skipped] == [str((src / "a.md").resolve())]
    assert "already" in second.skipped[0][1]
    assert len(live_jobs(service, base.id)) == 1

    service.run_pending_jobs(base.id)
    third = service.add(base.id, [src / "a.md"])
    assert third.added == [] and len(third.skipped) == 1
    items = service.list_items(base.id)
    assert len(items) == 1 and items[0].status is ItemStatus.COMPLETED
    assert live_jobs(service, base.id) == []


def test_add_with_replace_deletes_the_old_item(service: KnowledgeService, tmp_path: Path) -> None:
    base = service.create_base("kb")
    src = write_files(tmp_path / "src", {"a.md": "# A\n\nversion oldberry\n"})
    (old,) = service.add(base.id, [src / "a.md"]).added
    service.run_pending_jobs(base.id)
    assert found(service, base.id, "oldberry") == {old.id}

    (src / "a.md").write_text("# A\n\nversion newberry\n", encoding="utf-8")
    report = service.add(base.id, [src / "a.md"], on_conflict=OnConflict.REPLACE)
    assert report.replaced == [(str((src / "a.md").resolve()), old.id)]
    (new,) = report.added
    assert service.catalog.require_item(old.id).status is ItemStatus.DELETING
    assert found(service, base.id, "oldberry") == set()  # a deleting item is never a hit

    service.run_pending_jobs(base.id)
    assert service.catalog.get_item(old.id) is None
    assert service.catalog.require_item(new.id).status is ItemStatus.COMPLETED
    assert [i.id for i in service.list_items(base.id)] == [new.id]
    assert found(service, base.id, "newberry") == {new.id}
    assert found(service, base.id, "oldberry") == set()
    assert service.parts.stores.get(base.id).item_ids() == [new.id]


def test_same_content_under_another_name_is_reported(
    service: KnowledgeService, tmp_path: Path
) -> None:
    base = service.create_base("kb")
    text = "# Same\n\nidentical content\n"
    src = write_files(tmp_path / "src", {"one.md": text, "copy of one.md": text})
    (first,) = service.add(base.id, [src / "one.md"]).added
    report = service.add(base.id, [src / "copy of one.md"])
    assert report.added == []
    ((source, reason),) = report.skipped
    assert source == str((src / "copy of one.md").resolve())
    assert "same content" in reason and "one.md" in reason
    service.run_pending_jobs(base.id)
    assert [i.id for i in service.list_items(base.id)] == [first.id]


# -- 2. retries with backoff -------------------------------------------------------------------


class FakeClock:
    def __init__(self, start: float = 1_000_000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now


def test_retry_after_larger_than_backoff_wins(
    service: KnowledgeService, server: LoopbackServer
) -> None:
    server.route("/busy", Response.text("try later", status=503, headers=[("Retry-After", "7")]))
    base = service.create_base("kb")
    (item,) = service.add_urls(base.id, [server.url("/busy")]).added
    clock = FakeClock()
    job = service.catalog.claim_next_job(base.id, now=clock())
    assert job is not None and job.attempts == 1
    assert runner.run_job(JobContext(service.parts), job, clock=clock) == "queued"
    retried = service.catalog.require_job(job.id)
    assert retried.not_before == pytest.approx(clock() + 7.0)  # not the 1 s backoff
    assert server.hits("/busy") == 1
    assert service.catalog.require_item(item.id).status is ItemStatus.PROCESSING

    # A Retry-After shorter than the backoff does not shorten it.
    server.route("/busy", Response.text("try later", status=503, headers=[("Retry-After", "1")]))
    clock.now += 7.0
    job = service.catalog.claim_next_job(base.id, now=clock())
    assert job is not None and job.attempts == 2
    assert runner.run_job(JobContext(service.parts), job, clock=clock) == "queued"
    assert service.catalog.require_job(job.id).not_before == pytest.approx(clock() + 2.0)


# -- 3. crash recovery -------------------------------------------------------------------------


def test_recovery_after_a_crash(home: Path, models: FakeModels, tmp_path: Path) -> None:
    service = KnowledgeService(home, models=models)
    base = service.create_base("kb")
    src = write_files(
        tmp_path / "src",
        {
            "e.md": "# E\n\nechoword to delete\n",
            "f.md": "# F\n\nfoxtrotword to delete\n",
            "a.md": "# A\n\nalphaword\n",
            "b.md": "# B\n\nbravoword\n",
            "c.md": "# C\n\ncharlieword\n",
            "docs/c1.md": "# C1\n\nchildoneword\n",
            "docs/c2.md": "# C2\n\nchildtwoword\n",
        },
    )
    service.add(base.id, [src / "e.md", src / "f.md"])
    service.run_pending_jobs(base.id)
    done = items_by_name(service, base.id)
    e, f = done["e.md"], done["f.md"]
    e_files = [raw_path(service, e, rel) for rel in stored_files(e)]
    f_files = [raw_path(service, f, rel) for rel in stored_files(f)]
    assert all(p.is_file() for p in e_files + f_files)

    report = service.add(base.id, [src / "docs", src / "a.md", src / "b.md", src / "c.md"])
    docs = next(i for i in report.added if i.type is ItemType.DIRECTORY)
    # The folder is expanded (its children queued) before the "crash".
    prepare = claim_job(
        service.catalog, job_for(service, base.id, JobKind.PREPARE_ROOT, docs.id).id, owner=None
    )
    assert runner.run_job(JobContext(service.parts), prepare) == "done"
    names = items_by_name(service, base.id)
    a, b, c, c1, c2 = (names[n] for n in ("a.md", "b.md", "c.md", "c1.md", "c2.md"))
    # A dead process was indexing a, b and c1; c and c2 were still queued.
    for item in (a, b, c1):
        claim_job(service.catalog, job_for(service, base.id, JobKind.INDEX_DOCUMENTS, item.id).id)
    # e was being deleted but its job was never written; f's delete job was running.
    service.catalog.set_item_status(e.id, ItemStatus.DELETING)
    service.delete_items(base.id, [f.id])
    f_job = job_for(service, base.id, JobKind.DELETE_SUBTREE, f.id)
    claim_job(service.catalog, f_job.id)
    service.close()

    service = KnowledgeService(home, models=models)
    try:
        recovered = service.recover()
        assert recovered.abandoned_jobs == 3
        assert recovered.requeued_jobs == 1
        assert recovered.interrupted_items == 3
        assert recovered.resumed_deletions == 1

        catalog = service.catalog
        for item in (a, b, c1):
            now = catalog.require_item(item.id)
            assert now.status is ItemStatus.FAILED
            assert now.error_code == ErrorCode.INDEXING_INTERRUPTED
            assert now.error_message and "reindex" in now.error_message
        # What is still working has a live job to finish it; nothing else spins.
        busy_ids = {j.item_id for j in live_jobs(service, base.id)} | {
            r for j in live_jobs(service, base.id) for r in j.payload.get("roots", [])
        }
        for item in service.list_items(base.id):
            if item.status in RUNNING_STATUSES and item.id != docs.id:
                assert item.id in busy_ids, f"{item.title} is {item.status} with no job"
        assert catalog.require_item(docs.id).status is ItemStatus.PROCESSING  # waits on c2
        requeued = catalog.require_job(f_job.id)
        assert requeued.status == "queued" and requeued.owner is None
        assert job_for(service, base.id, JobKind.DELETE_SUBTREE, e.id).status == "queued"
        abandoned = [j for j in catalog.list_jobs(base.id) if j.status == "abandoned"]
        assert {j.item_id for j in abandoned} == {a.id, b.id, c1.id}

        service.run_pending_jobs(base.id)

        statuses = {i.id: i for i in service.list_items(base.id)}
        assert not [i for i in statuses.values() if i.status in RUNNING_STATUSES]
        assert statuses[c.id].status is ItemStatus.COMPLETED  # never started: still runs
        assert statuses[c2.id].status is ItemStatus.COMPLETED
        assert statuses[docs.id].status is ItemStatus.COMPLETED  # c1 failed, c2 completed
        assert e.id not in statuses and f.id not in statuses
        assert not any(p.exists() for p in e_files + f_files)
        assert found(service, base.id, "echoword") == set()
        assert found(service, base.id, "foxtrotword") == set()
        assert found(service, base.id, "charlieword") == {c.id}
        assert live_jobs(service, base.id) == []
        # The abandoned items can be reindexed by hand.
        service.reindex(base.id, [a.id])
        service.run_pending_jobs(base.id)
        assert catalog.require_item(a.id).status is ItemStatus.COMPLETED
    finally:
        service.close()


def test_recovery_leaves_a_live_owners_jobs_alone(
    service: KnowledgeService, tmp_path: Path
) -> None:
    from app.knowledge.jobs.owner import current_owner

    base = service.create_base("kb")
    src = write_files(tmp_path / "src", {"a.md": "# A\n\nalive\n"})
    (item,) = service.add(base.id, [src / "a.md"]).added
    job = claim_job(service.catalog, live_jobs(service, base.id)[0].id, owner=current_owner())
    report = service.recover()
    assert report.abandoned_jobs == 0 and report.interrupted_items == 0
    assert service.catalog.require_job(job.id).status == "running"
    assert service.catalog.require_item(item.id).status is ItemStatus.PROCESSING


# -- 4. reindex admission ----------------------------------------------------------------------


def _indexed(service: KnowledgeService, tmp_path: Path, files: dict[str, str]) -> tuple[str, Path]:
    base = service.create_base("kb")
    src = write_files(tmp_path / "src", files)
    service.add(base.id, [src / name for name in files if "/" not in name])
    service.run_pending_jobs(base.id)
    return base.id, src


def test_reindex_refused_when_the_source_was_deleted(
    service: KnowledgeService, tmp_path: Path
) -> None:
    base_id, src = _indexed(service, tmp_path, {"a.md": "# A\n\ngone soon\n"})
    item = items_by_name(service, base_id)["a.md"]
    (src / "a.md").unlink()
    jobs_before = service.catalog.list_jobs(base_id)
    with pytest.raises(TroveError) as info:
        service.reindex(base_id, [item.id])
    assert info.value.code is ErrorCode.SOURCE_MISSING
    assert "delete" in info.value.message and "add them again" in info.value.message
    assert service.catalog.list_jobs(base_id) == jobs_before
    assert service.catalog.require_item(item.id).status is ItemStatus.COMPLETED


def test_reindex_refused_when_the_source_cannot_be_verified(
    service: KnowledgeService, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    base_id, _ = _indexed(service, tmp_path, {"a.md": "# A\n\nshaky disk\n"})
    item = items_by_name(service, base_id)["a.md"]
    # Tests run as root here, so a permission-denied stat cannot be staged on disk.
    monkeypatch.setattr(ingestion, "check_reindex", lambda _raw, _item: SourceCheck.UNVERIFIABLE)
    jobs_before = service.catalog.list_jobs(base_id)
    with pytest.raises(TroveError) as info:
        service.reindex(base_id, [item.id])
    assert info.value.code is ErrorCode.READ_FAILED
    assert "could not be checked" in info.value.message and "retry" in info.value.message
    assert service.catalog.list_jobs(base_id) == jobs_before
    assert service.catalog.require_item(item.id).status is ItemStatus.COMPLETED


def test_reindex_refused_while_part_of_the_subtree_is_busy(
    service: KnowledgeService, tmp_path: Path
) -> None:
    base = service.create_base("kb")
    src = write_files(
        tmp_path / "src", {"docs/x.md": "# X\n\nxword\n", "docs/y.md": "# Y\n\nyword\n"}
    )
    (root,) = service.add(base.id, [src / "docs"]).added
    service.run_pending_jobs(base.id)
    child = items_by_name(service, base.id)["x.md"]
    service.reindex(base.id, [child.id])  # the child is processing again
    jobs_before = service.catalog.list_jobs(base.id)

    for ids in ([root.id], [child.id], None):
        with pytest.raises(TroveError) as info:
            service.reindex(base.id, ids)
        assert info.value.code is ErrorCode.INVALID_ARGUMENT
        assert "still processing" in info.value.message
        assert service.catalog.list_jobs(base.id) == jobs_before
    assert service.catalog.require_item(root.id).status is ItemStatus.COMPLETED

    service.run_pending_jobs(base.id)
    service.reindex(base.id, [root.id])  # settled again: admitted
    service.run_pending_jobs(base.id)
    assert {i.status for i in service.list_items(base.id)} == {ItemStatus.COMPLETED}


def test_reindex_picks_up_changed_content(service: KnowledgeService, tmp_path: Path) -> None:
    base_id, src = _indexed(service, tmp_path, {"a.md": "# A\n\nthe oldmarker text\n"})
    item = items_by_name(service, base_id)["a.md"]
    assert found(service, base_id, "oldmarker") == {item.id}
    (src / "a.md").write_text("# A\n\nthe newmarker text\n", encoding="utf-8")
    (started,) = service.reindex(base_id, [item.id])
    assert started.status is ItemStatus.PROCESSING
    service.run_pending_jobs(base_id)
    assert service.catalog.require_item(item.id).status is ItemStatus.COMPLETED
    assert found(service, base_id, "newmarker") == {item.id}
    assert found(service, base_id, "oldmarker") == set()
    assert "newmarker" in raw_path(service, item).read_text(encoding="utf-8")


def test_reindexed_folder_adds_new_files_and_deletes_removed_ones(
    service: KnowledgeService, tmp_path: Path
) -> None:
    base = service.create_base("kb")
    src = write_files(
        tmp_path / "src",
        {"docs/keep.md": "# Keep\n\nkeepword\n", "docs/gone.md": "# Gone\n\ngoneword\n"},
    )
    (root,) = service.add(base.id, [src / "docs"]).added
    service.run_pending_jobs(base.id)
    before = items_by_name(service, base.id)
    gone = before["gone.md"]
    gone_files = [raw_path(service, gone, rel) for rel in stored_files(gone)]

    (src / "docs" / "gone.md").unlink()
    write_files(src / "docs", {"new.md": "# New\n\nnewword\n"})
    service.reindex(base.id, [root.id])
    service.run_pending_jobs(base.id)

    after = items_by_name(service, base.id)
    assert set(after) == {"keep.md", "new.md"}
    assert after["keep.md"].id == before["keep.md"].id  # reindexed in place, not re-created
    assert all(i.parent_id == root.id for i in after.values())
    assert service.catalog.get_item(gone.id) is None
    assert not any(p.exists() for p in gone_files)
    assert found(service, base.id, "newword") == {after["new.md"].id}
    assert found(service, base.id, "goneword") == set()
    assert {i.status for i in after.values()} == {ItemStatus.COMPLETED}
    assert live_jobs(service, base.id) == []


def test_reindexed_folder_root_settles_and_survives_a_restart(
    service: KnowledgeService, tmp_path: Path
) -> None:
    base = service.create_base("kb")
    src = write_files(
        tmp_path / "src",
        {"docs/keep.md": "# Keep\n\nkeepword\n", "docs/gone.md": "# Gone\n\ngoneword\n"},
    )
    (root,) = service.add(base.id, [src / "docs"]).added
    service.run_pending_jobs(base.id)
    (src / "docs" / "gone.md").unlink()
    service.reindex(base.id, [root.id])
    service.run_pending_jobs(base.id)
    assert service.catalog.require_item(root.id).status is ItemStatus.COMPLETED
    service.recover()  # what the next start does
    service.run_pending_jobs(base.id)
    assert set(items_by_name(service, base.id)) == {"keep.md"}


def test_deleting_a_child_while_a_sibling_indexes_keeps_the_folder(
    service: KnowledgeService, tmp_path: Path
) -> None:
    base = service.create_base("kb")
    src = write_files(
        tmp_path / "src", {"docs/a.md": "# A\n\nsiblingword\n", "docs/b.md": "# B\n\nbword\n"}
    )
    (root,) = service.add(base.id, [src / "docs"]).added
    service.run_pending_jobs(base.id)
    items = items_by_name(service, base.id)
    service.reindex(base.id, [items["a.md"].id])
    reindex_job = service.catalog.claim_next_job(base.id)
    assert reindex_job is not None and reindex_job.kind == JobKind.REINDEX_SUBTREE
    runner.run_job(JobContext(service.parts), reindex_job)  # a's index job is queued now
    service.delete_items(base.id, [items["b.md"].id])
    service.run_pending_jobs(base.id)  # a settles while b is still deleting
    assert service.catalog.get_item(items["b.md"].id) is None
    assert service.catalog.require_item(root.id).status is ItemStatus.COMPLETED


# -- 5. restore from the base's own copies -----------------------------------------------------


def _folder_base(
    service: KnowledgeService, tmp_path: Path, **base_kw: Any
) -> tuple[str, Path, Item]:
    base = service.create_base("kb", **base_kw)
    src = write_files(
        tmp_path / "src",
        {"docs/one.md": "# One\n\nonemarker here\n", "docs/two.txt": "twomarker plain text\n"},
    )
    make_docx(src / "docs" / "three.docx", ["Threemarker inside a Word document."])
    (root,) = service.add(base.id, [src / "docs"]).added
    service.run_pending_jobs(base.id)
    assert {i.status for i in service.list_items(base.id)} == {ItemStatus.COMPLETED}
    return base.id, src, root


MARKERS = {"one.md": "onemarker", "two.txt": "twomarker", "three.docx": "threemarker"}


def test_restore_rebuilds_from_raw_copies_after_the_originals_are_gone(
    service: KnowledgeService, tmp_path: Path
) -> None:
    base_id, src, _ = _folder_base(service, tmp_path)
    shutil.rmtree(src)
    report = service.restore_base(base_id)
    assert report.restored == 3 and report.skipped_missing_source_count == 0
    assert {i.status for i in service.list_items(base_id)} <= RUNNING_STATUSES | {
        ItemStatus.COMPLETED
    }
    service.run_pending_jobs(base_id)
    items = items_by_name(service, base_id)
    assert {i.status for i in service.list_items(base_id)} == {ItemStatus.COMPLETED}
    for name, word in MARKERS.items():
        assert found(service, base_id, word) == {items[name].id}


def test_restore_reports_a_missing_raw_copy(service: KnowledgeService, tmp_path: Path) -> None:
    base_id, src, root = _folder_base(service, tmp_path)
    shutil.rmtree(src)
    lost = items_by_name(service, base_id)["three.docx"]
    raw_path(service, lost).unlink()  # the copy of the .docx (its .md product stays)
    report = service.restore_base(base_id)
    assert report.skipped_missing_source_count == 1 and report.restored == 2
    service.run_pending_jobs(base_id)
    lost_now = service.catalog.require_item(lost.id)
    assert lost_now.status is ItemStatus.FAILED
    assert lost_now.error_code == ErrorCode.SOURCE_MISSING
    assert lost_now.error_message and "add it again" in lost_now.error_message
    items = items_by_name(service, base_id)
    for name in ("one.md", "two.txt"):
        assert items[name].status is ItemStatus.COMPLETED
        assert found(service, base_id, MARKERS[name]) == {items[name].id}
    assert service.catalog.require_item(root.id).status is ItemStatus.COMPLETED


def test_restore_with_another_embedding_model_switches_to_hybrid(
    service: KnowledgeService, home: Path, tmp_path: Path
) -> None:
    base_id, src, _ = _folder_base(service, tmp_path)  # BM25 only
    assert service.search(base_id, "onemarker").mode is SearchMode.BM25
    service.close()

    other = FakeModels(dims=8)
    with_model = KnowledgeService(home, models=other)
    try:
        shutil.rmtree(src)
        report = with_model.restore_base(base_id, embedding_model="fake:eight")
        assert report.restored == 3
        with_model.run_pending_jobs(base_id)
        base = with_model.get_base(base_id)
        assert (base.embedding_model, base.dimensions) == ("fake:eight", 8)
        store = with_model.parts.stores.get(base_id)
        assert store.dimensions == 8
        assert store.vector_count() == store.chunk_count() > 0
        response = with_model.search(base_id, "twomarker")
        assert response.mode is SearchMode.HYBRID
        assert response.results[0].item_id == items_by_name(with_model, base_id)["two.txt"].id
        assert other.embedder_instance.texts_embedded  # the new model did the work

        # And switch the dimension again: 8 -> 16 with another resolver.
        with_model.close()
        with_model = KnowledgeService(home, models=FakeModels(dims=16))
        with_model.restore_base(base_id, embedding_model="fake:sixteen")
        with_model.run_pending_jobs(base_id)
        store = with_model.parts.stores.get(base_id)
        assert with_model.get_base(base_id).dimensions == 16 == store.dimensions
        assert store.vector_count() == store.chunk_count()
        assert {i.status for i in with_model.list_items(base_id)} == {ItemStatus.COMPLETED}
    finally:
        with_model.close()


# -- 6. enable embedding on a BM25-only base ---------------------------------------------------


def test_enable_embedding_backfills_vectors(
    service: KnowledgeService, models: FakeModels, tmp_path: Path
) -> None:
    base_id, _, _ = _folder_base(service, tmp_path)
    store = service.parts.stores.get(base_id)
    assert store.vector_count() == 0
    report = service.enable_embedding(base_id, "fake:bow")
    assert report.restored == 3
    service.run_pending_jobs(base_id)
    base = service.get_base(base_id)
    assert (base.embedding_model, base.dimensions) == ("fake:bow", 16)
    assert store.vector_count() == store.chunk_count() > 0
    assert service.search(base_id, "onemarker").mode is SearchMode.HYBRID
    assert {i.status for i in service.list_items(base_id)} == {ItemStatus.COMPLETED}

    with pytest.raises(TroveError) as info:  # a second model needs a restore instead
        service.enable_embedding(base_id, "fake:bow")
    assert info.value.code is ErrorCode.INVALID_ARGUMENT


def test_enable_embedding_refused_while_an_item_is_processing(
    service: KnowledgeService, tmp_path: Path
) -> None:
    base_id, src = _indexed(service, tmp_path, {"a.md": "# A\n\nready\n"})
    write_files(src, {"b.md": "# B\n\nstill queued\n"})
    service.add(base_id, [src / "b.md"])
    jobs_before = service.catalog.list_jobs(base_id)
    with pytest.raises(TroveError) as info:
        service.enable_embedding(base_id, "fake:bow")
    assert info.value.code is ErrorCode.INVALID_ARGUMENT
    assert "processing" in info.value.message
    base = service.get_base(base_id)
    assert base.embedding_model is None and base.dimensions is None
    assert service.catalog.list_jobs(base_id) == jobs_before
    assert service.parts.stores.get(base_id).vector_count() == 0

    service.run_pending_jobs(base_id)
    service.enable_embedding(base_id, "fake:bow")
    service.run_pending_jobs(base_id)
    assert service.get_base(base_id).embedding_model == "fake:bow"


# -- 7. identical chunks are embedded once -----------------------------------------------------

P1 = "Shared paragraph one talks about lighthouses and the keepers who tend them at night."
P2 = "Shared paragraph two explains tides and how the moon pulls the oceans twice a day."
UA = "Unique paragraph for file A describes alpine meadows full of gentians in early July."
UB = "Unique paragraph for file B describes desert canyons carved by rivers over ages past."


def test_identical_chunks_are_embedded_once_per_base(
    service: KnowledgeService, models: FakeModels, tmp_path: Path
) -> None:
    base = service.create_base("kb", embedding_model="fake:bow", chunk_size=20, chunk_overlap=0)
    # The same title: a chunk is embedded with its document's title in front (see
    # ChunkSizing.header), so identical chunks of differently titled documents differ.
    src = write_files(
        tmp_path / "src",
        {
            "a.md": f"# Notes\n\n{P1}\n\n{P2}\n\n{UA}\n\n{P1}\n",  # P1 twice in one file too
            "b.md": f"# Notes\n\n{UB}\n\n{P1}\n\n{P2}\n",
        },
    )
    models.embedder_instance.calls.clear()  # the dimension probe
    service.add(base.id, [src / "a.md", src / "b.md"])
    service.run_pending_jobs(base.id)

    store = service.parts.stores.get(base.id)
    items = items_by_name(service, base.id)
    texts = {name: [c.text for c in store.item_chunks(i.id)] for name, i in items.items()}
    shared = set(texts["a.md"]) & set(texts["b.md"])
    assert P1 in shared and P2 in shared  # the test means something: chunks do repeat
    embedded = Counter(models.embedder_instance.texts_embedded)
    chunks = set(texts["a.md"]) | set(texts["b.md"])
    assert set(embedded) == {embedding_input("Notes\n\n", text) for text in chunks}
    assert max(embedded.values()) == 1, embedded.most_common(3)
    assert store.vector_count() == store.chunk_count() == len(texts["a.md"]) + len(texts["b.md"])

    models.embedder_instance.calls.clear()
    service.reindex(base.id)
    service.run_pending_jobs(base.id)
    assert models.embedder_instance.texts_embedded == []  # unchanged: every vector reused
    assert {i.status for i in service.list_items(base.id)} == {ItemStatus.COMPLETED}
    assert store.vector_count() == store.chunk_count()


# -- 8. the base mutex is never held while embedding -------------------------------------------


def test_mutex_not_held_while_embedding_headless(
    service: KnowledgeService, models: FakeModels, tmp_path: Path
) -> None:
    base = service.create_base("kb", embedding_model="fake:bow")
    held: list[bool] = []
    models.embedder_instance.before_embed = lambda texts: held.append(
        service.parts.mutex.is_held(base.id)
    )
    src = write_files(tmp_path / "src", {f"f{i}.md": f"# F{i}\n\nword{i}\n" for i in range(4)})
    service.add(base.id, [src])
    service.run_pending_jobs(base.id)
    assert held and not any(held)  # the vector stage embeds the four in one batch
    assert {i.status for i in service.list_items(base.id)} == {ItemStatus.COMPLETED}


def test_mutex_not_held_while_embedding_in_the_executor(
    service: KnowledgeService,
    models: FakeModels,
    tmp_path: Path,
    qtbot: Any,
    make_executor: Callable[..., JobExecutor],
) -> None:
    base = service.create_base("kb", embedding_model="fake:bow")
    seen: list[tuple[bool, bool]] = []
    lock = threading.Lock()

    def check(texts: Sequence[str]) -> None:
        # With several workers another job may hold the lock for its final write at this
        # very moment, so the precise invariant is "not held by the embedding thread"; the
        # headless test above checks that nobody holds it at all.
        with lock:
            seen.append(
                (
                    service.parts.mutex.held_by_current_thread(base.id),
                    threading.current_thread() is threading.main_thread(),
                )
            )

    models.embedder_instance.before_embed = check
    src = write_files(
        tmp_path / "src", {f"f{i}.md": f"# F{i}\n\nembedword{i} text\n" for i in range(8)}
    )
    service.add(base.id, [src])
    executor = make_executor(max_workers=4)
    with qtbot.waitSignal(executor.drained, timeout=DRAIN_TIMEOUT_MS):
        executor.start()
    assert seen  # the vector stage's batches
    assert not any(h for h, _ in seen), "the base mutex was held by an embedding thread"
    assert not any(m for _, m in seen), "embedding ran on the GUI thread"
    assert {i.status for i in service.list_items(base.id)} == {ItemStatus.COMPLETED}


# -- 9. empty indexable text -------------------------------------------------------------------


def _empty_sources(service: KnowledgeService, tmp_path: Path) -> tuple[str, dict[str, Item]]:
    base = service.create_base("kb")
    src = tmp_path / "src"
    blank_pdf(src / "scan.pdf")
    write_files(src, {"blank.md": "   \n\n\t \n  \n", "good.md": "# Good\n\ngoodword\n"})
    service.add(base.id, [src / "scan.pdf", src / "blank.md", src / "good.md"])
    service.run_pending_jobs(base.id)
    return base.id, items_by_name(service, base.id)


def test_image_only_pdf_and_whitespace_markdown_fail_with_empty_text(
    service: KnowledgeService, tmp_path: Path
) -> None:
    base_id, items = _empty_sources(service, tmp_path)
    store = service.parts.stores.get(base_id)
    for name in ("scan.pdf", "blank.md"):
        item = items[name]
        assert item.status is ItemStatus.FAILED, name
        assert item.error_code == ErrorCode.EMPTY_INDEXABLE_TEXT, name
        assert item.error_message and "no text" in item.error_message
        assert store.material(item.id) is None
        assert store.item_chunks(item.id) == []
    assert items["good.md"].status is ItemStatus.COMPLETED
    assert store.item_ids() == [items["good.md"].id]


def test_no_empty_material_file_is_written_for_empty_text(
    service: KnowledgeService, tmp_path: Path
) -> None:
    _, items = _empty_sources(service, tmp_path)
    for name in ("scan.pdf", "blank.md"):
        rel = material_path(items[name])
        assert rel is not None
        assert not raw_path(service, items[name], rel).exists(), f"{rel} was written"


# -- 10. notes ---------------------------------------------------------------------------------


def test_note_is_indexed_snapshotted_and_reindexed(service: KnowledgeService) -> None:
    base = service.create_base("kb")
    text = "A note about the marmalade quasarwort recipe."
    note = service.add_note(base.id, "Kitchen  Ideas", text)
    assert note.type is ItemType.NOTE and note.status is ItemStatus.PROCESSING
    service.run_pending_jobs(base.id)
    done = service.get_item(note.id)
    assert done.status is ItemStatus.COMPLETED
    assert done.title == "Kitchen Ideas"
    assert done.relative_path is not None and done.relative_path.startswith("notes/")
    snapshot = raw_path(service, done)
    assert snapshot.read_text(encoding="utf-8") == text
    assert found(service, base.id, "quasarwort") == {note.id}
    assert service.parts.stores.get(base.id).material(note.id) is not None

    snapshot.write_text("tampered", encoding="utf-8")
    service.reindex(base.id, [note.id])
    service.run_pending_jobs(base.id)
    assert service.get_item(note.id).status is ItemStatus.COMPLETED
    assert snapshot.read_text(encoding="utf-8") == text  # re-snapshotted from the catalog
    assert found(service, base.id, "quasarwort") == {note.id}

    second = service.add_note(base.id, "Kitchen Ideas", "another nebulaberry note")
    service.run_pending_jobs(base.id)
    assert service.get_item(second.id).relative_path != done.relative_path


# -- 11. URLs and sitemaps ---------------------------------------------------------------------


def test_url_is_fetched_snapshotted_and_searchable(
    service: KnowledgeService, server: LoopbackServer
) -> None:
    server.route("/articles/otters", html_page("All About Otters", "The otterglyph swims."))
    base = service.create_base("kb")
    report = service.add_urls(base.id, [server.url("/articles/otters")])
    (item,) = report.added
    assert item.type is ItemType.URL
    service.run_pending_jobs(base.id)
    done = service.get_item(item.id)
    assert done.status is ItemStatus.COMPLETED, done.error_message
    assert done.title == "All About Otters"
    assert found(service, base.id, "otterglyph") == {item.id}
    assert done.relative_path is not None
    assert done.relative_path.startswith("web/127.0.0.1/") and done.relative_path.endswith(".md")
    snapshot = raw_path(service, done)
    assert "otterglyph" in snapshot.read_text(encoding="utf-8")
    assert server.hits("/articles/otters") == 1


def test_sitemap_expands_into_page_items(service: KnowledgeService, server: LoopbackServer) -> None:
    server.route("/p1", html_page("Page One", "sitemapwordone"))
    server.route("/p2", html_page("Page Two", "sitemapwordtwo"))
    server.route("/sitemap.xml", urlset([server.url(p) for p in ("/p1", "/p2", "/missing")]))
    base = service.create_base("kb")
    (root,) = service.add_urls(base.id, [server.url("/sitemap.xml")], sitemap=True).added
    assert root.type is ItemType.SITEMAP and root.status is ItemStatus.PREPARING
    service.run_pending_jobs(base.id)

    children = service.catalog.list_items(base.id, parent_id=root.id)
    assert len(children) == 3
    by_url = {c.source: c for c in children}
    assert all(c.type is ItemType.URL for c in children)
    assert by_url[server.url("/p1")].status is ItemStatus.COMPLETED
    assert by_url[server.url("/p2")].status is ItemStatus.COMPLETED
    missing = by_url[server.url("/missing")]
    assert missing.status is ItemStatus.FAILED
    assert missing.error_code == ErrorCode.FETCH_FAILED
    assert missing.error_message and "404" in missing.error_message
    assert service.get_item(root.id).status is ItemStatus.COMPLETED
    assert found(service, base.id, "sitemapwordtwo") == {by_url[server.url("/p2")].id}
    assert server.hits("/missing") == 1


def test_sitemap_index_with_two_child_sitemaps(
    service: KnowledgeService, server: LoopbackServer
) -> None:
    for name in ("a", "b", "c"):
        server.route(f"/pages/{name}", html_page(f"Page {name}", f"indexword{name}"))
    server.route("/sm-1.xml", urlset([server.url("/pages/a"), server.url("/pages/b")]))
    server.route("/sm-2.xml", urlset([server.url("/pages/c")]))
    server.route(
        "/sitemap_index.xml",
        Response.text(
            '<?xml version="1.0" encoding="UTF-8"?>'
            '<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
            f"<sitemap><loc>{server.url('/sm-1.xml')}</loc></sitemap>"
            f"<sitemap><loc>{server.url('/sm-2.xml')}</loc></sitemap>"
            "</sitemapindex>",
            content_type="application/xml",
        ),
    )
    base = service.create_base("kb")
    (root,) = service.add_urls(base.id, [server.url("/sitemap_index.xml")], sitemap=True).added
    service.run_pending_jobs(base.id)
    children = service.catalog.list_items(base.id, parent_id=root.id)
    assert sorted(c.source for c in children) == [
        server.url(f"/pages/{n}") for n in ("a", "b", "c")
    ]
    assert {c.status for c in children} == {ItemStatus.COMPLETED}
    assert service.get_item(root.id).status is ItemStatus.COMPLETED
    assert found(service, base.id, "indexwordc") == {
        next(c.id for c in children if c.source.endswith("/c"))
    }


# -- 12. delete --------------------------------------------------------------------------------


def test_deleting_a_folder_removes_rows_chunks_vectors_and_files(
    service: KnowledgeService, tmp_path: Path
) -> None:
    base = service.create_base("kb", embedding_model="fake:bow")
    src = write_files(
        tmp_path / "src",
        {
            "docs/a.md": "# A\n\ndelword alpha\n",
            "docs/sub/b.txt": "delword bravo\n",
            "keep.md": "# Keep\n\nkeepword stays\n",
        },
    )
    make_docx(src / "docs" / "c.docx", ["delword charlie in Word"])
    report = service.add(base.id, [src / "docs", src / "keep.md"])
    root = next(i for i in report.added if i.type is ItemType.DIRECTORY)
    keep = next(i for i in report.added if i.type is ItemType.FILE)
    service.run_pending_jobs(base.id)
    children = service.catalog.descendants(root.id)
    assert len(children) == 3
    store = service.parts.stores.get(base.id)
    keep_chunks = len(store.item_chunks(keep.id))
    assert store.chunk_count() > keep_chunks
    assert any(f.startswith(f"{root.relative_path}/") for f in raw_files(service, base.id))
    deleted_ids = {root.id, *(c.id for c in children)}

    assert service.delete_items(base.id, [root.id]) == [root.id]
    # While the deletion is queued nothing of the folder is a hit, in any mode.
    assert {i.status for i in service.catalog.descendants(root.id)} == {ItemStatus.DELETING}
    assert found(service, base.id, "delword") == set()
    assert not {r.item_id for r in service.search(base.id, "delword alpha").results} & deleted_ids

    service.run_pending_jobs(base.id)
    assert service.catalog.get_items(deleted_ids) == {}
    assert [i.id for i in service.list_items(base.id)] == [keep.id]
    assert store.chunk_count() == keep_chunks
    assert store.vector_count() == keep_chunks
    assert store.item_ids() == [keep.id]
    assert raw_files(service, base.id) == [keep.relative_path]
    assert not (service.layout.raw_dir(base.id) / str(root.relative_path)).exists()
    hybrid = service.search(base.id, "delword alpha bravo charlie")
    assert hybrid.mode is SearchMode.HYBRID
    assert {r.item_id for r in hybrid.results} == {keep.id}


def test_deleting_one_child_keeps_the_folder(service: KnowledgeService, tmp_path: Path) -> None:
    base = service.create_base("kb")
    src = write_files(
        tmp_path / "src", {"docs/a.md": "# A\n\nkeepme\n", "docs/b.md": "# B\n\ndropme\n"}
    )
    (root,) = service.add(base.id, [src / "docs"]).added
    service.run_pending_jobs(base.id)
    items = items_by_name(service, base.id)
    dropped = items["b.md"]
    dropped_files = [raw_path(service, dropped, rel) for rel in stored_files(dropped)]
    service.delete_items(base.id, [dropped.id])
    assert found(service, base.id, "dropme") == set()
    service.run_pending_jobs(base.id)
    assert service.catalog.get_item(dropped.id) is None
    assert not any(p.exists() for p in dropped_files)
    assert service.get_item(root.id).status is ItemStatus.COMPLETED
    assert [c.id for c in service.catalog.descendants(root.id)] == [items["a.md"].id]
    assert found(service, base.id, "keepme") == {items["a.md"].id}
    assert found(service, base.id, "dropme") == set()


def test_delete_while_embedding_leaves_nothing_behind(
    service: KnowledgeService, models: FakeModels, tmp_path: Path
) -> None:
    base = service.create_base("kb", embedding_model="fake:bow")
    src = write_files(tmp_path / "src", {"a.md": "# A\n\nracingword\n"})
    make_docx(src / "b.docx", ["racingword in a Word file"])
    report = service.add(base.id, [src / "a.md", src / "b.docx"])
    ids = [i.id for i in report.added]
    deleted: list[list[str]] = []

    def delete_now(texts: Sequence[str]) -> None:
        if not deleted:  # the first job to embed loses its item mid-flight
            deleted.append(service.delete_items(base.id, ids))

    models.embedder_instance.before_embed = delete_now
    service.run_pending_jobs(base.id)
    assert deleted == [ids]
    assert service.list_items(base.id) == []
    store = service.parts.stores.get(base.id)
    assert store.chunk_count() == 0 and store.vector_count() == 0
    assert raw_files(service, base.id) == []
    assert found(service, base.id, "racingword") == set()


# -- 13. the executor end to end ---------------------------------------------------------------


def test_executor_end_to_end(
    service: KnowledgeService,
    models: FakeModels,
    tmp_path: Path,
    qtbot: Any,
    make_executor: Callable[..., JobExecutor],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    base = service.create_base("kb", embedding_model="fake:bow")
    count = 9
    src = write_files(
        tmp_path / "src",
        {f"docs/doc{i}.md": f"# Doc {i}\n\nexecword{i}x lives here\n" for i in range(count)},
    )
    (root,) = service.add(base.id, [src / "docs"]).added

    # Signals the GUI thread received: (item id, phase). Workers wait (on a condition, with
    # a timeout) until their current phase was published, so every phase is observable
    # although the progress hub coalesces reports between flushes.
    seen: set[tuple[str, str]] = set()
    progress_bases: set[str] = set()
    cond = threading.Condition()
    problems: list[str] = []

    def on_progress(base_id: str, item_id: str, phase: str, percent: float) -> None:
        with cond:
            progress_bases.add(base_id)
            seen.add((item_id, phase))
            cond.notify_all()

    def wait_published(item_id: str, phase: str) -> None:
        with cond:
            if not cond.wait_for(lambda: (item_id, phase) in seen, timeout=10):
                problems.append(f"{phase} of {item_id} never published")

    # Each phase a worker reports waits until the GUI thread has published it.
    report = executor_module._ProgressHub.report

    def gated_report(
        hub: Any, base_id: str, item_id: str, phase: ItemPhase | None, percent: float | None
    ) -> None:
        report(hub, base_id, item_id, phase, percent)
        # The index job's own phases; "embedding" is the vector stage's too, and another
        # thread's report for the item may replace it before a flush (the hub keeps the
        # latest), so it is not waited for.
        gated = phase in (ItemPhase.READING, ItemPhase.WRITING)
        if gated and threading.current_thread() is not threading.main_thread():
            wait_published(item_id, str(phase))

    monkeypatch.setattr(executor_module._ProgressHub, "report", gated_report)
    concurrency = Concurrency()
    monkeypatch.setitem(
        runner.HANDLERS,
        JobKind.INDEX_DOCUMENTS,
        concurrency.wrap(runner.HANDLERS[JobKind.INDEX_DOCUMENTS]),
    )

    changed: list[tuple[str, list[str]]] = []
    # More workers than the per-base limit, so the limit is what holds jobs back.
    executor = make_executor(max_workers=8, progress_interval_ms=10)
    executor.itemProgress.connect(on_progress)
    executor.itemsChanged.connect(lambda base_id, ids: changed.append((base_id, list(ids))))
    with qtbot.waitSignal(executor.drained, timeout=DRAIN_TIMEOUT_MS):
        executor.start()

    assert problems == []
    children = service.catalog.list_items(base.id, parent_id=root.id)
    assert len(children) == count
    assert {c.status for c in children} == {ItemStatus.COMPLETED}
    assert service.get_item(root.id).status is ItemStatus.COMPLETED
    for child in children:
        phases = {phase for item_id, phase in seen if item_id == child.id}
        assert {"reading", "writing"} <= phases, (child.title, phases)
    assert progress_bases == {base.id}
    changed_ids = {i for base_id, ids in changed if base_id == base.id for i in ids}
    assert {root.id, *(c.id for c in children)} <= changed_ids
    assert concurrency.total == count
    limit = POLICIES[JobKind.INDEX_DOCUMENTS].concurrency
    assert limit == 5
    assert 1 < concurrency.max <= limit, concurrency.max
    assert executor.running_count == 0
    assert live_jobs(service, base.id) == []
    assert found(service, base.id, "execword4x") == {
        next(c.id for c in children if c.source.endswith("doc4.md"))
    }


# -- 14. global memory throttle ----------------------------------------------------------------


def test_memory_budget_exceeded_runs_one_job_at_a_time(
    service: KnowledgeService,
    tmp_path: Path,
    qtbot: Any,
    make_executor: Callable[..., JobExecutor],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    base = service.create_base("kb")
    src = write_files(tmp_path / "src", {f"m{i}.md": f"# M{i}\n\nmemword{i}\n" for i in range(10)})
    service.add(base.id, sorted(src.iterdir()))
    concurrency = Concurrency()
    for kind in list(runner.HANDLERS):
        monkeypatch.setitem(runner.HANDLERS, kind, concurrency.wrap(runner.HANDLERS[kind]))
    executor = make_executor(memory=MemoryBudget(max_rss=1), max_workers=8)
    with qtbot.waitSignal(executor.drained, timeout=DRAIN_TIMEOUT_MS):
        executor.start()
    assert concurrency.total == 10
    assert concurrency.max == 1
    assert {i.status for i in service.list_items(base.id)} == {ItemStatus.COMPLETED}
    assert found(service, base.id, "memword7") == {items_by_name(service, base.id)["m7.md"].id}
