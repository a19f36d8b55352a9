"""Where the built-in embedding model's cosine similarity separates related from unrelated text.

    python tests/bench/relevance_calibration.py DATASET_DIR [--limit-docs N]

The search marks results as only loosely related when full text found nothing and the best
vector similarity is below a per-model level (app/knowledge/relevance.py). This measures,
with the built-in model on a BEIR-layout data set (e.g. ../shared/eval/scifact):

- related pairs: each query against each of its relevant documents (qrels);
- random pairs: each query against five random other documents;
- best of base: each query's best similarity over the corpus (what the search sees);
- best without its relevant documents: the best when the base holds nothing it asks for;
- off-topic best: the best similarity of queries from other subjects over the corpus.

It prints percentiles of each and, for candidate levels, the share of each below the level:
the level should sit above the off-topic bests and below nearly every related best.
Documents are embedded as `title\\ntext`, as Trove embeds a document's first chunk.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

import numpy as np
import numpy.typing as npt

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from app.providers.local_model import LocalEmbedder

# Everyday questions about other subjects than a scientific corpus, nonsense included.
OFF_TOPIC = [
    "purple elephant karaoke schedule",
    "xqzv blorf gnarp",
    "asdf qwer zxcv",
    "best pizza recipe in Naples",
    "how to change a car tyre",
    "football world cup final score",
    "cheap flights to Lisbon in May",
    "lyrics of a famous love song",
    "how do I reset my router password",
    "medieval castle architecture",
    "stock market tips for beginners",
    "quarterly sales report template",
    "learn to play guitar chords",
    "the capital city of Australia",
    "knitting a wool scarf pattern",
    "wedding dress shopping",
    "train timetable Berlin Munich",
    "python list comprehension syntax",
    "renaissance painting techniques",
    "dog grooming prices",
    "who won the chess championship",
    "how to bake sourdough bread",
    "best hiking trails in the Alps",
    "vintage car restoration tips",
    "opening hours of the public library",
    "how to tie a bow tie",
    "mortgage interest rates comparison",
    "anime series recommendations",
    "fix a leaking kitchen tap",
    "rules of cricket explained",
]
LEVELS = (0.25, 0.30, 0.33, 0.35, 0.40, 0.45)
PERCENTILES = (1, 5, 10, 25, 50, 75, 90, 95, 99)

Matrix = npt.NDArray[np.float32]


def read_jsonl(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def read_qrels(path: Path) -> dict[str, set[str]]:
    qrels: dict[str, set[str]] = {}
    with path.open(encoding="utf-8") as fh:
        next(fh)
        for line in fh:
            query_id, doc_id, score = line.split("\t")
            if float(score) > 0:
                qrels.setdefault(query_id, set()).add(doc_id)
    return qrels


def summary(values: list[float]) -> dict[str, float]:
    data = np.asarray(values)
    out = {f"p{p}": round(float(np.percentile(data, p)), 3) for p in PERCENTILES}
    out["mean"] = round(float(data.mean()), 3)
    out["n"] = len(values)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dataset", type=Path)
    parser.add_argument("--limit-docs", type=int, default=0)
    args = parser.parse_args()
    root: Path = args.dataset
    docs = {
        d["_id"]: f"{d.get('title', '')}\n{d['text']}" for d in read_jsonl(root / "corpus.jsonl")
    }
    queries = {q["_id"]: q["text"] for q in read_jsonl(root / "queries.jsonl")}
    qrels = {q: ds for q, ds in read_qrels(root / "qrels" / "test.tsv").items() if q in queries}
    rng = random.Random(7)
    ids = sorted(docs)
    if args.limit_docs and args.limit_docs < len(ids):
        relevant = sorted({d for ds in qrels.values() for d in ds if d in docs})
        rest = sorted(set(ids) - set(relevant))
        ids = relevant + rng.sample(rest, max(0, args.limit_docs - len(relevant)))
    position = {doc_id: i for i, doc_id in enumerate(ids)}

    embedder = LocalEmbedder()
    started = time.perf_counter()
    corpus: Matrix = np.asarray(embedder.embed([docs[i] for i in ids]), dtype=np.float32)
    embed_seconds = time.perf_counter() - started
    query_ids = sorted(qrels)
    asked: Matrix = np.asarray(embedder.embed([queries[q] for q in query_ids]), dtype=np.float32)
    off: Matrix = np.asarray(embedder.embed(OFF_TOPIC), dtype=np.float32)

    sims = asked @ corpus.T
    related: list[float] = []
    random_pairs: list[float] = []
    best: list[float] = []
    best_without: list[float] = []
    for row, query_id in enumerate(query_ids):
        wanted = [position[d] for d in qrels[query_id] if d in position]
        related.extend(float(sims[row, j]) for j in wanted)
        others = np.ones(len(ids), dtype=bool)
        others[wanted] = False
        pool = np.flatnonzero(others)
        random_pairs.extend(float(sims[row, j]) for j in rng.sample(list(pool), 5))
        best.append(float(sims[row].max()))
        best_without.append(float(sims[row, others].max()))
    off_best = [float(v) for v in (off @ corpus.T).max(axis=1)]

    groups = {
        "related pairs": related,
        "random pairs": random_pairs,
        "best of base": best,
        "best without its relevant documents": best_without,
        "off-topic best": off_best,
    }
    print(json.dumps({"documents": len(ids), "embedSeconds": round(embed_seconds, 1)}))
    for name, values in groups.items():
        print(json.dumps({"group": name, **summary(values)}))
    for level in LEVELS:
        below = {
            name: round(float(np.mean(np.asarray(v) < level)), 3) for name, v in groups.items()
        }
        print(json.dumps({"level": level, "shareBelow": below}))
    for text, value in sorted(zip(OFF_TOPIC, off_best, strict=True), key=lambda p: -p[1])[:5]:
        print(json.dumps({"offTopic": text, "best": round(value, 3)}))


if __name__ == "__main__":
    main()
