"""Search latency on a synthetic base of N chunks, against the reference vector scan.

    python tests/bench/search_latency.py N [--queries Q] [--seed S]

Builds a base of N chunks (384-d unit vectors, Zipf-distributed words) through the store's
normal write path, then times, in the same process and on the same data:

- Trove's BM25 search, vector step and whole hybrid search (the service's search pipeline);
- the reference application's vector search: a full scan
  `ORDER BY vec_distance_cosine(blob, ?)` over a BLOB column;

and measures recall@10 of Trove's vector step against exact (float64 brute force) search.
Prints one JSON line. Ratios matter more than milliseconds on a shared, noisy machine.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from app.knowledge.jobs.index_documents import text_hash
from app.knowledge.pipeline.store.index_store import ChunkRecord
from app.knowledge.service import KnowledgeService
from app.knowledge.types import ItemStatus, ItemType, SearchMode

DIMS = 384
CHUNKS_PER_ITEM = 100
WORDS_PER_CHUNK = 60
VOCABULARY = 50_000
CANDIDATES = 50  # top-K 10 x overfetch 5, what both applications ask the vector step for


class BenchEmbedder:
    """Query vectors are chosen by the benchmark; the embedder just hands them out."""

    model_id = "bench:random"

    def __init__(self) -> None:
        self.vectors: dict[str, npt.NDArray[np.float32]] = {}

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        return np.stack([self.vectors.get(t, np.ones(DIMS, dtype=np.float32)) for t in texts])


class BenchModels:
    def __init__(self) -> None:
        self.bench = BenchEmbedder()

    def embedder(self, model_id: str) -> BenchEmbedder:
        return self.bench

    def reranker(self, model_id: str) -> BenchEmbedder:
        raise LookupError("no reranker in this benchmark")


def _unit(rng: np.random.Generator, n: int) -> npt.NDArray[np.float32]:
    x = rng.standard_normal((n, DIMS)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def _words(rng: np.random.Generator, n: int) -> list[str]:
    ranks = rng.zipf(1.1, n)
    return [f"w{int(r) % VOCABULARY}" for r in ranks]


def build(
    svc: KnowledgeService, n_chunks: int, rng: np.random.Generator
) -> tuple[str, npt.NDArray[np.float32]]:
    base = svc.create_base("bench", embedding_model="bench:random")
    store = svc.parts.stores.get(base.id)
    all_vectors = np.empty((n_chunks, DIMS), dtype=np.float32)
    ref = store._writer  # the reference table sits in the same file, as in the reference app
    ref.execute(
        "CREATE TABLE ref_embedding (chunk_id INTEGER PRIMARY KEY, embedding BLOB NOT NULL)"
    )
    done = 0
    while done < n_chunks:
        count = min(CHUNKS_PER_ITEM, n_chunks - done)
        item = svc.catalog.create_item(
            base.id,
            ItemType.FILE,
            f"/bench/{done}.md",
            f"doc {done}",
            status=ItemStatus.PROCESSING,
            relative_path=f"{done}.md",
        )
        records, pos = [], 0
        for _ in range(count):
            text = " ".join(_words(rng, WORDS_PER_CHUNK))
            records.append(
                ChunkRecord(pos, pos + len(text), text, WORDS_PER_CHUNK, text_hash(text))
            )
            pos += len(text) + 1
        vectors = _unit(rng, count)
        ids = store.rebuild_material(item.id, f"{done}.md", item.title, pos, records, vectors)
        with ref:
            ref.executemany(
                "INSERT INTO ref_embedding VALUES (?, ?)",
                ((cid, v.tobytes()) for cid, v in zip(ids, vectors, strict=True)),
            )
        all_vectors[done : done + count] = vectors
        svc.catalog.set_item_status(item.id, ItemStatus.COMPLETED)
        done += count
    return base.id, all_vectors


def _p(values: list[float], q: float) -> float:
    return round(float(np.percentile(values, q)), 3)


def run(n_chunks: int, n_queries: int, seed: int) -> dict[str, object]:
    rng = np.random.default_rng(seed)
    with tempfile.TemporaryDirectory() as tmp:
        models = BenchModels()
        svc = KnowledgeService(Path(tmp), models=models)
        t = time.perf_counter()
        base_id, corpus = build(svc, n_chunks, rng)
        build_s = time.perf_counter() - t
        store = svc.parts.stores.get(base_id)
        reader = store._reader()

        queries = [" ".join(_words(rng, 3)) for _ in range(n_queries)]
        # Query vectors near a corpus vector, like a real query near its answer.
        anchors = corpus[rng.integers(0, n_chunks, n_queries)]
        qvecs = anchors + 0.8 * _unit(rng, n_queries) / np.sqrt(1.0)
        qvecs = (qvecs / np.linalg.norm(qvecs, axis=1, keepdims=True)).astype(np.float32)
        for text, vec in zip(queries, qvecs, strict=True):
            models.bench.vectors[text] = vec

        t = time.perf_counter()
        store.vector_search(qvecs[0], CANDIDATES)  # first use loads the in-memory mirror
        load_ms = (time.perf_counter() - t) * 1000

        ids_all = np.array(
            [
                int(r[0])
                for r in reader.execute("SELECT chunk_id FROM ref_embedding ORDER BY chunk_id")
            ]
        )
        timings: dict[str, list[float]] = {"bm25": [], "vector": [], "hybrid": [], "reference": []}
        recalls: list[float] = []
        for text, vec in zip(queries, qvecs, strict=True):
            t = time.perf_counter()
            svc.search(base_id, text, mode=SearchMode.BM25)
            timings["bm25"].append((time.perf_counter() - t) * 1000)

            t = time.perf_counter()
            got = store.vector_search(vec, CANDIDATES)
            timings["vector"].append((time.perf_counter() - t) * 1000)

            t = time.perf_counter()
            svc.search(base_id, text)
            timings["hybrid"].append((time.perf_counter() - t) * 1000)

            t = time.perf_counter()
            list(
                reader.execute(
                    "SELECT chunk_id, vec_distance_cosine(embedding, ?) AS d FROM ref_embedding "
                    "ORDER BY d LIMIT ?",
                    (vec.tobytes(), CANDIDATES),
                )
            )
            timings["reference"].append((time.perf_counter() - t) * 1000)

            exact = ids_all[np.argsort(-(corpus.astype(np.float64) @ vec.astype(np.float64)))[:10]]
            recalls.append(len({cid for cid, _ in got[:10]} & set(exact.tolist())) / 10)
        svc.close()

    ref_p50 = statistics.median(timings["reference"])
    vec_p50 = statistics.median(timings["vector"])
    hybrid_p50 = statistics.median(timings["hybrid"])
    return {
        "bench": "search_latency",
        "chunks": n_chunks,
        "queries": n_queries,
        "dims": DIMS,
        "build_s": round(build_s, 1),
        "vector_mirror_load_ms": round(load_ms, 1),
        "bm25_ms": {"p50": _p(timings["bm25"], 50), "p95": _p(timings["bm25"], 95)},
        "vector_ms": {"p50": _p(timings["vector"], 50), "p95": _p(timings["vector"], 95)},
        "hybrid_ms": {"p50": _p(timings["hybrid"], 50), "p95": _p(timings["hybrid"], 95)},
        "reference_vector_scan_ms": {
            "p50": _p(timings["reference"], 50),
            "p95": _p(timings["reference"], 95),
        },
        "vector_speedup_vs_reference_p50": round(ref_p50 / vec_p50, 1),
        "hybrid_p50_over_reference_p50": round(hybrid_p50 / ref_p50, 3),
        "recall_at_10": round(float(np.mean(recalls)), 4),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("n", type=int, help="number of chunks")
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    print(json.dumps(run(args.n, args.queries, args.seed)))


if __name__ == "__main__":
    main()
