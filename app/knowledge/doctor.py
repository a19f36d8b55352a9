"""The integrity checker behind `trove doctor`: does everything on disk agree?

It compares the catalog (bases, items, jobs), every base's index (materials, chunks, the
contentless FTS5 table, sqlite-vec vectors) and the files under each base's raw/, and
reports each disagreement as a `Problem` with a stable code. `repair` fixes what can be
fixed without guessing, then checks again:

- orphan index rows (materials, chunks, vectors of items the catalog does not have in this
  base) are deleted; an FTS table that disagrees with the chunks is rebuilt from them;
- files under raw/ that no item owns are deleted (never a file an item still references);
- items left running without a live job, and deleting items without a delete job, go
  through startup recovery (`recovery.recover`: INDEXING_INTERRUPTED, deletions queued);
- completed items whose material, chunks or vectors are gone while their copy under raw/ is
  intact are queued to be indexed again from it (nothing is thrown away); those whose copy
  is gone too become failed with a message that says to reindex them (completed ->
  processing -> failed);
- an index that holds none of the base's completed documents (lost, emptied, replaced by
  something that is no index) is INDEX_CORRUPT like a damaged one: `trove restore`
  rebuilds it from the copies, a repair item by item would not.

Checking never creates an index (stores are opened with `get_if_exists`) and holds the
base mutex per base, so this process's jobs never change a base halfway through its check.
Qt-free, like the rest of the engine.
"""

from __future__ import annotations

import logging
import os
import time
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

import apsw

from app.knowledge import db, path_safety, states
from app.knowledge.catalog import Catalog, Job
from app.knowledge.engine import EngineParts
from app.knowledge.jobs.index_documents import temp_prefix
from app.knowledge.jobs.kinds import JobKind, known_kind
from app.knowledge.jobs.paid_vectors import SCRATCH_STEM
from app.knowledge.jobs.parents import settle_parent
from app.knowledge.jobs.queue import queue_vectors, queue_work
from app.knowledge.jobs.recovery import job_items, recover
from app.knowledge.material_paths import CONTAINER_TYPES, in_place, material_path, stored_files
from app.knowledge.pipeline.store.base_index import BaseIndex
from app.knowledge.pipeline.store.index_store import IndexSnapshot, index_path
from app.knowledge.portable import staging
from app.knowledge.source_check import SourceCheck, check_copy
from app.knowledge.types import (
    RUNNING_STATUSES,
    Base,
    ErrorCode,
    IllegalTransitionError,
    IndexBackend,
    Item,
    ItemPhase,
    ItemStatus,
)

log = logging.getLogger(__name__)

# Atomic writes go through `.tmp-*.part` files beside their target (index_documents); a
# young one is a write in flight, an old one was left by a crash.
TMP_PREFIX = ".tmp-"
TMP_SUFFIX = ".part"
TMP_GRACE_SECONDS = 60.0

REPAIRED_MESSAGE = (
    "part of this item's index or stored copy was missing (found by trove doctor); "
    "reindex it to restore it"
)


class Code(StrEnum):
    """Stable problem codes (shown by `trove doctor`, matched by tests and scripts)."""

    SQLITE_CORRUPT = "SQLITE_CORRUPT"  # the catalog failed PRAGMA integrity_check or is unreadable
    INDEX_CORRUPT = "INDEX_CORRUPT"  # a base's index is damaged or unreadable: restore rebuilds it
    FTS_CORRUPT = "FTS_CORRUPT"  # FTS5 'integrity-check' failed
    FTS_MISMATCH = "FTS_MISMATCH"  # chunk ids and FTS rowids differ
    MISSING_MATERIAL = "MISSING_MATERIAL"  # completed item without a material row
    MISSING_CHUNKS = "MISSING_CHUNKS"  # completed item whose material has no chunks
    MISSING_VECTORS = "MISSING_VECTORS"  # completed item of a vector base without all vectors
    MISSING_MATERIAL_FILE = "MISSING_MATERIAL_FILE"  # completed item's file under raw/ is gone
    CHUNK_COUNT_MISMATCH = "CHUNK_COUNT_MISMATCH"  # the catalog's chunk count is wrong
    ORPHAN_MATERIAL = "ORPHAN_MATERIAL"  # material of an item missing or in another base
    ORPHAN_CHUNK = "ORPHAN_CHUNK"  # chunk without its material, or of a missing item
    ORPHAN_VECTOR = "ORPHAN_VECTOR"  # vector whose chunk is gone
    VECTOR_CODES_MISMATCH = "VECTOR_CODES_MISMATCH"  # code blocks disagree with the vectors
    ORPHAN_FILE = "ORPHAN_FILE"  # file under raw/ that no item owns
    ORPHAN_JOB = "ORPHAN_JOB"  # job of a base that no longer exists
    STALE_RUNNING_ITEM = "STALE_RUNNING_ITEM"  # preparing/processing with no live job
    STALE_DELETING_ITEM = "STALE_DELETING_ITEM"  # deleting with no live delete job
    BAD_ITEM_ROW = "BAD_ITEM_ROW"  # item with a status the schema does not allow
    BAD_BASE_ROW = "BAD_BASE_ROW"  # base with a status the schema does not allow
    ORPHAN_ITEM = "ORPHAN_ITEM"  # item of a base that does not exist
    BAD_JOB = "BAD_JOB"  # queued/running job of an unknown kind or with an unreadable payload
    # What a killed export or import left: its staging folder, or a base folder it moved in
    # without the catalog rows that would make it a base.
    PORTABLE_LEFTOVER = "PORTABLE_LEFTOVER"


