"""Models installed under the data folder's `models/<id>/`, used by a base as `local:<id>`.

A folder holds `trove-model.json` (model_store/manifest.py), the ONNX graph and the
tokenizer. Its manifest says how to run it: an embedding model's pooling, normalisation,
query and passage prefixes and input size; a rerank model's input size. The clients here
are cheap to build (they read the manifest, so a missing or broken model fails at once with
MODEL_NOT_AVAILABLE naming its folder); the ONNX session is loaded on first use and shared
by every client of that folder in the process. A folder changed on disk (the model
reinstalled) is loaded again.
"""

from __future__ import annotations

import importlib
import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from app.providers.input_limits import InputLimit
from app.providers.interfaces import (
    EMBEDDING_FAILED,
    INVALID_ARGUMENT,
    MODEL_NOT_AVAILABLE,
    FloatMatrix,
    ProviderError,
)
from app.providers.local_runtime import (
    DEFAULT_BATCH_SIZE,
    INSTALL_HINT,
    BiEncoder,
    CrossEncoder,
    missing_runtime,
)
from app.providers.model_store.manifest import (
    MANIFEST_FILE,
    ModelKind,
    ModelManifest,
    load_manifest,
    model_folder,
)

log = logging.getLogger(__name__)

# What a model's files looked like when it was loaded: (inode, modification time, size)
# each, so a file rewritten in place or replaced by another is noticed.
Stamp = tuple[tuple[int, int, int], ...]


def installed_folder(models_dir: Path, model_id: str) -> Path:
    """`models_dir/<model_id>`, for a model id that is a plain folder name."""
    try:
        model_folder(models_dir, model_id)  # refuses separators, a leading dot, capitals
    except ProviderError:
        raise ProviderError(
            MODEL_NOT_AVAILABLE, f"{model_id!r} is not the name of an installed model"
        ) from None
    return models_dir / model_id


def installed_manifest(models_dir: Path, model_id: str, kind: ModelKind) -> ModelManifest:
    """The manifest of the installed `kind` model `model_id`, or MODEL_NOT_AVAILABLE saying
    which folder lacks what."""
    folder = installed_folder(models_dir, model_id)
    if not folder.is_dir():
        raise ProviderError(
            MODEL_NOT_AVAILABLE, f"no model {model_id!r} is installed (looked in {folder})"
        )
    try:
        manifest = load_manifest(folder)
    except ProviderError as exc:
        if exc.code != INVALID_ARGUMENT:
            raise
        raise ProviderError(
            MODEL_NOT_AVAILABLE, f"the model in {folder} cannot be used: {exc.message}"
        ) from exc
    if manifest.kind is not kind:
        raise ProviderError(
            MODEL_NOT_AVAILABLE, f"the model in {folder} is for {manifest.kind}, not {kind}"
        )
    for name in (manifest.model_file, manifest.tokenizer_file):
        if not (folder / name).is_file():
            raise ProviderError(MODEL_NOT_AVAILABLE, f"{folder / name} is missing")
    return manifest


def declared_languages(models_dir: Path, model_id: str) -> tuple[str, ...] | None:
    """The languages an installed model's manifest declares; None when `model_id` names no
    readable installed model."""
    try:
        folder = installed_folder(models_dir, model_id)
        return load_manifest(folder).languages
    except ProviderError:
        return None


@dataclass(frozen=True, slots=True)
class _Loaded:
    stamp: Stamp
    manifest: ModelManifest
    runtime: BiEncoder | CrossEncoder


_loaded: dict[Path, _Loaded] = {}
_folder_locks: dict[Path, threading.Lock] = {}
_locks_lock = threading.Lock()


def _stamp(folder: Path, manifest: ModelManifest) -> Stamp | None:
    """What the model's files look like now; None when one of them is gone."""
    found: list[tuple[int, int, int]] = []
    for name in (MANIFEST_FILE, manifest.model_file, manifest.tokenizer_file):
        try:
            info = (folder / name).stat()
        except OSError:
            return None
        found.append((info.st_ino, info.st_mtime_ns, info.st_size))
    return tuple(found)


def _folder_lock(folder: Path) -> threading.Lock:
    with _locks_lock:
        return _folder_locks.setdefault(folder, threading.Lock())


def _current(models_dir: Path, model_id: str, kind: ModelKind) -> _Loaded:
    """The shared loaded model `model_id` and the manifest it was loaded with; loaded on
    first use, and again when its files changed (the model reinstalled)."""
    folder = installed_folder(models_dir, model_id)
    # One lock per folder: loading a large model does not hold up the others.
    with _folder_lock(folder):
        loaded = _loaded.get(folder)
        fresh = loaded is not None and _stamp(folder, loaded.manifest) == loaded.stamp
        if loaded is not None and fresh and loaded.manifest.kind is kind:
            return loaded
        manifest = installed_manifest(models_dir, model_id, kind)
        stamp = _stamp(folder, manifest)
        if stamp is None:  # removed between the two looks
            raise ProviderError(MODEL_NOT_AVAILABLE, f"the model in {folder} was removed")
        loaded = _Loaded(stamp, manifest, _load(folder, manifest))
        _loaded[folder] = loaded
        log.info("loaded the %s model in %s", manifest.kind, folder)
        return loaded


