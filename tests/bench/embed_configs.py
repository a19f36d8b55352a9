"""The built-in embedder at its real chunk length, against the best raw onnxruntime loop.

    python tests/bench/embed_configs.py [--chunks N] [--sweep-chunks M] [--rounds R]
                                        [--final-rounds F] [--passes P] [--save-vectors F.npy]
                                        [--compare-vectors F.npy]

Needs ../shared/eval/scifact (the SciFact abstracts). Each abstract is chunked by Trove's own
chunker at a new base's default size (512 tokens, overlap 64) capped to the built-in model
as `sizing_for` caps it, and its title is put in front of a later chunk as the index job
does: the texts embedded are exactly the ones a base of SciFact abstracts would embed
(about 187 model tokens each).

1. Sweep: a raw loop (tokenise, pad, `InferenceSession.run`, mean-pool, normalise, no Trove
   code) over onnxruntime's knobs, one at a time from a plain start (coordinate descent):
   intra-op threads (1, 2, physical, logical cores), batch size (1 to 64), length
   bucketing, graph optimisation level, spinning, execution mode and I/O binding. Each
   candidate is timed against the best so far on the same texts, alternating which runs
   first; it wins when the median of its per-round speed ratios beats 1 + --margin.
2. Final: Trove end to end exactly as the vector stage calls it (the embedder the provider
   registry builds for "local:all-MiniLM-L6-v2", batches cut by the job's own rule and
   checked by its `embed_batch`) against the winning raw loop, alternating, --final-rounds
   times over --chunks texts.

The machine may be shared, so only ratios of runs taken side by side are trusted; medians
of each are printed too. Prints one JSON line per sweep step and one final line.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import json
import os
import statistics
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from app.knowledge.chunk_sizing import sizing_for
from app.knowledge.jobs.index_documents import embed_batch, job_batch_size
from app.knowledge.pipeline.indexing.spans import texts_from_text
from app.knowledge.pipeline.indexing.token_count import embedding_input
from app.knowledge.pipeline.text_extraction import chunk_spans
from app.knowledge.types import DEFAULT_CHUNK_OVERLAP, DEFAULT_CHUNK_SIZE, Base, BaseStatus
from app.providers.factory import build_embedder, builtin_local_settings
from app.providers.interfaces import Embedder, ModelResolver, Reranker
from app.providers.local_model import (
    LOCAL_DIMS,
    LOCAL_MODEL_ID,
    MAX_TOKENS,
    model_path,
    physical_cores,
    shared_model,
    tokenizer_path,
)

Matrix = npt.NDArray[np.float32]
CORPUS = Path(__file__).resolve().parents[3] / "shared" / "eval" / "scifact" / "corpus.jsonl"
OPT_LEVELS = ("ORT_DISABLE_ALL", "ORT_ENABLE_BASIC", "ORT_ENABLE_EXTENDED", "ORT_ENABLE_ALL")


# -- the texts ----------------------------------------------------------------------------


class _Models:
    """The provider registry's answer for the built-in model, nothing else."""

    def embedder(self, model_id: str) -> Embedder:
        return build_embedder(builtin_local_settings(), model_id.split(":", 1)[1], _no_key)

    def reranker(self, model_id: str) -> Reranker:
        raise LookupError(model_id)


def _no_key() -> str | None:
    return None


def real_chunks(limit: int) -> list[str]:
    """What a base of SciFact abstracts embeds, chunked as Trove chunks them."""
    if not CORPUS.is_file():
        sys.exit(f"this benchmark needs {CORPUS} (the shared evaluation data)")
    models: ModelResolver = _Models()
    base = _base()
    sizing = sizing_for(base, models)
    out: list[str] = []
    for doc in _abstracts():
        titled = sizing.with_title(doc["title"])
        chunked = chunk_spans(doc["text"], doc["title"], sizing)
        header = titled.header(doc["title"])
        out.extend(embedding_input(header, t) for t in texts_from_text(doc["text"], chunked.spans))
        if len(out) >= limit:
            return out[:limit]
    return out


def _abstracts() -> Iterator[dict[str, str]]:
    with CORPUS.open(encoding="utf-8") as fh:
        for line in fh:
            doc = json.loads(line)
            if doc.get("text"):
                yield doc


def _base() -> Base:
    return Base(
        id="bench",
        name="bench",
        embedding_model=LOCAL_MODEL_ID,
        dimensions=LOCAL_DIMS,
        rerank_model=None,
        document_count=10,
        threshold=None,
        chunk_size=DEFAULT_CHUNK_SIZE,
        chunk_overlap=DEFAULT_CHUNK_OVERLAP,
        status=BaseStatus.COMPLETED,
        status_reason=None,
        created_at=0.0,
        updated_at=0.0,
    )


# -- the raw loop ---------------------------------------------------------------------------


