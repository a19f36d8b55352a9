"""Fit the Gaussian that search_latency.py draws its synthetic embeddings from.

    python tests/bench/fit_embedding_gaussian.py [--embeddings docs.npy]

Embeds the scifact corpus of ../shared/eval with the built-in model (all-MiniLM-L6-v2; or
loads the embeddings from --embeddings) and writes their mean and a square root of their
covariance to tests/bench/data/minilm_scifact_gaussian.npz (float16, 300 KB): statistics of
the embeddings, not the corpus. Vectors drawn from it have real embeddings' anisotropy
(mean norm 0.36, median pair cosine 0.13) but no near-duplicate clusters, which makes them
harder for sign-bit codes than the real embeddings: at 5,183 vectors, rescoring the 100
nearest codes finds 86 % of the exact top 10, against 95 % on the real embeddings.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

OUT = ROOT / "tests" / "bench" / "data" / "minilm_scifact_gaussian.npz"
CORPUS = ROOT.parent / "shared" / "eval" / "scifact" / "corpus.jsonl"


def embeddings(cached: Path | None) -> np.ndarray:
    if cached is not None:
        return np.load(cached)
    from app.providers.local_model import shared_model

    docs = [json.loads(line) for line in CORPUS.open(encoding="utf-8")]
    return shared_model().embed([f"{d['title']} {d['text']}" for d in docs])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--embeddings", type=Path, help="an .npy of the corpus embeddings")
    args = parser.parse_args()
    x = embeddings(args.embeddings).astype(np.float64)
    mean = x.mean(axis=0)
    values, vectors = np.linalg.eigh(np.cov((x - mean).T))
    root = vectors * np.sqrt(np.clip(values, 0.0, None))
    np.savez_compressed(
        OUT, mean=mean.astype(np.float16), root=root.astype(np.float16), count=len(x)
    )
    print(json.dumps({"written": str(OUT.relative_to(ROOT)), "vectors": len(x)}))


if __name__ == "__main__":
    main()
