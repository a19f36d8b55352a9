"""The search pipeline contract (DESIGN.md section 6)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from app.knowledge import query
from app.knowledge.fusion import rrf
from app.knowledge.pipeline.store.index_store import Bm25Hit
from app.knowledge.service import KnowledgeService
from app.knowledge.types import (
    Base,
    BaseStatus,
    ErrorCode,
    IndexBackend,
    ItemStatus,
    ScoreKind,
    SearchMode,
    SearchResult,
    TroveError,
)
from tests.conftest import write_files
from tests.fakes import FakeModels

DOCS = {
    "apples.md": "# Apples\n\nApples are red fruit that grow on trees in orchards.",
    "pears.md": "# Pears\n\nPears are green fruit; pear trees like orchards too.",
    "cars.md": "# Cars\n\nCars have engines and wheels and drive on roads.",
    "zh.txt": "我们的知识库很大，包含很多文档。今天天气很好。",
}


@pytest.fixture(params=["sqlite", "postgres"])
def service(
    request: pytest.FixtureRequest, home: Path, models: FakeModels
) -> Iterator[KnowledgeService]:
    """The contract holds whichever backend a base's index is on: every test here runs on
    a base of this machine and on a base on a PostgreSQL server."""
    svc = KnowledgeService(home, models=models)
    if request.param == "postgres":
        dsn = request.getfixturevalue("pg_dsn")
        create = svc.create_base

        def on_server(name: str, **settings: Any) -> Base:
            return create(name, backend=IndexBackend.POSTGRES, dsn=dsn, **settings)

        svc.create_base = on_server  # type: ignore[method-assign]
    yield svc
    for base in svc.list_bases():
        if base.backend is IndexBackend.POSTGRES:
            svc.delete_base(base.id)  # drops its schema on the shared test server
    svc.close()


def _indexed(service: KnowledgeService, tmp_path: Path, **base_args: Any) -> str:
    base = service.create_base("kb", **base_args)
    folder = write_files(tmp_path / "docs", DOCS)
    service.add(base.id, [folder])
    service.run_pending_jobs(base.id)
    return base.id


def test_rrf_seed_example() -> None:
    fused = rrf([["A", "B", "C", "D"], ["C", "A", "E", "B"]], k=60)
    assert [key for key, _ in fused] == ["A", "C", "B", "E", "D"]
    assert fused[0][1] == pytest.approx(1 / 61 + 1 / 62)


def test_mode_is_derived_from_the_base(
    service: KnowledgeService, models: FakeModels, tmp_path: Path
) -> None:
    bm25_id = _indexed(service, tmp_path)
    assert service.get_base(bm25_id).embedding_model is None
    calls_before = len(models.embedder_instance.calls)
    response = service.search(bm25_id, "orchards")
    assert response.mode is SearchMode.BM25
    assert len(models.embedder_instance.calls) == calls_before == 0

    hybrid_id = _indexed(service, tmp_path / "h", embedding_model="fake:bow")
    before = len(models.embedder_instance.calls)
    response = service.search(hybrid_id, "orchards")
    assert response.mode is SearchMode.HYBRID
    assert len(models.embedder_instance.calls) == before + 1
    assert response.results and all(r.score_kind is ScoreKind.RANKING for r in response.results)


def test_failed_base_and_empty_query_are_refused(service: KnowledgeService, tmp_path: Path) -> None:
    base_id = _indexed(service, tmp_path)
    with pytest.raises(TroveError) as empty:
        service.search(base_id, "  !!! 🙂 ")
    assert empty.value.code is ErrorCode.NO_SEARCHABLE_TOKEN
    service.catalog.set_base_status(base_id, BaseStatus.FAILED, "missing_embedding_model")
    with pytest.raises(TroveError) as failed:
        service.search(base_id, "apples")
    assert failed.value.code is ErrorCode.BASE_FAILED


@pytest.mark.parametrize(
    ("top_k", "expected"), [(1, 5), (10, 50), (40, 200), (41, 200), (200, 200)]
)
def test_overfetch_count(
    service: KnowledgeService,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    top_k: int,
    expected: int,
) -> None:
    assert query.candidate_count(top_k) == expected
    base_id = _indexed(service, tmp_path, embedding_model="fake:bow")
    store = service.parts.stores.get(base_id)
    asked: dict[str, int] = {}
    real_bm25, real_vec = store.bm25_search, store.vector_search

    def bm25(match: str, limit: int) -> list[Bm25Hit]:
        asked["bm25"] = limit
        return real_bm25(match, limit)

    def vec(q: np.ndarray, limit: int) -> list[tuple[int, float]]:
        asked["vector"] = limit
        return real_vec(q, limit)

    monkeypatch.setattr(store, "bm25_search", bm25)
    monkeypatch.setattr(store, "vector_search", vec)
    service.search(base_id, "fruit", top_k=top_k)
    assert asked == {"bm25": expected, "vector": expected}


def test_visibility_filter(service: KnowledgeService, tmp_path: Path) -> None:
    base_id = _indexed(service, tmp_path, embedding_model="fake:bow")
    other_id = _indexed(service, tmp_path / "o", embedding_model="fake:bow")
    by_title = {i.title: i for i in service.list_items(base_id)}
    hits = {r.title for r in service.search(base_id, "fruit orchards trees").results}
    assert {"Apples", "Pears"} <= hits

    # deleting: dropped
    service.catalog.set_item_status(by_title["Apples"].id, ItemStatus.DELETING)
    # not completed (being reindexed): dropped
    service.catalog.set_item_status(by_title["Pears"].id, ItemStatus.PROCESSING)
    # missing from the catalog although its chunks are still indexed: dropped
    cars = by_title["Cars"]
    service.catalog.set_item_status(cars.id, ItemStatus.DELETING)
    service.catalog.delete_item_row(cars.id)
    # another base's item whose chunks sit in this index (a corrupted or copied index): dropped
    other_item = next(i for i in service.list_items(other_id) if i.title == "Apples")
    store = service.parts.stores.get(base_id)
    stray = "apples fruit orchards trees cars engines"
    vectors = service.parts.models.embedder("fake:bow").embed([stray])
    store.rebuild_material(other_item.id, "x.md", "Apples", len(stray), [_record(stray)], vectors)

    results = service.search(base_id, "fruit orchards trees cars engines").results
    assert {r.item_id for r in results}.isdisjoint(
        {by_title["Apples"].id, by_title["Pears"].id, cars.id, other_item.id}
    )


def _record(text: str) -> Any:
    from app.knowledge.jobs.index_documents import text_hash
    from app.knowledge.pipeline.store.index_store import ChunkRecord

    return ChunkRecord(0, len(text), text, len(text.split()), text_hash(text))


def test_rerank_sees_all_candidates_before_trim(
    service: KnowledgeService, models: FakeModels, tmp_path: Path
) -> None:
    base = service.create_base("kb", rerank_model="fake:rerank", document_count=2)
    files = {f"doc{i}.md": f"common word filler {i}" for i in range(30)}
    service.add(base.id, [write_files(tmp_path / "many", files)])
    service.run_pending_jobs(base.id)
    seen: list[str] = []

    def favour_the_last_candidate(query_text: str, doc: str) -> float:
        seen.append(doc)
        return 1.0 if len(seen) == 10 else 0.1

    models.reranker_instance.scorer = favour_the_last_candidate
    response = service.search(base.id, "common")
    ((_, docs, top_n),) = models.reranker_instance.calls
    # The reranker sees the whole overfetched list (2 x 5), not the trimmed top 2 ...
    assert len(docs) == 10 and top_n == 10
    # ... so the candidate ranked last by BM25 can come first after reranking.
    assert len(response.results) == 2
    assert response.results[0].text == docs[-1]
    assert response.results[0].score == 1.0
    assert all(r.score_kind is ScoreKind.RELEVANCE for r in response.results)
    assert response.reranked and response.metrics.rerank_ms > 0


def _result(score: float, kind: ScoreKind) -> SearchResult:
    return SearchResult(0, score, kind, "i", "s", "t", "c", 0, 1, "x")


def test_threshold_filters_relevance_only() -> None:
    results = [
        _result(0.9, ScoreKind.RELEVANCE),
        _result(0.1, ScoreKind.RELEVANCE),
        _result(0.001, ScoreKind.RANKING),
    ]
    kept = query.apply_threshold(results, 0.5)
    assert [(r.score, r.score_kind) for r in kept] == [
        (0.9, ScoreKind.RELEVANCE),
        (0.001, ScoreKind.RANKING),
    ]
    assert query.apply_threshold(results, None) == results


def test_threshold_in_the_pipeline(
    service: KnowledgeService, models: FakeModels, tmp_path: Path
) -> None:
    bm25_base = _indexed(service, tmp_path, threshold=0.99)
    assert service.search(bm25_base, "fruit").results  # ranking scores ignore the threshold
    rerank_base = _indexed(service, tmp_path / "r", rerank_model="fake:rerank", threshold=0.6)
    models.reranker_instance.scorer = lambda q, d: 0.9 if "Apples" in d else 0.2
    results = service.search(rerank_base, "fruit").results
    assert [r.title for r in results] == ["Apples"]
    assert [r.rank for r in results] == [1]


def test_results_carry_offsets_into_the_material(service: KnowledgeService, tmp_path: Path) -> None:
    base_id = _indexed(service, tmp_path)
    response = service.search(base_id, "engines")
    top = response.results[0]
    material = (service.layout.raw_dir(base_id) / top.concept_id).read_text(encoding="utf-8")
    assert material[top.char_start : top.char_end] == top.text
    assert top.source.endswith("cars.md") and top.title == "Cars"
    metrics = response.metrics.to_json()
    assert set(metrics) == {
        "embeddingMs",
        "vectorSearchMs",
        "vectorHitCount",
        "bm25SearchMs",
        "bm25HitCount",
        "fusionMs",
        "finalCount",
        "rerankMs",
        "totalMs",
    }
    assert metrics["bm25HitCount"] >= 1 and metrics["finalCount"] == len(response.results)


def test_chinese_two_character_word(service: KnowledgeService, tmp_path: Path) -> None:
    base_id = _indexed(service, tmp_path)
    for word in ("知识", "文档", "天气", "知"):
        titles = [r.title for r in service.search(base_id, word).results]
        assert titles == ["zh"], word


HOSTILE = [
    '"',
    "*",
    "NEAR(",
    ")",
    "-",
    "",
    "   ",
    "🙂",
    "👨‍👩‍👧",
    '"apples',
    "apples*",
    "-apples",
    "NEAR(apples pears",
    "apples AND OR NOT",
    "((",
    "col:apples",
    "^apples",
    "apples\x00",
    "'; DROP TABLE chunks; --",
    "{apples pears}",
]


@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_queries_never_raise_unexpectedly(
    service: KnowledgeService, tmp_path: Path, text: str
) -> None:
    base_id = _indexed(service, tmp_path)
    try:
        response = service.search(base_id, text)
    except TroveError as exc:
        assert exc.code is ErrorCode.NO_SEARCHABLE_TOKEN
    else:
        assert response.mode is SearchMode.BM25
    assert service.parts.stores.get(base_id).chunk_count() == len(DOCS)
