"""Runs local ONNX models: a bi-encoder that embeds texts, a cross-encoder that scores pairs.

The built-in model (local_model.py) and every installed model (installed_models.py) run
here. The pipeline is sentence-transformers': tokenise (truncating at the model's input
size, never failing), sort the inputs by token length and batch them so each batch pads to
similar lengths, run, put the rows back in order. A bi-encoder pools `last_hidden_state`
(the attention-masked mean, or the first token) and L2-normalises it; a cross-encoder reads
a pair as the tokenizer's pair template builds it ([CLS] query [SEP] passage [SEP], with
token types) and turns its logit into a 0..1 score with a sigmoid.

onnxruntime and tokenizers belong to the optional `local` extra: they are imported by name
when a model is loaded, so the app (and mypy) run without them.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import importlib.util
import logging
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from app.providers import execution
from app.providers.execution import CPU, Placement
from app.providers.interfaces import MODEL_NOT_AVAILABLE, FloatMatrix, ProviderError
from app.providers.model_store.manifest import Pooling

log = logging.getLogger(__name__)

INSTALL_HINT = "install the local extra: pip install 'trove[local]'"
RUNTIME_MODULES = ("onnxruntime", "tokenizers")
DEFAULT_BATCH_SIZE = 32
# Tokenising a megabyte only to keep a few hundred tokens wastes time; no tokenizer makes
# fewer tokens than this many characters' worth of real text.
CHARS_PER_TOKEN_CAP = 64
MIN_TEXT_CHARS = 100_000
# The accelerator probe: a batch like the index job's at the built-in model's real chunk
# length (about 190 tokens of a SciFact abstract, see tests/bench/embed_configs.py).
PROBE_BATCH = 16
PROBE_TOKENS = 192
PROBE_TEXT = "Trove measures where this model runs fastest on this computer. "

# How long an idle onnxruntime worker spins before it sleeps (see session_options).
SPIN_US = 200

Int64Matrix = npt.NDArray[np.int64]


def missing_runtime() -> list[str]:
    """Which runtime modules are not installed (cheap: nothing is imported)."""
    return [name for name in RUNTIME_MODULES if importlib.util.find_spec(name) is None]


def physical_cores() -> int:
    # Hyper-threads share the matrix units; more ORT threads than cores only adds contention.
    try:
        import psutil

        count = psutil.cpu_count(logical=False)
    except Exception:  # psutil can fail inside sandboxes; the logical count is a safe fallback
        count = None
    return max(1, count or os.cpu_count() or 1)


def load_tokenizer(tokenizer_file: Path, max_tokens: int) -> Any:
    """The model's `tokenizers` tokenizer, unpadded (batches pad themselves), truncating at
    `max_tokens` (special tokens included, as the model counts them)."""
    if not tokenizer_file.is_file():
        raise ProviderError(MODEL_NOT_AVAILABLE, f"the tokenizer {tokenizer_file} is missing")
    tokenizers: Any = importlib.import_module("tokenizers")
    try:
        tokenizer: Any = tokenizers.Tokenizer.from_file(str(tokenizer_file))
    except Exception as exc:  # the library raises bare Exceptions for unreadable files
        raise ProviderError(
            MODEL_NOT_AVAILABLE, f"the tokenizer {tokenizer_file} cannot be read: {exc}"
        ) from exc
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_length=max_tokens)
    return tokenizer


def session_options(threads: int) -> Any:
    """The options every local model's session is built with (see README "Performance"
    and tests/bench/embed_configs.py for the measurements behind them)."""
    ort: Any = importlib.import_module("onnxruntime")
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    # Workers spin a moment before sleeping: between the many small parallel sections of one
    # forward pass a sleeping worker is woken too late (passes of 2 chunks ran at 0.88-0.94x
    # of the best raw loop without spinning, 0.99x with it). The spin is capped at SPIN_US, not
    # onnxruntime's long default, so a busy machine loses little to it (tests/bench/
    # embed_configs.py, docs/benchmarks.md "Local embedding at the real chunk length").
    options.add_session_config_entry("session.intra_op.allow_spinning", "1")
    options.add_session_config_entry("session.intra_op.spin_duration_us", str(SPIN_US))
    return options


def open_session(
    model_file: Path, threads: int | None = None, providers: Sequence[str] = (CPU,)
) -> Any:
    """An onnxruntime session for `model_file` on `providers` (the CPU by default); safe
    to run from many threads at once."""
    if not model_file.is_file():
        raise ProviderError(MODEL_NOT_AVAILABLE, f"the model file {model_file} is missing")
    ort: Any = importlib.import_module("onnxruntime")
    options = session_options(threads or physical_cores())
    try:
        return ort.InferenceSession(
            str(model_file), sess_options=options, providers=list(providers)
        )
    except Exception as exc:  # onnxruntime's own error types (a damaged or foreign file)
        raise ProviderError(
            MODEL_NOT_AVAILABLE, f"the model file {model_file} cannot be loaded: {exc}"
        ) from exc


def available_providers() -> list[str]:
    """onnxruntime's execution providers on this machine (the CPU alone without the extra)."""
    if missing_runtime():
        return [CPU]
    ort: Any = importlib.import_module("onnxruntime")
    return list(ort.get_available_providers())


