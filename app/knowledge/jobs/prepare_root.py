"""prepare-root: expand a directory root into child file items and queue their indexing."""

from __future__ import annotations

import logging
from pathlib import Path

from app.knowledge.catalog import Job
from app.knowledge.ingestion import create_file_items
from app.knowledge.jobs.context import ItemFailure, JobContext
from app.knowledge.jobs.parents import settle_parent
from app.knowledge.pipeline.readers.registry import SUPPORTED_EXTENSIONS
from app.knowledge.pipeline.sources.directory import scan_directory
from app.knowledge.types import ErrorCode, ItemStatus, ItemType

log = logging.getLogger(__name__)


def run(ctx: JobContext, job: Job) -> None:
    parts = ctx.parts
    root = parts.catalog.get_item(job.item_id or "")
    if root is None or root.status is not ItemStatus.PREPARING:
        return
    if root.type is not ItemType.DIRECTORY:
        raise ItemFailure(
            ErrorCode.UNSUPPORTED_FILE_TYPE, f"{root.type} roots are not expanded yet"
        )
    folder = Path(root.source)
    if not folder.is_dir():
        raise ItemFailure(ErrorCode.SOURCE_MISSING, f"the folder {folder} no longer exists")
    payload = job.payload
    scan = scan_directory(
        folder,
        extensions=payload.get("extensions") or SUPPORTED_EXTENSIONS,
        include_globs=payload.get("include") or (),
        exclude_globs=payload.get("exclude") or (),
    )
    for problem in scan.errors:
        log.warning("while scanning %s: %s", folder, problem)
    prefix = root.relative_path or folder.name
    with parts.mutex.lock(root.base_id):
        current = parts.catalog.get_item(root.id)
        if current is None or current.status is not ItemStatus.PREPARING:
            return
        create_file_items(
            parts,
            root.base_id,
            [(p, f"{prefix}/{p.relative_to(folder).as_posix()}") for p in scan.files],
            parent_id=root.id,
        )
        if scan.files:
            parts.catalog.set_item_status(root.id, ItemStatus.PROCESSING)
        else:
            parts.catalog.set_item_status(root.id, ItemStatus.COMPLETED)
            settle_parent(parts.catalog, root.parent_id)
