"""Search degrades instead of dying when a provider dies (issue 13).

A hybrid base with a reranker is indexed through a loopback provider; then its embedding or
rerank endpoint refuses connections, answers HTTP 500 or never answers. A hybrid search
still answers: full-text results when the embedder is dead, the fused order when the
reranker is dead, each flagged in `degraded` with the stage's own error code. A vector-only
search has nothing to fall back to and fails with EMBEDDING_FAILED. The CLI's --json and the
agent tool kb_search carry `degraded` too.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import keyring
import pytest

from app.agent.tools import ConceptTools
from app.knowledge.jobs.reader_pool import InlineExtraction
from app.knowledge.service import KnowledgeService
from app.knowledge.types import (
    Degradation,
    ErrorCode,
    ScoreKind,
    SearchMode,
    SearchStage,
    TroveError,
)
from app.providers.http import SEARCH_RETRY, RetryPolicy
from tests.providers.conftest import MemoryKeyring
from tests.providers.fake_api import EMBEDDINGS, RERANK, FakeApi, Fault
from tests.reliability.dead_provider import (
    EMBED_MODEL,
    QUERY,
    STAGE_WORST_S,
    Outage,
    World,
    index_base,
    open_service,
    ranking,
    registry,
    unreranked,
)

OUTAGES = list(Outage)


@pytest.fixture(autouse=True)
def memory_keyring() -> Iterator[MemoryKeyring]:
    previous = keyring.get_keyring()
    backend = MemoryKeyring()
    keyring.set_keyring(backend)
    yield backend
    keyring.set_keyring(previous)


@pytest.fixture
def api() -> Iterator[FakeApi]:
    with FakeApi(dims=8) as server:
        yield server


@pytest.fixture
def world(tmp_path: Path, api: FakeApi) -> World:
    return index_base(tmp_path, api)


def _stages(degraded: list[Degradation]) -> list[tuple[SearchStage, ErrorCode]]:
    return [(d.stage, d.code) for d in degraded]


@pytest.mark.parametrize("outage", OUTAGES)
def test_dead_embedder_gives_full_text_results_flagged_degraded(
    world: World, api: FakeApi, outage: Outage
) -> None:
    svc = open_service(world, api, embed=outage)
    reranks = api.hits(RERANK)
    try:
        response = svc.search(world.base_id, QUERY)
        expected = unreranked(svc, world.base_id, QUERY, SearchMode.BM25, None)
    finally:
        svc.close()
    # The results are BM25's: the response says so, and that a hybrid search was asked for.
    assert response.mode is SearchMode.BM25
    assert response.requested_mode is SearchMode.HYBRID
    assert response.results and ranking(response) == ranking(expected)
    assert response.results[0].title == "Tomatoes"
    assert {r.score_kind for r in response.results} == {ScoreKind.RANKING}
    assert not response.reranked
    # The reranker was healthy but not asked: one dead provider costs one wait, not two.
    assert _stages(response.degraded) == [
        (SearchStage.EMBEDDING, ErrorCode.EMBEDDING_FAILED),
        (SearchStage.RERANK, ErrorCode.RERANK_FAILED),
    ]
    assert api.hits(RERANK) == reranks
    assert "full-text (BM25) results only" in response.degraded[0].message
    assert response.metrics.vector_hit_count == 0 and response.metrics.bm25_hit_count > 0


@pytest.mark.parametrize("outage", OUTAGES)
def test_dead_reranker_gives_fused_results_flagged_rerank_failed(
    world: World, api: FakeApi, outage: Outage
) -> None:
    svc = open_service(world, api, rerank=outage)
    try:
        response = svc.search(world.base_id, QUERY)
        healthy = svc.parts.models.embedder(EMBED_MODEL)
        expected = unreranked(svc, world.base_id, QUERY, SearchMode.HYBRID, healthy)
    finally:
        svc.close()
    assert response.mode is SearchMode.HYBRID and response.requested_mode is None
    assert response.results and ranking(response) == ranking(expected)
    assert response.metrics.vector_hit_count > 0  # fused: both lists took part
    assert not response.reranked
    assert _stages(response.degraded) == [(SearchStage.RERANK, ErrorCode.RERANK_FAILED)]
    assert "results are not reranked" in response.degraded[0].message


def test_an_embedder_that_answers_a_client_error_still_lets_the_reranker_run(
    world: World, api: FakeApi
) -> None:
    """Only an unreachable provider (retried until given up) skips the rerank; a prompt
    refusal costs no waiting, so the full-text results are still reranked."""
    api.chooser = lambda path, _request: Fault.http(400) if path == EMBEDDINGS else None
    svc = open_service(world, api)
    reranks = api.hits(RERANK)
    try:
        response = svc.search(world.base_id, QUERY)
    finally:
        svc.close()
    assert _stages(response.degraded) == [(SearchStage.EMBEDDING, ErrorCode.EMBEDDING_FAILED)]
    assert response.reranked and api.hits(RERANK) == reranks + 1
    assert response.results[0].title == "Tomatoes"
    assert response.results[0].score_kind is ScoreKind.RELEVANCE


def test_reranker_auth_failure_keeps_its_specific_code(world: World, api: FakeApi) -> None:
    api.chooser = lambda path, _request: Fault.http(401) if path == RERANK else None
    svc = open_service(world, api)
    try:
        response = svc.search(world.base_id, QUERY)
    finally:
        svc.close()
    assert _stages(response.degraded) == [(SearchStage.RERANK, ErrorCode.PROVIDER_AUTH_FAILED)]
    assert response.results and not response.reranked


@pytest.mark.parametrize("outage", OUTAGES)
def test_vector_only_search_with_a_dead_embedder_fails_clearly(
    world: World, api: FakeApi, outage: Outage
) -> None:
    """A guard on the fallback's reach: vector-only has no full-text list to fall back to."""
    svc = open_service(world, api, embed=outage)
    try:
        with pytest.raises(TroveError) as caught:
            svc.search(world.base_id, QUERY, mode=SearchMode.VECTOR)
    finally:
        svc.close()
    assert caught.value.code is ErrorCode.EMBEDDING_FAILED