def placement_key(model_file: Path, available: Sequence[str]) -> str:
    """What a measured placement depends on: onnxruntime's version, the providers present
    and the model file (its size and time: a reinstalled model is measured again)."""
    ort: Any = importlib.import_module("onnxruntime")
    info = model_file.stat()
    return f"{ort.__version__}|{','.join(sorted(available))}|{info.st_size}|{info.st_mtime_ns}"


class OnnxModel:
    """A model's tokenizer and ONNX session, and a padded forward pass over token ids.

    The session runs on the CPU unless onnxruntime offers an accelerator here that is
    measurably faster for this model (execution.py); an accelerator that fails at run time
    is dropped for the CPU, and the pass is repeated there.
    """

    def __init__(
        self,
        model_file: Path,
        tokenizer_file: Path,
        *,
        max_tokens: int,
        output: str,
        threads: int | None = None,
        name: str | None = None,
    ) -> None:
        absent = missing_runtime()
        if absent:
            raise ProviderError(
                MODEL_NOT_AVAILABLE, f"{', '.join(absent)} not installed; {INSTALL_HINT}"
            )
        self.max_tokens = max_tokens
        self.max_text_chars = max(MIN_TEXT_CHARS, max_tokens * CHARS_PER_TOKEN_CAP)
        self.tokenizer: Any = load_tokenizer(tokenizer_file, max_tokens)
        self.model_file = model_file
        self.name = name or str(model_file)
        self.threads = threads or physical_cores()
        self.session: Any = open_session(model_file, self.threads)
        self.placement = Placement(CPU, self.threads)
        self._fallback_lock = threading.Lock()
        self.input_names = [i.name for i in self.session.get_inputs()]
        outputs = [o.name for o in self.session.get_outputs()]
        expected = {"input_ids", "attention_mask"}
        if not expected <= set(self.input_names) or not outputs:
            raise ProviderError(
                MODEL_NOT_AVAILABLE,
                f"{model_file} has inputs {self.input_names}, expected {sorted(expected)}",
            )
        self.output_name = output if output in outputs else outputs[0]
        self._place(available_providers())
        execution.record_loaded(self.name, self.placement)

    # -- where it runs ------------------------------------------------------------------------

    def _place(self, available: Sequence[str]) -> None:
        """Move to an accelerator when one is present and measured (now or before) to be
        faster for this model; otherwise stay on the CPU session already built."""
        found = execution.accelerators(available)
        if not found:
            return
        key = placement_key(self.model_file, available)
        kept = execution.memory()
        remembered = kept.recall(self.name, key) if kept is not None else None
        if remembered is not None and remembered.provider == CPU:
            self.placement = dataclasses.replace(remembered, threads=self.threads)
            return
        if remembered is not None and self._use(remembered):
            return
        placement, session = execution.decide(
            found[0], self.threads, self.session, self._build, self._probe
        )
        if session is not None:
            self.session = session
        self.placement = placement
        log.info("%s runs on %s", self.name, placement.describe())
        if kept is not None:
            kept.remember(self.name, key, placement)

    def _use(self, placement: Placement) -> bool:
        try:
            self.session = self._build(execution.providers_for(placement))
        except ProviderError as exc:
            log.info(
                "%s: %s no longer loads (%s); measuring again",
                self.name,
                execution.label(placement.provider),
                exc.message,
            )
            return False
        self.placement = dataclasses.replace(placement, threads=self.threads)
        return True

    def _build(self, providers: list[str]) -> Any:
        return open_session(self.model_file, self.threads, providers)

    def _probe(self, session: Any) -> None:
        """One forward pass of a batch like the index job's: PROBE_BATCH texts of up to
        PROBE_TOKENS of the model's own tokens (ids any vocabulary has)."""
        ids = self._probe_ids[: min(self.max_tokens, PROBE_TOKENS)]
        input_ids, mask = pad([ids] * PROBE_BATCH)
        session.run([self.output_name], self._feeds(input_ids, mask, None))

    @functools.cached_property
    def _probe_ids(self) -> list[int]:
        return list(self.tokenizer.encode(PROBE_TEXT * 40).ids)

    def _fall_back(self, failed: Any, exc: Exception) -> None:
        """After an accelerator failed a pass: the CPU from now on (remembered)."""
        with self._fallback_lock:
            if self.session is not failed:
                return  # another thread already moved
            reason = f"{type(exc).__name__}: {exc}"[:200]
            log.warning(
                "%s failed on %s (%s); the CPU runs it from now on",
                self.name,
                execution.label(self.placement.provider),
                reason,
            )
            self.session = self._build([CPU])
            self.placement = Placement(CPU, self.threads, self.placement.provider, failed=reason)
            execution.record_loaded(self.name, self.placement)
            kept = execution.memory()
            if kept is not None:
                available = available_providers()
                kept.remember(self.name, placement_key(self.model_file, available), self.placement)

    # -- running --------------------------------------------------------------------------------

    def _feeds(
        self,
        input_ids: Int64Matrix,
        mask: Int64Matrix,
        types: Sequence[Sequence[int]] | None,
    ) -> dict[str, Int64Matrix]:
        feeds: dict[str, Int64Matrix] = {"input_ids": input_ids, "attention_mask": mask}
        if "token_type_ids" in self.input_names:
            type_ids = np.zeros_like(input_ids)
            for row, row_types in enumerate(types or ()):
                type_ids[row, : len(row_types)] = row_types
            feeds["token_type_ids"] = type_ids
        return feeds

    def run(
        self, ids: Sequence[Sequence[int]], types: Sequence[Sequence[int]] | None = None
    ) -> tuple[npt.NDArray[np.float32], Int64Matrix]:
        """One forward pass over token id lists (already truncated), padded to the longest;
        the output and the attention mask."""
        input_ids, mask = pad(ids)
        feeds = self._feeds(input_ids, mask, types)
        session = self.session
        try:
            (out,) = session.run([self.output_name], feeds)
        except Exception as exc:  # an accelerator's runtime failure: the CPU takes over
            if self.placement.provider == CPU:
                raise
            self._fall_back(session, exc)
            (out,) = self.session.run([self.output_name], feeds)
        return np.asarray(out, dtype=np.float32), mask