@dataclass(frozen=True, slots=True)
class Problem:
    code: Code
    base_id: str | None
    item_id: str | None
    detail: str
    repairable: bool

    def to_json(self) -> dict[str, Any]:
        return {
            "code": str(self.code),
            "baseId": self.base_id,
            "itemId": self.item_id,
            "detail": self.detail,
            "repairable": self.repairable,
        }


@dataclass(frozen=True, slots=True)
class Repair:
    """One thing `repair` did."""

    code: Code
    base_id: str | None
    item_id: str | None
    action: str
    requeued: bool = False  # the item was queued to be indexed again (run the queue)

    def to_json(self) -> dict[str, Any]:
        return {
            "code": str(self.code),
            "baseId": self.base_id,
            "itemId": self.item_id,
            "action": self.action,
            "requeued": self.requeued,
        }


@dataclass(slots=True)
class DoctorReport:
    bases: list[str] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        return not self.problems

    def codes(self) -> list[str]:
        return sorted({str(p.code) for p in self.problems})

    def to_json(self) -> dict[str, Any]:
        return {
            "clean": self.clean,
            "bases": self.bases,
            "problems": [p.to_json() for p in self.problems],
        }


@dataclass(slots=True)
class DoctorResult:
    """The check; with repair also what was done and the check that followed."""

    report: DoctorReport
    repairs: list[Repair] = field(default_factory=list)
    after: DoctorReport | None = None

    @property
    def final(self) -> DoctorReport:
        return self.after if self.after is not None else self.report

    @property
    def clean(self) -> bool:
        return self.final.clean

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"clean": self.clean, "report": self.report.to_json()}
        if self.after is not None:
            data["repairs"] = [r.to_json() for r in self.repairs]
            data["after"] = self.after.to_json()
        return data


# -- entry points ----------------------------------------------------------------------------


def run(
    parts: EngineParts,
    base_id: str | None = None,
    *,
    repair: bool = False,
    now: float | None = None,
    tmp_grace: float = TMP_GRACE_SECONDS,
) -> DoctorResult:
    """Check one base (or everything when None); with `repair`, fix and check again."""
    report = check(parts, base_id, now=now, tmp_grace=tmp_grace)
    if not repair:
        return DoctorResult(report)
    repairs = _repair(parts, base_id, report, now=now, tmp_grace=tmp_grace)
    after = check(parts, base_id, now=now, tmp_grace=tmp_grace)
    return DoctorResult(report, repairs, after)


def check(
    parts: EngineParts,
    base_id: str | None = None,
    *,
    now: float | None = None,
    tmp_grace: float = TMP_GRACE_SECONDS,
) -> DoctorReport:
    report = DoctorReport()
    report.problems.extend(_catalog_integrity(parts))
    try:
        bases = _bases(parts, base_id)
        if base_id is None:
            report.problems.extend(_orphan_jobs(parts, bases))
            report.problems.extend(_damaged_rows(parts))
            report.problems.extend(_portable_leftovers(parts))
    except apsw.Error as exc:
        report.problems.append(
            Problem(Code.SQLITE_CORRUPT, None, None, f"the catalog cannot be read: {exc}", False)
        )
        return report
    for base in bases:
        report.bases.append(base.id)
        report.problems.extend(_inspect_locked(parts, base, now, tmp_grace).problems)
    return report


def _inspect_locked(
    parts: EngineParts, base: Base, now: float | None, tmp_grace: float
) -> _Findings:
    """Check a base under its mutex; a database that cannot be read is reported, not raised."""
    with parts.mutex.lock(base.id):
        try:
            return _inspect_base(parts, base, now, tmp_grace)
        except apsw.Error as exc:
            found = _Findings()
            found.add(
                Code.SQLITE_CORRUPT,
                base.id,
                None,
                f"checking the base failed: {type(exc).__name__}: {exc}",
                repairable=False,
            )
            return found


# -- catalog-wide checks ---------------------------------------------------------------------


