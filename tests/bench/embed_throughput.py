"""Throughput of Trove's built-in embedder against plain onnxruntime on the same texts.

    python tests/bench/embed_throughput.py [N] [--batch-size B] [--rounds R] [--seed S]

Generates N English-like texts of about 66 tokens, then times, in the same process:

- Trove: `LocalEmbedder.embed` (length-sorted batches, shared tuned session);
- raw: the straightforward pipeline with a default `InferenceSession`: tokenize each batch
  with padding, run, mean-pool over the attention mask, L2-normalise;

with the same batch size, alternating which goes first each round so drift (thermal, other
load) hits both alike. Prints one JSON line with the median chunks/s of each, their ratio
(the target is Trove >= 0.9x raw) and the largest difference between the two outputs.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from app.providers.local_model import (
    MAX_TOKENS,
    LocalEmbedder,
    model_path,
    physical_cores,
    shared_model,
    tokenizer_path,
)

Matrix = npt.NDArray[np.float32]

WORDS = [
    "the",
    "of",
    "and",
    "to",
    "in",
    "is",
    "was",
    "for",
    "on",
    "that",
    "with",
    "as",
    "by",
    "at",
    "from",
    "his",
    "her",
    "their",
    "it",
    "this",
    "an",
    "be",
    "are",
    "have",
    "had",
    "not",
    "were",
    "which",
    "but",
    "or",
    "one",
    "all",
    "there",
    "can",
    "more",
    "when",
    "would",
    "about",
    "after",
    "also",
    "into",
    "only",
    "other",
    "new",
    "some",
    "could",
    "time",
    "these",
    "two",
    "may",
    "then",
    "first",
    "any",
    "like",
    "now",
    "over",
    "such",
    "our",
    "man",
    "even",
    "most",
    "made",
    "after",
    "many",
    "before",
    "must",
    "through",
    "back",
    "years",
    "where",
    "much",
    "your",
    "way",
    "well",
    "down",
    "should",
    "because",
    "each",
    "just",
    "those",
    "people",
    "how",
    "too",
    "little",
    "state",
    "good",
    "very",
    "make",
    "world",
    "still",
    "own",
    "see",
    "men",
    "work",
    "long",
    "get",
    "here",
    "between",
    "both",
    "life",
    "being",
    "under",
    "never",
    "day",
    "same",
    "another",
    "know",
    "while",
    "last",
    "might",
    "great",
    "old",
    "year",
    "off",
    "come",
    "since",
    "against",
    "go",
    "came",
    "right",
    "used",
    "take",
    "three",
    "system",
    "index",
    "search",
    "query",
    "vector",
    "embedding",
    "chunk",
    "document",
    "library",
    "archive",
    "retrieval",
    "model",
    "language",
    "network",
    "storage",
    "memory",
    "processor",
    "network",
    "kernel",
    "thread",
    "session",
    "token",
    "battery",
    "river",
    "mountain",
    "harbour",
    "village",
    "museum",
    "garden",
    "kitchen",
    "theatre",
    "orchestra",
    "laboratory",
]


def make_texts(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    texts = []
    for _ in range(n):
        words = [rng.choice(WORDS) for _ in range(rng.randint(56, 68))]
        texts.append(" ".join(words).capitalize() + ".")
    return texts


def raw_embedder(batch_size: int) -> Callable[[Sequence[str]], Matrix]:
    ort: Any = __import__("onnxruntime")
    tokenizers: Any = __import__("tokenizers")
    tokenizer = tokenizers.Tokenizer.from_file(str(tokenizer_path()))
    tokenizer.enable_truncation(max_length=MAX_TOKENS)
    tokenizer.enable_padding()  # pad to the longest text of each batch
    session = ort.InferenceSession(str(model_path()), providers=["CPUExecutionProvider"])

    def embed(texts: Sequence[str]) -> Matrix:
        out = []
        for start in range(0, len(texts), batch_size):
            encodings = tokenizer.encode_batch(list(texts[start : start + batch_size]))
            ids = np.array([e.ids for e in encodings], dtype=np.int64)
            mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
            types = np.array([e.type_ids for e in encodings], dtype=np.int64)
            (hidden,) = session.run(
                ["last_hidden_state"],
                {"input_ids": ids, "attention_mask": mask, "token_type_ids": types},
            )
            weights = mask[..., None].astype(np.float32)
            pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
            out.append(pooled / np.linalg.norm(pooled, axis=1, keepdims=True))
        return np.concatenate(out).astype(np.float32)

    return embed


def timed(embed: Callable[[Sequence[str]], Matrix], texts: Sequence[str]) -> tuple[float, Matrix]:
    start = time.perf_counter()
    matrix = embed(texts)
    return len(texts) / (time.perf_counter() - start), matrix


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("n", nargs="?", type=int, default=512, help="texts (default 512)")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--rounds", type=int, default=3, help="timed runs of each (default 3)")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)

    texts = make_texts(args.n, args.seed)
    trove = LocalEmbedder(batch_size=args.batch_size)
    raw = raw_embedder(args.batch_size)
    tokens = [len(ids) for ids in shared_model().token_ids(texts)]
    # Warm both up (session creation, allocator arenas) outside the timed runs.
    warm = texts[: args.batch_size]
    trove.embed(warm)
    raw(warm)

    rates: dict[str, list[float]] = {"trove": [], "raw": []}
    outputs: dict[str, Matrix] = {}
    runners = {"trove": trove.embed, "raw": raw}
    for round_ in range(args.rounds):
        order = ("trove", "raw") if round_ % 2 == 0 else ("raw", "trove")
        for name in order:
            rate, outputs[name] = timed(runners[name], texts)
            rates[name].append(rate)

    trove_rate = statistics.median(rates["trove"])
    raw_rate = statistics.median(rates["raw"])
    print(
        json.dumps(
            {
                "bench": "embed_throughput",
                "model": trove.model_id,
                "n": args.n,
                "batch_size": args.batch_size,
                "rounds": args.rounds,
                "mean_tokens": round(statistics.mean(tokens), 1),
                "threads": physical_cores(),
                "trove_chunks_per_s": round(trove_rate, 2),
                "raw_chunks_per_s": round(raw_rate, 2),
                "ratio": round(trove_rate / raw_rate, 3),
                "trove_runs": [round(r, 2) for r in rates["trove"]],
                "raw_runs": [round(r, 2) for r in rates["raw"]],
                "max_abs_diff": float(np.abs(outputs["trove"] - outputs["raw"]).max()),
            }
        )
    )


if __name__ == "__main__":
    main()