def pad(ids: Sequence[Sequence[int]]) -> tuple[Int64Matrix, Int64Matrix]:
    """Token id lists as a zero-padded matrix, and its attention mask."""
    width = max(len(row) for row in ids)
    input_ids = np.zeros((len(ids), width), dtype=np.int64)
    mask = np.zeros((len(ids), width), dtype=np.int64)
    for row, tokens in enumerate(ids):
        input_ids[row, : len(tokens)] = tokens
        mask[row, : len(tokens)] = 1
    return input_ids, mask


class BiEncoder(OnnxModel):
    """Texts to vectors: `dimensions` wide, pooled by `pooling`, unit length if `normalize`."""

    def __init__(
        self,
        model_file: Path,
        tokenizer_file: Path,
        *,
        max_tokens: int,
        dimensions: int,
        pooling: Pooling = Pooling.MEAN,
        normalize: bool = True,
        threads: int | None = None,
        name: str | None = None,
    ) -> None:
        super().__init__(
            model_file,
            tokenizer_file,
            max_tokens=max_tokens,
            output="last_hidden_state",
            threads=threads,
            name=name,
        )
        self.dimensions = dimensions
        self.pooling = pooling
        self.normalize = normalize

    def token_ids(self, texts: Sequence[str]) -> list[list[int]]:
        encodings = self.tokenizer.encode_batch([t[: self.max_text_chars] for t in texts])
        return [list(e.ids) for e in encodings]

    def embed_ids(self, ids: Sequence[Sequence[int]]) -> FloatMatrix:
        """One forward pass over token id lists (already truncated), pooled."""
        hidden, mask = self.run(ids)
        if hidden.ndim != 3 or hidden.shape[-1] != self.dimensions:
            raise ProviderError(
                MODEL_NOT_AVAILABLE,
                f"the model answered shape {hidden.shape}; its manifest says "
                f"[batch, tokens, {self.dimensions}]",
            )
        if self.pooling is Pooling.MEAN and self.normalize:
            return mean_pool_normalise(hidden, mask)
        pooled = pool(hidden, mask, self.pooling)
        vectors = l2_normalise(pooled) if self.normalize else pooled
        return np.ascontiguousarray(vectors, dtype=np.float32)

    def embed(self, texts: Sequence[str], batch_size: int = DEFAULT_BATCH_SIZE) -> FloatMatrix:
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        ids = self.token_ids(texts)
        out = np.empty((len(ids), self.dimensions), dtype=np.float32)
        for chosen in length_batches([len(row) for row in ids], batch_size):
            out[chosen] = self.embed_ids([ids[i] for i in chosen])
        return out


