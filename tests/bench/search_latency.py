"""Search latency, recall and memory on a base of N chunks, against sqlite-vec.

    python tests/bench/search_latency.py N [--queries Q] [--ref-queries R]
                                           [--data gaussian|uniform] [--seed S]
                                           [--text synthetic|real] [--eval-dir DIR]

Builds a base of N chunks (384-d vectors; synthetic or real text, see `--text` below)
through the store's normal write path, with two reference tables in the same file:

- `ref_vec0`: sqlite-vec's own vec0 table (float[384], cosine), searched with its KNN
  query (`embedding MATCH ? AND k = ?`): the strongest fair reference;
- `ref_blob`: a BLOB column scanned with `ORDER BY vec_distance_cosine(...)`, what the
  reference application does.

Then a fresh process (the probe) opens the data folder, as the CLI or the window would,
and measures: the first vector search after start and the RSS it added; the vector step
(p50/p95), hybrid and BM25 searches; the search right after *this* process appended 1,000
chunks (the refresh cost, and whether the new chunks are found); and, interleaved query by
query so the ratio is fair on a noisy machine, vec0 KNN, the BLOB scan and Trove's vector
step again. Recall@10 is against exact float64 search over the same vectors.

Vectors (`--data`): `gaussian` (default) draws from the mean and covariance of real
all-MiniLM-L6-v2 embeddings (tests/bench/data, see fit_embedding_gaussian.py), which is
harder for sign-bit codes than the real embeddings; `uniform` draws uniformly from the
sphere, the worst case for any quantised or graph index (the true top 10 are barely
nearer than the rest). Queries are a corpus vector plus noise from the same distribution.

Text (`--text`):

- `synthetic` (default): 60 Zipf-distributed words a chunk (a 50,000-word vocabulary),
  100 chunks an item titled `doc ...`; queries are 3 such words and a word of their own.
- `real`: the very chunks fulltext_candidates.py builds for the same N and seed (its
  `windows`, `variant` and `write_corpus`): every SciFact and NFCorpus document, title +
  text, in 80-word windows, shuffled and repeated up to N, each further copy of a window
  with its sentences rotated and about 10 % of its words dropped. Each copy of a document
  is one item, its windows in text order, titled with the document's title (the store
  gives a passage its material's title in the full-text title column), so an item holds
  about 3 chunks instead of 100; the 1,000 chunks of the foreign append are the stream's
  next 1,000. Queries are the first Q SciFact test queries (claims of 10-20 terms; 300 at
  most), through the same search calls as the synthetic ones. The BEIR sets are read from ../shared/eval
  (`--eval-dir`); without them the run stops with a message. Vectors stay drawn as above
  (embedding N chunks with the real model is out of reach here), query vectors too: the
  JSON says `"vectors": "drawn, not embedded"`. So `real` measures the BM25 stage on real
  text and real queries; hybrid is that BM25 plus the same vector stage.

Prints one JSON line.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import psycopg
from psycopg import sql

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from app.knowledge.jobs.index_documents import text_hash  # noqa: E402
from app.knowledge.pipeline.indexing.tokenize import (  # noqa: E402
    fts_match_expression,
    query_tokens,
)
from app.knowledge.pipeline.store.index_store import ChunkRecord  # noqa: E402
from app.knowledge.pipeline.store.pg import bm25  # noqa: E402
from app.knowledge.pipeline.store.pg import store as pg_store  # noqa: E402
from app.knowledge.pipeline.store.pg.tokens import parse_match  # noqa: E402
from app.knowledge.service import KnowledgeService  # noqa: E402
from app.knowledge.types import IndexBackend, ItemStatus, ItemType, SearchMode  # noqa: E402
from tests.bench.fulltext_candidates import (  # noqa: E402
    EVAL_DIR,
    _need,
    read_chunks,
    windows,
    write_corpus,
)
from tests.bench.pg_bench import (  # noqa: E402
    BUILD_SETTINGS,
    BulkLoad,
    bench_server,
    connect,
    join_ranking_query,
)
from tests.bench.retrieval_quality import load_jsonl, load_qrels  # noqa: E402

DIMS = 384
CHUNKS_PER_ITEM = 100
WORDS_PER_CHUNK = 60
VOCABULARY = 50_000
CANDIDATES = 50  # top-K 10 x overfetch 5, what both applications ask the vector step for
APPENDED = 1_000
JIT_QUERIES = 20  # BM25 queries timed again on PostgreSQL with its JIT compiler off
CHECKED_CHUNKS = 200_000  # up to this size the PostgreSQL base runs the store's own checks
GAUSSIAN = ROOT / "tests" / "bench" / "data" / "minilm_scifact_gaussian.npz"

FloatMatrix = npt.NDArray[np.float32]
# Items to write, in order: each its title and its chunks' texts (one material an item).
Items = list[tuple[str, list[str]]]


class BenchEmbedder:
    """Query vectors are chosen by the benchmark; the embedder just hands them out."""

    model_id = "bench:random"

    def __init__(self, vectors: dict[str, FloatMatrix]) -> None:
        self.vectors = vectors

    def embed(self, texts: Sequence[str]) -> FloatMatrix:
        return np.stack([self.vectors.get(t, np.ones(DIMS, dtype=np.float32)) for t in texts])


class BenchModels:
    def __init__(self, vectors: dict[str, FloatMatrix] | None = None) -> None:
        self.bench = BenchEmbedder(vectors or {})

    def embedder(self, model_id: str) -> BenchEmbedder:
        return self.bench

    def reranker(self, model_id: str) -> BenchEmbedder:
        raise LookupError("no reranker in this benchmark")


class Vectors:
    """Draws unit vectors from the chosen distribution."""

    def __init__(self, kind: str, rng: np.random.Generator) -> None:
        self.kind = kind
        self.rng = rng
        if kind == "gaussian":
            fitted = np.load(GAUSSIAN)
            self.mean = fitted["mean"].astype(np.float32)
            self.root = fitted["root"].astype(np.float32)

    def raw(self, n: int) -> FloatMatrix:
        z = self.rng.standard_normal((n, DIMS), dtype=np.float32)
        if self.kind == "uniform":
            return z
        out: FloatMatrix = self.mean + z @ self.root.T
        return out

    def draw(self, n: int) -> FloatMatrix:
        return _unit(self.raw(n))

    def noise(self, n: int) -> FloatMatrix:
        if self.kind == "uniform":
            return 0.8 * _unit(self.raw(n))
        z = self.rng.standard_normal((n, DIMS), dtype=np.float32)
        out: FloatMatrix = z @ self.root.T
        return out


def _unit(x: FloatMatrix) -> FloatMatrix:
    out: FloatMatrix = (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)
    return out


def _words(rng: np.random.Generator, n: int) -> list[str]:
    ranks = rng.zipf(1.1, n)
    return [f"w{int(r) % VOCABULARY}" for r in ranks]


def _rss_mb() -> float:
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def _p(values: list[float], q: float) -> float:
    return round(float(np.percentile(values, q)), 3)


def _chunk_texts(rng: np.random.Generator, n: int) -> list[str]:
    return [" ".join(_words(rng, WORDS_PER_CHUNK)) for _ in range(n)]


def _synthetic_items(texts: list[str], prefix: str) -> Items:
    """Synthetic texts as items of CHUNKS_PER_ITEM chunks, titled `doc <prefix><offset>`."""
    return [
        (f"doc {prefix}{start}", texts[start : start + CHUNKS_PER_ITEM])
        for start in range(0, len(texts), CHUNKS_PER_ITEM)
    ]


@dataclass
class RealText:
    """`--text real`: fulltext_candidates.py's chunks as items (one a document copy), and
    SciFact test queries."""

    items: Items  # the N chunks of the base
    appended: Items  # the APPENDED next ones, for the foreign append
    queries: list[str]
    info: dict[str, Any]


def load_real_text(eval_dir: Path, n_chunks: int, n_queries: int, seed: int) -> RealText:
    """The chunks fulltext_candidates.run writes for this N and seed, grouped into items:
    the windows of one copy (one pass over the shuffled windows) of one document, in text
    order, titled with the document's title."""
    missing = [p for p in _need(eval_dir) if not p.is_file()]
    if missing:
        sys.exit(
            f"search_latency: --text real needs the BEIR sets, not found in {eval_dir}; missing "
            f"{', '.join(str(p) for p in missing)}. Pass --eval-dir DIR, a folder holding "
            "scifact/ and nfcorpus/ in BEIR layout (corpus.jsonl, queries.jsonl, qrels/test.tsv)."
        )
    t = time.perf_counter()
    rng = np.random.default_rng(seed)
    docs = load_jsonl(eval_dir / "scifact" / "corpus.jsonl")
    docs += load_jsonl(eval_dir / "nfcorpus" / "corpus.jsonl")
    # windows() document by document is windows() over them all, plus where each came from.
    base = [
        (title, text, d, k)
        for d, doc in enumerate(docs)
        for k, (title, text) in enumerate(windows([doc]))
    ]
    # The permutation of a list's shuffle depends on its length only: fulltext_candidates
    # shuffles the (title, text) pairs into the same order with the same generator.
    rng.shuffle(base)

    def items(chunks: list[Any]) -> Items:
        grouped: dict[tuple[int, int], list[tuple[int, str]]] = {}
        titles: dict[tuple[int, int], str] = {}
        for chunk in chunks:
            row = chunk.id - 1
            _, _, d, k = base[row % len(base)]
            key = (row // len(base), d)
            grouped.setdefault(key, []).append((k, chunk.body))
            titles[key] = chunk.title
        return [
            (titles[key], [body for _, body in sorted(parts)]) for key, parts in grouped.items()
        ]

    with tempfile.TemporaryDirectory(prefix="search-latency-text-") as tmp:
        work = Path(tmp)
        write_corpus(work, [(title, text) for title, text, _, _ in base], n_chunks, rng)
        main_items = items(list(read_chunks(work / "chunks.tsv")))
        appended = items(list(read_chunks(work / "append.tsv"))[:APPENDED])
    qrels = load_qrels(eval_dir / "scifact" / "qrels" / "test.tsv")
    queries = [
        q["text"] for q in load_jsonl(eval_dir / "scifact" / "queries.jsonl") if q["_id"] in qrels
    ][:n_queries]
    words = [len(text.split()) for _, texts in main_items for text in texts]
    info = {
        "eval_dir": str(eval_dir),
        "base_windows": len(base),
        "items": len(main_items),
        "chunks_per_item_mean": round(len(words) / len(main_items), 2),
        "words_per_chunk_mean": round(float(np.mean(words)), 1),
        "query_terms_mean": round(float(np.mean([len(query_tokens(q).terms) for q in queries])), 1),
        "prepare_s": round(time.perf_counter() - t, 1),
    }
    return RealText(main_items, appended, queries, info)


def _add_items(
    svc: KnowledgeService,
    base_id: str,
    vectors: FloatMatrix,
    items: Items,
    prefix: str,
    references: bool,
) -> list[int]:
    """Each item through the store's write path (one material), its chunks with the next
    rows of `vectors`."""
    store = svc.parts.stores.get(base_id)
    ref = store._writer  # the reference tables sit in the same file
    all_ids: list[int] = []
    start = 0
    for title, texts in items:
        part = vectors[start : start + len(texts)]
        item = svc.catalog.create_item(
            base_id,
            ItemType.FILE,
            f"/bench/{prefix}{start}.md",
            title,
            status=ItemStatus.PROCESSING,
            relative_path=f"{prefix}{start}.md",
        )
        records, pos = [], 0
        for text in texts:
            records.append(
                ChunkRecord(pos, pos + len(text), text, len(text.split()), text_hash(text))
            )
            pos += len(text) + 1
        ids = store.rebuild_material(item.id, f"{prefix}{start}.md", item.title, pos, records, part)
        start += len(texts)
        if references:
            with ref:
                rows = [(cid, v.tobytes()) for cid, v in zip(ids, part, strict=True)]
                ref.executemany("INSERT INTO ref_vec0 (rowid, embedding) VALUES (?, ?)", rows)
                ref.executemany("INSERT INTO ref_blob VALUES (?, ?)", rows)
        svc.catalog.set_item_status(item.id, ItemStatus.COMPLETED)
        all_ids.extend(ids)
    return all_ids


def _load_pg_items(
    svc: KnowledgeService,
    base_id: str,
    load: BulkLoad,
    vectors: FloatMatrix,
    items: Items,
    prefix: str,
    first_chunk_id: int,
    first_material: int,
) -> int:
    """The same chunks into the PostgreSQL base: catalog items as above, rows by COPY.
    Returns the number of materials written."""
    materials: list[tuple[int, str, str, str]] = []
    start = 0
    for n, (title, texts) in enumerate(items):
        item = svc.catalog.create_item(
            base_id,
            ItemType.FILE,
            f"/bench/{prefix}{start}.md",
            title,
            status=ItemStatus.PROCESSING,
            relative_path=f"{prefix}{start}.md",
        )
        svc.catalog.set_item_status(item.id, ItemStatus.COMPLETED)
        materials.append((first_material + n, item.id, f"{prefix}{start}.md", item.title))
        start += len(texts)
    # BulkLoad.add gives every material of a call the same number of chunks: one call per
    # run of equally long items (a short last item is a run of its own).
    all_texts = [text for _, texts in items for text in texts]
    i = start = 0
    while i < len(items):
        size = len(items[i][1])
        j = i
        while j < len(items) and len(items[j][1]) == size:
            j += 1
        texts = all_texts[start : start + size * (j - i)]
        load.add(
            first_chunk_id + start,
            materials[i:j],
            texts,
            [len(t.split()) for t in texts],
            [text_hash(t) for t in texts],
            vectors[start : start + len(texts)],
            size,
        )
        i, start = j, start + len(texts)
    return len(items)


@dataclass
class PgOptions:
    dsn: str
    m: int
    ef_construction: int
    ef_sweep: tuple[int, ...]
    float_index: bool
    text_queries: int
    settings: dict[str, str] = field(default_factory=dict)


@dataclass
class Built:
    corpus: FloatMatrix
    sqlite_base: str | None = None
    sqlite_ids: npt.NDArray[np.int64] | None = None
    pg_base: str | None = None
    pg_schema: str = ""
    build: dict[str, Any] = field(default_factory=dict)


def _steps(n_chunks: int, real: RealText | None) -> list[tuple[int, int, Items | None]]:
    """(first chunk, chunks, items) of each write step: 10,000 chunks of synthetic text
    (its items made as the step comes, None here), or whole real items adding up to
    10,000 chunks or more, sorted by length (the PostgreSQL load COPYs runs of equally
    long items)."""
    step = 100 * CHUNKS_PER_ITEM
    if real is None:
        return [(start, min(step, n_chunks - start), None) for start in range(0, n_chunks, step)]
    out: list[tuple[int, int, Items | None]] = []
    start = size = 0
    batch: Items = []
    for item in real.items:
        batch.append(item)
        size += len(item[1])
        if size >= step:
            out.append((start, size, sorted(batch, key=lambda it: len(it[1]))))
            start, size, batch = start + size, 0, []
    if batch:
        out.append((start, size, sorted(batch, key=lambda it: len(it[1]))))
    return out


def build(
    data_dir: Path,
    n_chunks: int,
    draw: Vectors,
    rng: np.random.Generator,
    backends: set[str],
    pg: PgOptions | None = None,
    real: RealText | None = None,
) -> Built:
    """The same vectors and texts into a SQLite base (the store's write path, with the two
    reference tables) and/or a PostgreSQL base (bulk COPY, then the indexes)."""
    svc = KnowledgeService(data_dir, models=BenchModels())
    built = Built(np.empty((n_chunks, DIMS), dtype=np.float32))
    if "sqlite" in backends:
        base = svc.create_base("bench", embedding_model="bench:random")
        built.sqlite_base = base.id
        built.sqlite_ids = np.empty(n_chunks, dtype=np.int64)
        ref = svc.parts.stores.get(base.id)._writer
        ref.execute(
            f"CREATE VIRTUAL TABLE ref_vec0 USING vec0(embedding float[{DIMS}] "
            "distance_metric=cosine)"
        )
        ref.execute("CREATE TABLE ref_blob (chunk_id INTEGER PRIMARY KEY, embedding BLOB NOT NULL)")
    load: BulkLoad | None = None
    if "postgres" in backends:
        assert pg is not None
        pg_base = svc.create_base(
            "bench-pg", embedding_model="bench:random", backend=IndexBackend.POSTGRES, dsn=pg.dsn
        )
        built.pg_base = pg_base.id
        built.pg_schema = svc.parts.stores.get(pg_base.id).schema  # type: ignore[attr-defined]
        load = BulkLoad(pg.dsn, built.pg_schema)
    sqlite_s = pg_s = 0.0
    materials = 0
    for start, size, step_items in _steps(n_chunks, real):
        part = draw.draw(size)
        if step_items is None:
            items = _synthetic_items(_chunk_texts(rng, size), f"{start}-")
        else:
            items = step_items
        built.corpus[start : start + len(part)] = part
        if built.sqlite_base is not None and built.sqlite_ids is not None:
            t = time.perf_counter()
            got = _add_items(svc, built.sqlite_base, part, items, f"{start}-", references=True)
            built.sqlite_ids[start : start + len(part)] = got
            sqlite_s += time.perf_counter() - t
        if load is not None and built.pg_base is not None:
            t = time.perf_counter()
            materials += _load_pg_items(
                svc, built.pg_base, load, part, items, f"{start}-", start + 1, materials + 1
            )
            pg_s += time.perf_counter() - t
    svc.close()
    built.build["sqlite_write_path_s"] = round(sqlite_s, 1)
    if load is not None and pg is not None:
        built.build["postgres"] = {"rows_s": round(pg_s, 1), **_finish_pg_load(load, pg)}
    return built


def _finish_pg_load(load: BulkLoad, pg: PgOptions) -> dict[str, Any]:
    """Indexes after the rows: B-trees, then HNSW (timed), then ANALYZE."""
    out: dict[str, Any] = {
        "copy_s": round(load.copy_s, 1),
        "tokenize_s": round(load.tokenize_s, 1),
        "postings": load.postings,
    }
    t = time.perf_counter()
    out["btree_indexes_s"] = load.finish()
    out["btree_indexes_total_s"] = round(time.perf_counter() - t, 1)
    out["hnsw_build_s"] = round(load.build_hnsw(pg.m, pg.ef_construction), 1)
    if pg.float_index:
        out["hnsw_float_build_s"] = round(
            load.build_hnsw(pg.m, pg.ef_construction, float_index=True), 1
        )
    out["analyze_s"] = round(load.analyze(), 1)
    out["build_notices"] = sorted(set(load.notices))
    out["sizes_mb"] = load.sizes_mb()
    load.close()
    return out


def exact_top(
    corpus: FloatMatrix, ids: npt.NDArray[np.int64], query: FloatMatrix, k: int
) -> list[int]:
    """Exact top k by float64 cosine (float32 narrows to 1,000 first, then float64 decides)."""
    rough = corpus @ query
    near = np.argpartition(-rough, 1000)[:1000]
    exact = corpus[near].astype(np.float64) @ query.astype(np.float64)
    return ids[near[np.argsort(-exact)[:k]]].tolist()


# -- the probe: a fresh process, as a user's CLI or window ---------------------------------


def probe(args: argparse.Namespace) -> None:
    queries = json.loads(Path(args.probe_queries).read_text(encoding="utf-8"))
    qvecs = {q["text"]: np.asarray(q["vector"], dtype=np.float32) for q in queries}
    rss_start = _rss_mb()
    t = time.perf_counter()
    svc = KnowledgeService(Path(args.probe), models=BenchModels(qvecs))
    store = svc.parts.stores.get(args.base)
    open_ms = (time.perf_counter() - t) * 1000
    rss_open = _rss_mb()
    first = queries[0]
    t = time.perf_counter()
    store.vector_search(qvecs[first["text"]], CANDIDATES)
    first_ms = (time.perf_counter() - t) * 1000
    rss_first = _rss_mb()

    timings: dict[str, list[float]] = {"bm25": [], "vector": [], "hybrid": [], "bm25_store": []}
    hits: list[list[int]] = []
    for q in queries:
        vec = qvecs[q["text"]]
        t = time.perf_counter()
        got = store.vector_search(vec, CANDIDATES)
        timings["vector"].append((time.perf_counter() - t) * 1000)
        hits.append([cid for cid, _ in got[:10]])
        t = time.perf_counter()
        svc.search(args.base, q["text"], mode=SearchMode.BM25)
        timings["bm25"].append((time.perf_counter() - t) * 1000)
        t = time.perf_counter()
        svc.search(args.base, q["text"])
        timings["hybrid"].append((time.perf_counter() - t) * 1000)
        t = time.perf_counter()
        store.bm25_search(fts_match_expression(query_tokens(q["text"])), CANDIDATES)
        timings["bm25_store"].append((time.perf_counter() - t) * 1000)
    rss_steady = _rss_mb()
    stats_before = asdict(store.vector_stats)
    print(json.dumps({"ready": True}), flush=True)

    # The parent appends APPENDED chunks in its own process, then sends their vectors.
    appended = json.loads(sys.stdin.readline())
    t = time.perf_counter()
    got = store.vector_search(np.asarray(appended["vector"], dtype=np.float32), CANDIDATES)
    refresh_ms = (time.perf_counter() - t) * 1000
    found_new = bool(got) and got[0][0] == appended["id"]
    after = [store.vector_search(qvecs[q["text"]], CANDIDATES) for q in queries[:5]]
    del after
    rss_after_append = _rss_mb()
    stats_after = asdict(store.vector_stats)

    vector_memory = store.vector_memory_bytes()
    reference = _references(store, [qvecs[q["text"]] for q in queries[: args.ref_queries]])
    svc.close()
    result = {
        "open_ms": round(open_ms, 1),
        "first_search_ms": round(first_ms, 1),
        "rss_mb": {
            "process_start": round(rss_start, 1),
            "store_open": round(rss_open, 1),
            "after_first_search": round(rss_first, 1),
            "after_all_queries": round(rss_steady, 1),
            "after_foreign_append": round(rss_after_append, 1),
        },
        "rss_added_by_base_mb": round(rss_steady - rss_open, 1),
        "vector_memory_mb": round(vector_memory / 2**20, 1),
        "timings": timings,
        "hits": hits,
        "refresh_after_append_ms": round(refresh_ms, 2),
        "append_found_in_first_search": found_new,
        "tier_stats_before_append": stats_before,
        "tier_stats_after_append": stats_after,
        "reference": reference,
    }
    print(json.dumps(result), flush=True)


def _references(store: Any, vectors: list[FloatMatrix]) -> dict[str, list[float]]:
    """vec0 KNN, BLOB scan and Trove's vector step, interleaved query by query."""
    conn = store._reader()
    out: dict[str, list[float]] = {"vec0_knn": [], "blob_scan": [], "trove": []}
    for vec in vectors:
        blob = vec.tobytes()
        t = time.perf_counter()
        list(
            conn.execute(
                "SELECT rowid, distance FROM ref_vec0 WHERE embedding MATCH ? AND k = ?",
                (blob, CANDIDATES),
            )
        )
        out["vec0_knn"].append((time.perf_counter() - t) * 1000)
        t = time.perf_counter()
        list(
            conn.execute(
                "SELECT chunk_id, vec_distance_cosine(embedding, ?) AS d FROM ref_blob "
                "ORDER BY d LIMIT ?",
                (blob, CANDIDATES),
            )
        )
        out["blob_scan"].append((time.perf_counter() - t) * 1000)
        t = time.perf_counter()
        store.vector_search(vec, CANDIDATES)
        out["trove"].append((time.perf_counter() - t) * 1000)
    return out


# -- PostgreSQL: the same queries through PgIndexStore, then the index's own knobs --------


def measure_pg(
    data_dir: Path,
    built: Built,
    pg: PgOptions,
    texts: list[str],
    qvecs: FloatMatrix,
    exact: list[list[int]],
) -> dict[str, Any]:
    """Vector search and BM25 through the store (as the app searches), hybrid through the
    service; then the store's vector SQL at each ef_search of the sweep (and over the
    full-precision index when built), with recall@10 against exact search."""
    assert built.pg_base is not None
    vectors = {t: v for t, v in zip(texts, qvecs, strict=True)}
    t = time.perf_counter()
    svc = KnowledgeService(data_dir, models=BenchModels(vectors))
    store = svc.parts.stores.get(built.pg_base)
    open_ms = (time.perf_counter() - t) * 1000
    t = time.perf_counter()
    store.vector_search(qvecs[0], CANDIDATES)
    first_ms = (time.perf_counter() - t) * 1000
    timings: dict[str, list[float]] = {"vector": [], "bm25_store": [], "bm25": [], "hybrid": []}
    recalls: list[float] = []
    for vec, truth in zip(qvecs, exact, strict=True):
        t = time.perf_counter()
        got = store.vector_search(vec, CANDIDATES)
        timings["vector"].append((time.perf_counter() - t) * 1000)
        recalls.append(len({cid for cid, _ in got[:10]} & set(truth)) / 10)
    # Full text at a million chunks takes seconds a query here: a prefix of the queries.
    full_text = texts[: pg.text_queries]
    reference = connect(pg.dsn, built.pg_schema)
    timings["bm25_sql"] = []
    timings["bm25_join_reference"] = []
    for text in full_text:
        match = fts_match_expression(query_tokens(text))
        t = time.perf_counter()
        store.bm25_search(match, CANDIDATES)
        timings["bm25_store"].append((time.perf_counter() - t) * 1000)
        timings["bm25_sql"].append(_ranking_ms(reference, match, bm25.ranking_query))
        timings["bm25_join_reference"].append(_ranking_ms(reference, match, join_ranking_query))
        t = time.perf_counter()
        svc.search(built.pg_base, text, mode=SearchMode.BM25)
        timings["bm25"].append((time.perf_counter() - t) * 1000)
        t = time.perf_counter()
        svc.search(built.pg_base, text)
        timings["hybrid"].append((time.perf_counter() - t) * 1000)
    checks: dict[str, Any] = {
        "chunks": store.chunk_count(),
        "vectors": store.vector_count(),
        "text_queries": len(full_text),
    }
    if len(built.corpus) <= CHECKED_CHUNKS:  # the loader's rows pass the store's own checks
        checks["integrity_problems"] = store.integrity_check() + store.fts_integrity_check()
    if built.sqlite_base is not None and built.sqlite_ids is not None:
        checks["bm25_top10_same_as_sqlite"] = _bm25_agreement(
            store, svc.parts.stores.get(built.sqlite_base), built.sqlite_ids, full_text
        )
    svc.close()
    reference.close()
    result: dict[str, Any] = {
        "checks": checks,
        "service_open_ms": round(open_ms, 1),
        "first_search_after_open_ms": round(first_ms, 1),
        "vector_ms": _p50_p95(timings["vector"]),
        "recall_at_10": round(float(np.mean(recalls)), 4),
        "bm25_store_ms": _p50_p95(timings["bm25_store"]),
        "bm25_sql_ms": _p50_p95(timings["bm25_sql"]),
        "bm25_join_reference_ms": _p50_p95(timings["bm25_join_reference"]),
        "bm25_sql_speedup_vs_join_reference_p50": round(
            _p(timings["bm25_join_reference"], 50) / max(_p(timings["bm25_sql"], 50), 1e-9), 1
        ),
        "bm25_ms": _p50_p95(timings["bm25"]),
        "hybrid_ms": _p50_p95(timings["hybrid"]),
    }
    result["bm25_store_first_queries"] = {
        "queries": min(JIT_QUERIES, len(full_text)),
        "jit_on_ms": _p50_p95(timings["bm25_store"][:JIT_QUERIES]),
        "jit_off_ms": _bm25_without_jit(data_dir, built, pg, full_text[:JIT_QUERIES]),
    }
    conn = connect(pg.dsn, built.pg_schema)
    sweep: dict[str, Any] = {}
    kinds = ["halfvec", "vector"] if pg.float_index else ["halfvec"]
    for ef in pg.ef_sweep:
        for kind in kinds:
            sweep[f"{kind}_ef{ef}"] = _sql_sweep(conn, qvecs, exact, ef, kind)
    conn.close()
    result["ef_search_sweep"] = sweep
    return result


def _ranking_ms(conn: Any, match: str, build: Any) -> float:
    """One BM25 ranking SQL (the store's, or schema v2's join reference) on the base, ms."""
    phrases = parse_match(match)
    if not phrases:
        return 0.0
    query, params = build(phrases, CANDIDATES)
    t = time.perf_counter()
    conn.execute(query, params).fetchall()
    elapsed = (time.perf_counter() - t) * 1000
    conn.rollback()
    return elapsed


def _bm25_without_jit(
    data_dir: Path, built: Built, pg: PgOptions, texts: list[str]
) -> dict[str, float]:
    """The store's BM25 again with the server's JIT compiler off for the database (new
    connections take the setting; the store's pool is opened afresh)."""
    assert built.pg_base is not None
    with psycopg.connect(pg.dsn, autocommit=True) as admin:
        database = admin.execute("SELECT current_database()").fetchone()
        assert database is not None
        name = sql.Identifier(str(database[0]))
        admin.execute(sql.SQL("ALTER DATABASE {} SET jit = off").format(name))
        try:
            svc = KnowledgeService(data_dir, models=BenchModels())
            store = svc.parts.stores.get(built.pg_base)
            times: list[float] = []
            for text in texts:
                match = fts_match_expression(query_tokens(text))
                t = time.perf_counter()
                store.bm25_search(match, CANDIDATES)
                times.append((time.perf_counter() - t) * 1000)
            svc.close()
        finally:
            admin.execute(sql.SQL("ALTER DATABASE {} RESET jit").format(name))
    return _p50_p95(times)


def _bm25_agreement(
    pg_store: Any, sqlite_store: Any, sqlite_ids: npt.NDArray[np.int64], texts: list[str]
) -> float:
    """Share of the top 10 BM25 chunks both backends return for the same queries (the
    PostgreSQL base's chunk i + 1 is the SQLite base's sqlite_ids[i])."""
    to_pg = {int(cid): i + 1 for i, cid in enumerate(sqlite_ids)}
    shares: list[float] = []
    for text in texts:
        match = fts_match_expression(query_tokens(text))
        pg_top = [h.chunk_id for h in pg_store.bm25_search(match, 10)][:10]
        lite_top = [to_pg[h.chunk_id] for h in sqlite_store.bm25_search(match, 10)][:10]
        if lite_top or pg_top:
            shares.append(len(set(pg_top) & set(lite_top)) / max(len(lite_top), len(pg_top)))
    return round(float(np.mean(shares)), 4) if shares else 1.0


def _sql_sweep(
    conn: Any, qvecs: FloatMatrix, exact: list[list[int]], ef: int, kind: str
) -> dict[str, Any]:
    """The store's vector query (top 50 by cosine distance) at one ef_search, over its
    halfvec expression index or the full-precision one (`--float-index`)."""
    if kind == "halfvec":
        order = f"embedding::halfvec({DIMS}) <=> %s::halfvec({DIMS})"
    else:
        order = "embedding <=> %s"
    query = f"SELECT chunk_id FROM vectors ORDER BY {order} LIMIT %s"
    times: list[float] = []
    recalls: list[float] = []
    for vec, truth in zip(qvecs, exact, strict=True):
        t = time.perf_counter()
        with conn.transaction():
            conn.execute(f"SET LOCAL hnsw.ef_search = {int(ef)}")
            rows = conn.execute(query, (vec, CANDIDATES)).fetchall()
        times.append((time.perf_counter() - t) * 1000)
        recalls.append(len({int(r[0]) for r in rows[:10]} & set(truth)) / 10)
    plan = "\n".join(
        str(r[0]) for r in conn.execute("EXPLAIN " + query, (qvecs[0], CANDIDATES)).fetchall()
    )
    conn.rollback()
    return {
        **_p50_p95(times),
        "recall_at_10": round(float(np.mean(recalls)), 4),
        "uses_hnsw_index": "Index Scan" in plan,
    }


def _p50_p95(values: list[float]) -> dict[str, float]:
    return {"p50": _p(values, 50), "p95": _p(values, 95)}


# -- the run ---------------------------------------------------------------------------------


def run(
    n_chunks: int,
    n_queries: int,
    ref_queries: int,
    kind: str,
    seed: int,
    backends: set[str],
    pg: PgOptions | None = None,
    text: str = "synthetic",
    eval_dir: Path = EVAL_DIR,
) -> dict[str, Any]:
    real = load_real_text(eval_dir, n_chunks, n_queries, seed) if text == "real" else None
    if real is not None:
        n_queries = len(real.queries)  # SciFact has 300 test queries
    rng = np.random.default_rng(seed)
    draw = Vectors(kind, rng)
    out: dict[str, Any] = {
        "bench": "search_latency",
        "chunks": n_chunks,
        "data": kind,
        "text": text,
        "queries": n_queries,
        "dims": DIMS,
        "backends": sorted(backends),
    }
    if real is not None:
        out["vectors"] = "drawn, not embedded"
        out["real_text"] = real.info
    with tempfile.TemporaryDirectory() as tmp:
        data_dir = Path(tmp) / "data"
        t = time.perf_counter()
        built = build(data_dir, n_chunks, draw, rng, backends, pg, real)
        out["build_s"] = round(time.perf_counter() - t, 1)
        out["build"] = built.build

        anchors = built.corpus[rng.integers(0, n_chunks, n_queries)]
        qvecs = _unit(anchors + draw.noise(n_queries))
        if real is None:
            texts = [" ".join(_words(rng, 3)) + f" q{i}" for i in range(n_queries)]
        else:
            texts = real.queries
        if built.pg_base is not None and pg is not None:
            pg_ids = np.arange(1, n_chunks + 1, dtype=np.int64)
            exact = [exact_top(built.corpus, pg_ids, q, 10) for q in qvecs]
            out["postgres"] = {
                "server": pg.settings,
                "hnsw": {
                    "m": pg.m,
                    "ef_construction": pg.ef_construction,
                    "type": "halfvec expression index, rescored at full precision",
                },
                # ANALYZE ran after the load: the planner's estimate the store reads is n.
                "store_ef_search": pg_store.ef_search_for(float(n_chunks), CANDIDATES),
                **measure_pg(data_dir, built, pg, texts, qvecs, exact),
            }
        # After PostgreSQL: the probe's foreign append changes the SQLite base.
        if built.sqlite_base is not None and built.sqlite_ids is not None:
            out.update(
                _sqlite_tier(Path(tmp), data_dir, built, texts, qvecs, ref_queries, draw, rng, real)
            )
    return out


def _sqlite_tier(
    tmp: Path,
    data_dir: Path,
    built: Built,
    texts: list[str],
    qvecs: FloatMatrix,
    ref_queries: int,
    draw: Vectors,
    rng: np.random.Generator,
    real: RealText | None = None,
) -> dict[str, Any]:
    """The SQLite base measured from a fresh process (the probe), with a foreign append."""
    assert built.sqlite_base is not None and built.sqlite_ids is not None
    base_id = built.sqlite_base
    qfile = tmp / "queries.json"
    qfile.write_text(
        json.dumps([{"text": t, "vector": v.tolist()} for t, v in zip(texts, qvecs, strict=True)]),
        encoding="utf-8",
    )
    child = subprocess.Popen(
        [
            sys.executable,
            __file__,
            "0",
            "--probe",
            str(data_dir),
            "--base",
            base_id,
            "--probe-queries",
            str(qfile),
            "--ref-queries",
            str(ref_queries),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONHASHSEED": "0"},
    )
    assert child.stdin is not None and child.stdout is not None
    if not json.loads(child.stdout.readline()).get("ready"):
        raise RuntimeError("the probe did not get ready")
    # Another process (this one) appends APPENDED chunks while the probe is open.
    svc = KnowledgeService(data_dir, models=BenchModels())
    new_vectors = draw.draw(APPENDED)
    if real is None:
        new_items = _synthetic_items(_chunk_texts(rng, APPENDED), "appended-")
    else:
        new_items = real.appended
    new_ids = _add_items(svc, base_id, new_vectors, new_items, "appended-", references=True)
    svc.close()
    child.stdin.write(json.dumps({"vector": new_vectors[-1].tolist(), "id": new_ids[-1]}) + "\n")
    child.stdin.flush()
    measured = json.loads(child.stdout.readline())
    child.wait(timeout=600)

    recalls = [
        len(set(got) & set(exact_top(built.corpus, built.sqlite_ids, q, 10))) / 10
        for got, q in zip(measured["hits"], qvecs, strict=True)
    ]
    timings = measured["timings"]
    ref = measured["reference"]
    vec0 = statistics.median(ref["vec0_knn"])
    blob = statistics.median(ref["blob_scan"])
    trove_interleaved = statistics.median(ref["trove"])
    before, after = measured["tier_stats_before_append"], measured["tier_stats_after_append"]
    return {
        "reference_queries": len(ref["vec0_knn"]),
        "reference_blob_scan_ms": {"p50": _p(ref["blob_scan"], 50)},
        "reference_vec0_knn_ms": {"p50": _p(ref["vec0_knn"], 50)},
        "vector_ms": _p50_p95(timings["vector"]),
        "vector_ms_interleaved_with_references": {"p50": round(trove_interleaved, 3)},
        "vector_speedup_vs_vec0_knn_p50": round(vec0 / trove_interleaved, 1),
        "vector_speedup_vs_blob_scan_p50": round(blob / trove_interleaved, 1),
        "recall_at_10": round(float(np.mean(recalls)), 4),
        "hybrid_ms": _p50_p95(timings["hybrid"]),
        "bm25_ms": _p50_p95(timings["bm25"]),
        "bm25_store_ms": _p50_p95(timings["bm25_store"]),
        "service_open_ms": measured["open_ms"],
        "first_search_after_start_ms": measured["first_search_ms"],
        "rss_mb": measured["rss_mb"],
        "rss_added_by_base_mb": measured["rss_added_by_base_mb"],
        "vector_memory_mb": measured["vector_memory_mb"],
        "foreign_append": {
            "chunks": APPENDED,
            "first_search_ms": measured["refresh_after_append_ms"],
            "refresh_ms": round(after["last_refresh_ms"], 2),
            "new_chunk_found": measured["append_found_in_first_search"],
            "full_loads": after["full_loads"] - before["full_loads"],
            "incremental_refreshes": after["refreshes"] - before["refreshes"],
            "blocks_read": after["blocks_read"] - before["blocks_read"],
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("n", type=int, help="number of chunks")
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument(
        "--ref-queries", type=int, default=20, help="queries timed on the references"
    )
    parser.add_argument("--data", choices=("gaussian", "uniform"), default="gaussian")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--text",
        choices=("synthetic", "real"),
        default="synthetic",
        help="chunk texts and queries: synthetic words (default), or real English from the "
        "BEIR sets (SciFact + NFCorpus chunks, SciFact test queries)",
    )
    parser.add_argument(
        "--eval-dir",
        type=Path,
        default=EVAL_DIR,
        help="--text real: the folder holding scifact/ and nfcorpus/ (default: %(default)s)",
    )
    parser.add_argument(
        "--backend",
        choices=("sqlite", "postgres", "both"),
        default="sqlite",
        help="postgres: the same chunks in a PostgreSQL base, loaded by COPY (default: sqlite)",
    )
    parser.add_argument(
        "--dsn", help="an existing PostgreSQL server (default: an embedded one in a temp dir)"
    )
    parser.add_argument("--hnsw-m", type=int, default=16)
    parser.add_argument("--ef-construction", type=int, default=64)
    parser.add_argument(
        "--ef-sweep", default="40,100,200,400", help="ef_search values measured on the store's SQL"
    )
    parser.add_argument(
        "--float-index",
        action="store_true",
        help="also an HNSW index over the full-precision vectors, measured beside the store's "
        "halfvec one",
    )
    parser.add_argument(
        "--pg-setting",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a server setting for the embedded server (over pg_bench.BUILD_SETTINGS)",
    )
    parser.add_argument(
        "--text-queries",
        type=int,
        help="PostgreSQL: BM25 and hybrid on only the first N queries (default: all)",
    )
    parser.add_argument("--probe", help=argparse.SUPPRESS)
    parser.add_argument("--base", help=argparse.SUPPRESS)
    parser.add_argument("--probe-queries", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.probe:
        probe(args)
        return
    backends = {"sqlite", "postgres"} if args.backend == "both" else {args.backend}

    def measure(pg: PgOptions | None) -> dict[str, Any]:
        return run(
            args.n,
            args.queries,
            args.ref_queries,
            args.data,
            args.seed,
            backends,
            pg,
            text=args.text,
            eval_dir=args.eval_dir,
        )

    if "postgres" not in backends:
        print(json.dumps(measure(None)))
        return
    settings = dict(BUILD_SETTINGS)
    for item in args.pg_setting:
        name, _, value = item.partition("=")
        settings[name.strip()] = value.strip()
    with bench_server(args.dsn, settings) as server:
        pg = PgOptions(
            server.dsn,
            args.hnsw_m,
            args.ef_construction,
            tuple(int(x) for x in args.ef_sweep.split(",") if x.strip()),
            args.float_index,
            args.text_queries or args.queries,
            server.settings,
        )
        result = measure(pg)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
