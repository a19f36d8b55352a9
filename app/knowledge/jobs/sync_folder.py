"""sync-folder: bring a linked folder item in line with its source folder.

New files are added, changed ones (size or mtime moved, and the content hash confirms)
indexed again, vanished ones deleted, and a file that vanished under one name and appeared
under another with the same content (a rename, a move into a subfolder) keeps its item,
chunks and vectors: only its source and title change (the title follows the name unless
the document names itself; the index takes it too), nothing is embedded again; unless the
new title gives its chunks another size, when it is indexed as a fresh index would cut it.

A file still being written (its size or mtime moves between two looks, or it cannot be
opened) is left for a follow-up sync a moment later, never indexed half-written.

One sync of a folder runs at a time across processes: the running job holds the lease key
`sync-folder:<root>:running` (live idempotency keys are unique in the catalog), while
`sync-folder:<root>` stays free for the next request, so changes seen during a sync are
never lost and a burst of requests queues one sync.
"""

from __future__ import annotations

import hashlib
import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from app.knowledge.catalog import Job
from app.knowledge.chunk_sizing import sizing_for
from app.knowledge.engine import EngineParts
from app.knowledge.folder_scan import data_fence, follow_links, record_skipped
from app.knowledge.imported_sources import is_imported
from app.knowledge.jobs.context import JobContext
from app.knowledge.jobs.errors import JobCancelled
from app.knowledge.jobs.item_creation import create_children
from app.knowledge.jobs.kinds import JobKind
from app.knowledge.jobs.parents import settle_parent
from app.knowledge.jobs.queue import mark_deleting, queue_index
from app.knowledge.pipeline.readers.registry import SUPPORTED_EXTENSIONS
from app.knowledge.pipeline.sources.directory import scan_directory
from app.knowledge.pipeline.sources.ignore_rules import IgnoreRules
from app.knowledge.pipeline.store.index_store import IndexStore
from app.knowledge.sync_types import FileSnapshot, SyncChanges
from app.knowledge.types import (
    SETTLED_STATUSES,
    CancelReason,
    ErrorCode,
    Item,
    ItemStatus,
    ItemType,
)

log = logging.getLogger(__name__)

# A file modified this recently is looked at twice, SETTLE_S apart, before it is taken in.
RECENT_S = 2.0
SETTLE_S = 0.5
# A follow-up sync for deferred files runs this much later, at most this many times in a row.
FOLLOW_UP_S = 1.0
MAX_FOLLOW_UPS = 120
# Progress is written to the catalog at most this often (other processes read it).
PROGRESS_EVERY_S = 0.5


def sync_key(root_id: str) -> str:
    return f"{JobKind.SYNC_FOLDER}:{root_id}"


def lease_key(root_id: str) -> str:
    return f"{JobKind.SYNC_FOLDER}:{root_id}:running"


def queue_sync(
    parts: EngineParts, base_id: str, root_id: str, *, delay: float = 0.0, round_: int = 0
) -> Job:
    """Ask for a sync of a linked folder; a sync already queued for it covers this one.

    So does one that was claimed and has not looked yet (it holds the request key until it
    takes its lease), unless its process is gone: killed before it took the lease, it
    would swallow the request until recovery dropped it, and the changes asked about would
    wait for some later sync. It is dropped here instead, as _take_lease does.
    """
    for _ in range(2):
        job = parts.catalog.enqueue_job(
            JobKind.SYNC_FOLDER,
            base_id,
            payload={"root": root_id, "round": round_},
            idempotency_key=sync_key(root_id),
            not_before=time.time() + delay if delay else 0.0,
        )
        if job.status != "running" or parts.catalog.job_owner_alive(job):
            break
        parts.catalog.finish_job(job.id, "abandoned", "its process is gone")
    return job


