"""One query over several bases: merged by rank, each hit naming its base; a base that
cannot be searched is reported, not fatal. The agent tool kb_search merges the same way."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from app.agent.tools import ConceptTools
from app.knowledge.jobs.reader_pool import InlineExtraction
from app.knowledge.service import KnowledgeService
from app.knowledge.types import (
    BaseStatus,
    ErrorCode,
    LowRelevance,
    MultiSearchResponse,
    TroveError,
)
from tests.fakes import FakeModels

GARDEN = {
    "Roses": "Prune roses in late winter and water the roses in summer.",
    "Beans": "Runner beans climb poles; water them every summer evening.",
    "Lawn": "Mow the lawn weekly; water it deeply in dry summer weeks.",
}
KITCHEN = {
    "Jam": "Rose petal jam needs sugar, lemon and water boiled together.",
    "Soup": "Bean soup simmers for an hour with water, onion and thyme.",
}


@pytest.fixture
def service(tmp_path: Path) -> Iterator[KnowledgeService]:
    svc = KnowledgeService(
        tmp_path / "home",
        models=FakeModels(),
        extraction=InlineExtraction(),
        related_levels={"fake:bow": 0.99},
    )
    yield svc
    svc.close()


def _base(
    service: KnowledgeService, name: str, notes: dict[str, str], model: str | None = None
) -> str:
    base = service.create_base(name, embedding_model=model)
    for title, text in notes.items():
        service.add_note(base.id, title, text)
    service.run_pending_jobs(base.id)
    return base.id


def _ranks(response: MultiSearchResponse) -> list[tuple[str, int]]:
    """(base name, rank within its base) in merged order."""
    return [(hit.base.name, hit.result.rank) for hit in response.hits]


def test_results_of_every_base_interleave_by_rank_and_name_their_base(
    service: KnowledgeService,
) -> None:
    garden = _base(service, "Garden", GARDEN)
    kitchen = _base(service, "Kitchen", KITCHEN, model="fake:bow")
    found = service.search_many(None, "water")
    per_base = {b.id: resp for b, resp in found.searched}
    assert set(per_base) == {garden, kitchen}
    assert len(per_base[garden].results) == 3 and len(per_base[kitchen].results) == 2
    # Every base's #1, then every base's #2, ...: scores of different bases never compared.
    assert _ranks(found) == [
        ("Garden", 1),
        ("Kitchen", 1),
        ("Garden", 2),
        ("Kitchen", 2),
        ("Garden", 3),
    ]
    assert [hit.rank for hit in found.hits] == [1, 2, 3, 4, 5]
    for hit in found.hits:
        owner = service.get_item(hit.result.item_id).base_id
        assert owner == hit.base.id
        # The hit can be read back from its own base (what opening it in the window does).
        assert service.find_material(hit.base.id, hit.result.concept_id) is not None
    assert found.failures == [] and found.total_ms > 0


def test_a_chosen_set_of_bases_and_a_limit(service: KnowledgeService) -> None:
    garden = _base(service, "Garden", GARDEN)
    kitchen = _base(service, "Kitchen", KITCHEN)
    _base(service, "Other", {"Water": "Water, water everywhere."})
    found = service.search_many([kitchen, garden, kitchen], "water", top_k=3)
    # Asked once each, in the order given; at most top_k hits.
    assert [b.id for b, _ in found.searched] == [kitchen, garden]
    assert _ranks(found) == [("Kitchen", 1), ("Garden", 1), ("Kitchen", 2)]
    with pytest.raises(TroveError) as unknown:
        service.search_many(["no-such-base"], "water")
    assert unknown.value.code is ErrorCode.BASE_NOT_FOUND
    assert service.search_many([], "water").hits == []


def test_a_base_that_cannot_be_searched_is_reported_and_the_others_answer(
    service: KnowledgeService,
) -> None:
    garden = _base(service, "Garden", GARDEN)
    broken = _base(service, "Broken", KITCHEN)
    service.catalog.set_base_status(broken, BaseStatus.FAILED, "index lost")
    found = service.search_many(None, "water")
    assert {hit.base.id for hit in found.hits} == {garden}
    assert [(f.base.id, f.code) for f in found.failures] == [(broken, "BASE_FAILED")]
    assert found.failures[0].to_json()["baseId"] == broken

    with pytest.raises(TroveError) as none_left:
        service.search_many([broken], "water")
    assert none_left.value.code is ErrorCode.BASE_FAILED
    assert broken in none_left.value.message
    # A query no base could take is said once, not as one failure per base.
    with pytest.raises(TroveError) as empty:
        service.search_many(None, "!!!")
    assert empty.value.code is ErrorCode.NO_SEARCHABLE_TOKEN


def test_loosely_related_only_when_every_base_that_answered_says_so(
    service: KnowledgeService,
) -> None:
    _base(service, "Garden", GARDEN, model="fake:bow")
    _base(service, "Kitchen", KITCHEN, model="fake:bow")
    loose = service.search_many(None, "zorblax quibbleflint")
    assert loose.hits
    assert all(r.low_relevance is LowRelevance.WEAK_MATCH for _, r in loose.searched)
    assert loose.low_relevance is LowRelevance.WEAK_MATCH
    # "lemon" is a word of one base only: the merged list holds related results.
    mixed = service.search_many(None, "lemon")
    assert {r.low_relevance for _, r in mixed.searched} == {None, LowRelevance.WEAK_MATCH}
    assert mixed.low_relevance is None
    service.related_levels = {}  # a model without a measured level: the careful reason
    assert service.search_many(None, "zorblax").low_relevance is LowRelevance.NO_WORD_MATCH


def test_the_agent_tool_merges_as_the_engine_does(service: KnowledgeService) -> None:
    _base(service, "Garden", GARDEN)
    broken = _base(service, "Broken", {"Note": "water"})
    _base(service, "Kitchen", KITCHEN)
    service.catalog.set_base_status(broken, BaseStatus.FAILED, "index lost")
    found = service.search_many(None, "water")
    result = ConceptTools(service).call("kb_search", {"query": "water"})
    assert not result.is_error, result.data
    hits = result.data["results"]
    assert [(h["rank"], h["baseName"], h["baseRank"], h["itemId"]) for h in hits] == [
        (hit.rank, hit.base.name, hit.result.rank, hit.result.item_id) for hit in found.hits
    ]
    assert [e["baseId"] for e in result.data["errors"]] == [broken]
    assert result.data["lowRelevance"] is False
