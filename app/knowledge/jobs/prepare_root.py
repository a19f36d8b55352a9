"""prepare-root: expand a directory or sitemap root into child items and queue their indexing.

Run again on a root that already has children (reindex), it reconciles: children whose
source is still there are indexed again, vanished ones are deleted, new ones are added. A
root that came with an imported base is not read: its children are indexed again from their
copies, as they are.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

from app.knowledge.catalog import Job
from app.knowledge.folder_scan import data_fence, follow_links, record_skipped
from app.knowledge.imported_sources import is_imported
from app.knowledge.jobs.context import JobContext
from app.knowledge.jobs.errors import ItemFailure, JobCancelled, RetryableFailure
from app.knowledge.jobs.item_creation import create_children
from app.knowledge.jobs.parents import settle_parent
from app.knowledge.jobs.queue import mark_deleting, queue_index
from app.knowledge.material_paths import url_material_name
from app.knowledge.pipeline.readers.registry import SUPPORTED_EXTENSIONS
from app.knowledge.pipeline.sources.directory import DirectoryScan, scan_directory
from app.knowledge.pipeline.sources.ignore_rules import IgnoreRules
from app.knowledge.pipeline.sources.sitemap import expand_sitemap
from app.knowledge.pipeline.sources.web import FetchCancelled, FetchError
from app.knowledge.source_origin import address_policy
from app.knowledge.types import (
    SETTLED_STATUSES,
    CancelReason,
    ErrorCode,
    Item,
    ItemStatus,
    ItemType,
)

log = logging.getLogger(__name__)


def run(ctx: JobContext, job: Job) -> None:
    root = ctx.parts.catalog.get_item(job.item_id or "")
    if root is None or root.status is not ItemStatus.PREPARING:
        return
    expand(ctx, root, job.payload)


def expand(ctx: JobContext, root: Item, options: dict[str, object]) -> None:
    parts = ctx.parts
    scan: DirectoryScan | None = None
    ignored: Callable[[str], bool] | None = None
    if is_imported(root):
        _reindex_copies(ctx, root)
        return
    if root.type is ItemType.DIRECTORY:
        wanted, scan = _directory_children(ctx, root, options)
        ignored = _ignore_rule(ctx, root)
        if ignored is not None:
            rule = ignored
            folder = Path(root.source)
            wanted = [(s, d) for s, d in wanted if not rule(Path(s).relative_to(folder).as_posix())]
        child_type = ItemType.FILE
    elif root.type is ItemType.SITEMAP:
        wanted = _sitemap_children(ctx, root)
        child_type = ItemType.URL
    else:
        raise ItemFailure(ErrorCode.UNSUPPORTED_FILE_TYPE, f"{root.type} items are not expanded")
    ctx.raise_if_cancelled(root.id)
    # One write transaction: another process must not see (and claim) the children before
    # the root is marked processing, or its settle of the root races this write.
    with parts.mutex.lock(root.base_id), parts.catalog.transaction():
        current = parts.catalog.get_item(root.id)
        if current is None or current.status is not ItemStatus.PREPARING:
            return
        if scan is not None:
            record_skipped(parts.catalog, current, scan, ignored)
        existing = {c.source: c for c in parts.catalog.list_items(root.base_id, parent_id=root.id)}
        fresh: list[tuple[str, str]] = []
        for source, desired in wanted:
            child = existing.pop(source, None)
            if child is None:
                fresh.append((source, desired))
            elif child.status in SETTLED_STATUSES:
                parts.catalog.set_item_status(child.id, ItemStatus.PROCESSING)
                queue_index(parts, child, reacquire=True)
        create_children(parts, root, child_type, fresh)
        gone = [c for c in existing.values() if c.status is not ItemStatus.DELETING]
        if gone:
            mark_deleting(parts, gone)
        if wanted:
            parts.catalog.set_item_status(root.id, ItemStatus.PROCESSING)
        else:
            parts.catalog.set_item_status(root.id, ItemStatus.COMPLETED)
            settle_parent(parts.catalog, root.parent_id)


def _reindex_copies(ctx: JobContext, root: Item) -> None:
    """An imported folder or sitemap: its folder or sitemap is another computer's, so it is
    not read; its documents are indexed again from their copies, and none is added or
    removed (imported_sources.py)."""
    parts = ctx.parts
    with parts.mutex.lock(root.base_id), parts.catalog.transaction():
        current = parts.catalog.get_item(root.id)
        if current is None or current.status is not ItemStatus.PREPARING:
            return
        children = parts.catalog.list_items(root.base_id, parent_id=root.id)
        again = [c for c in children if c.status in SETTLED_STATUSES]
        for child in again:
            parts.catalog.set_item_status(child.id, ItemStatus.PROCESSING)
            queue_index(parts, child, reacquire=False)
        if again:
            parts.catalog.set_item_status(root.id, ItemStatus.PROCESSING)
        else:
            parts.catalog.set_item_status(root.id, ItemStatus.COMPLETED)
            settle_parent(parts.catalog, root.parent_id)


def _directory_children(
    ctx: JobContext, root: Item, options: dict[str, object]
) -> tuple[list[tuple[str, str]], DirectoryScan]:
    folder = Path(root.source)
    if not folder.is_dir():
        raise ItemFailure(ErrorCode.SOURCE_MISSING, f"the folder {folder} no longer exists")
    scan = scan_directory(
        folder,
        extensions=_strings(options.get("extensions")) or SUPPORTED_EXTENSIONS,
        include_globs=_strings(options.get("include")),
        exclude_globs=_strings(options.get("exclude")),
        follow_links=follow_links(options),
        fenced=data_fence(ctx.parts.layout),
    )
    for problem in scan.errors:
        log.warning("while scanning %s: %s", folder, problem)
    prefix = root.relative_path or folder.name
    wanted = [(str(p), f"{prefix}/{p.relative_to(folder).as_posix()}") for p in scan.files]
    return wanted, scan


def _ignore_rule(ctx: JobContext, root: Item) -> Callable[[str], bool] | None:
    """A linked folder's ignore rules hold from its first expansion on (sync_folder.py)."""
    link = ctx.parts.catalog.get_link(root.id)
    if link is None:
        return None
    return IgnoreRules.for_folder(Path(root.source), link.ignore_patterns).ignored


def _sitemap_children(ctx: JobContext, root: Item) -> list[tuple[str, str]]:
    try:
        expansion = expand_sitemap(
            root.source,
            limits=ctx.parts.sitemap_limits,
            cancelled=lambda: ctx.cancelled() is not None,
            addresses=address_policy(ctx.parts.catalog, root, ctx.parts.resolve_host),
        )
    except FetchCancelled:
        raise JobCancelled(ctx.cancelled() or CancelReason.SHUTDOWN) from None
    except FetchError as exc:
        if exc.retryable:
            raise RetryableFailure(exc.code, exc.message, exc.retry_after) from exc
        raise ItemFailure(exc.code, exc.message) from exc
    for problem in expansion.errors:
        log.warning("while reading sitemap %s: %s", root.source, problem)
    if expansion.truncated:
        log.warning("sitemap %s has more pages than the cap; the rest were skipped", root.source)
    prefix = root.relative_path or "sitemap"
    return [(url, url_material_name(url, prefix)) for url in expansion.page_urls]


def _strings(value: object) -> list[str]:
    return [str(v) for v in value] if isinstance(value, list | tuple) else []
