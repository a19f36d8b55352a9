"""Base lifecycle: create (rolled back as a whole on any failure) and delete."""

from __future__ import annotations

import logging
import shutil
import time
from dataclasses import replace
from typing import Any

import numpy as np

from app.knowledge import server_index, vector_stage
from app.knowledge.base_names import checked_name
from app.knowledge.catalog import new_id
from app.knowledge.engine import EngineParts
from app.knowledge.ingestion import check_settled, start_again
from app.knowledge.jobs.parents import settle_parent
from app.knowledge.material_paths import CONTAINER_TYPES, IN_PLACE_WHY, in_place
from app.knowledge.ocr import tasks as ocr_tasks
from app.knowledge.ocr.settings import checked_ocr_settings
from app.knowledge.pipeline.store.base_index import BaseIndex
from app.knowledge.portable.export import base_settings
from app.knowledge.portable.importer import base_from_settings, free_name
from app.knowledge.provider_errors import provider_failure
from app.knowledge.source_check import SourceCheck, check_copy
from app.knowledge.types import (
    DEFAULT_CHUNK_OVERLAP,
    DEFAULT_CHUNK_SIZE,
    DEFAULT_DOCUMENT_COUNT,
    AmbiguousBaseError,
    Base,
    BaseChanges,
    BaseSettings,
    BaseStatus,
    ErrorCode,
    IndexBackend,
    Item,
    ItemStatus,
    OcrSettings,
    RebuildReport,
    TroveError,
)
from app.providers.interfaces import ProviderError

log = logging.getLogger(__name__)

PROBE_TEXT = "Trove dimension probe"


# Creating a base waits on this probe like a connection test: one more try after a passing
# failure (indexing clients make one attempt and leave retries to the job queue).
PROBE_TRIES = 2
PROBE_PAUSE_MAX_S = 5.0


def probe_dimensions(parts: EngineParts, model_id: str) -> int:
    """Embed a probe text to learn the model's vector size."""
    vectors = np.asarray(_probe(parts, model_id), dtype=np.float32)
    if vectors.ndim != 2 or vectors.shape[0] != 1 or vectors.shape[1] < 1:
        raise TroveError(ErrorCode.EMBEDDING_FAILED, f"{model_id} returned no usable vector")
    return int(vectors.shape[1])


def _probe(parts: EngineParts, model_id: str) -> object:
    for attempt in range(1, PROBE_TRIES + 1):
        try:
            return parts.models.embedder(model_id).embed([PROBE_TEXT])
        except ProviderError as exc:
            if not exc.retryable or attempt == PROBE_TRIES:
                raise provider_failure(exc, ErrorCode.EMBEDDING_FAILED) from exc
            time.sleep(min(exc.retry_after or 0.5, PROBE_PAUSE_MAX_S))
    raise AssertionError("unreachable")


def check_reranker(parts: EngineParts, model_id: str) -> None:
    try:
        parts.models.reranker(model_id)
    except ProviderError as exc:
        raise provider_failure(exc, ErrorCode.MODEL_NOT_AVAILABLE) from exc


def _check_settings(
    document_count: int, threshold: float | None, chunk_size: int, chunk_overlap: int
) -> None:
    if not 0 <= chunk_overlap < chunk_size:
        raise TroveError(
            ErrorCode.INVALID_ARGUMENT,
            "chunk overlap must be at least 0 and less than the chunk size",
        )
    if not 1 <= document_count <= 200:
        raise TroveError(ErrorCode.INVALID_ARGUMENT, "the document count must be between 1 and 200")
    if threshold is not None and not 0.0 <= threshold <= 1.0:
        raise TroveError(ErrorCode.INVALID_ARGUMENT, "the threshold must be between 0 and 1")


