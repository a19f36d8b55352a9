"""Linked folders: folder items kept in sync with their source folders.

Linking marks a folder root; a sync (jobs/sync_folder.py) runs on the durable job queue, so
the window, `trove mcp` and `trove sync` may all ask at once and one sync runs. Watching
(folder_watch.py) only asks for syncs.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from app.knowledge import imported_sources, ingestion
from app.knowledge.engine import EngineParts
from app.knowledge.imported_sources import is_imported
from app.knowledge.jobs.kinds import JobKind
from app.knowledge.jobs.refresh_pages import queue_refresh
from app.knowledge.jobs.sync_folder import lease_key, queue_sync, sync_key
from app.knowledge.material_paths import IN_PLACE_KEY
from app.knowledge.sync_types import LinkedFolder, SyncChanges, SyncState
from app.knowledge.types import (
    AddReport,
    ErrorCode,
    IndexBackend,
    Item,
    ItemStatus,
    ItemType,
    TroveError,
)

# A scheduled refresh more often than this would hammer the site for little.
MIN_REFRESH_S = 60.0


def _require_on_this_computer(parts: EngineParts, base_id: str, what: str) -> None:
    """Linked folders and scheduled refreshes are this desktop's own (its folders, its
    timers) and keep their state in this desktop's catalog: not on a shared server base."""
    base = parts.catalog.require_base(base_id)
    if base.backend is not IndexBackend.SQLITE:
        raise TroveError(
            ErrorCode.INVALID_ARGUMENT,
            f"{what} is not available on a knowledge base on a PostgreSQL server yet; add "
            "the folder or page (without keeping it in sync), or use a base on this computer",
        )


def _require_linkable(parts: EngineParts, base_id: str, item_id: str) -> Item:
    _require_on_this_computer(parts, base_id, "keeping a folder in sync")
    item = parts.catalog.require_item(item_id)
    if item.base_id != base_id:
        raise TroveError(ErrorCode.ITEM_NOT_FOUND, f"no item {item_id!r} in this knowledge base")
    if item.type is not ItemType.DIRECTORY or item.parent_id is not None:
        raise TroveError(
            ErrorCode.INVALID_ARGUMENT,
            "only a folder added to the base can be linked (kept in sync)",
        )
    if item.status is ItemStatus.DELETING:
        raise TroveError(ErrorCode.INVALID_ARGUMENT, "this folder is being deleted")
    if is_imported(item):
        raise imported_sources.refuse(item, "link")
    return item


def link(
    parts: EngineParts, base_id: str, item_id: str, ignore_patterns: Sequence[str] = ()
) -> LinkedFolder:
    """Keep a folder item in sync from now on, and sync it once."""
    _require_linkable(parts, base_id, item_id)
    parts.catalog.link_folder(item_id, base_id, ignore_patterns)
    queue_sync(parts, base_id, item_id)
    link_row = parts.catalog.get_link(item_id)
    assert link_row is not None
    return link_row


def unlink(parts: EngineParts, base_id: str, item_id: str) -> None:
    """Stop syncing a folder; its items stay as they are."""
    item = parts.catalog.require_item(item_id)
    if item.base_id != base_id:
        raise TroveError(ErrorCode.ITEM_NOT_FOUND, f"no item {item_id!r} in this knowledge base")
    parts.catalog.unlink_folder(item_id)


def add_linked(
    parts: EngineParts,
    base_id: str,
    folders: Sequence[str | Path],
    ignore_patterns: Sequence[str] = (),
    folder_options: dict[str, object] | None = None,
) -> AddReport:
    """Add folders as linked ones, their files indexed in place; a folder the base has
    already is linked as it is (its files keep their copies)."""
    _require_on_this_computer(parts, base_id, "keeping a folder in sync")
    for folder in folders:
        if not Path(folder).expanduser().is_dir():
            raise TroveError(
                ErrorCode.INVALID_ARGUMENT, f"{folder} is not a folder; only folders link"
            )
    # Their files are indexed in place: no copy of a library under raw/ (material_paths.py).
    options = {**(folder_options or {}), IN_PLACE_KEY: True}
    report = ingestion.add_paths(parts, base_id, folders, folder_options=options)
    roots = [i for i in report.added if i.type is ItemType.DIRECTORY]
    for source, _reason in report.skipped:
        roots.extend(
            i
            for i in parts.catalog.find_items_by_source(base_id, source)
            if i.type is ItemType.DIRECTORY and i.parent_id is None
        )
    for root in roots:
        link(parts, base_id, root.id, ignore_patterns)
    return report


def request_sync(
    parts: EngineParts, base_id: str, item_ids: Sequence[str] | None = None
) -> list[str]:
    """Queue a sync of the named linked folders (all of the base's when None)."""
    links = parts.catalog.list_links(base_id)
    if item_ids is not None:
        linked = {link_row.item_id for link_row in links}
        for item_id in item_ids:
            if item_id not in linked:
                raise TroveError(
                    ErrorCode.INVALID_ARGUMENT,
                    f"item {item_id!r} is not a linked folder (link it with trove item link)",
                )
        wanted = set(item_ids)
        links = [link_row for link_row in links if link_row.item_id in wanted]
    for link_row in links:
        queue_sync(parts, base_id, link_row.item_id)
    return [link_row.item_id for link_row in links]


