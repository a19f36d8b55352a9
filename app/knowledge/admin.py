"""Base lifecycle: create (rolled back as a whole on any failure) and delete."""

from __future__ import annotations

import logging
import shutil

import numpy as np

from app.knowledge.catalog import new_id
from app.knowledge.jobs.context import EngineParts
from app.knowledge.provider_errors import provider_failure
from app.knowledge.types import (
    DEFAULT_CHUNK_OVERLAP,
    DEFAULT_CHUNK_SIZE,
    DEFAULT_DOCUMENT_COUNT,
    Base,
    ErrorCode,
    TroveError,
)
from app.providers.interfaces import ProviderError

log = logging.getLogger(__name__)

PROBE_TEXT = "Trove dimension probe"


def probe_dimensions(parts: EngineParts, model_id: str) -> int:
    """Embed a probe text once to learn the model's vector size."""
    try:
        vectors = np.asarray(parts.models.embedder(model_id).embed([PROBE_TEXT]), dtype=np.float32)
    except ProviderError as exc:
        raise provider_failure(exc, ErrorCode.EMBEDDING_FAILED) from exc
    if vectors.ndim != 2 or vectors.shape[0] != 1 or vectors.shape[1] < 1:
        raise TroveError(ErrorCode.EMBEDDING_FAILED, f"{model_id} returned no usable vector")
    return int(vectors.shape[1])


def check_reranker(parts: EngineParts, model_id: str) -> None:
    try:
        parts.models.reranker(model_id)
    except ProviderError as exc:
        raise provider_failure(exc, ErrorCode.MODEL_NOT_AVAILABLE) from exc


def create_base(
    parts: EngineParts,
    name: str,
    *,
    embedding_model: str | None = None,
    rerank_model: str | None = None,
    document_count: int = DEFAULT_DOCUMENT_COUNT,
    threshold: float | None = None,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    chunk_overlap: int = DEFAULT_CHUNK_OVERLAP,
) -> Base:
    name = name.strip()
    if not name:
        raise TroveError(ErrorCode.INVALID_ARGUMENT, "a knowledge base needs a name")
    if not 0 <= chunk_overlap < chunk_size:
        raise TroveError(
            ErrorCode.INVALID_ARGUMENT,
            "chunk overlap must be at least 0 and less than the chunk size",
        )
    if not 1 <= document_count <= 200:
        raise TroveError(ErrorCode.INVALID_ARGUMENT, "the document count must be between 1 and 200")
    if threshold is not None and not 0.0 <= threshold <= 1.0:
        raise TroveError(ErrorCode.INVALID_ARGUMENT, "the threshold must be between 0 and 1")
    # Slow provider checks happen before anything is written, so a failure leaves nothing.
    dimensions = probe_dimensions(parts, embedding_model) if embedding_model else None
    if rerank_model:
        check_reranker(parts, rerank_model)
    base_id = new_id()
    base_dir = parts.layout.base_dir(base_id)
    try:
        base = parts.catalog.create_base(
            name,
            base_id=base_id,
            embedding_model=embedding_model,
            dimensions=dimensions,
            rerank_model=rerank_model,
            document_count=document_count,
            threshold=threshold,
            chunk_size=chunk_size,
            chunk_overlap=chunk_overlap,
        )
        parts.layout.raw_dir(base_id).mkdir(parents=True, exist_ok=True)
        store = parts.stores.get(base_id)
        if dimensions is not None:
            store.ensure_vectors(dimensions)
    except BaseException:
        log.warning("creating base %r failed; rolling back", name)
        parts.stores.close(base_id)
        shutil.rmtree(base_dir, ignore_errors=True)
        parts.catalog.delete_base_row(base_id)
        raise
    return base


def delete_base(parts: EngineParts, base_id: str) -> None:
    """Remove a base: its index, its materials and its rows."""
    parts.catalog.require_base(base_id)
    with parts.mutex.lock(base_id):
        parts.stores.close(base_id)
        shutil.rmtree(parts.layout.base_dir(base_id), ignore_errors=True)
        parts.catalog.delete_base_row(base_id)