def create_base(
    parts: EngineParts, name: str, settings: BaseSettings, *, dimensions: int | None = None
) -> Base:
    """A new base. `dimensions` given (a base made from another's vectors) skips the probe
    of the embedding model, which need not be configured here."""
    name = checked_name(name)
    embedding_model = settings.get("embedding_model")
    rerank_model = settings.get("rerank_model")
    document_count = settings.get("document_count", DEFAULT_DOCUMENT_COUNT)
    threshold = settings.get("threshold")
    chunk_size = settings.get("chunk_size", DEFAULT_CHUNK_SIZE)
    chunk_overlap = settings.get("chunk_overlap", DEFAULT_CHUNK_OVERLAP)
    _check_settings(document_count, threshold, chunk_size, chunk_overlap)
    defaults = OcrSettings()
    ocr = checked_ocr_settings(
        OcrSettings(
            settings.get("ocr_enabled"),
            tuple(settings.get("ocr_languages", defaults.languages)),
            settings.get("ocr_max_pages", defaults.max_pages),
        )
    )
    backend = IndexBackend(settings.get("backend", IndexBackend.SQLITE))
    dsn, password = _server_address(backend, settings.get("dsn"))
    if dsn is not None:
        server_index.check_server(server_index.with_password(dsn, password))
    # Slow provider checks happen before anything is written, so a failure leaves nothing.
    if dimensions is None and embedding_model:
        dimensions = probe_dimensions(parts, embedding_model)
    if rerank_model and settings.get("check_models", True):
        check_reranker(parts, rerank_model)
    base_id = new_id()
    base_dir = parts.layout.base_dir(base_id)
    try:
        server_index.remember_password(base_id, password)
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
            ocr=ocr,
            backend=backend,
            dsn=dsn,
        )
        parts.layout.raw_dir(base_id).mkdir(parents=True, exist_ok=True)
        store = open_store(parts, base)
        if dimensions is not None:
            store.ensure_vectors(dimensions)
        _publish_settings(parts, base)
    except BaseException:
        log.warning("creating base %r failed; rolling back", name)
        _drop_quietly(parts, base_id)
        shutil.rmtree(base_dir, ignore_errors=True)
        parts.catalog.delete_base_row(base_id)
        server_index.forget_password(base_id)
        vector_stage.forget(parts.catalog, base_id)
        raise
    return base


def _publish_settings(parts: EngineParts, base: Base) -> None:
    """A base on a server carries its settings there, for desktops that attach it."""
    server = parts.catalog.server_of(base.id)
    if server is not None:
        server.put_base_settings(base_settings(base) | {"id": base.id})


def attach_base(parts: EngineParts, dsn: str, base_id: str | None) -> Base:
    """Use on this desktop a base another desktop created on a PostgreSQL server: its
    settings come from the server, its items, jobs and index stay there."""
    address, password = server_index.split_password(dsn)
    found = attachable_bases(server_index.with_password(address, password))
    if base_id is not None:
        found = [s for s in found if s.get("id") == base_id]
    if not found:
        where = server_index.address(address)
        wanted = f"knowledge base {base_id}" if base_id else "no Trove knowledge base"
        raise TroveError(ErrorCode.BASE_NOT_FOUND, f"{wanted} on {where}")
    if len(found) > 1:
        choices = [(str(s.get("id")), str(s.get("name"))) for s in found]
        names = ", ".join(f"{name} ({base_id})" for base_id, name in choices)
        raise AmbiguousBaseError(
            f"the server holds several bases; choose one with --base: {names}", choices
        )
    settings = found[0]
    shared_id = str(settings["id"])
    if parts.catalog.get_base(shared_id) is not None:
        raise TroveError(
            ErrorCode.INVALID_ARGUMENT, f"knowledge base {shared_id} is already on this desktop"
        )
    base = replace(
        base_from_settings(settings, shared_id),
        backend=IndexBackend.POSTGRES,
        dsn=address,
    )
    try:
        server_index.remember_password(shared_id, password)
        with parts.catalog.transaction():
            taken = {b.name for b in parts.catalog.list_bases()}
            base = replace(base, name=free_name(taken, base.name))
            parts.catalog.insert_base_row(base)
        parts.layout.raw_dir(shared_id).mkdir(parents=True, exist_ok=True)
        open_store(parts, base)
    except BaseException:
        parts.stores.close(shared_id)
        parts.catalog.forget_server(shared_id)
        parts.catalog.delete_base_row(shared_id)
        shutil.rmtree(parts.layout.base_dir(shared_id), ignore_errors=True)
        server_index.forget_password(shared_id)
        raise
    return parts.catalog.require_base(shared_id)