def _bases(parts: EngineParts, base_id: str | None) -> list[Base]:
    if base_id is not None:
        return [parts.catalog.require_base(base_id)]
    return parts.catalog.list_bases()


def _catalog_integrity(parts: EngineParts) -> list[Problem]:
    path = parts.layout.catalog_path
    try:
        conn = db.connect(path, create=False, read_only=parts.catalog.read_only)
        try:
            rows = [str(r[0]) for r in conn.execute("PRAGMA integrity_check")]
        finally:
            conn.close()
    except apsw.Error as exc:
        return [Problem(Code.SQLITE_CORRUPT, None, None, f"catalog {path}: {exc}", False)]
    errors = [r for r in rows if r != "ok"]
    if not errors:
        return []
    return [Problem(Code.SQLITE_CORRUPT, None, None, f"catalog {path}: {_first(errors)}", False)]


def _orphan_jobs(parts: EngineParts, bases: list[Base]) -> list[Problem]:
    known = {b.id for b in bases}
    return [
        Problem(
            Code.ORPHAN_JOB,
            job.base_id,
            job.item_id,
            f"job {job.id} ({job.kind}, {job.status}) belongs to a base that no longer exists",
            True,
        )
        for job in parts.catalog.list_jobs()
        if job.base_id not in known
    ]


BAD_ROW_MESSAGE = "this item's catalog row was damaged (status {status!r}); reindex it"
BAD_JOB_MESSAGE = "{why}; reindex the item"


def _bad_jobs(parts: EngineParts) -> list[tuple[Job, str]]:
    """Jobs that would run but cannot: an unknown kind or an unreadable payload."""
    found = []
    for job in parts.catalog.list_jobs(statuses=("queued", "running")):
        why = job.payload_error if known_kind(job.kind) else f"unknown job kind {job.kind!r}"
        if why is not None:
            found.append((job, why))
    return found


def _damaged_rows(parts: EngineParts) -> list[Problem]:
    """Catalog rows the schema forbids (written by hand, or by a damaged file)."""
    catalog = parts.catalog
    problems = [
        Problem(Code.BAD_BASE_ROW, base, None, f"base status {status!r} is unknown", True)
        for base, status in catalog.damaged_base_rows()
    ]
    problems += [
        Problem(Code.BAD_ITEM_ROW, base, item, f"item status {status!r} is unknown", True)
        for item, base, status in catalog.damaged_item_rows()
    ]
    problems += [
        Problem(Code.ORPHAN_ITEM, base, item, f"item of base {base} that does not exist", True)
        for item, base in catalog.orphan_item_rows()
    ]
    problems += [
        Problem(Code.BAD_JOB, job.base_id, job.item_id, f"job {job.id}: {why}", True)
        for job, why in _bad_jobs(parts)
    ]
    return problems


def _repair_damaged_rows(parts: EngineParts) -> list[Repair]:
    catalog = parts.catalog
    repairs: list[Repair] = []
    for base, status in catalog.damaged_base_rows():
        catalog.fail_damaged_base(base, f"its catalog row was damaged (status {status!r})")
        repairs.append(Repair(Code.BAD_BASE_ROW, base, None, "marked the base failed"))
    for item, base, status in catalog.damaged_item_rows():
        catalog.fail_damaged_item(item, BAD_ROW_MESSAGE.format(status=status))
        repairs.append(Repair(Code.BAD_ITEM_ROW, base, item, "marked the item failed"))
    for item, base in catalog.orphan_item_rows():
        catalog.delete_orphan_item(item)
        repairs.append(Repair(Code.ORPHAN_ITEM, base, item, "removed the item row"))
    for job, why in _bad_jobs(parts):
        _fail_job_item(parts, job, BAD_JOB_MESSAGE.format(why=why))
        catalog.finish_job(job.id, "failed", why)
        repairs.append(Repair(Code.BAD_JOB, job.base_id, job.item_id, f"failed job {job.id}"))
    return repairs


def _fail_job_item(parts: EngineParts, job: Job, message: str) -> None:
    if job.item_id is None:
        return
    with parts.mutex.lock(job.base_id):
        item = parts.catalog.get_item(job.item_id)
        if item is None or item.status not in RUNNING_STATUSES:
            return
        parts.catalog.set_item_status(
            item.id, ItemStatus.FAILED, error_code=ErrorCode.READ_FAILED, error_message=message
        )
        settle_parent(parts.catalog, item.parent_id)


def _first(errors: list[str]) -> str:
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return errors[0] + more


# -- one base --------------------------------------------------------------------------------


