"""Write-side orchestration: admission checks, add conflicts, deletion and reindex admission.
Items are created by jobs/item_creation.py and their jobs queued by jobs/queue.py.

Every multi-step change (read what exists, then create or flip rows) runs under the base
mutex; nothing slow (network, hashing big files) runs while it is held.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from app.knowledge.catalog import Catalog
from app.knowledge.engine import EngineParts
from app.knowledge.folder_scan import inside_data_folder
from app.knowledge.imported_sources import is_imported
from app.knowledge.jobs.item_creation import create_items, create_root
from app.knowledge.jobs.queue import mark_deleting, queue_reindexes, queue_work, top_roots
from app.knowledge.jobs.runner import TIMEOUT_MESSAGE
from app.knowledge.material_paths import (
    CONTAINER_TYPES,
    NOT_CARRIED,
    in_place,
    url_material_name,
)
from app.knowledge.pipeline.sources.address_policy import AddressRefused, check_literal
from app.knowledge.pipeline.sources.web import FetchError, check_url
from app.knowledge.source_check import SourceCheck, check_reindex, check_source
from app.knowledge.source_origin import Origin, with_origin
from app.knowledge.types import (
    SETTLED_STATUSES,
    AddReport,
    BaseStatus,
    ErrorCode,
    Item,
    ItemStatus,
    ItemType,
    OnConflict,
    SkipReason,
    TroveError,
)

# -- shared building blocks ------------------------------------------------------------------

EMPTY_PATH = "an empty path names no file or folder (is a variable unset?)"


def file_hash(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _require_usable_base(parts: EngineParts, base_id: str) -> None:
    base = parts.catalog.require_base(base_id)
    if base.status is BaseStatus.FAILED:
        raise TroveError(
            ErrorCode.BASE_FAILED, f"knowledge base {base.name!r} has failed; restore it first"
        )


def _live(items: Iterable[Item]) -> list[Item]:
    return [i for i in items if i.status is not ItemStatus.DELETING]


# -- adding ----------------------------------------------------------------------------------


@dataclass(slots=True)
class _Candidate:
    source: str
    item_type: ItemType
    desired: str
    title: str
    content_hash: str | None = None


def add_paths(
    parts: EngineParts,
    base_id: str,
    sources: Sequence[str | Path],
    *,
    on_conflict: OnConflict = OnConflict.SKIP,
    folder_options: dict[str, object] | None = None,
) -> AddReport:
    """Admit files and folders: each becomes a root item with its job queued.

    An empty path is refused (an unset "$DIR" would otherwise add the current folder), and
    so is anything inside Trove's data folder: those are the bases' own copies."""
    _require_usable_base(parts, base_id)
    report = AddReport()
    candidates: list[_Candidate] = []
    for raw_source in sources:
        if not str(raw_source).strip():
            report.errors.append((str(raw_source), f"{ErrorCode.INVALID_ARGUMENT}: {EMPTY_PATH}"))
            continue
        path = Path(raw_source).expanduser()
        try:
            path = path.resolve(strict=True)
        except (OSError, RuntimeError):
            report.errors.append(
                (str(raw_source), f"{ErrorCode.SOURCE_MISSING}: no such file or folder")
            )
            continue
        if inside_data_folder(parts.layout, path):
            report.errors.append(
                (
                    str(path),
                    f"{ErrorCode.INVALID_ARGUMENT}: this is inside Trove's data folder "
                    f"({parts.layout.home}), which holds the knowledge bases' own copies",
                )
            )
            continue
        if path.is_dir():
            candidates.append(
                _Candidate(
                    str(path), ItemType.DIRECTORY, path.name or "folder", path.name or str(path)
                )
            )
        elif path.is_file():
            try:
                # Hashing (before the mutex: slow I/O) finds the same content under another
                # name; a file too large to index is never read here.
                too_big = path.stat().st_size > parts.max_file_bytes
                digest = None if too_big else file_hash(path)
            except OSError as exc:
                report.errors.append((str(path), f"{ErrorCode.READ_FAILED}: {exc.strerror or exc}"))
                continue
            candidates.append(_Candidate(str(path), ItemType.FILE, path.name, path.name, digest))
        else:
            report.errors.append(
                (str(path), f"{ErrorCode.READ_FAILED}: not a regular file or folder")
            )
    _admit(parts, base_id, candidates, report, on_conflict, folder_options)
    return report


def add_urls(
    parts: EngineParts,
    base_id: str,
    urls: Sequence[str],
    *,
    sitemap: bool = False,
    on_conflict: OnConflict = OnConflict.SKIP,
    origin: Origin = Origin.PERSON,
) -> AddReport:
    """Admit web pages (or sitemaps, whose pages become child items).

    `origin` is who asks: an agent's URLs are marked so that their fetches reach only public
    addresses (source_origin.py), and one naming a local address is refused here already."""
    base = parts.catalog.require_base(base_id)
    _require_usable_base(parts, base_id)
    restricted = origin is not Origin.PERSON and not base.agent_private_urls
    report = AddReport()
    candidates: list[_Candidate] = []
    for raw_url in urls:
        try:
            url = check_url(raw_url)
            if restricted:
                _check_public(url)
        except FetchError as exc:
            report.errors.append((raw_url, f"{exc.code}: {exc.message}"))
            continue
        if sitemap:
            host = urlsplit(url).hostname or "site"
            candidates.append(_Candidate(url, ItemType.SITEMAP, f"sitemaps/{host}", url))
        else:
            candidates.append(_Candidate(url, ItemType.URL, url_material_name(url), url))
    _admit(parts, base_id, candidates, report, on_conflict, with_origin(None, origin))
    return report


def _check_public(url: str) -> None:
    """Refuse a URL whose host is a local address or name, before any item exists (a name
    that resolves to one is refused when it is fetched)."""
    try:
        check_literal(urlsplit(url).hostname or "")
    except AddressRefused as exc:
        raise FetchError(
            ErrorCode.FETCH_FAILED,
            f"{url} was not added: {exc}; agents may add only public internet addresses "
            "unless the person allows more for this knowledge base",
        ) from None


def add_note(parts: EngineParts, base_id: str, title: str, text: str) -> Item:
    """A note written in the app; its text is snapshotted under raw/notes/."""
    _require_usable_base(parts, base_id)
    title = _note_title(title)
    with parts.mutex.lock(base_id):
        (item,) = create_items(parts, base_id, ItemType.NOTE, [(text, f"notes/{title}.md", title)])
    return item


def update_note(parts: EngineParts, base_id: str, item_id: str, title: str, text: str) -> Item:
    """Give a settled note a new title and text, and index it again.

    The text becomes the note's source (what reindex snapshots); the material keeps its
    path under raw/notes/, so the note's Concept ID stays valid for agents that kept it.
    """
    _require_usable_base(parts, base_id)
    if not text.strip():
        raise TroveError(ErrorCode.INVALID_ARGUMENT, "a note needs some text")
    title = _note_title(title)
    # One transaction from the status check to the queued job: a delete or reindex in
    # another process either sees the note busy or has not started.
    with parts.mutex.lock(base_id), parts.catalog.transaction():
        (note,) = _selected(parts.catalog, base_id, [item_id])
        _require_editable_note(note)
        parts.catalog.update_item(note.id, source=text, title=title)
        parts.catalog.set_item_status(note.id, ItemStatus.PROCESSING)
        queue_reindexes(parts, [note.id], base_id)
        return parts.catalog.require_item(note.id)


def _note_title(title: str) -> str:
    return " ".join(title.split()) or "Untitled note"


def _require_editable_note(item: Item) -> None:
    if item.type is not ItemType.NOTE:
        raise TroveError(
            ErrorCode.INVALID_ARGUMENT,
            f"only notes can be edited; {item.title!r} is a {item.type} "
            "(change the original and reindex it instead)",
        )
    if item.status is ItemStatus.DELETING:
        raise TroveError(ErrorCode.INVALID_ARGUMENT, f"the note {item.title!r} is being deleted")
    if item.status not in SETTLED_STATUSES:
        raise TroveError(
            ErrorCode.INVALID_ARGUMENT,
            f"the note {item.title!r} is still being indexed; edit it once it has finished",
        )


def _admit(
    parts: EngineParts,
    base_id: str,
    candidates: list[_Candidate],
    report: AddReport,
    on_conflict: OnConflict,
    options: dict[str, object] | None,
) -> None:
    """`options` go on every admitted folder, sitemap and web page (not on files)."""
    with parts.mutex.lock(base_id):
        for cand in candidates:
            # The mutex is per process: the conflict check and the rows it allows are one
            # write transaction, so two processes adding the same source admit it once.
            with parts.catalog.transaction():
                _admit_one(parts, base_id, cand, report, on_conflict, options)


def _admit_one(
    parts: EngineParts,
    base_id: str,
    cand: _Candidate,
    report: AddReport,
    on_conflict: OnConflict,
    options: dict[str, object] | None,
) -> None:
    clash = _conflict(parts.catalog, base_id, cand)
    if clash is not None:
        existing, reason = clash
        if on_conflict is OnConflict.SKIP:
            report.skipped.append((cand.source, reason))
            return
        mark_deleting(parts, [existing])
        report.replaced.append((cand.source, existing.id))
    if cand.item_type in CONTAINER_TYPES:
        report.added.append(
            create_root(
                parts, base_id, cand.item_type, cand.source, cand.title, cand.desired, options
            )
        )
        return
    hashes = {cand.source: cand.content_hash} if cand.content_hash else None
    report.added.extend(
        create_items(
            parts,
            base_id,
            cand.item_type,
            [(cand.source, cand.desired, cand.title)],
            hashes=hashes,
            options=options if cand.item_type is ItemType.URL else None,
        )
    )


def _conflict(catalog: Catalog, base_id: str, cand: _Candidate) -> tuple[Item, SkipReason] | None:
    same_source = _live(catalog.find_items_by_source(base_id, cand.source))
    if same_source:
        return same_source[0], SkipReason(
            "already in this knowledge base", ErrorCode.ALREADY_IN_BASE
        )
    if cand.content_hash:
        same_content = _live(catalog.find_items_by_hash(base_id, cand.content_hash))
        if same_content:
            other = same_content[0]
            return other, SkipReason(
                f"same content as {other.source!r}, already in this knowledge base",
                ErrorCode.ALREADY_IN_BASE,
                other.source,
            )
    return None


# -- deleting --------------------------------------------------------------------------------


def _selected(catalog: Catalog, base_id: str, item_ids: Sequence[str] | None) -> list[Item]:
    """The named items of the base (all its roots when None); unknown ids are refused."""
    if item_ids is None:
        return catalog.list_items(base_id, roots_only=True)
    found = catalog.get_items(item_ids)
    missing = [i for i in item_ids if i not in found or found[i].base_id != base_id]
    if missing:
        raise TroveError(
            ErrorCode.ITEM_NOT_FOUND, f"no such item(s) in this base: {', '.join(missing)}"
        )
    return [found[i] for i in item_ids]


def delete_items(parts: EngineParts, base_id: str, item_ids: Sequence[str] | None) -> list[str]:
    """Delete items (all of the base's when None); returns the root ids queued for deletion."""
    # Read and marked in one transaction: another process deleting the same items at once
    # finds them already deleting instead of tripping over a stale status.
    with parts.mutex.lock(base_id), parts.catalog.transaction():
        items = _live(_selected(parts.catalog, base_id, item_ids))
        if not items:
            return []
        return mark_deleting(parts, items)


# -- reindex admission -----------------------------------------------------------------------


def check_settled(catalog: Catalog, roots: Sequence[Item], action: str) -> None:
    busy = [
        item
        for root in roots
        for item in [root, *catalog.descendants(root.id)]
        if item.status not in SETTLED_STATUSES
    ]
    if busy:
        raise TroveError(
            ErrorCode.INVALID_ARGUMENT,
            f"cannot {action} while {len(busy)} item(s) are still {busy[0].status}; "
            "wait until the whole subtree has finished",
        )


def reindex(parts: EngineParts, base_id: str, item_ids: Sequence[str] | None) -> list[Item]:
    """Re-acquire sources and index again; refused before anything is queued when it can't run."""
    _require_usable_base(parts, base_id)
    # One transaction from the check to the queued jobs: a reindex of the same items in
    # another process either sees them busy or has not started.
    with parts.mutex.lock(base_id), parts.catalog.transaction():
        roots = top_roots(parts.catalog, _live(_selected(parts.catalog, base_id, item_ids)))
        check_settled(parts.catalog, roots, "reindex")
        raw = parts.layout.raw_dir(base_id)
        checks = {root.id: check_reindex(raw, root) for root in roots}
        gone = [r for r in roots if checks[r.id] is SourceCheck.MISSING]
        if gone and is_imported(gone[0]) and in_place(gone[0]):
            raise TroveError(
                ErrorCode.SOURCE_MISSING,
                f"{gone[0].title!r} cannot be read again: {NOT_CARRIED}",
            )
        if gone and is_imported(gone[0]):
            raise TroveError(
                ErrorCode.SOURCE_MISSING,
                f"the base's own copy of {len(gone)} item(s) is missing (first: "
                f"{gone[0].title!r}); they came with an imported base, so their originals "
                "are not read: add them again from this computer",
            )
        if gone:
            raise TroveError(
                ErrorCode.SOURCE_MISSING,
                f"the source of {len(gone)} item(s) no longer exists (first: {gone[0].source}); "
                "delete them and add them again",
            )
        shaky = [r for r in roots if checks[r.id] is SourceCheck.UNVERIFIABLE]
        if shaky:
            raise TroveError(
                ErrorCode.READ_FAILED,
                f"the source of {len(shaky)} item(s) could not be checked (first: {shaky[0].source}); "
                "retry in a moment",
            )
        with parts.catalog.transaction():
            for root in roots:
                parts.catalog.set_item_status(root.id, _working_status(root))
            queue_reindexes(parts, [r.id for r in roots], base_id)
        return [parts.catalog.require_item(r.id) for r in roots]


# Failures that say nothing about the source itself: indexing was cut short (Trove stopped,
# its end could not be written) or Trove's own storage refused a write (a full disk).
RESUMABLE_CODES = frozenset(
    {ErrorCode.INDEXING_INTERRUPTED, ErrorCode.STORAGE_FULL, ErrorCode.STORAGE_READ_ONLY}
)


def resume_interrupted(parts: EngineParts, base_id: str) -> list[Item]:
    """Put the base's items a crash interrupted or a full / read-only disk failed
    (RESUMABLE_CODES) back to work, where their sources are still there; returns them. Recovery kept the vectors they had paid for beside their materials
    (paid_vectors.py), so their indexing does not embed those batches again. An item that
    ran out of time is not among them: it would only run out of time again."""
    _require_usable_base(parts, base_id)
    with parts.mutex.lock(base_id), parts.catalog.transaction():
        interrupted = [i for i in parts.catalog.list_items(base_id) if _interrupted(i)]
        roots = [
            r for r in top_roots(parts.catalog, interrupted) if check_source(r) is SourceCheck.OK
        ]
        parents: set[str] = set()
        for root in roots:
            start_again(parts, root, reacquire=True)
            if root.parent_id is not None:
                parents.add(root.parent_id)
        for parent in parts.catalog.get_items(parents).values():
            if parent.status in SETTLED_STATUSES:  # it shows its children's work again
                parts.catalog.set_item_status(parent.id, ItemStatus.PROCESSING)
        return [parts.catalog.require_item(r.id) for r in roots]


def _interrupted(item: Item) -> bool:
    return (
        item.status is ItemStatus.FAILED
        and item.error_code in RESUMABLE_CODES
        and item.error_message != TIMEOUT_MESSAGE
    )


def _working_status(item: Item) -> ItemStatus:
    return ItemStatus.PREPARING if item.type in CONTAINER_TYPES else ItemStatus.PROCESSING


def start_again(parts: EngineParts, item: Item, *, reacquire: bool) -> None:
    """Put a settled item back to work at once (restore, backfill)."""
    parts.catalog.set_item_status(item.id, _working_status(item))
    queue_work(parts, item, reacquire=reacquire)
