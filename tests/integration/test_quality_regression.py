"""Retrieval quality must not regress: a slice of XQuAD-zh (Chinese), BM25 through the
normal ingestion and search paths, against a floor set from the measured value."""

from __future__ import annotations

import statistics
from pathlib import Path

import pytest

from app.knowledge.jobs.reader_pool import InlineExtraction
from app.knowledge.service import KnowledgeService
from tests.bench.retrieval_quality import load_jsonl, load_qrels, ndcg_at_k, write_corpus
from tests.conftest import SHARED

XQUAD = SHARED / "eval" / "xquad-zh"
QUERIES = 60
# Measured 0.965 on all 1,181 queries and 0.99 on this slice (2026-11-30); the floor leaves
# room for harmless ranking changes, not for broken Chinese tokenisation (which scores ~0.12).
FLOOR = 0.93


@pytest.mark.skipif(
    not XQUAD.is_dir(), reason=f"{XQUAD} is absent (it exists in CI, not in a user's clone)"
)
def test_xquad_zh_bm25_floor(tmp_path: Path) -> None:
    docs = load_jsonl(XQUAD / "corpus.jsonl")
    qrels = load_qrels(XQUAD / "qrels" / "test.tsv")
    queries = [q for q in load_jsonl(XQUAD / "queries.jsonl") if q["_id"] in qrels][:QUERIES]
    by_path = write_corpus(docs, tmp_path / "corpus")
    svc = KnowledgeService(tmp_path / "home", extraction=InlineExtraction())
    base = svc.create_base("xquad")
    svc.add(base.id, [tmp_path / "corpus"])
    svc.run_pending_jobs(base.id)
    scores = []
    for q in queries:
        ranked: list[str] = []
        for r in svc.search(base.id, q["text"], top_k=50).results:
            doc = by_path[r.source]
            if doc not in ranked:
                ranked.append(doc)
        scores.append(ndcg_at_k(ranked, qrels[q["_id"]]))
    svc.close()
    ndcg = statistics.fmean(scores)
    print(f"xquad-zh slice nDCG@10 = {ndcg:.4f}")
    assert ndcg >= FLOOR, f"nDCG@10 {ndcg:.3f} fell below the floor {FLOOR}"