@dataclass(slots=True)
class _Findings:
    """A base's problems plus what a repair needs to fix them."""

    problems: list[Problem] = field(default_factory=list)
    index_usable: bool = False
    orphan_material_items: list[str] = field(default_factory=list)
    orphan_chunk_ids: list[int] = field(default_factory=list)
    orphan_vector_ids: list[int] = field(default_factory=list)
    rebuild_fts: bool = False
    rebuild_vector_codes: bool = False
    orphan_files: list[str] = field(default_factory=list)
    damaged_items: dict[str, Code] = field(default_factory=dict)
    chunk_counts: dict[str, int] = field(default_factory=dict)

    def add(
        self, code: Code, base_id: str, item_id: str | None, detail: str, repairable: bool = True
    ) -> None:
        self.problems.append(Problem(code, base_id, item_id, detail, repairable))


def _inspect_base(parts: EngineParts, base: Base, now: float | None, tmp_grace: float) -> _Findings:
    """Check one base; the caller holds its mutex.

    Order matters when another process works on the base meanwhile: raw/ is listed before
    the catalog is read (an item's row exists before its files), and the catalog before
    the index (a material is written before its item completes, deleted before its row).
    """
    found = _Findings()
    raw = parts.layout.raw_dir(base.id)
    on_disk = _list_raw(raw)
    items = parts.catalog.list_items(base.id)
    by_id = {i.id: i for i in items}
    live_jobs = _live_jobs(
        parts.catalog, parts.catalog.list_jobs(base.id, statuses=("queued", "running"))
    )
    _check_running(base, items, by_id, live_jobs, found)
    snapshot = _index_snapshot(parts, base, by_id, found)
    if snapshot is not None:
        _check_index(parts, base, by_id, snapshot, found)
    _check_files(base, items, raw, on_disk, time.time() if now is None else now, tmp_grace, found)
    return found


def _live_jobs(catalog: Catalog, jobs: Iterable[Job]) -> list[Job]:
    """Queued jobs, and running jobs whose process is still alive."""
    alive: dict[str | None, bool] = {}
    live = []
    for job in jobs:
        if job.status == "running":
            if job.owner not in alive:
                alive[job.owner] = catalog.job_owner_alive(job)
            if not alive[job.owner]:
                continue
        live.append(job)
    return live


def _check_running(
    base: Base, items: list[Item], by_id: dict[str, Item], live_jobs: list[Job], found: _Findings
) -> None:
    busy: set[str] = set()
    deleting_cover: set[str] = set()
    for job in live_jobs:
        ids = job_items(job)
        busy |= ids
        if job.kind == JobKind.DELETE_SUBTREE:
            deleting_cover |= ids
    children: dict[str, list[ItemStatus]] = defaultdict(list)
    for item in items:
        if item.parent_id is not None:
            children[item.parent_id].append(item.status)
    for item in items:
        if item.status in RUNNING_STATUSES and item.id not in busy:
            if (
                item.type in CONTAINER_TYPES
                and item.status is ItemStatus.PROCESSING
                and states.aggregate_status(children[item.id]) is ItemStatus.PROCESSING
            ):
                continue  # a folder or sitemap waiting on its children
            found.add(
                Code.STALE_RUNNING_ITEM,
                base.id,
                item.id,
                f"{item.type} {item.title!r} is {item.status} but no job is working on it",
            )
        elif item.status is ItemStatus.DELETING and not _delete_covered(
            item, by_id, deleting_cover
        ):
            parent = by_id.get(item.parent_id or "")
            if parent is not None and parent.status is ItemStatus.DELETING:
                continue  # reported with its deleting ancestor, whose deletion covers it
            found.add(
                Code.STALE_DELETING_ITEM,
                base.id,
                item.id,
                f"{item.type} {item.title!r} is deleting but no deletion job is queued for it",
            )


def _delete_covered(item: Item, by_id: dict[str, Item], cover: set[str]) -> bool:
    current: Item | None = item
    seen: set[str] = set()
    while current is not None and current.id not in seen:
        if current.id in cover:
            return True
        seen.add(current.id)
        current = by_id.get(current.parent_id) if current.parent_id else None
    return False