class CrossEncoder(OnnxModel):
    """(query, passage) pairs to relevance scores in 0..1."""

    def __init__(
        self,
        model_file: Path,
        tokenizer_file: Path,
        *,
        max_tokens: int,
        threads: int | None = None,
        name: str | None = None,
    ) -> None:
        super().__init__(
            model_file,
            tokenizer_file,
            max_tokens=max_tokens,
            output="logits",
            threads=threads,
            name=name,
        )

    def pair_encodings(self, query: str, passages: Sequence[str]) -> list[Any]:
        """Each pair as the tokenizer's pair template makes it, cut to the input size by
        trimming the longer side first (a long passage loses its tail, a query stays)."""
        cap = self.max_text_chars
        return list(self.tokenizer.encode_batch([(query[:cap], p[:cap]) for p in passages]))

    def scores(
        self, query: str, passages: Sequence[str], batch_size: int = DEFAULT_BATCH_SIZE
    ) -> npt.NDArray[np.float64]:
        if not passages:
            return np.zeros(0, dtype=np.float64)
        encodings = self.pair_encodings(query, passages)
        out = np.empty(len(encodings), dtype=np.float64)
        for chosen in length_batches([len(e.ids) for e in encodings], batch_size):
            logits, _ = self.run(
                [encodings[i].ids for i in chosen], [encodings[i].type_ids for i in chosen]
            )
            out[chosen] = relevance_from_logits(logits)
        return out


def length_batches(lengths: Sequence[int], batch_size: int) -> list[list[int]]:
    """Input positions grouped into batches of similar length (shortest first), so each
    batch pads little; callers write each batch's rows back at these positions."""
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    return [order[start : start + batch_size] for start in range(0, len(order), batch_size)]


def pool(hidden: npt.NDArray[np.float32], mask: Int64Matrix, pooling: Pooling) -> FloatMatrix:
    if pooling is Pooling.CLS:
        return np.ascontiguousarray(hidden[:, 0, :], dtype=np.float32)
    weights = mask.astype(np.float32)
    # (b, 1, s) @ (b, s, d) sums the unmasked token vectors in one batched BLAS call.
    summed = np.matmul(weights[:, None, :], hidden)[:, 0, :]
    counts = np.maximum(weights.sum(axis=1, keepdims=True), 1e-9)
    pooled: FloatMatrix = summed / counts
    return pooled


def l2_normalise(vectors: FloatMatrix) -> FloatMatrix:
    norms = np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    normalised: FloatMatrix = vectors / norms
    return normalised


def mean_pool_normalise(hidden: npt.NDArray[np.float32], mask: Int64Matrix) -> FloatMatrix:
    return np.ascontiguousarray(l2_normalise(pool(hidden, mask, Pooling.MEAN)), dtype=np.float32)


def relevance_from_logits(logits: npt.NDArray[np.float32]) -> npt.NDArray[np.float64]:
    """One score in 0..1 per pair: the sigmoid of a single logit, or, for a two-class head
    (not relevant, relevant), the softmax probability of the second class."""
    values = np.asarray(logits, dtype=np.float64)
    if values.ndim == 2 and values.shape[1] == 2:
        values = values[:, 1] - values[:, 0]  # softmax's second class is this one's sigmoid
    elif values.ndim == 2 and values.shape[1] == 1:
        values = values[:, 0]
    if values.ndim != 1:
        raise ProviderError(
            MODEL_NOT_AVAILABLE,
            f"the reranker answered logits of shape {logits.shape}; expected [batch, 1]",
        )
    result: npt.NDArray[np.float64] = 1.0 / (1.0 + np.exp(-np.clip(values, -60.0, 60.0)))
    return result