def _load(folder: Path, manifest: ModelManifest) -> BiEncoder | CrossEncoder:
    model_file, tokenizer_file = folder / manifest.model_file, folder / manifest.tokenizer_file
    # Its placement (CPU or accelerator) is kept and listed under the name bases use.
    name = f"local:{folder.name}"
    if manifest.kind is ModelKind.RERANK:
        return CrossEncoder(model_file, tokenizer_file, max_tokens=manifest.max_tokens, name=name)
    assert manifest.dimensions is not None  # the manifest checks an embedding model has them
    return BiEncoder(
        model_file,
        tokenizer_file,
        max_tokens=manifest.max_tokens,
        dimensions=manifest.dimensions,
        pooling=manifest.pooling,
        normalize=manifest.normalize,
        name=name,
    )


def _require_runtime() -> None:
    absent = missing_runtime()
    if absent:
        raise ProviderError(
            MODEL_NOT_AVAILABLE, f"{', '.join(absent)} not installed; {INSTALL_HINT}"
        )


class _InstalledClient:
    """What both clients share: the folder, its manifest and the loaded model."""

    def __init__(self, models_dir: Path, model_id: str, kind: ModelKind, batch_size: int) -> None:
        if batch_size < 1:
            raise ProviderError(INVALID_ARGUMENT, "batch_size must be at least 1")
        _require_runtime()
        self.folder = installed_folder(models_dir, model_id)
        self.manifest = installed_manifest(models_dir, model_id, kind)
        self.model_id = f"local:{model_id}"
        self.batch_size = batch_size
        self._models_dir = models_dir
        self._name = model_id
        self._kind = kind

    def _model(self) -> _Loaded:
        return _current(self._models_dir, self._name, self._kind)

    def _failure(self, exc: Exception) -> ProviderError:
        # onnxruntime raises its own types; the item (or the search) needs a code.
        return ProviderError(
            EMBEDDING_FAILED,
            f"the local model in {self.folder} failed: {type(exc).__name__}: {exc}",
        )


class InstalledEmbedder(_InstalledClient):
    """The `Embedder` of an installed embedding model: passages (what is indexed) get the
    manifest's passage prefix, queries (`embed_query`) its query prefix."""

    def __init__(
        self, models_dir: Path, model_id: str, *, batch_size: int = DEFAULT_BATCH_SIZE
    ) -> None:
        super().__init__(models_dir, model_id, ModelKind.EMBEDDING, batch_size)
        assert self.manifest.dimensions is not None
        self.dimensions = self.manifest.dimensions

    def embed(self, texts: Sequence[str]) -> FloatMatrix:
        return self._embed(True, texts)

    def embed_query(self, texts: Sequence[str]) -> FloatMatrix:
        return self._embed(False, texts)

    def _embed(self, passages: bool, texts: Sequence[str]) -> FloatMatrix:
        loaded = self._model()
        assert isinstance(loaded.runtime, BiEncoder)
        manifest = loaded.manifest
        prefix = manifest.passage_prefix if passages else manifest.query_prefix
        try:
            return loaded.runtime.embed([prefix + t for t in texts], self.batch_size)
        except ProviderError:
            raise
        except Exception as exc:
            raise self._failure(exc) from exc

    def input_limit(self) -> InputLimit:
        """Exact, like the built-in model's: the manifest's input size, counted by the
        model's own tokenizer, less what the model adds to every passage (its special
        tokens and the passage prefix)."""
        manifest = installed_manifest(self._models_dir, self._name, self._kind)
        tokenizer = self.folder / manifest.tokenizer_file
        try:
            info = tokenizer.stat()
        except OSError:
            raise ProviderError(MODEL_NOT_AVAILABLE, f"{tokenizer} is missing") from None
        stamp = (info.st_ino, info.st_mtime_ns, info.st_size)
        added = added_tokens(str(tokenizer), stamp, manifest.passage_prefix)
        return InputLimit(manifest.max_tokens, added, str(tokenizer), "installed")

    def test_connection(self) -> str:
        matrix = self.embed(["Trove connection test"])
        return f"The installed model {self.manifest.name} works offline ({matrix.shape[1]} dimensions)."


class InstalledReranker(_InstalledClient):
    """The `Reranker` of an installed cross-encoder: a 0..1 score per passage."""

    def __init__(
        self, models_dir: Path, model_id: str, *, batch_size: int = DEFAULT_BATCH_SIZE
    ) -> None:
        super().__init__(models_dir, model_id, ModelKind.RERANK, batch_size)

    def rerank(self, query: str, documents: Sequence[str], top_n: int) -> list[tuple[int, float]]:
        if not documents or top_n < 1:
            return []
        model = self._model().runtime
        assert isinstance(model, CrossEncoder)
        try:
            scores = model.scores(query, list(documents), self.batch_size)
        except ProviderError:
            raise
        except Exception as exc:
            raise self._failure(exc) from exc
        order = sorted(range(len(scores)), key=lambda i: -scores[i])[:top_n]
        return [(i, float(scores[i])) for i in order]

    def test_connection(self) -> str:
        self.rerank("Trove connection test", ["a connection test"], 1)
        return f"The installed reranker {self.manifest.name} works offline."


@lru_cache(maxsize=16)
def added_tokens(tokenizer_file: str, stamp: tuple[int, int, int], prefix: str) -> int:
    """Tokens a model adds around one text (its special tokens) plus those of `prefix`;
    `stamp` (the file's inode, modification time and size) keys the cache to this version."""
    tokenizers: Any = importlib.import_module("tokenizers")
    tokenizer = tokenizers.Tokenizer.from_file(tokenizer_file)
    tokenizer.no_padding()
    tokenizer.no_truncation()
    specials = len(tokenizer.encode("", add_special_tokens=True).ids)
    prefix_tokens = len(tokenizer.encode(prefix, add_special_tokens=False).ids) if prefix else 0
    return specials + prefix_tokens