def _index_snapshot(
    parts: EngineParts, base: Base, by_id: dict[str, Item], found: _Findings
) -> IndexSnapshot | None:
    """The base's index rows, or None when there is no usable index (reported)."""
    completed = sum(
        1
        for i in by_id.values()
        if i.status is ItemStatus.COMPLETED and i.type not in CONTAINER_TYPES
    )
    try:
        store = parts.stores.get_if_exists(base.id)
        if store is None:
            lost = _lost_index_file(parts, base, completed)
            if lost is not None:
                _index_corrupt(found, base, lost)
                return None
            found.index_usable = True  # no index yet: nothing in it to disagree
            return IndexSnapshot([], [], set(), set(), 0, None)
        errors = store.integrity_check()
        if errors:
            _index_corrupt(found, base, f"index {store.path}: {_first(errors)}")
            return None
        snapshot = store.integrity_snapshot()
        if completed and not snapshot.materials:
            # Not one completed document in the index: the file was lost, emptied (cut to
            # 0 bytes, a fresh SQLite file) or replaced. Failing every item one by one
            # would throw their work away; the copies under raw/ rebuild it all.
            _index_corrupt(
                found,
                base,
                f"the index {store.path} holds none of the base's {completed} completed "
                "document(s) (it was emptied or replaced)",
            )
            return None
        fts_errors = store.fts_integrity_check()
        code_errors = store.vector_block_problems()
    except apsw.Error as exc:
        _index_corrupt(found, base, f"the index cannot be read: {exc}")
        return None
    found.index_usable = True
    if fts_errors:
        found.rebuild_fts = True
        found.add(
            Code.FTS_CORRUPT, base.id, None, f"full-text index check failed: {_first(fts_errors)}"
        )
    if code_errors:
        found.rebuild_vector_codes = True
        found.add(
            Code.VECTOR_CODES_MISMATCH,
            base.id,
            None,
            f"the search codes disagree with the stored vectors: {'; '.join(code_errors)}",
        )
    return snapshot


def _lost_index_file(parts: EngineParts, base: Base, completed: int) -> str | None:
    """Why a base with no index to open has lost it (None: it simply has none yet)."""
    if base.backend is not IndexBackend.SQLITE:
        return None
    path = index_path(parts.layout.base_dir(base.id))
    if path.exists() and not path.is_file():
        return f"the index {path} is not a file"
    if not completed:
        return None
    return f"the index {path} is missing, though {completed} document(s) are completed"


def _index_corrupt(found: _Findings, base: Base, detail: str) -> None:
    found.add(
        Code.INDEX_CORRUPT,
        base.id,
        None,
        f"{detail}; rebuild it from the base's own copies: trove restore {base.id}",
        repairable=False,
    )


def _check_index(
    parts: EngineParts,
    base: Base,
    by_id: dict[str, Item],
    snapshot: IndexSnapshot,
    found: _Findings,
) -> None:
    materials = {m.item_id: m for m in snapshot.materials}
    chunk_ids = {c.chunk_id for c in snapshot.chunks}
    item_chunks: dict[str, list[int]] = defaultdict(list)

    # Orphans: rows of items this base does not have.
    strangers = [i for i in materials if i not in by_id]
    elsewhere = parts.catalog.get_items(strangers) if strangers else {}
    for item_id in strangers:
        other = elsewhere.get(item_id)
        where = f"belongs to base {other.base_id}" if other else "is not in the catalog"
        found.orphan_material_items.append(item_id)
        found.add(
            Code.ORPHAN_MATERIAL,
            base.id,
            item_id,
            f"material {materials[item_id].relative_path!r} ({materials[item_id].chunk_count} "
            f"chunks): its item {where}",
        )
    stray: dict[str, list[int]] = defaultdict(list)
    for chunk in snapshot.chunks:
        if chunk.material_item_id is None or chunk.material_item_id != chunk.item_id:
            stray[chunk.item_id].append(chunk.chunk_id)
        elif chunk.item_id not in by_id:
            pass  # removed with its orphan material
        else:
            item_chunks[chunk.item_id].append(chunk.chunk_id)
    for item_id, ids in stray.items():
        found.orphan_chunk_ids.extend(ids)
        found.add(
            Code.ORPHAN_CHUNK,
            base.id,
            item_id,
            f"{len(ids)} chunk row(s) without a material of their item",
        )
    if snapshot.vector_rowids is not None:
        lost = sorted(snapshot.vector_rowids - chunk_ids)
        if lost:
            found.orphan_vector_ids.extend(lost)
            found.add(
                Code.ORPHAN_VECTOR, base.id, None, f"{len(lost)} vector(s) whose chunk is gone"
            )
    unindexed = snapshot.unit_ids - snapshot.fts_rowids
    ghosts = snapshot.fts_rowids - snapshot.unit_ids
    if unindexed or ghosts or snapshot.unitless_chunks:
        found.rebuild_fts = True
        found.add(
            Code.FTS_MISMATCH,
            base.id,
            None,
            f"{len(unindexed)} passage(s) missing from the full-text index, "
            f"{len(ghosts)} full-text row(s) without a passage of chunks, "
            f"{snapshot.unitless_chunks} chunk(s) without a passage",
        )

    # Completed documents: material, chunks and (vector bases) one vector per chunk.
    vectors = snapshot.vector_rowids or set()
    for item in by_id.values():
        if item.status is not ItemStatus.COMPLETED or item.type in CONTAINER_TYPES:
            continue
        material = materials.get(item.id)
        if material is None:
            found.damaged_items[item.id] = Code.MISSING_MATERIAL
            found.add(
                Code.MISSING_MATERIAL,
                base.id,
                item.id,
                f"completed {item.type} {item.title!r} has no material in the index",
            )
            continue
        if material.chunk_count == 0:
            found.damaged_items[item.id] = Code.MISSING_CHUNKS
            found.add(
                Code.MISSING_CHUNKS,
                base.id,
                item.id,
                f"completed {item.type} {item.title!r} has no chunks in the index",
            )
            continue
        # A document waiting for the vector stage (embed_vectors.py) lacks vectors by design.
        if base.dimensions is not None and item.phase is not ItemPhase.EMBEDDING:
            missing = sum(1 for c in item_chunks[item.id] if c not in vectors)
            if missing:
                found.damaged_items[item.id] = Code.MISSING_VECTORS
                found.add(
                    Code.MISSING_VECTORS,
                    base.id,
                    item.id,
                    f"completed {item.type} {item.title!r}: {missing} of "
                    f"{material.chunk_count} chunk(s) have no vector",
                )
                continue
        if item.chunk_count != material.chunk_count:
            found.chunk_counts[item.id] = material.chunk_count
            found.add(
                Code.CHUNK_COUNT_MISMATCH,
                base.id,
                item.id,
                f"the catalog says {item.chunk_count} chunk(s), the index has "
                f"{material.chunk_count}",
            )


