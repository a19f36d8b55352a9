"""Import a `.trovebase` file into a base on a PostgreSQL server.

The archive is imported as it always is (verified, into a base on this computer), then
its items are copied into a new server base with the same settings, vectors and all (the
same embedding model: nothing is embedded again), and the local base is removed. Every
step is one that is already tested on its own; the price is the disk space of one more
copy of the base's files while it runs.
"""

from __future__ import annotations

from pathlib import Path

from app.knowledge import admin
from app.knowledge.engine import EngineParts
from app.knowledge.portable import importer, transfer
from app.knowledge.portable.archive import Cancelled, Progress
from app.knowledge.types import BaseSettings, ImportReport, IndexBackend


def import_to_server(
    parts: EngineParts,
    src: Path,
    dsn: str,
    *,
    name: str | None = None,
    progress: Progress | None = None,
    cancelled: Cancelled | None = None,
) -> ImportReport:
    report = importer.import_base(parts, src, name=name, progress=progress, cancelled=cancelled)
    local = report.base
    try:
        settings: BaseSettings = {
            "embedding_model": local.embedding_model,
            "rerank_model": local.rerank_model,
            "document_count": local.document_count,
            "threshold": local.threshold,
            "chunk_size": local.chunk_size,
            "chunk_overlap": local.chunk_overlap,
            "ocr_enabled": local.ocr.enabled,
            "ocr_languages": local.ocr.languages,
            "ocr_max_pages": local.ocr.max_pages,
            "backend": IndexBackend.POSTGRES,
            "dsn": dsn,
            "check_models": False,
        }
        target = admin.create_base(parts, local.name, settings, dimensions=local.dimensions)
        try:
            roots = [i.id for i in parts.catalog.list_items(local.id, roots_only=True)]
            if roots:
                transfer.copy_items(parts, local.id, roots, target.id, cancelled=cancelled)
        except BaseException:
            admin.delete_base(parts, target.id)
            raise
    finally:
        admin.delete_base(parts, local.id)
    return ImportReport(
        base=parts.catalog.require_base(target.id),
        items=report.items,
        files=report.files,
        chunks=report.chunks,
        vectors=report.vectors,
        model_available=report.model_available,
    )
