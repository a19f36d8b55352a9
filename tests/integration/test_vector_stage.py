"""Searchable first, vectors after (issue 32): the vector stage of a base.

On a base with an embedding model a document is searchable by full text as soon as it is
read; its vectors come from the embed-vectors job afterwards, claimed after every other due
job, written batch by batch, pausable (a restart keeps the pause), handed back at a normal
exit and resumed after a crash without paying twice for what was written.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from app.agent.tools import ConceptTools
from app.knowledge import doctor
from app.knowledge.catalog.jobs import CLAIM_ORDER
from app.knowledge.jobs import embed_vectors, runner
from app.knowledge.jobs.context import JobContext
from app.knowledge.jobs.kinds import JobKind, policy_for, vectors_key
from app.knowledge.jobs.owner import current_owner
from app.knowledge.jobs.queue import queue_vectors
from app.knowledge.jobs.reader_pool import InlineExtraction
from app.knowledge.service import KnowledgeService
from app.knowledge.types import ErrorCode, ItemPhase, ItemStatus, SearchMode
from app.providers.interfaces import ProviderError
from app.runtime.executor import JobExecutor
from tests.fakes import FakeModels
from tests.reliability.harness import ROOT
from tests.reliability.paid_embeddings import (
    KEY,
    KEY_ENV,
    MODEL,
    configure,
    paid_embeddings,
    write_documents,
)

WAIT_MS = 60_000


@pytest.fixture
def models() -> FakeModels:
    return FakeModels()


@pytest.fixture
def svc(tmp_path: Path, models: FakeModels) -> Iterator[KnowledgeService]:
    service = KnowledgeService(tmp_path / "home", models=models, extraction=InlineExtraction())
    yield service
    service.close()


def _notes(svc: KnowledgeService, base_id: str, count: int, words: int = 300) -> list[str]:
    """Notes of distinct words (no text repeats, so every chunk is embedded once)."""
    ids = []
    for n in range(count):
        text = " ".join(f"word{n}x{i}" for i in range(words)) + f" zebra{n} orchard"
        ids.append(svc.add_note(base_id, f"Note {n}", text).id)
    return ids


def _hybrid_base(svc: KnowledgeService) -> str:
    return svc.create_base("kb", embedding_model="fake:bow", chunk_size=64, chunk_overlap=0).id


def _read_not_embedded(svc: KnowledgeService, notes: int) -> str:
    """A hybrid base of `notes` notes, read and searchable, its vector stage queued."""
    base_id = _hybrid_base(svc)
    _notes(svc, base_id, notes)
    svc.pause_vectors(base_id)
    svc.run_pending_jobs(base_id)
    svc.resume_vectors(base_id)
    return base_id


def test_a_document_is_found_by_full_text_while_its_vectors_are_pending(
    svc: KnowledgeService, models: FakeModels
) -> None:
    base_id = _hybrid_base(svc)
    svc.pause_vectors(base_id)
    ids = _notes(svc, base_id, 3)
    models.embedder_instance.calls.clear()
    svc.run_pending_jobs(base_id)
    assert models.embedder_instance.calls == []  # reading never waits for a provider
    for item in svc.list_items(base_id):
        assert (item.status, item.phase, item.progress) == (
            ItemStatus.COMPLETED,
            ItemPhase.EMBEDDING,
            0.0,
        )
    response = svc.search(base_id, "zebra1")
    assert response.mode is SearchMode.HYBRID
    assert [r.item_id for r in response.results][:1] == [ids[1]]
    assert response.metrics.vector_coverage == 0.0
    assert response.metrics.to_json()["vectorCoverage"] == 0.0
    # An agent is told too (kb_search, per base).
    found = ConceptTools(svc).call("kb_search", {"query": "zebra1", "baseIds": [base_id]})
    assert not found.is_error and found.data["bases"][0]["vectorCoverage"] == 0.0
    status = svc.vector_status(base_id)
    assert (status.vectors, status.waiting_documents, status.paused) == (0, 3, True)
    assert status.chunks > 3
    # Waiting for vectors is not damage.
    assert doctor.check(svc.parts, base_id).problems == []

    assert svc.resume_vectors(base_id)
    svc.run_pending_jobs(base_id)
    for item in svc.list_items(base_id):
        assert (item.status, item.phase, item.progress) == (ItemStatus.COMPLETED, None, None)
    status = svc.vector_status(base_id)
    assert status.vectors == status.chunks and status.waiting_documents == 0
    response = svc.search(base_id, "zebra1")
    assert response.metrics.vector_coverage == 1.0 and response.metrics.vector_hit_count > 0
    # Every chunk text was embedded once (the search's own query aside).
    embedded = [t for t in models.embedder_instance.texts_embedded if t != "zebra1"]
    assert len(embedded) == len(set(embedded)) == status.chunks


def test_the_vector_stage_is_claimed_after_every_other_due_job(svc: KnowledgeService) -> None:
    assert f"'{JobKind.EMBED_VECTORS}'" in CLAIM_ORDER
    base_id = _hybrid_base(svc)
    (first,) = _notes(svc, base_id, 1)
    job = svc.catalog.claim_next_job(base_id)
    assert job is not None and job.kind == JobKind.INDEX_DOCUMENTS
    assert runner.run_job(JobContext(svc.parts), job) == "done"
    second = svc.add_note(base_id, "Later", "a later note about zebras").id
    # The vector job was queued first, yet the later document is read before it.
    kinds = [j.kind for j in svc.catalog.list_jobs(base_id, statuses=("queued",))]
    assert kinds == [JobKind.EMBED_VECTORS, JobKind.INDEX_DOCUMENTS]
    job = svc.catalog.claim_next_job(base_id)
    assert job is not None and (job.kind, job.item_id) == (JobKind.INDEX_DOCUMENTS, second)
    assert svc.get_item(first).status is ItemStatus.COMPLETED


def test_a_pause_survives_a_restart_and_resume_finishes(tmp_path: Path, models: FakeModels) -> None:
    home = tmp_path / "home"
    svc = KnowledgeService(home, models=models, extraction=InlineExtraction())
    try:
        base_id = _hybrid_base(svc)
        _notes(svc, base_id, 2)
        svc.pause_vectors(base_id)
        svc.run_pending_jobs(base_id)
        assert svc.catalog.list_jobs(base_id, statuses=("queued", "running")) == []
    finally:
        svc.close()
    svc = KnowledgeService(home, models=models, extraction=InlineExtraction())
    try:
        svc.recover()  # a start: a paused stage is not queued again
        assert svc.vectors_paused(base_id)
        assert svc.catalog.list_jobs(base_id, statuses=("queued", "running")) == []
        assert svc.vector_status(base_id).waiting_documents == 2
        assert svc.resume_vectors(base_id)
        assert not svc.vectors_paused(base_id)
        svc.run_pending_jobs(base_id)
        assert svc.vector_status(base_id).waiting_documents == 0
    finally:
        svc.close()


def test_pausing_stops_a_running_stage_after_its_batch(
    svc: KnowledgeService, models: FakeModels
) -> None:
    base_id = _read_not_embedded(svc, 4)
    calls = 0

    def pause_after_first(_texts: object) -> None:
        nonlocal calls
        calls += 1
        if calls == 1:
            svc.pause_vectors(base_id)

    models.embedder_instance.before_embed = pause_after_first
    svc.run_pending_jobs(base_id)
    assert calls == 1
    status = svc.vector_status(base_id)
    assert status.paused and 0 < status.vectors < status.chunks
    assert svc.catalog.list_jobs(base_id, statuses=("queued", "running")) == []


def test_a_rejected_key_stops_the_stage_and_documents_stay_searchable(
    svc: KnowledgeService, models: FakeModels
) -> None:
    base_id = _hybrid_base(svc)
    _notes(svc, base_id, 2)
    models.embedder_instance.fail_with = ProviderError(
        ErrorCode.PROVIDER_AUTH_FAILED, "the key was rejected"
    )
    svc.run_pending_jobs(base_id)
    status = svc.vector_status(base_id)
    assert status.stopped is not None and status.stopped.code == ErrorCode.PROVIDER_AUTH_FAILED
    assert all(i.status is ItemStatus.COMPLETED for i in svc.list_items(base_id))
    assert svc.search(base_id, "zebra0").results  # found by its words
    models.embedder_instance.fail_with = None
    assert svc.resume_vectors(base_id)
    assert svc.vector_status(base_id).stopped is None
    svc.run_pending_jobs(base_id)
    assert svc.vector_status(base_id).waiting_documents == 0


def test_a_busy_provider_is_retried_with_backoff_then_the_stage_stops(
    svc: KnowledgeService, models: FakeModels
) -> None:
    base_id = _read_not_embedded(svc, 1)
    models.embedder_instance.fail_with = ProviderError("EMBEDDING_FAILED", "busy", retryable=True)
    ctx = JobContext(svc.parts)
    policy = policy_for(JobKind.EMBED_VECTORS)
    now = 1_000.0
    for attempt in range(1, policy.attempts):
        job = svc.catalog.claim_next_job(base_id, now=now)
        assert job is not None and job.attempts == attempt
        assert runner.run_job(ctx, job, clock=lambda at=now: at) == "queued"
        assert svc.vector_status(base_id).stopped is None
        now = svc.catalog.require_job(job.id).not_before
    job = svc.catalog.claim_next_job(base_id, now=now)
    assert job is not None
    assert runner.run_job(ctx, job, clock=lambda: now) == "failed"
    stopped = svc.vector_status(base_id).stopped
    assert stopped is not None and "busy" in stopped.message
    (item,) = svc.list_items(base_id)
    assert (item.status, item.error_code) == (ItemStatus.COMPLETED, None)


def test_a_batch_is_written_while_the_next_one_embeds(
    svc: KnowledgeService, models: FakeModels, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Written one after the other, the writes left the cores idle ~10 % of the stage.
    base_id = _read_not_embedded(svc, 4)
    svc.parts.embed_batch_size = 2
    models.embedder_instance.calls.clear()
    second_call = threading.Event()
    models.embedder_instance.before_embed = lambda _texts: (
        second_call.set() if len(models.embedder_instance.calls) == 2 else None
    )
    store = svc.parts.stores.get(base_id)
    add_vectors = store.add_vectors
    overlapped: list[bool] = []

    def first_write_waits_for_the_second_call(*args: object) -> int:
        if not overlapped:
            # Sequential, the second call would only come after this write: it times out.
            overlapped.append(second_call.wait(timeout=10))
        return add_vectors(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(store, "add_vectors", first_write_waits_for_the_second_call)
    svc.run_pending_jobs(base_id)
    assert overlapped == [True]
    status = svc.vector_status(base_id)
    assert status.vectors == status.chunks and status.waiting_documents == 0
    # Nothing embedded twice.
    texts = models.embedder_instance.texts_embedded
    assert len(texts) == len(set(texts)) == status.chunks


def _runs_of_the_stage(svc: KnowledgeService, base_id: str) -> int:
    ctx = JobContext(svc.parts)
    runs = 0
    while (job := svc.catalog.claim_next_job(base_id)) is not None:
        assert job.attempts == 1
        runner.run_job(ctx, job)
        runs += 1
    assert svc.vector_status(base_id).waiting_documents == 0
    return runs


def test_a_slice_queues_the_stage_again_without_using_an_attempt(
    svc: KnowledgeService, monkeypatch: pytest.MonkeyPatch
) -> None:
    base_id = _read_not_embedded(svc, 3)
    # Another base's document waits to be read: each slice hands over.
    other = svc.create_base("other")
    svc.add_note(other.id, "Waiting", "read me first")
    monkeypatch.setattr("app.knowledge.jobs.embed_vectors.SLICE_S", -1.0)  # one batch a run
    assert _runs_of_the_stage(svc, base_id) > 2


def test_with_nothing_else_due_a_run_goes_on_past_its_slice_up_to_its_limit(
    svc: KnowledgeService, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A hand-over can move the stage to another process that loads the model first;
    with nothing else to do there is no one to hand over to."""
    base_id = _read_not_embedded(svc, 3)
    monkeypatch.setattr("app.knowledge.jobs.embed_vectors.SLICE_S", -1.0)
    assert _runs_of_the_stage(svc, base_id) == 1