def _list_raw(raw: Path) -> dict[str, float]:
    """Every file under raw/ (relative POSIX path -> modification time)."""
    found: dict[str, float] = {}
    if not raw.is_dir():
        return found
    for dirpath, _dirs, names in os.walk(raw):
        for name in names:
            path = Path(dirpath, name)
            try:
                mtime = path.lstat().st_mtime
            except OSError:
                continue  # removed meanwhile
            found[path.relative_to(raw).as_posix()] = mtime
    return found


def _owned_files(items: Iterable[Item]) -> set[str]:
    owned: set[str] = set()
    for item in items:
        try:
            owned.update(stored_files(item))
        except path_safety.UnsafePathError:
            log.warning("item %s has an unsafe material path %r", item.id, item.relative_path)
    return owned


def _paid_prefixes(items: Iterable[Item]) -> set[str]:
    """Where the records of vectors paid for may lie (paid_vectors.py): beside the material
    of an item still to be indexed (handed back by a normal exit) or interrupted by a
    crash (kept for its reindex), as `dir/prefix` of their names."""
    prefixes: set[str] = set()
    for item in items:
        waiting = item.status in RUNNING_STATUSES or (
            item.status is ItemStatus.FAILED and item.error_code == ErrorCode.INDEXING_INTERRUPTED
        )
        rel = material_path(item) if waiting else None
        if rel is not None:
            folder, _, name = rel.rpartition("/")
            prefix = temp_prefix(Path(name)) + SCRATCH_STEM
            prefixes.add(f"{folder}/{prefix}" if folder else prefix)
    return prefixes


def _kept_paid(rel: str, prefixes: set[str]) -> bool:
    folder, _, name = rel.rpartition("/")
    stem = name.find(SCRATCH_STEM)
    if not prefixes or stem < 0 or not name.endswith(TMP_SUFFIX):
        return False
    prefix = name[: stem + len(SCRATCH_STEM)]
    return (f"{folder}/{prefix}" if folder else prefix) in prefixes


def _check_files(
    base: Base,
    items: list[Item],
    raw: Path,
    on_disk: dict[str, float],
    now: float,
    tmp_grace: float,
    found: _Findings,
) -> None:
    # Files of deleting items are owned until their deletion job removes them.
    owned = _owned_files(items)
    paid = _paid_prefixes(items)
    for rel, mtime in sorted(on_disk.items()):
        if rel in owned or _kept_paid(rel, paid):
            continue
        name = rel.rpartition("/")[2]
        if name.startswith(TMP_PREFIX) and name.endswith(TMP_SUFFIX) and now - mtime < tmp_grace:
            continue  # a write in flight
        found.orphan_files.append(rel)
        found.add(Code.ORPHAN_FILE, base.id, None, f"raw/{rel} belongs to no item")
    for item in items:
        if item.status is not ItemStatus.COMPLETED or item.id in found.damaged_items:
            continue
        try:
            missing = [rel for rel in stored_files(item) if not _is_file(raw, rel)]
        except path_safety.UnsafePathError:
            missing = [str(item.relative_path)]
        if missing:
            found.damaged_items[item.id] = Code.MISSING_MATERIAL_FILE
            found.add(
                Code.MISSING_MATERIAL_FILE,
                base.id,
                item.id,
                f"completed {item.type} {item.title!r}: "
                + ", ".join(f"raw/{rel}" for rel in missing)
                + " is missing",
            )


def _is_file(raw: Path, rel: str) -> bool:
    try:
        return path_safety.resolve_below(raw, rel).is_file()
    except path_safety.UnsafePathError:
        return False