@dataclass(frozen=True)
class RawConfig:
    """One raw loop's knobs; the defaults are onnxruntime's own (threads: physical cores)."""

    threads: int = dataclasses.field(default_factory=physical_cores)
    batch: int = 32
    bucketing: bool = False
    opt_level: str = "ORT_ENABLE_ALL"
    spinning: bool = True  # onnxruntime's default
    parallel: bool = False
    io_binding: bool = False

    def label(self) -> str:
        return json.dumps(dataclasses.asdict(self), sort_keys=True)


class RawLoop:
    """Plain onnxruntime + tokenizers, configured by a RawConfig; no Trove code."""

    def __init__(self, config: RawConfig) -> None:
        ort: Any = importlib.import_module("onnxruntime")
        tokenizers: Any = importlib.import_module("tokenizers")
        self.config = config
        options = ort.SessionOptions()
        options.intra_op_num_threads = config.threads
        options.inter_op_num_threads = config.threads if config.parallel else 1
        options.graph_optimization_level = getattr(ort.GraphOptimizationLevel, config.opt_level)
        options.execution_mode = (
            ort.ExecutionMode.ORT_PARALLEL if config.parallel else ort.ExecutionMode.ORT_SEQUENTIAL
        )
        options.add_session_config_entry(
            "session.intra_op.allow_spinning", "1" if config.spinning else "0"
        )
        self.session = ort.InferenceSession(
            str(model_path()), sess_options=options, providers=["CPUExecutionProvider"]
        )
        self.tokenizer = tokenizers.Tokenizer.from_file(str(tokenizer_path()))
        # The file pads every text to 128 tokens ("Fixed"); the bucketed path pads itself.
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(max_length=MAX_TOKENS)
        self.padded = tokenizers.Tokenizer.from_file(str(tokenizer_path()))
        self.padded.enable_truncation(max_length=MAX_TOKENS)
        self.padded.enable_padding()  # to the longest text of each batch

    def embed(self, texts: Sequence[str]) -> Matrix:
        out = np.empty((len(texts), LOCAL_DIMS), dtype=np.float32)
        size = self.config.batch
        if self.config.bucketing:
            ids = [e.ids for e in self.tokenizer.encode_batch(list(texts))]
            order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
            for start in range(0, len(order), size):
                chosen = order[start : start + size]
                out[chosen] = self._forward(*_pad([ids[i] for i in chosen]))
            return out
        for start in range(0, len(texts), size):
            encodings = self.padded.encode_batch(list(texts[start : start + size]))
            ids_m = np.array([e.ids for e in encodings], dtype=np.int64)
            mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
            out[start : start + len(encodings)] = self._forward(ids_m, mask)
        return out

    def _forward(self, ids: npt.NDArray[np.int64], mask: npt.NDArray[np.int64]) -> Matrix:
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        if self.config.io_binding:
            binding = self.session.io_binding()
            for name, value in feeds.items():
                binding.bind_cpu_input(name, value)
            binding.bind_output("last_hidden_state")
            self.session.run_with_iobinding(binding)
            hidden = binding.get_outputs()[0].numpy()
        else:
            (hidden,) = self.session.run(["last_hidden_state"], feeds)
        weights = mask.astype(np.float32)
        pooled = np.matmul(weights[:, None, :], hidden)[:, 0, :] / weights.sum(1, keepdims=True)
        norms: Matrix = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / norms).astype(np.float32)


def _pad(rows: Sequence[Sequence[int]]) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    width = max(len(r) for r in rows)
    ids = np.zeros((len(rows), width), dtype=np.int64)
    mask = np.zeros((len(rows), width), dtype=np.int64)
    for i, r in enumerate(rows):
        ids[i, : len(r)] = r
        mask[i, : len(r)] = 1
    return ids, mask


# -- Trove, as the vector stage calls it---------------------------------------------------------


def trove_job_loop() -> tuple[Callable[[Sequence[str]], Matrix], int]:
    """The vector stage's embedding loop without its store (jobs/embed_vectors.py): batches
    of the job's size in chunk order, each through `embed_batch` (which checks the reply),
    on the embedder the registry builds."""
    embedder = _Models().embedder(LOCAL_MODEL_ID)
    batch_size = job_batch_size(embedder, None)  # the app configures none

    def embed(texts: Sequence[str]) -> Matrix:
        parts = [
            embed_batch(embedder.embed, list(texts[start : start + batch_size]), LOCAL_DIMS)
            for start in range(0, len(texts), batch_size)
        ]
        return np.concatenate(parts)

    return embed, batch_size


# -- timing -----------------------------------------------------------------------------------


def timed(embed: Callable[[Sequence[str]], Matrix], texts: Sequence[str]) -> tuple[float, Matrix]:
    start = time.perf_counter()
    matrix = embed(texts)
    return len(texts) / (time.perf_counter() - start), matrix


@dataclass
class Duel:
    a_rates: list[float]
    b_rates: list[float]
    ratios: list[float]  # b / a of runs taken side by side
    a_out: Matrix
    b_out: Matrix

    @property
    def ratio(self) -> float:
        return statistics.median(self.ratios)