def file_digest(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def run(ctx: JobContext, job: Job) -> None:
    parts = ctx.parts
    root_id = str(job.payload.get("root") or "")
    round_ = int(job.payload.get("round") or 0)
    if not _take_lease(parts, job, root_id):
        # Another process syncs this folder now: look again when it is done.
        queue_sync(parts, job.base_id, root_id, delay=FOLLOW_UP_S, round_=round_)
        return
    root = parts.catalog.get_item(root_id)
    link = parts.catalog.get_link(root_id)
    if root is None or link is None or root.status is ItemStatus.DELETING:
        return  # unlinked or deleted meanwhile: nothing to bring back
    if is_imported(root):
        # Another computer's folder: never read here (imported_sources.py; linking refuses).
        parts.catalog.set_sync_finished(root_id, "it came with an imported base: not synced")
        return
    if root.status in (ItemStatus.PREPARING, ItemStatus.PROCESSING):
        # Its files are being taken in (added, or changed ones reindexed): look once they
        # are, so every file's snapshot matches what was indexed. Not a deferral round.
        queue_sync(parts, job.base_id, root_id, delay=FOLLOW_UP_S, round_=round_)
        return
    try:
        changes = _sync(ctx, root, link.ignore_patterns)
    except _RootBusy:
        parts.catalog.set_sync_finished(root_id, link.last_error, synced=False)
        queue_sync(parts, job.base_id, root_id, delay=FOLLOW_UP_S, round_=round_)
        return
    except _FolderMissing as exc:
        parts.catalog.set_sync_finished(root_id, exc.message)
        return
    except JobCancelled as exc:
        parts.catalog.set_sync_finished(root_id, link.last_error, synced=False)
        if exc.reason is CancelReason.SHUTDOWN:
            # A normal exit: the sync is asked for again, for whichever process runs the
            # queue next. A fresh request rather than this job handed back, which would
            # keep the lease key of a running sync while it waits in the queue.
            queue_sync(parts, job.base_id, root_id, round_=round_)
            return
        raise
    except Exception as exc:
        parts.catalog.set_sync_finished(root_id, f"{type(exc).__name__}: {exc}")
        raise
    _finish(parts, job.base_id, root_id, round_, changes)


def _finish(
    parts: EngineParts, base_id: str, root_id: str, round_: int, changes: SyncChanges
) -> None:
    """Record the sync, and look again shortly at files still being written."""
    parts.catalog.set_sync_finished(root_id, None)
    changes.finished_at = time.time()
    if changes.count or changes.deferred:
        parts.catalog.log_sync(root_id, changes)
    if not changes.deferred:
        return
    if round_ < MAX_FOLLOW_UPS:
        queue_sync(parts, base_id, root_id, delay=FOLLOW_UP_S, round_=round_ + 1)
    else:
        parts.catalog.set_sync_finished(
            root_id, f"{len(changes.deferred)} file(s) kept changing; not taken in yet"
        )


class _RootBusy(Exception):
    """The folder is being expanded or its files indexed: sync once that is done."""


class _FolderMissing(Exception):
    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def _take_lease(parts: EngineParts, job: Job, root_id: str) -> bool:
    holder = parts.catalog.take_job_lease(job.id, lease_key(root_id))
    if holder is None:
        return True
    if parts.catalog.job_owner_alive(holder):
        return False
    # Its process is gone (killed mid-sync) and no recovery ran since: it syncs nothing.
    parts.catalog.finish_job(holder.id, "abandoned", "its process is gone")
    return parts.catalog.take_job_lease(job.id, lease_key(root_id)) is None


@dataclass(slots=True)
class _Look:
    """A file as one look saw it."""

    path: Path
    rel: str
    size: int
    mtime_ns: int


@dataclass(slots=True)
class _Plan:
    new: list[_Look] = field(default_factory=list)
    # (child, look, snapshot or None)
    check: list[tuple[Item, _Look, FileSnapshot | None]] = field(default_factory=list)
    gone: list[Item] = field(default_factory=list)


def _sync(ctx: JobContext, root: Item, patterns: tuple[str, ...]) -> SyncChanges:
    parts = ctx.parts
    folder = Path(root.source)
    if not folder.is_dir():
        # An unplugged drive or a moved folder: keep everything; say so.
        raise _FolderMissing(f"the folder {folder} is not there")
    looks = _scan(parts, root, patterns)
    children = parts.catalog.list_items(root.base_id, parent_id=root.id)
    snapshots = parts.catalog.file_snapshots(root.id)
    plan = _plan(looks, children, snapshots)
    changes = SyncChanges()
    total = len(plan.new) + len(plan.check)
    parts.catalog.set_sync_progress(root.id, 0, total)
    stable = _settled(ctx, [*plan.new, *(look for _, look, _ in plan.check)], changes)

    hashed: dict[str, str] = {}
    last_report = time.monotonic()
    for done, look in enumerate([*plan.new, *(look for _, look, _ in plan.check)], 1):
        ctx.raise_if_cancelled()
        if look.rel in stable:
            try:
                hashed[look.rel] = file_digest(look.path)
            except OSError:
                changes.deferred.append(look.rel)  # locked or vanished between looks
        if time.monotonic() - last_report > PROGRESS_EVERY_S:
            parts.catalog.set_sync_progress(root.id, done, total)
            last_report = time.monotonic()
    parts.catalog.set_sync_progress(root.id, total, total)
    # Asked before the base mutex is taken: the model may be asked its input size.
    room_for = _chunk_room(parts, root.base_id) if plan.new and plan.gone else None
    _apply(parts, root, plan, snapshots, hashed, changes, room_for)
    _follow_titles(parts, root)
    return changes


def _scan(parts: EngineParts, root: Item, patterns: tuple[str, ...]) -> list[_Look]:
    """The folder's files as they look now; what the scan left out (links out of the
    folder, Trove's data folder) is kept on the root for the summaries (folder_scan.py)."""
    folder = Path(root.source)
    options = root.options or {}
    rules = IgnoreRules.for_folder(folder, patterns)
    extensions = options.get("extensions")
    scan = scan_directory(
        folder,
        extensions=[str(e) for e in extensions]
        if isinstance(extensions, list)
        else SUPPORTED_EXTENSIONS,
        include_globs=_strings(options.get("include")),
        exclude_globs=_strings(options.get("exclude")),
        follow_links=follow_links(options),
        fenced=data_fence(parts.layout),
    )
    with parts.mutex.lock(root.base_id), parts.catalog.transaction():
        current = parts.catalog.get_item(root.id)
        if current is not None:
            record_skipped(parts.catalog, current, scan, rules.ignored)
    looks: list[_Look] = []
    for path in scan.files:
        rel = path.relative_to(folder).as_posix()
        if rules.ignored(rel):
            continue
        try:
            st = path.stat()
        except OSError:
            continue  # gone since the scan: the next look sees it gone
        looks.append(_Look(path, rel, st.st_size, st.st_mtime_ns))
    return looks


def _plan(looks: list[_Look], children: list[Item], snapshots: dict[str, FileSnapshot]) -> _Plan:
    plan = _Plan()
    by_source = {c.source: c for c in children}
    for look in looks:
        child = by_source.pop(str(look.path), None)
        if child is None:
            plan.new.append(look)
        elif child.status in SETTLED_STATUSES:
            snap = snapshots.get(child.id)
            interrupted = (
                child.status is ItemStatus.FAILED
                and child.error_code == ErrorCode.INDEXING_INTERRUPTED
            )
            if (
                snap is None
                or interrupted
                or (snap.size, snap.mtime_ns)
                != (
                    look.size,
                    look.mtime_ns,
                )
            ):
                plan.check.append((child, look, snap))
        # A child being indexed is checked by the next sync; one being deleted is never
        # brought back by this one.
    plan.gone = [c for c in by_source.values() if c.status is not ItemStatus.DELETING]
    return plan


def _settled(ctx: JobContext, looks: list[_Look], changes: SyncChanges) -> set[str]:
    """The files not being written: a recently modified file must look the same twice."""
    now_ns = time.time_ns()
    recent = [look for look in looks if now_ns - look.mtime_ns < RECENT_S * 1e9]
    if recent:
        time.sleep(SETTLE_S)
        ctx.raise_if_cancelled()
    moving: set[str] = set()
    for look in recent:
        try:
            st = look.path.stat()
        except OSError:
            moving.add(look.rel)
            continue
        if (st.st_size, st.st_mtime_ns) != (look.size, look.mtime_ns):
            moving.add(look.rel)
    for look in looks:
        if look.rel in moving or not os.access(look.path, os.R_OK):
            changes.deferred.append(look.rel)
            moving.add(look.rel)
    return {look.rel for look in looks} - moving


def _apply(
    parts: EngineParts,
    root: Item,
    plan: _Plan,
    snapshots: dict[str, FileSnapshot],
    hashed: dict[str, str],
    changes: SyncChanges,
    room_for: Callable[[str], tuple[int, int]] | None = None,
) -> None:
    """Write what the sync found, in one catalog transaction under the base mutex."""
    folder = Path(root.source)
    gone_by_hash: dict[str, list[Item]] = {}
    for child in plan.gone:
        snap = snapshots.get(child.id)
        if snap is not None:
            gone_by_hash.setdefault(snap.content_hash, []).append(child)
    with parts.mutex.lock(root.base_id), parts.catalog.transaction():
        current = parts.catalog.get_item(root.id)
        if current is None or current.status is ItemStatus.DELETING:
            return
        if current.status is ItemStatus.PREPARING:
            raise _RootBusy  # expanded again (a reindex) since the scan: look after it
        # Another writer (a reindex in another process) may have admitted some meanwhile.
        present = {c.source for c in parts.catalog.list_items(root.base_id, parent_id=root.id)}
        fresh: list[_Look] = []
        renamed_ids: set[str] = set()
        put: list[tuple[str, FileSnapshot]] = []
        restarted = False
        for look in plan.new:
            digest = hashed.get(look.rel)
            if digest is None or str(look.path) in present:
                continue
            twins = gone_by_hash.get(digest)
            if twins:
                # A rename or move: the item follows its file, chunks and vectors stay.
                child = twins.pop()
                old_rel = _rel(folder, child.source)
                # The title follows the name unless the document names itself.
                renamed_title = (
                    look.path.stem if child.title == Path(child.source).stem else child.title
                )
                parts.catalog.update_item(child.id, source=str(look.path), title=renamed_title)
                put.append((child.id, FileSnapshot(look.size, look.mtime_ns, digest)))
                renamed_ids.add(child.id)
                changes.renamed.append((old_rel, look.rel))
                latest = parts.catalog.get_item(child.id)
                if latest is not None and _index_again(latest, child.title, room_for):
                    parts.catalog.set_item_status(child.id, ItemStatus.PROCESSING)
                    queue_index(parts, latest, reacquire=True)
                    restarted = True
            else:
                fresh.append(look)
        for child, look, snap in plan.check:
            digest = hashed.get(look.rel)
            latest = parts.catalog.get_item(child.id)
            if digest is None or latest is None or latest.status not in SETTLED_STATUSES:
                continue
            now_snap = FileSnapshot(look.size, look.mtime_ns, digest)
            put.append((child.id, now_snap))
            interrupted = (
                latest.status is ItemStatus.FAILED
                and latest.error_code == ErrorCode.INDEXING_INTERRUPTED
            )
            same = snap is not None and snap.content_hash == digest
            # Without a snapshot (linked after it was indexed) the index is taken as current
            # unless the file was modified after the item was.
            unseen_edit = snap is None and look.mtime_ns / 1e9 > latest.updated_at
            if interrupted or (snap is not None and not same) or unseen_edit:
                parts.catalog.set_item_status(child.id, ItemStatus.PROCESSING)
                queue_index(parts, latest, reacquire=True)
                changes.changed.append(look.rel)
                restarted = True
        if fresh:
            prefix = root.relative_path or folder.name
            created = create_children(
                parts,
                root,
                ItemType.FILE,
                [(str(look.path), f"{prefix}/{look.rel}") for look in fresh],
            )
            for item, look in zip(created, fresh, strict=True):
                put.append((item.id, FileSnapshot(look.size, look.mtime_ns, hashed[look.rel])))
                changes.added.append(look.rel)
            restarted = True
        removed = [c for c in plan.gone if c.id not in renamed_ids]
        removed = [
            c
            for c in (parts.catalog.get_item(r.id) for r in removed)
            if c is not None and c.status is not ItemStatus.DELETING
        ]
        if removed:
            mark_deleting(parts, removed)
            changes.removed.extend(_rel(folder, c.source) for c in removed)
        parts.catalog.put_file_snapshots(root.id, put)
        if restarted and current.status in SETTLED_STATUSES:
            parts.catalog.set_item_status(root.id, ItemStatus.PROCESSING)
        elif removed:
            settle_parent(parts.catalog, root.id)


def _chunk_room(parts: EngineParts, base_id: str) -> Callable[[str], tuple[int, int]]:
    """The chunk size and overlap the base's documents get for a given title: the title is
    repeated in front of chunks for the embedding model, and takes room from them when
    chunks are as long as the model reads (ChunkSizing.with_title)."""
    sizing = sizing_for(parts.catalog.require_base(base_id), parts.models)

    def room(title: str) -> tuple[int, int]:
        titled = sizing.with_title(title)
        return titled.effective_size, titled.effective_overlap

    return room


def _index_again(
    renamed: Item, old_title: str, room_for: Callable[[str], tuple[int, int]] | None
) -> bool:
    """Whether a renamed file's item must be indexed again to hold what a fresh index of it
    would: when its new title gives its chunks another size (their texts change), or when
    it had failed (a crash interrupted it, say). Otherwise its chunks are the same and keep
    their vectors (nothing is embedded again; the vectors keep the old title in front), and
    the index only takes the new title (_follow_titles)."""
    if renamed.status is ItemStatus.FAILED:
        return True
    if renamed.status is not ItemStatus.COMPLETED or renamed.title == old_title:
        return False
    return room_for is not None and room_for(old_title) != room_for(renamed.title)


def _follow_titles(parts: EngineParts, root: Item) -> None:
    """The index shows a renamed file under its new title, as a fresh index of it would
    (search results name it, and its full-text rows match it).

    Checked for every indexed child rather than for this sync's renames alone: the index
    is another database than the catalog, and a sync killed between the two writes would
    leave it a title behind; the next sync puts it right."""
    store = parts.stores.get(root.base_id)
    if not isinstance(store, IndexStore):
        return  # linked folders are this computer's own bases
    with parts.mutex.lock(root.base_id):
        titles = store.titles()
        for child in parts.catalog.list_items(root.base_id, parent_id=root.id):
            stored = titles.get(child.id)
            if child.status is ItemStatus.COMPLETED and stored not in (None, child.title):
                store.retitle_material(child.id, child.title)


def _rel(folder: Path, source: str) -> str:
    try:
        return Path(source).relative_to(folder).as_posix()
    except ValueError:
        return source


def _strings(value: object) -> list[str]:
    return [str(v) for v in value] if isinstance(value, list | tuple) else []