# -- repair ----------------------------------------------------------------------------------


def _repair(
    parts: EngineParts,
    base_id: str | None,
    report: DoctorReport,
    *,
    now: float | None,
    tmp_grace: float,
) -> list[Repair]:
    repairs: list[Repair] = []
    if any(p.code in (Code.STALE_RUNNING_ITEM, Code.STALE_DELETING_ITEM) for p in report.problems):
        # The same path as startup: abandon dead jobs, fail interrupted items, requeue deletions.
        recovered = recover(parts)
        if recovered.interrupted_items:
            repairs.append(
                Repair(
                    Code.STALE_RUNNING_ITEM,
                    base_id,
                    None,
                    f"failed {recovered.interrupted_items} interrupted item(s) "
                    f"({ErrorCode.INDEXING_INTERRUPTED}); reindex them to finish",
                )
            )
        if recovered.resumed_deletions:
            repairs.append(
                Repair(
                    Code.STALE_DELETING_ITEM,
                    base_id,
                    None,
                    f"queued the deletion of {recovered.resumed_deletions} item(s) again; "
                    "it finishes the next time Trove runs its queue",
                )
            )
    bases = _bases(parts, base_id)
    for base in bases:
        with parts.mutex.lock(base.id):
            # Checked again under the mutex: act only on what is still true now.
            try:
                found = _inspect_base(parts, base, now, tmp_grace)
            except apsw.Error:
                continue  # unreadable: reported by the check, nothing to repair safely
            repairs.extend(_repair_base(parts, base, found))
    if base_id is None:
        repairs.extend(_remove_orphan_jobs(parts))
        repairs.extend(_repair_damaged_rows(parts))
        repairs.extend(_remove_portable_leftovers(parts))
    return repairs


# -- portable bases: leftovers of killed exports and imports ----------------------------------


def _portable_leftovers(parts: EngineParts) -> list[Problem]:
    return [
        Problem(
            Code.PORTABLE_LEFTOVER,
            left.base_id,
            None,
            f"{left.path} was left by an export or import that stopped",
            repairable=True,
        )
        for left in staging.find_leftovers(parts.layout)
    ]


def _remove_portable_leftovers(parts: EngineParts) -> list[Repair]:
    known = {b.id for b in parts.catalog.list_bases()}
    return [
        Repair(Code.PORTABLE_LEFTOVER, left.base_id, None, staging.remove_leftover(left, known))
        for left in staging.find_leftovers(parts.layout)
    ]


def _remove_orphan_jobs(parts: EngineParts) -> list[Repair]:
    known = {b.id for b in parts.catalog.list_bases()}
    removed = []
    for job in parts.catalog.list_jobs():
        if job.base_id not in known:
            parts.catalog.finish_job(job.id, "done")  # a finished job's row is deleted
            removed.append(
                Repair(Code.ORPHAN_JOB, job.base_id, job.item_id, f"removed job {job.id}")
            )
    return removed


def _repair_base(parts: EngineParts, base: Base, found: _Findings) -> list[Repair]:
    repairs: list[Repair] = []
    store = parts.stores.get_if_exists(base.id) if found.index_usable else None
    if store is not None:
        repairs.extend(_repair_index(parts, base, store, found))
    repairs.extend(_remove_orphan_files(parts, base, found.orphan_files))
    repairs.extend(_repair_damaged(parts, base, found.damaged_items))
    for item_id, count in found.chunk_counts.items():
        item = parts.catalog.get_item(item_id)
        if item is not None and item.status is ItemStatus.COMPLETED:
            parts.catalog.update_item(item_id, chunk_count=count)
            repairs.append(
                Repair(Code.CHUNK_COUNT_MISMATCH, base.id, item_id, f"chunk count set to {count}")
            )
    return repairs


def _repair_index(
    parts: EngineParts, base: Base, store: BaseIndex, found: _Findings
) -> list[Repair]:
    repairs: list[Repair] = []
    # Read again just before deleting: an item created meanwhile keeps its rows.
    present = parts.catalog.get_items(found.orphan_material_items)
    for item_id in found.orphan_material_items:
        other = present.get(item_id)
        if other is not None and other.base_id == base.id:
            continue
        removed = store.delete_material(item_id)
        repairs.append(
            Repair(
                Code.ORPHAN_MATERIAL,
                base.id,
                item_id,
                f"removed the material and its {removed} chunk(s) from the index",
            )
        )
    if found.orphan_chunk_ids:
        removed = store.delete_chunk_rows(found.orphan_chunk_ids)
        repairs.append(
            Repair(Code.ORPHAN_CHUNK, base.id, None, f"removed {removed} orphan chunk row(s)")
        )
    if found.orphan_vector_ids:
        removed = store.delete_vector_rows(found.orphan_vector_ids)
        repairs.append(
            Repair(Code.ORPHAN_VECTOR, base.id, None, f"removed {removed} orphan vector(s)")
        )
    if found.rebuild_vector_codes:
        placed = store.rebuild_vector_blocks()
        repairs.append(
            Repair(
                Code.VECTOR_CODES_MISMATCH,
                base.id,
                None,
                f"rebuilt the search codes of {placed} vector(s)",
            )
        )
    if found.rebuild_fts:
        written = store.rebuild_fts()
        repairs.append(
            Repair(
                Code.FTS_MISMATCH,
                base.id,
                None,
                f"rebuilt the full-text index: {written} passage(s)",
            )
        )
    return repairs