def attachable_bases(dsn: str) -> list[dict[str, Any]]:
    """The settings of every Trove base on the server at `dsn`."""
    from app.knowledge.catalog.server import list_server_bases

    try:
        return list_server_bases(dsn)
    except TroveError:
        raise
    except Exception as exc:
        where = server_index.address(dsn)
        raise TroveError(
            ErrorCode.SERVER_UNAVAILABLE,
            f"the PostgreSQL server at {where} cannot be used: {server_index.scrubbed(exc)}",
            {"server": where},
        ) from None


def _server_address(backend: IndexBackend, dsn: str | None) -> tuple[str | None, str | None]:
    """(the connection string to keep, its password for the keychain) of a new base."""
    if backend is IndexBackend.SQLITE:
        if dsn:
            raise TroveError(
                ErrorCode.INVALID_ARGUMENT, "a server address is only for a PostgreSQL base"
            )
        return None, None
    if not dsn or not dsn.strip():
        raise TroveError(
            ErrorCode.INVALID_ARGUMENT, "a PostgreSQL base needs the server's address (--dsn)"
        )
    return server_index.split_password(dsn)


def open_store(parts: EngineParts, base: Base) -> BaseIndex:
    """The base's store; a server that cannot be reached is a clear error naming it."""
    try:
        return parts.stores.get(base.id)
    except TroveError:
        raise
    except Exception as exc:
        if base.backend is not IndexBackend.POSTGRES:
            raise
        raise server_unavailable(base, exc) from None


def server_unavailable(base: Base, exc: BaseException) -> TroveError:
    where = server_index.address(base.dsn) if base.dsn else "its server"
    return TroveError(
        ErrorCode.SERVER_UNAVAILABLE,
        f"the PostgreSQL server of knowledge base {base.name!r} ({where}) cannot be used: "
        f"{server_index.scrubbed(exc)}",
        {"server": where},
    )


def _drop_quietly(parts: EngineParts, base_id: str) -> None:
    try:
        parts.stores.drop(base_id)
    except Exception:  # the server may be the reason creating failed
        log.warning("could not remove the index of base %s", base_id, exc_info=True)


def update_base(parts: EngineParts, base_id: str, changes: BaseChanges) -> Base:
    """Rename a base or change its retrieval settings; chunking changes apply to new content."""
    base = parts.catalog.require_base(base_id)
    merged: dict[str, Any] = {
        "name": checked_name(changes["name"]) if "name" in changes else base.name,
        "rerank_model": (changes["rerank_model"] or None)
        if "rerank_model" in changes
        else base.rerank_model,
        "document_count": changes.get("document_count", base.document_count),
        "threshold": changes.get("threshold", base.threshold),
        "chunk_size": changes.get("chunk_size", base.chunk_size),
        "chunk_overlap": changes.get("chunk_overlap", base.chunk_overlap),
    }
    _check_settings(
        merged["document_count"], merged["threshold"], merged["chunk_size"], merged["chunk_overlap"]
    )
    if merged["rerank_model"] and merged["rerank_model"] != base.rerank_model:
        check_reranker(parts, merged["rerank_model"])
    changed = {k: v for k, v in merged.items() if getattr(base, k) != v}
    changed.update(_ocr_changes(base.ocr, changes))
    return parts.catalog.update_base(base_id, **changed)


def _ocr_changes(current: OcrSettings, changes: BaseChanges) -> dict[str, Any]:
    """The OCR columns to write; new settings apply to documents indexed from now on."""
    wanted = checked_ocr_settings(
        OcrSettings(
            changes.get("ocr_enabled", current.enabled),
            tuple(changes.get("ocr_languages", current.languages)),
            changes.get("ocr_max_pages", current.max_pages),
        )
    )
    columns: dict[str, Any] = {}
    if wanted.enabled != current.enabled:
        columns["ocr_enabled"] = None if wanted.enabled is None else int(wanted.enabled)
    if wanted.languages != current.languages:
        columns["ocr_languages"] = ",".join(wanted.languages)
    if wanted.max_pages != current.max_pages:
        columns["ocr_max_pages"] = wanted.max_pages
    return columns


def delete_base(parts: EngineParts, base_id: str) -> None:
    """Remove a base: its index, its materials and its rows."""
    parts.catalog.require_base(base_id)
    with parts.mutex.lock(base_id):
        ocr_tasks.discard_base(parts.layout, base_id)  # its workers would write into nothing
        parts.catalog.forget_server(base_id)
        parts.stores.drop(base_id)
        shutil.rmtree(parts.layout.base_dir(base_id), ignore_errors=True)
        parts.catalog.delete_base_row(base_id)
        server_index.forget_password(base_id)
        vector_stage.forget(parts.catalog, base_id)


