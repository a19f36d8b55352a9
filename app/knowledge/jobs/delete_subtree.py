"""delete-subtree: stop work on the items -> delete vectors and chunks -> delete files -> rows.

Items are already marked `deleting` (so running jobs stop at their next step and never
write). Every step is idempotent, so a crash midway is finished by running the job again
(recovery policy: retry).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from pathlib import Path

from app.knowledge import path_safety
from app.knowledge.catalog import Job
from app.knowledge.jobs.context import JobContext
from app.knowledge.jobs.index_documents import remove_temp_files
from app.knowledge.jobs.parents import settle_parent
from app.knowledge.material_paths import CONTAINER_TYPES, stored_files
from app.knowledge.ocr import tasks as ocr_tasks
from app.knowledge.types import Item, ItemStatus

log = logging.getLogger(__name__)


def roots_of(job: Job) -> list[str]:
    roots = job.payload.get("roots")
    if isinstance(roots, list):
        return [str(r) for r in roots]
    return [job.item_id] if job.item_id else []


def run(ctx: JobContext, job: Job) -> None:
    for root_id in roots_of(job):
        ctx.raise_if_cancelled()
        delete_subtree(ctx, job.base_id, root_id)


def delete_subtree(ctx: JobContext, base_id: str, root_id: str) -> None:
    parts = ctx.parts
    root = parts.catalog.get_item(root_id)
    if root is None:
        return
    if root.status is not ItemStatus.DELETING:
        log.warning("delete job for %s skipped: the item is %s, not deleting", root_id, root.status)
        return
    subtree = [root, *parts.catalog.descendants(root.id)]
    store = parts.stores.get_if_exists(base_id)
    raw = parts.layout.raw_dir(base_id)
    for item in subtree:
        # Text recognition still running for the item stops now, not at its next poll.
        ocr_tasks.discard(ocr_tasks.work_dir(parts.layout, base_id, item.id))
        if store is not None:
            store.delete_material(item.id)
        _delete_files(raw, item)
    with parts.mutex.lock(base_id), parts.catalog.transaction():
        # Deepest first, so no row ever points at a removed parent.
        for item in sorted(subtree, key=_depth_key(subtree), reverse=True):
            parts.catalog.delete_item_row(item.id)
        settle_parent(parts.catalog, root.parent_id)
    if root.type in CONTAINER_TYPES and root.relative_path:
        _remove_empty_dirs(raw, root.relative_path)  # a folder root with no files left


def _depth_key(subtree: list[Item]) -> Callable[[Item], int]:
    parents = {i.id: i.parent_id for i in subtree}

    def depth(item: Item) -> int:
        d, current = 0, item.parent_id
        while current in parents:
            d += 1
            current = parents[current]
        return d

    return depth


def _delete_files(raw: Path, item: Item) -> None:
    for rel in stored_files(item):
        try:
            path = path_safety.resolve_below(raw, rel)
        except path_safety.UnsafePathError:
            log.error("item %s has an unsafe material path %r; not deleting it", item.id, rel)
            continue
        path.unlink(missing_ok=True)
    # Leftovers of writes a crash cut short; a write still in flight for the item fails
    # harmlessly (it is on its way out).
    remove_temp_files(raw, item)
    for rel in stored_files(item):
        _remove_empty_dirs(raw, str(Path(rel).parent) if "/" in rel else "")


def _remove_empty_dirs(raw: Path, rel_dir: str) -> None:
    """Remove now-empty folders from rel_dir up to (not including) raw/."""
    if not rel_dir or rel_dir == ".":
        return
    try:
        current = path_safety.resolve_below(raw, rel_dir)
    except path_safety.UnsafePathError:
        return
    top = raw.resolve()
    while current != top and top in current.parents:
        try:
            os.rmdir(current)
        except OSError:
            return  # not empty (or already gone): stop climbing
        current = current.parent