def sync_states(
    parts: EngineParts, base_id: str, watching: frozenset[str] = frozenset()
) -> dict[str, SyncState]:
    """Each linked folder of a base: where its sync stands, and what the last one changed."""
    live = parts.catalog.live_job_keys(base_id, f"{JobKind.SYNC_FOLDER}:")
    states: dict[str, SyncState] = {}
    for link_row in parts.catalog.list_links(base_id):
        log = parts.catalog.sync_log(link_row.item_id)
        running = lease_key(link_row.item_id) in live
        if link_row.syncing and not running:
            # Its process stopped mid-sync: it is not syncing, whatever the row says.
            link_row = replace(link_row, syncing=False)
        states[link_row.item_id] = SyncState(
            link=link_row,
            watching=link_row.item_id in watching,
            pending=running or sync_key(link_row.item_id) in live,
            last=log[0] if log else None,
        )
    return states


def changes_since(parts: EngineParts, root_id: str, since: float) -> SyncChanges:
    """Every change the syncs of a folder logged since `since`, merged (a sync that found
    files still being written continues in follow-ups)."""
    merged = SyncChanges(finished_at=time.time())
    for entry in reversed(parts.catalog.sync_log(root_id)):
        if entry.finished_at < since:
            continue
        merged.added.extend(entry.added)
        merged.changed.extend(entry.changed)
        merged.removed.extend(entry.removed)
        merged.renamed.extend(entry.renamed)
        merged.deferred = entry.deferred  # the last word on what is still moving
    return merged


def set_refresh(parts: EngineParts, base_id: str, item_id: str, interval_s: float | None) -> None:
    """Refresh a URL or sitemap item every `interval_s` seconds while Trove runs (None: off,
    the default)."""
    _require_on_this_computer(parts, base_id, "refreshing a page on a schedule")
    item = parts.catalog.require_item(item_id)
    if item.base_id != base_id:
        raise TroveError(ErrorCode.ITEM_NOT_FOUND, f"no item {item_id!r} in this knowledge base")
    if item.type not in (ItemType.URL, ItemType.SITEMAP) or item.parent_id is not None:
        raise TroveError(
            ErrorCode.INVALID_ARGUMENT, "only a web page or sitemap added to the base refreshes"
        )
    if interval_s is not None and is_imported(item):
        raise imported_sources.refuse(item, "refresh")
    if interval_s is not None and interval_s < MIN_REFRESH_S:
        raise TroveError(
            ErrorCode.INVALID_ARGUMENT, f"refresh at most every {MIN_REFRESH_S:.0f} seconds"
        )
    parts.catalog.set_refresh(item_id, base_id, interval_s)


def refresh_now(parts: EngineParts, base_id: str, item_id: str) -> None:
    item = parts.catalog.require_item(item_id)
    if item.base_id != base_id or item.type not in (ItemType.URL, ItemType.SITEMAP):
        raise TroveError(ErrorCode.INVALID_ARGUMENT, "only a web page or sitemap refreshes")
    if is_imported(item):
        raise imported_sources.refuse(item, "refresh")
    queue_refresh(parts, base_id, item_id)


# -- copy and move between bases (portable/transfer.py moves items; links follow here) ------


def check_movable(parts: EngineParts, base_id: str, item_ids: Sequence[str]) -> None:
    """Refuse to move an item out of a linked folder: its file is still in the folder, so the
    next sync would bring it back and the base would hold it twice over the two bases."""
    linked = {link_row.item_id for link_row in parts.catalog.list_links(base_id)}
    if not linked:
        return
    for item in parts.catalog.get_items(item_ids).values():
        parent = item.parent_id
        while parent is not None:
            if parent in linked:
                raise TroveError(
                    ErrorCode.INVALID_ARGUMENT,
                    f"{item.title!r} is in a linked folder, whose next sync would bring it "
                    "back: copy it instead, or unlink the folder first",
                )
            parent = parts.catalog.require_item(parent).parent_id


def links_of(
    parts: EngineParts, base_id: str, item_ids: Sequence[str]
) -> list[tuple[LinkedFolder, str]]:
    """The links of those items that are linked folders, with each folder's source."""
    wanted = set(item_ids)
    rows = [row for row in parts.catalog.list_links(base_id) if row.item_id in wanted]
    items = parts.catalog.get_items([row.item_id for row in rows])
    return [(row, items[row.item_id].source) for row in rows if row.item_id in items]


def carry_links(
    parts: EngineParts,
    moved: Sequence[tuple[LinkedFolder, str]],
    target_id: str,
    copied: Sequence[str],
) -> list[LinkedFolder]:
    """Link the moved copies of linked folders in the target, with the same ignore rules.

    The copies hold the same files, so their first sync only looks (hashes match) and embeds
    nothing."""
    if not moved:
        return []
    copies = parts.catalog.get_items(copied).values()
    by_source = {i.source: i for i in copies if i.parent_id is None}
    carried: list[LinkedFolder] = []
    for link_row, source in moved:
        new = by_source.get(source)
        if new is not None:
            carried.append(link(parts, target_id, new.id, link_row.ignore_patterns))
    return carried
