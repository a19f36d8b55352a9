"""Retrieval quality on a BEIR-layout data set, through Trove's normal paths.

    python tests/bench/retrieval_quality.py DATASET_DIR [--embedding PROVIDER:MODEL]
        [--mode bm25|vector|hybrid|rrf[,...]] [--limit-queries N] [--workdir DIR]
        [--backend sqlite|postgres|both [--dsn DSN]]

Builds a base from the corpus through the normal ingestion path (each document a Markdown
file: `# title` + text, added as one folder and indexed by the job executor), runs every
query through the normal search path, and prints one JSON line with nDCG@10 (linear gain),
Recall@10, MRR@10, the number of queries and the p50 search latency per mode (several modes
joined by commas share one build). A document counts once, at its best-ranked chunk.

`--mode rrf` is hybrid search with the reference application's fusion (plain RRF, k=60),
for comparison. Vectors are cached by model and text hash under ~/.cache/trove-bench, so
reruns do not embed again.

`--backend both` builds a second base from the same files with its index in PostgreSQL (an
embedded server in a temporary folder, or `--dsn`) and measures it the same way; each line
names its backend.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path

import apsw
import numpy as np
import numpy.typing as npt

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from app.knowledge.service import KnowledgeService
from app.knowledge.types import IndexBackend, SearchMode
from app.providers.interfaces import Embedder, ModelResolver, Reranker

CACHE = Path.home() / ".cache" / "trove-bench" / "embeddings.sqlite"
K = 10


class CachedEmbedder:
    """Wraps a real embedder; identical (model, text) pairs are embedded once, ever."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.model_id = inner.model_id
        CACHE.parent.mkdir(parents=True, exist_ok=True)
        self._db = apsw.Connection(str(CACHE))
        # Benches run side by side (a baseline worktree beside a change) share this cache.
        self._db.setbusytimeout(120_000)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("CREATE TABLE IF NOT EXISTS v (key TEXT PRIMARY KEY, vec BLOB NOT NULL)")
        self._lock = threading.Lock()  # several indexing jobs embed at once

    def _key(self, text: str) -> str:
        return hashlib.sha256(f"{self.model_id}\0{text}".encode()).hexdigest()

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        with self._lock:
            return self._embed(texts)

    def _embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        keys = [self._key(t) for t in texts]
        found: dict[str, bytes] = {}
        for start in range(0, len(keys), 500):
            part = keys[start : start + 500]
            marks = ",".join("?" * len(part))
            for key, vec in self._db.execute(
                f"SELECT key, vec FROM v WHERE key IN ({marks})", part
            ):
                found[key] = vec
        missing = [i for i, key in enumerate(keys) if key not in found]
        if missing:
            fresh = np.asarray(self.inner.embed([texts[i] for i in missing]), dtype=np.float32)
            with self._db:
                for i, vec in zip(missing, fresh, strict=True):
                    found[keys[i]] = vec.tobytes()
                    self._db.execute(
                        "INSERT OR REPLACE INTO v VALUES (?, ?)", (keys[i], vec.tobytes())
                    )
        return np.stack([np.frombuffer(found[key], dtype=np.float32) for key in keys])


class BenchModels:
    def __init__(self, real: ModelResolver) -> None:
        self._real = real
        self._cache: dict[str, CachedEmbedder] = {}

    def embedder(self, model_id: str) -> Embedder:
        if model_id not in self._cache:
            self._cache[model_id] = CachedEmbedder(self._real.embedder(model_id))
        return self._cache[model_id]

    def reranker(self, model_id: str) -> Reranker:
        return self._real.reranker(model_id)


def _real_models() -> ModelResolver:
    from app.providers.registry import ProviderRegistry

    registry = ProviderRegistry()
    try:
        from app.providers.factory import register_all

        register_all(registry, [], lambda _provider: None)
    except ImportError:
        pass
    return registry