def test_a_run_with_nothing_else_due_still_ends_at_its_limit(
    svc: KnowledgeService, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Well before the job timeout, which would count as a failed attempt."""
    base_id = _read_not_embedded(svc, 3)
    monkeypatch.setattr("app.knowledge.jobs.embed_vectors.SLICE_S", -1.0)
    monkeypatch.setattr("app.knowledge.jobs.embed_vectors.RUN_MAX_S", -1.0)
    assert _runs_of_the_stage(svc, base_id) > 2


def test_lost_vectors_are_computed_again_by_the_doctor_without_reading(
    svc: KnowledgeService, models: FakeModels
) -> None:
    base_id = _hybrid_base(svc)
    (note,) = _notes(svc, base_id, 1)
    svc.run_pending_jobs(base_id)
    store = svc.parts.stores.get(base_id)
    chunk_ids = [c.id for c in store.item_chunks(note)]
    store.delete_vector_rows(chunk_ids[:2])
    found = doctor.check(svc.parts, base_id).problems
    assert [p.code for p in found] == [doctor.Code.MISSING_VECTORS]
    models.embedder_instance.calls.clear()
    result = svc.doctor(base_id, repair=True)
    assert result.after is not None and result.after.problems == []
    svc.run_pending_jobs(base_id)
    assert len(models.embedder_instance.texts_embedded) == 2  # only the lost ones
    assert svc.vector_status(base_id).vectors == len(chunk_ids)


def test_closing_the_window_mid_stage_fails_nothing_and_the_next_start_finishes(
    tmp_path: Path, models: FakeModels, qtbot: QtBot
) -> None:
    home = tmp_path / "home"
    svc = KnowledgeService(home, models=models, extraction=InlineExtraction())
    executor = JobExecutor(svc, max_workers=2)
    try:
        base_id = _hybrid_base(svc)
        _notes(svc, base_id, 6)
        batches = 0
        quitting = threading.Event()

        def hold_the_second(_texts: object) -> None:
            nonlocal batches
            batches += 1
            if batches >= 2:
                quitting.wait(WAIT_MS / 1000)  # the quit comes while this batch is out

        models.embedder_instance.before_embed = hold_the_second
        executor.start()
        qtbot.waitUntil(lambda: batches >= 2, timeout=WAIT_MS)
        threading.Timer(0.3, quitting.set).start()
        assert executor.shutdown()  # the window's quit
    finally:
        executor.deleteLater()
        svc.close()
    svc = KnowledgeService(home, models=models, extraction=InlineExtraction())
    try:
        items = svc.list_items(base_id)
        # Handed back (a document still being read stays processing), never failed.
        assert all(i.status is not ItemStatus.FAILED for i in items)
        assert all(i.error_code is None for i in items)
        jobs = svc.catalog.list_jobs(base_id, statuses=("queued", "running"))
        assert all((j.status, j.owner) == ("queued", None) for j in jobs)
        assert JobKind.EMBED_VECTORS in {j.kind for j in jobs}
        svc.recover()  # the next start
        models.embedder_instance.before_embed = None
        svc.run_pending_jobs(base_id)
        assert all(i.status is ItemStatus.COMPLETED for i in svc.list_items(base_id))
        status = svc.vector_status(base_id)
        assert status.vectors == status.chunks
        embedded = models.embedder_instance.texts_embedded
        assert len(embedded) == len(set(embedded))  # nothing paid for twice
    finally:
        svc.close()


def test_one_process_at_a_time_runs_a_bases_vector_stage(svc: KnowledgeService) -> None:
    base_id = _read_not_embedded(svc, 2)
    ctx = JobContext(svc.parts)
    first = svc.catalog.claim_next_job(base_id, owner=current_owner())
    assert first is not None and embed_vectors._take_lease(ctx, first)  # it runs meanwhile
    assert queue_vectors(svc.parts, base_id)  # a document completed meanwhile
    second = svc.catalog.claim_next_job(base_id, owner=current_owner())
    assert second is not None and second.id != first.id
    assert runner.run_job(ctx, second) == "queued"  # it waits for the first to end
    again = svc.catalog.require_job(second.id)
    assert again.idempotency_key == vectors_key(base_id) and again.attempts == 0
    assert queue_vectors(svc.parts, base_id)
    assert len(svc.catalog.list_jobs(base_id, statuses=("queued",))) == 1  # no pile-up
    assert svc.vector_status(base_id).vectors == 0
    svc.catalog.finish_job(first.id, "done")  # the first process ends
    svc.run_pending_jobs(base_id)
    assert svc.vector_status(base_id).waiting_documents == 0


def _trove(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "app", "--home", str(home), *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_the_cli_returns_once_searchable_and_controls_the_stage(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)
    monkeypatch.setenv("QT_QPA_PLATFORM", "offscreen")
    home = tmp_path / "home"
    with paid_embeddings(delay_s=1.0) as provider:  # a slow provider: vectors lag behind
        svc = KnowledgeService(home, extraction=InlineExtraction())
        try:
            configure(svc, provider.api)
            svc.create_base("cli", embedding_model=MODEL, chunk_size=48, chunk_overlap=0)
        finally:
            svc.close()
        write_documents(tmp_path / "docs", 3, 60)
        added = _trove(home, "add", "cli", str(tmp_path / "docs"), "--wait", "--until-searchable")
        assert added.returncode == 0, added.stderr
        assert "searchable by full text after" in added.stderr, added.stderr
        assert "the rest is computed in the background" in added.stderr, added.stderr
        assert "indexed 3 document(s), 0 failed" in added.stderr, added.stderr
        found = _trove(home, "search", "cli", "tokend1x7")
        assert found.returncode == 0 and "d1.md" in found.stdout, found.stdout + found.stderr
        status = json.loads(_trove(home, "vectors", "cli", "--json").stdout)
        assert status["coverage"] < 1.0 and status["waitingDocuments"] > 0, status
        paused = _trove(home, "vectors", "cli", "--pause")
        assert paused.returncode == 0 and "paused" in paused.stdout, paused.stdout
        resumed = _trove(home, "vectors", "cli", "--resume", "--wait")
        assert resumed.returncode == 0, resumed.stderr
        assert "(100 %)" in resumed.stdout, resumed.stdout
        assert provider.texts_paid_twice() == []


def test_a_long_lived_executor_takes_up_work_another_process_queued(
    tmp_path: Path, qtbot: QtBot
) -> None:
    """The window and an MCP session look for work while idle: a stage another process
    handed back (`add --until-searchable`) goes on without anybody asking."""
    home = tmp_path / "home"
    svc = KnowledgeService(home, models=FakeModels(), extraction=InlineExtraction())
    other = KnowledgeService(home, models=FakeModels(), extraction=InlineExtraction())
    executor = JobExecutor(svc, max_workers=2, idle_poll_ms=50)
    drains: list[int] = []
    executor.drained.connect(lambda: drains.append(1))
    try:
        with qtbot.waitSignal(executor.drained, timeout=WAIT_MS):
            executor.start()
        base_id = _hybrid_base(other)
        (note,) = _notes(other, base_id, 1)  # queued by another process: nobody tells us
        qtbot.waitUntil(
            lambda: (
                other.vector_status(base_id).waiting_documents == 0
                and other.get_item(note).status is ItemStatus.COMPLETED
            ),
            timeout=WAIT_MS,
        )
        qtbot.waitUntil(lambda: len(drains) == 2, timeout=WAIT_MS)
        # Six idle polls later the queue has still been said to be empty once.
        with qtbot.assertNotEmitted(executor.drained, wait=300):
            pass
    finally:
        executor.shutdown()
        executor.deleteLater()
        other.close()
        svc.close()