def duel(
    a: Callable[[Sequence[str]], Matrix],
    b: Callable[[Sequence[str]], Matrix],
    texts: Sequence[str],
    rounds: int,
) -> Duel:
    """a and b on the same texts, alternating which goes first, after one warm-up each."""
    a(texts[:64])
    b(texts[:64])
    a_rates: list[float] = []
    b_rates: list[float] = []
    a_out = b_out = np.zeros((0, LOCAL_DIMS), dtype=np.float32)
    for r in range(rounds):
        if r % 2 == 0:
            ra, a_out = timed(a, texts)
            rb, b_out = timed(b, texts)
        else:
            rb, b_out = timed(b, texts)
            ra, a_out = timed(a, texts)
        a_rates.append(ra)
        b_rates.append(rb)
    return Duel(
        a_rates, b_rates, [y / x for x, y in zip(a_rates, b_rates, strict=True)], a_out, b_out
    )


def candidates(best: RawConfig, field: str) -> list[RawConfig]:
    logical = os.cpu_count() or 1
    values: dict[str, Sequence[object]] = {
        "threads": sorted({1, 2, physical_cores(), logical}),
        "batch": (1, 2, 4, 8, 16, 32, 64),
        "bucketing": (False, True),
        "opt_level": OPT_LEVELS,
        "spinning": (False, True),
        "parallel": (False, True),
        "io_binding": (False, True),
    }
    current = getattr(best, field)
    return [dataclasses.replace(best, **{field: v}) for v in values[field] if v != current]


def sweep(texts: Sequence[str], rounds: int, passes: int, margin: float) -> RawConfig:
    best = RawConfig()
    loops: dict[RawConfig, RawLoop] = {}

    def loop(config: RawConfig) -> RawLoop:
        if config not in loops:
            # Only the incumbent is kept: each session's arena holds hundreds of MB.
            for old in [c for c in loops if c != best]:
                del loops[old]
            loops[config] = RawLoop(config)
        return loops[config]

    for _ in range(passes):
        for field in (
            "threads",
            "batch",
            "bucketing",
            "opt_level",
            "spinning",
            "parallel",
            "io_binding",
        ):
            for candidate in candidates(best, field):
                got = duel(loop(best).embed, loop(candidate).embed, texts, rounds)
                won = got.ratio > 1 + margin
                print(
                    json.dumps(
                        {
                            "step": "sweep",
                            "knob": field,
                            "incumbent": dataclasses.asdict(best),
                            "candidate": getattr(candidate, field),
                            "candidate_vs_incumbent": round(got.ratio, 3),
                            "incumbent_chunks_per_s": round(statistics.median(got.a_rates), 2),
                            "candidate_chunks_per_s": round(statistics.median(got.b_rates), 2),
                            "won": won,
                        }
                    ),
                    flush=True,
                )
                if won:
                    best = candidate
    return best


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--chunks", type=int, default=384, help="texts in the final duel")
    parser.add_argument("--sweep-chunks", type=int, default=128, help="texts per sweep run")
    parser.add_argument("--rounds", type=int, default=3, help="runs of each per sweep step")
    parser.add_argument("--final-rounds", type=int, default=5)
    # Two: the best thread count depends on the other knobs (and on the machine's load).
    parser.add_argument("--passes", type=int, default=2, help="sweeps over all the knobs")
    parser.add_argument("--margin", type=float, default=0.02, help="a candidate must beat this")
    parser.add_argument("--config", help="skip the sweep: a raw config as JSON")
    parser.add_argument("--save-vectors", type=Path, help="write Trove's vectors here (.npy)")
    parser.add_argument("--compare-vectors", type=Path, help="vectors an earlier run saved")
    args = parser.parse_args(argv)

    texts = real_chunks(max(args.chunks, args.sweep_chunks))
    tokens = [len(ids) for ids in shared_model().token_ids(texts)]
    if args.config:
        best = RawConfig(**json.loads(args.config))
    else:
        best = sweep(texts[: args.sweep_chunks], args.rounds, args.passes, args.margin)
    trove, batch_size = trove_job_loop()
    final = duel(RawLoop(best).embed, trove, texts[: args.chunks], args.final_rounds)
    result: dict[str, Any] = {
        "bench": "embed_configs",
        "model": LOCAL_MODEL_ID,
        "chunks": args.chunks,
        "mean_tokens": round(statistics.mean(tokens[: args.chunks]), 1),
        "rounds": args.final_rounds,
        "cores": {"physical": physical_cores(), "logical": os.cpu_count()},
        "best_raw_config": dataclasses.asdict(best),
        "trove_job_batch_size": batch_size,
        "trove_chunks_per_s": round(statistics.median(final.b_rates), 2),
        "raw_chunks_per_s": round(statistics.median(final.a_rates), 2),
        "ratio": round(final.ratio, 3),
        "ratios": [round(r, 3) for r in final.ratios],
        "max_abs_diff": float(np.abs(final.a_out - final.b_out).max()),
    }
    if args.compare_vectors:
        before = np.load(args.compare_vectors)
        result["max_abs_diff_vs_saved"] = float(np.abs(before - final.b_out[: len(before)]).max())
    if args.save_vectors:
        np.save(args.save_vectors, final.b_out)
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