def detach_base(parts: EngineParts, base_id: str) -> None:
    """Stop using a server base on this desktop; it stays on the server for the others
    (its items, jobs and index), and this desktop's copies of its files go."""
    base = parts.catalog.require_base(base_id)
    if base.backend is not IndexBackend.POSTGRES:
        raise TroveError(
            ErrorCode.INVALID_ARGUMENT,
            f"knowledge base {base.name!r} is on this computer; delete it instead",
        )
    with parts.mutex.lock(base_id):
        parts.catalog.forget_server(base_id)
        parts.stores.close(base_id)
        shutil.rmtree(parts.layout.base_dir(base_id), ignore_errors=True)
        parts.catalog.delete_base_row(base_id)
        server_index.forget_password(base_id)
        vector_stage.forget(parts.catalog, base_id)


def _missing_message(item: Item) -> str:
    if in_place(item):
        return f"the original {item.source} is gone ({IN_PLACE_WHY}); add it again"
    return "the base's own copy of this source is missing; add it again"


def _refuse_unverifiable(states: dict[str, SourceCheck]) -> None:
    """Restore starts from an empty index, so a copy it cannot check would be lost with the
    old index: refuse before anything changes, rather than drop what may still exist."""
    unverifiable = sum(1 for s in states.values() if s is SourceCheck.UNVERIFIABLE)
    if unverifiable:
        raise TroveError(
            ErrorCode.READ_FAILED,
            f"{unverifiable} of the base's own copies under raw/ cannot be checked; "
            "nothing was changed: make raw/ readable, then restore again",
        )


def rebuild_from_copies(
    parts: EngineParts,
    base_id: str,
    embedding_model: str | None,
    *,
    require_no_model: bool = False,
) -> RebuildReport:
    """Re-index every item from the base's own copies with `embedding_model`.

    Used by restore (any model, also after the originals are gone) and by backfill (a
    BM25-only base gains a model). The model is written to the base only after the
    admission checks pass, so a rebuild that cannot run changes nothing.
    """
    base = parts.catalog.require_base(base_id)
    if require_no_model and base.embedding_model:
        raise TroveError(
            ErrorCode.INVALID_ARGUMENT,
            f"{base.name!r} already uses {base.embedding_model}; restore it to switch models",
        )
    dimensions = probe_dimensions(parts, embedding_model) if embedding_model else None
    report = RebuildReport()
    with parts.mutex.lock(base_id):
        roots = [
            i
            for i in parts.catalog.list_items(base_id, roots_only=True)
            if i.status is not ItemStatus.DELETING
        ]
        check_settled(parts.catalog, roots, "rebuild the base")
        leaves = [
            i
            for i in parts.catalog.list_items(base_id)
            if i.type not in CONTAINER_TYPES and i.status is not ItemStatus.DELETING
        ]
        states = {i.id: check_copy(parts.layout.raw_dir(i.base_id), i) for i in leaves}
        _refuse_unverifiable(states)
        # A fresh file, not the old one emptied: the old one may be damaged beyond writing.
        parts.stores.replace_with_fresh(base_id, dimensions)
        parts.catalog.update_base(base_id, embedding_model=embedding_model, dimensions=dimensions)
        parts.catalog.set_base_status(base_id, BaseStatus.COMPLETED)
        with parts.catalog.transaction():
            for item in leaves:
                state = states[item.id]
                if state is SourceCheck.MISSING:
                    report.skipped_missing_source_count += 1
                    report.missing_sources.append(item.source)
                    if item.status is not ItemStatus.FAILED:
                        parts.catalog.set_item_status(item.id, ItemStatus.PROCESSING)
                        parts.catalog.set_item_status(
                            item.id,
                            ItemStatus.FAILED,
                            error_code=ErrorCode.SOURCE_MISSING,
                            error_message=_missing_message(item),
                        )
                    continue
                start_again(parts, item, reacquire=False)
                report.restored += 1
            for root in roots:
                if root.type in CONTAINER_TYPES:
                    settle_parent(parts.catalog, root.id)
    return report