def _without(world: World, api: FakeApi, *, embedder: bool, reranker: bool) -> KnowledgeService:
    setup = KnowledgeService(world.home, extraction=InlineExtraction())
    try:
        models = registry(
            setup.catalog,
            embed_url=api.base_url,
            rerank_url=api.base_url,
            with_embedder=embedder,
            with_reranker=reranker,
        )
    finally:
        setup.close()
    return KnowledgeService(world.home, models=models, extraction=InlineExtraction())


def test_a_reranker_whose_provider_is_gone_degrades_with_model_not_available(
    world: World, api: FakeApi
) -> None:
    svc = _without(world, api, embedder=True, reranker=False)
    try:
        response = svc.search(world.base_id, QUERY)
    finally:
        svc.close()
    assert _stages(response.degraded) == [(SearchStage.RERANK, ErrorCode.MODEL_NOT_AVAILABLE)]
    assert response.results and not response.reranked
    assert response.metrics.vector_hit_count > 0


def test_an_embedder_whose_provider_is_gone_degrades_hybrid_but_fails_vector_only(
    world: World, api: FakeApi
) -> None:
    svc = _without(world, api, embedder=False, reranker=True)
    try:
        response = svc.search(world.base_id, QUERY)
        with pytest.raises(TroveError) as caught:
            svc.search(world.base_id, QUERY, mode=SearchMode.VECTOR)
    finally:
        svc.close()
    # Not an outage that cost waiting, so the reranker still orders the full-text results.
    assert _stages(response.degraded) == [(SearchStage.EMBEDDING, ErrorCode.MODEL_NOT_AVAILABLE)]
    assert response.reranked and response.results[0].title == "Tomatoes"
    assert caught.value.code is ErrorCode.MODEL_NOT_AVAILABLE


def test_healthy_search_is_not_degraded(world: World, api: FakeApi) -> None:
    svc = open_service(world, api)
    try:
        response = svc.search(world.base_id, QUERY)
    finally:
        svc.close()
    assert response.degraded == [] and response.reranked


