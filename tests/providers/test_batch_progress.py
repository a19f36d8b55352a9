"""One retry layer: a provider failure mid-item queues the job again (the client does not
retry), and the retry pays only for the batches the failed run did not finish."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from app.knowledge.jobs.kinds import POLICIES, JobKind
from app.knowledge.jobs.reader_pool import InlineExtraction
from app.knowledge.service import KnowledgeService
from app.knowledge.types import Item, ItemPhase, ItemStatus
from tests.httpserver import Request
from tests.providers.conftest import MemoryKeyring, UseKeyring
from tests.providers.fake_api import EMBEDDINGS, FakeApi, Fault

BATCH = 2
# Short paragraphs, each its own chunk at a small chunk size: four batches of two.
NOTE = "\n\n".join(
    f"Paragraph {n} is about topic{n} and nothing else at all, so it stands alone."
    for n in range(8)
)


Chooser = Callable[[str, Request], Fault | None]


def _index_note(home: Path, chooser: Chooser) -> tuple[Item, list[Path]]:
    """Index NOTE through a loopback provider whose embedding answers `chooser` picks;
    the item as it ended, and the scratch files left under the data folder."""
    with FakeApi(dims=8) as api:
        svc = KnowledgeService(home, embed_batch_size=BATCH, extraction=InlineExtraction())
        try:
            svc.save_provider("acme", "openai", base_url=api.base_url, models=["embed-small"])
            base = svc.create_base(
                "kb", embedding_model="acme:embed-small", chunk_size=20, chunk_overlap=0
            )
            api.chooser = chooser
            item = svc.add_note(base.id, "topics", NOTE)
            svc.run_pending_jobs(base.id)
            return svc.get_item(item.id), list(home.rglob("*.part"))
        finally:
            svc.close()


def test_a_retried_job_re_embeds_only_the_batch_that_failed(
    tmp_path: Path, use_keyring: UseKeyring
) -> None:
    use_keyring(MemoryKeyring())
    requests: list[list[str]] = []

    def second_batch_fails_once(path: str, request: Request) -> Fault | None:
        if path != EMBEDDINGS:
            return None
        requests.append(list(request.json()["input"]))
        return Fault.http(503) if len(requests) == 2 else None

    done, leftovers = _index_note(tmp_path / "home", second_batch_fails_once)

    assert done.status is ItemStatus.COMPLETED, done.error_message
    chunks = done.chunk_count
    assert chunks == 8
    first, failed, *retried = requests
    # The failed run paid for its first batch; the retry starts at the batch that failed.
    assert retried[0] == failed
    assert first not in retried
    assert sum(len(texts) for texts in requests) == chunks + len(failed)
    assert len(requests) == chunks // BATCH + 1
    assert leftovers == []  # the kept vectors went with the finished item


def test_the_vector_stage_stops_when_the_last_attempt_fails(
    tmp_path: Path, use_keyring: UseKeyring, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_keyring(MemoryKeyring())
    policy = POLICIES[JobKind.EMBED_VECTORS]
    # The queue is drained in this thread, which sleeps through each backoff: keep them short.
    monkeypatch.setitem(
        POLICIES,
        JobKind.EMBED_VECTORS,
        replace(policy, backoff_initial_s=0.01, backoff_max_s=0.01),
    )
    embeds = 0

    def only_the_first_batch_succeeds(path: str, _request: Request) -> Fault | None:
        nonlocal embeds
        if path != EMBEDDINGS:
            return None
        embeds += 1
        return None if embeds == 1 else Fault.http(503)

    home = tmp_path / "home"
    done, leftovers = _index_note(home, only_the_first_batch_succeeds)

    # Searchable by its words, waiting for the vectors it does not have.
    assert (done.status, done.phase, done.error_code) == (
        ItemStatus.COMPLETED,
        ItemPhase.EMBEDDING,
        None,
    )
    # The first run's two requests (its failure after a written batch uses no attempt: they
    # count failed runs in a row), then one per failed run until the last attempt.
    assert embeds == 2 + policy.attempts
    assert leftovers == []
    svc = KnowledgeService(home, extraction=InlineExtraction())
    try:
        status = svc.vector_status(done.base_id)
        assert status.vectors == BATCH  # the first batch was written and stays
        assert status.stopped is not None
    finally:
        svc.close()