def _remove_orphan_files(parts: EngineParts, base: Base, orphans: list[str]) -> list[Repair]:
    if not orphans:
        return []
    raw = parts.layout.raw_dir(base.id)
    # Read again just before deleting: never remove a file an item references now.
    owned = _owned_files(parts.catalog.list_items(base.id))
    repairs = []
    for rel in orphans:
        if rel in owned:
            continue
        try:
            path = path_safety.resolve_below(raw, rel)
        except path_safety.UnsafePathError:
            continue
        try:
            path.unlink(missing_ok=True)
        except OSError as exc:
            log.warning("could not remove orphan file %s: %s", path, exc)
            continue
        _remove_empty_dirs(raw, path.parent)
        repairs.append(Repair(Code.ORPHAN_FILE, base.id, None, f"deleted raw/{rel}"))
    return repairs


def _remove_empty_dirs(raw: Path, folder: Path) -> None:
    top = raw.resolve()
    current = folder.resolve()
    while current != top and top in current.parents:
        try:
            current.rmdir()
        except OSError:
            return  # not empty
        current = current.parent


# What the index lost of an item whose copy under raw/ is intact: indexing it again from
# that copy brings it back, so the repair never throws the item's work away.
_INDEX_LOSSES = frozenset({Code.MISSING_MATERIAL, Code.MISSING_CHUNKS, Code.MISSING_VECTORS})


def _repair_damaged(parts: EngineParts, base: Base, damaged: dict[str, Code]) -> list[Repair]:
    repairs = []
    catalog = parts.catalog
    raw = parts.layout.raw_dir(base.id)
    for item_id, code in damaged.items():
        item = catalog.get_item(item_id)
        if item is None or item.status is not ItemStatus.COMPLETED:
            continue  # changed meanwhile
        if code is Code.MISSING_VECTORS:
            repairs.append(_vectors_again(parts, base, item))
            continue
        if code in _INDEX_LOSSES and _copy_intact(raw, item):
            repairs.append(_index_again(parts, base, item, code))
            continue
        try:
            with catalog.transaction():
                # completed -> failed is not a legal step; a reindex would pass processing too.
                catalog.set_item_status(item_id, ItemStatus.PROCESSING)
                catalog.set_item_status(
                    item_id,
                    ItemStatus.FAILED,
                    error_code=ErrorCode.INDEXING_INTERRUPTED,
                    error_message=REPAIRED_MESSAGE,
                )
        except IllegalTransitionError:
            continue
        settle_parent(catalog, item.parent_id)
        repairs.append(
            Repair(
                code, base.id, item_id, f"marked {item.title!r} failed; reindex it to restore it"
            )
        )
    return repairs


def _vectors_again(parts: EngineParts, base: Base, item: Item) -> Repair:
    """Only vectors are lost: the document stays searchable by full text and waits for the
    vector stage, which computes just the missing ones (nothing is read again)."""
    parts.catalog.set_item_phase(item.id, ItemPhase.EMBEDDING, None)
    queue_vectors(parts, base.id)
    return Repair(
        Code.MISSING_VECTORS,
        base.id,
        item.id,
        f"queued the missing vectors of {item.title!r} (searchable by full text meanwhile)",
        requeued=True,
    )


def _copy_intact(raw: Path, item: Item) -> bool:
    try:
        files = stored_files(item)
    except path_safety.UnsafePathError:
        return False
    if in_place(item) and check_copy(raw, item) is not SourceCheck.OK:
        return False  # no copy, and its original is gone: nothing to index again from
    return bool(files) and all(_is_file(raw, rel) for rel in files)


def _index_again(parts: EngineParts, base: Base, item: Item, code: Code) -> Repair:
    """Queue the item to be indexed again from its own copy (as restore does for all)."""
    with parts.catalog.transaction():
        parts.catalog.set_item_status(item.id, ItemStatus.PROCESSING)
        queue_work(parts, item, reacquire=False)
        settle_parent(parts.catalog, item.parent_id)
    return Repair(
        code,
        base.id,
        item.id,
        f"queued {item.title!r} to be indexed again from its own copy under raw/",
        requeued=True,
    )