def load_jsonl(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def load_qrels(path: Path) -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = {}
    with path.open(encoding="utf-8") as fh:
        next(fh)  # header
        for line in fh:
            qid, did, score = line.rstrip("\n").split("\t")
            if int(score) > 0:
                qrels.setdefault(qid, {})[did] = int(score)
    return qrels


def write_corpus(docs: list[dict[str, str]], folder: Path) -> dict[str, str]:
    """One Markdown file per document; returns file path -> document id."""
    folder.mkdir(parents=True)
    by_path: dict[str, str] = {}
    for n, doc in enumerate(docs):
        path = folder / f"d{n:07d}.md"
        title = " ".join(doc.get("title", "").split())
        body = doc.get("text", "")
        path.write_text(f"# {title}\n\n{body}\n" if title else f"{body}\n", encoding="utf-8")
        by_path[str(path.resolve())] = doc["_id"]
    return by_path


def ndcg_at_k(ranked: list[str], rels: dict[str, int], k: int = K) -> float:
    dcg = sum(rels.get(d, 0) / math.log2(i + 2) for i, d in enumerate(ranked[:k]))
    ideal = sorted(rels.values(), reverse=True)[:k]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg else 0.0


def recall_at_k(ranked: list[str], rels: dict[str, int], k: int = K) -> float:
    return len(set(ranked[:k]) & set(rels)) / len(rels) if rels else 0.0


def mrr_at_k(ranked: list[str], rels: dict[str, int], k: int = K) -> float:
    for i, d in enumerate(ranked[:k]):
        if d in rels:
            return 1.0 / (i + 1)
    return 0.0


def run(
    dataset: Path,
    embedding: str | None,
    modes: list[str],
    limit: int | None,
    workdir: Path | None,
    backends: Sequence[str] = ("sqlite",),
    dsn: str | None = None,
) -> list[dict[str, object]]:
    """One base per backend (`postgres`: its index in a schema on the server `dsn`), built
    one after the other from the same files, every mode measured on each."""
    from app.runtime.headless import run_until_drained

    docs = load_jsonl(dataset / "corpus.jsonl")
    queries = load_jsonl(dataset / "queries.jsonl")
    qrels = load_qrels(dataset / "qrels" / "test.tsv")
    queries = [q for q in queries if q["_id"] in qrels]
    if limit:
        queries = queries[:limit]
    reports: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory(dir=workdir) as tmp:
        work = Path(tmp)
        by_path = write_corpus(docs, work / "corpus")
        service = KnowledgeService(work / "home", models=BenchModels(_real_models()))
        for backend in backends:
            server = {"backend": IndexBackend.POSTGRES, "dsn": dsn} if backend == "postgres" else {}
            base = service.create_base(
                f"{dataset.name}-{backend}", embedding_model=embedding, document_count=K, **server
            )
            started = time.perf_counter()
            service.add(base.id, [work / "corpus"])
            run_until_drained(service)
            build_s = time.perf_counter() - started
            failed = [i for i in service.list_items(base.id) if i.status == "failed"]
            for mode in modes:
                report = _evaluate(service, base.id, mode, queries, qrels, by_path)
                report.update(
                    dataset=dataset.name,
                    backend=backend,
                    embedding=embedding,
                    documents=len(docs),
                    failed_items=len(failed),
                    build_s=round(build_s, 1),
                )
                reports.append(report)
        service.close()
    return reports


def _evaluate(
    service: KnowledgeService,
    base_id: str,
    mode: str,
    queries: list[dict[str, str]],
    qrels: dict[str, dict[str, int]],
    by_path: dict[str, str],
) -> dict[str, object]:
    """Every query through the normal search path in one mode; the mean metrics."""
    search_mode = {"bm25": SearchMode.BM25, "vector": SearchMode.VECTOR}.get(
        mode, SearchMode.HYBRID
    )
    fusion = "rrf" if mode == "rrf" else None
    scores: dict[str, list[float]] = {"ndcg": [], "recall": [], "mrr": []}
    latencies: list[float] = []
    for q in queries:
        t = time.perf_counter()
        response = service.search(base_id, q["text"], top_k=50, mode=search_mode, fusion=fusion)
        latencies.append((time.perf_counter() - t) * 1000)
        ranked: list[str] = []
        for r in response.results:
            doc_id = by_path.get(r.source)
            if doc_id is not None and doc_id not in ranked:
                ranked.append(doc_id)
        rels = qrels[q["_id"]]
        scores["ndcg"].append(ndcg_at_k(ranked, rels))
        scores["recall"].append(recall_at_k(ranked, rels))
        scores["mrr"].append(mrr_at_k(ranked, rels))
    return {
        "bench": "retrieval_quality",
        "mode": mode,
        "queries": len(queries),
        "ndcg@10": round(statistics.fmean(scores["ndcg"]), 4),
        "recall@10": round(statistics.fmean(scores["recall"]), 4),
        "mrr@10": round(statistics.fmean(scores["mrr"]), 4),
        "p50_search_ms": round(statistics.median(latencies), 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("dataset", type=Path)
    parser.add_argument("--embedding", metavar="PROVIDER:MODEL")
    parser.add_argument(
        "--mode",
        help="bm25, vector, hybrid or rrf, or several joined by commas (one build for all); "
        "default: hybrid with --embedding, else bm25",
    )
    parser.add_argument("--limit-queries", type=int)
    parser.add_argument("--workdir", type=Path)
    parser.add_argument(
        "--backend",
        choices=("sqlite", "postgres", "both"),
        default="sqlite",
        help="where the base's index lives; postgres and both start an embedded server "
        "unless --dsn names one",
    )
    parser.add_argument("--dsn", help="an existing PostgreSQL server for --backend postgres")
    args = parser.parse_args()
    modes = (args.mode or ("hybrid" if args.embedding else "bm25")).split(",")
    for mode in modes:
        if mode not in ("bm25", "vector", "hybrid", "rrf"):
            parser.error(f"unknown mode {mode!r}")
        if mode != "bm25" and not args.embedding:
            parser.error(f"--mode {mode} needs --embedding")
    backends = ["sqlite", "postgres"] if args.backend == "both" else [args.backend]
    if "postgres" not in backends:
        for report in run(args.dataset, args.embedding, modes, args.limit_queries, args.workdir):
            print(json.dumps(report))
        return
    from tests.bench.pg_bench import bench_server

    # These sets are small: the server's default settings, not the large-build ones.
    with bench_server(args.dsn, {}) as server:
        reports = run(
            args.dataset,
            args.embedding,
            modes,
            args.limit_queries,
            args.workdir,
            backends,
            server.dsn,
        )
    for report in reports:
        print(json.dumps({**report, "server": server.settings}))


if __name__ == "__main__":
    main()