def test_timeouts_do_not_stack_when_both_stages_are_dead(world: World, api: FakeApi) -> None:
    svc = open_service(world, api, embed=Outage.TIMEOUT, rerank=Outage.TIMEOUT)
    embeds, reranks = api.hits(EMBEDDINGS), api.hits(RERANK)
    try:
        started = time.perf_counter()
        response = svc.search(world.base_id, QUERY)
        elapsed = time.perf_counter() - started
    finally:
        svc.close()
    assert api.hits(EMBEDDINGS) - embeds == 2 and api.hits(RERANK) == reranks
    assert _stages(response.degraded) == [
        (SearchStage.EMBEDDING, ErrorCode.EMBEDDING_FAILED),
        (SearchStage.RERANK, ErrorCode.RERANK_FAILED),
    ]
    # Stacked, the two stages would wait at least 2 x STAGE_WORST_S.
    assert elapsed < STAGE_WORST_S * 1.8, elapsed


def test_the_apps_own_search_clients_give_up_sooner_than_indexing(
    world: World, api: FakeApi
) -> None:
    """The configured providers (no injected clients): a search meets a dead embedder with
    SEARCH_RETRY's attempts and short backoff, the only in-call retry (indexing's clients
    make one attempt and leave the waiting to the job runner)."""
    assert SEARCH_RETRY.max_attempts > RetryPolicy().max_attempts == 1
    svc = KnowledgeService(world.home, extraction=InlineExtraction())
    api.chooser = lambda path, _request: Fault.http(503) if path == EMBEDDINGS else None
    embeds, reranks = api.hits(EMBEDDINGS), api.hits(RERANK)
    try:
        started = time.perf_counter()
        response = svc.search(world.base_id, QUERY)
        elapsed = time.perf_counter() - started
    finally:
        svc.close()
    assert api.hits(EMBEDDINGS) - embeds == SEARCH_RETRY.max_attempts
    assert api.hits(RERANK) == reranks
    assert response.results and response.results[0].title == "Tomatoes"
    assert [d.stage for d in response.degraded] == [SearchStage.EMBEDDING, SearchStage.RERANK]
    # One short backoff (0.25 s) between the two attempts, no long wait.
    assert elapsed < 3.0, elapsed


def test_agent_kb_search_reports_degraded(world: World, api: FakeApi) -> None:
    svc = open_service(world, api, rerank=Outage.REFUSED)
    try:
        result = ConceptTools(svc).call("kb_search", {"query": QUERY})
    finally:
        svc.close()
    assert not result.is_error, result.data
    data = json.loads(json.dumps(result.data))  # what the MCP server sends: plain JSON
    assert data["results"] and data["errors"] == []
    assert [(d["baseId"], d["stage"], d["code"]) for d in data["degraded"]] == [
        (world.base_id, "rerank", "RERANK_FAILED")
    ]
    assert "not reranked" in data["degraded"][0]["message"]


def _trove(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "TROVE_HOME"}
    return subprocess.run(
        [sys.executable, "-m", "app", "--home", str(home), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )


def test_cli_search_json_reports_degraded(world: World, api: FakeApi) -> None:
    # The CLI builds its own clients (the app's retry policy): a prompt 400 keeps it quick.
    api.chooser = lambda path, _request: Fault.http(400) if path == EMBEDDINGS else None
    done = _trove(world.home, "search", "kb", QUERY, "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["results"] and data["results"][0]["title"] == "Tomatoes"
    # The mode it used (it said "hybrid" after falling back), and the one asked for.
    assert (data["mode"], data["requestedMode"]) == ("bm25", "hybrid")
    assert [(d["stage"], d["code"]) for d in data["degraded"]] == [
        ("embedding", "EMBEDDING_FAILED")
    ]
    assert "full-text (BM25) results only" in data["degraded"][0]["message"]
    plain = _trove(world.home, "search", "kb", QUERY)
    assert plain.returncode == 0 and "Tomatoes" in plain.stdout
    assert "warning: embedding unavailable (EMBEDDING_FAILED)" in plain.stderr
