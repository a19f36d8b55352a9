"""refresh-pages: the scheduled refresh of a URL item, or of every page of a sitemap item
(the sitemap itself is read again: pages it lists now are added, pages it dropped deleted).

Each page is fetched conditionally (If-None-Match / If-Modified-Since with the validators of
its last fetch). A 304, or a page whose text is the same as the base's snapshot of it, costs
nothing more; only a page whose text changed is indexed again (its vectors are reused for
the chunks whose text did not change).
"""

from __future__ import annotations

import logging

from app.knowledge import path_safety
from app.knowledge.catalog import Job
from app.knowledge.engine import EngineParts
from app.knowledge.imported_sources import is_imported
from app.knowledge.jobs.context import JobContext
from app.knowledge.jobs.errors import JobCancelled
from app.knowledge.jobs.index_documents import text_hash
from app.knowledge.jobs.item_creation import create_children
from app.knowledge.jobs.kinds import JobKind
from app.knowledge.jobs.parents import settle_parent
from app.knowledge.jobs.queue import mark_deleting, queue_index
from app.knowledge.material_paths import material_path, url_material_name
from app.knowledge.pipeline.readers.errors import ReaderError
from app.knowledge.pipeline.sources.sitemap import expand_sitemap
from app.knowledge.pipeline.sources.snapshot import page_document
from app.knowledge.pipeline.sources.web import FetchCancelled, FetchError, fetch_url
from app.knowledge.source_origin import address_policy
from app.knowledge.sync_types import PageValidators
from app.knowledge.types import SETTLED_STATUSES, CancelReason, Item, ItemStatus, ItemType

log = logging.getLogger(__name__)


def queue_refresh(parts: EngineParts, base_id: str, item_id: str) -> Job:
    return parts.catalog.enqueue_job(
        JobKind.REFRESH_PAGES,
        base_id,
        payload={"root": item_id},
        idempotency_key=f"{JobKind.REFRESH_PAGES}:{item_id}",
    )


def run(ctx: JobContext, job: Job) -> None:
    parts = ctx.parts
    item = parts.catalog.get_item(str(job.payload.get("root") or ""))
    if item is None or item.status not in SETTLED_STATUSES:
        return  # deleted, or being indexed now (that is a fresh fetch already)
    if is_imported(item):
        log.info("no refresh of %s: it came with an imported base", item.id)
        return  # an address someone else added is not fetched (imported_sources.py)
    if item.type is ItemType.SITEMAP:
        pages = _follow_sitemap(ctx, item)
    elif item.type is ItemType.URL:
        pages = [item]
    else:
        return
    changed: list[Item] = []
    for page in pages:
        ctx.raise_if_cancelled()
        if page.status in SETTLED_STATUSES and _changed(ctx, page):
            changed.append(page)
    if changed:
        _reindex(parts, item, changed)


def _follow_sitemap(ctx: JobContext, root: Item) -> list[Item]:
    """Add the pages the sitemap lists now and delete those it no longer lists; returns the
    pages that were there before and still are (the ones to check for changes)."""
    parts = ctx.parts
    try:
        expansion = expand_sitemap(
            root.source,
            limits=parts.sitemap_limits,
            cancelled=lambda: ctx.cancelled() is not None,
            addresses=address_policy(parts.catalog, root, parts.resolve_host),
        )
    except FetchCancelled:
        raise JobCancelled(ctx.cancelled() or CancelReason.SHUTDOWN) from None
    except FetchError as exc:
        log.info("refresh of sitemap %s: %s", root.source, exc.message)
        return parts.catalog.list_items(root.base_id, parent_id=root.id)
    # A cut-short expansion lists too few pages: it adds, but never deletes, from it.
    complete = not expansion.truncated and not expansion.errors
    listed = dict.fromkeys(expansion.page_urls)
    with parts.mutex.lock(root.base_id), parts.catalog.transaction():
        current = parts.catalog.get_item(root.id)
        if current is None or current.status not in SETTLED_STATUSES:
            return []
        pages = parts.catalog.list_items(root.base_id, parent_id=root.id)
        known = {p.source for p in pages}
        prefix = root.relative_path or "sitemap"
        fresh = [(url, url_material_name(url, prefix)) for url in listed if url not in known]
        gone = [p for p in pages if p.source not in listed and p.status is not ItemStatus.DELETING]
        if fresh:
            create_children(parts, root, ItemType.URL, fresh)
            parts.catalog.set_item_status(root.id, ItemStatus.PROCESSING)
        if gone and complete:
            mark_deleting(parts, gone)
            if not fresh:
                settle_parent(parts.catalog, root.id)
    return [p for p in pages if p.source in listed or not complete]


def _changed(ctx: JobContext, page: Item) -> bool:
    """Whether the page's text differs from the base's snapshot of it (one request)."""
    parts = ctx.parts
    known = parts.catalog.page_validators(page.id)
    headers: dict[str, str] = {}
    if known is not None and known.etag:
        headers["If-None-Match"] = known.etag
    if known is not None and known.last_modified:
        headers["If-Modified-Since"] = known.last_modified
    try:
        fetched = fetch_url(
            page.source,
            limits=parts.fetch_limits,
            cancelled=lambda: ctx.cancelled() is not None,
            validators=headers,
            addresses=address_policy(parts.catalog, page, parts.resolve_host),
        )
    except FetchError as exc:
        # A page that cannot be fetched now keeps what the base has; the next refresh
        # tries again. (A deliberate reindex reports the error on the item.)
        log.info("refresh of %s: %s", page.source, exc.message)
        return False
    if fetched.not_modified:
        return False
    try:
        text = page_document(fetched).text
    except ReaderError as exc:
        log.info("refresh of %s: %s", page.source, exc.message)
        return False
    digest = text_hash(text)
    parts.catalog.put_page_validators(
        page.id, PageValidators(fetched.etag, fetched.last_modified, digest)
    )
    return digest != _snapshot_hash(parts, page)


def _snapshot_hash(parts: EngineParts, page: Item) -> str | None:
    try:
        target = path_safety.resolve_below(
            parts.layout.raw_dir(page.base_id), material_path(page) or ""
        )
        return text_hash(target.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, path_safety.UnsafePathError):
        return None


def _reindex(parts: EngineParts, root: Item, pages: list[Item]) -> None:
    with parts.mutex.lock(root.base_id), parts.catalog.transaction():
        for page in pages:
            current = parts.catalog.get_item(page.id)
            if current is None or current.status not in SETTLED_STATUSES:
                continue
            parts.catalog.set_item_status(page.id, ItemStatus.PROCESSING)
            queue_index(parts, current, reacquire=True)
        if root.type is ItemType.SITEMAP:
            # The sitemap waits on its pages again, and settles when they are done.
            latest = parts.catalog.get_item(root.id)
            if latest is not None and latest.status in SETTLED_STATUSES:
                parts.catalog.set_item_status(root.id, ItemStatus.PROCESSING)
