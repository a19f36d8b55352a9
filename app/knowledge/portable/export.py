"""Export a base to one `.trovebase` file (format: archive.py), streamed and crash-safe.

The file is written as `FILE.part` and renamed into place when complete, so a killed export
never leaves a truncated FILE. The index is snapshotted with VACUUM INTO (one read
transaction) while other processes may go on writing; the items are read first, so the
snapshot is trimmed to them: a material whose item was not completed when the items were
read is dropped, and a completed item whose material the snapshot lacks (it was deleted
meanwhile) is left out.
"""

from __future__ import annotations

import io
import json
import os
import secrets
import shutil
import time
import zipfile
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO, Any

from app import __version__
from app.knowledge import path_safety
from app.knowledge.engine import EngineParts
from app.knowledge.folder_scan import led_outside
from app.knowledge.material_paths import (
    CONTAINER_TYPES,
    IN_PLACE_KEY,
    in_place,
    material_path,
    stored_files,
)
from app.knowledge.pipeline.store.index_store import IndexStore
from app.knowledge.portable import staging
from app.knowledge.portable.archive import (
    BASE_MEMBER,
    FORMAT_VERSION,
    INDEX_MEMBER,
    ITEMS_MEMBER,
    MANIFEST,
    RAW_PREFIX,
    Cancelled,
    Manifest,
    Member,
    Progress,
    copy_hashed,
)
from app.knowledge.types import (
    RUNNING_STATUSES,
    Base,
    ErrorCode,
    ExportReport,
    Item,
    ItemStatus,
    ItemType,
)

PART_SUFFIX = ".part"
INTERRUPTED = "it was being indexed when its base was exported; reindex it to finish it"


@dataclass(slots=True)
class _Counter:
    done: int
    total: int
    progress: Progress | None

    def add(self, n: int) -> None:
        self.done += n
        if self.progress is not None:
            self.progress(self.done, self.total)


def base_settings(base: Base) -> dict[str, Any]:
    """The settings an imported base starts with (agent writes stay off: a file received
    from elsewhere does not grant agents anything)."""
    return {
        "name": base.name,
        "embeddingModel": base.embedding_model,
        "dimensions": base.dimensions,
        "rerankModel": base.rerank_model,
        "documentCount": base.document_count,
        "threshold": base.threshold,
        "chunkSize": base.chunk_size,
        "chunkOverlap": base.chunk_overlap,
        "ocr": {
            "enabled": base.ocr.enabled,
            "languages": list(base.ocr.languages),
            "maxPages": base.ocr.max_pages,
        },
        "createdAt": base.created_at,
    }


def item_json(item: Item) -> dict[str, Any]:
    return {
        "id": item.id,
        "parentId": item.parent_id,
        "type": item.type.value,
        "source": item.source,
        "title": item.title,
        "relativePath": item.relative_path,
        "status": item.status.value,
        "errorCode": item.error_code,
        "errorMessage": item.error_message,
        "chunkCount": item.chunk_count,
        "size": item.size,
        "contentHash": item.content_hash,
        "createdAt": item.created_at,
        "updatedAt": item.updated_at,
        "options": item.options,
    }


# The item types whose source is a path on this computer (the others: a web address, or a
# note's own text).
_PATH_SOURCES = frozenset({ItemType.FILE, ItemType.DIRECTORY})


def without_path(item: Item) -> Item:
    """The item as an export without source paths records it: a file's or folder's path on
    this computer (which names the person, their folders, their drives) becomes its name
    inside the base, in its source and in its error message alike."""
    if item.type not in _PATH_SOURCES:
        return item
    name = item.relative_path or item.title
    message = item.error_message
    if message and item.source:
        message = message.replace(item.source, name)
    return replace(item, source=name, error_message=message)


def exported_items(items: list[Item]) -> list[Item]:
    """The base's items as the export records them: parents first, deletions left out, and
    work in flight recorded as interrupted (its job does not travel with the file)."""
    by_id = {i.id: i for i in items}

    def gone(item: Item) -> bool:
        seen = item
        while True:
            if seen.status is ItemStatus.DELETING:
                return True
            if seen.parent_id is None or seen.parent_id not in by_id:
                return seen.parent_id is not None
            seen = by_id[seen.parent_id]

    def depth(item: Item) -> int:
        n, seen = 0, item
        while seen.parent_id is not None and seen.parent_id in by_id:
            n, seen = n + 1, by_id[seen.parent_id]
        return n

    kept = [i for i in items if not gone(i)]
    return [_settled(i) for i in sorted(kept, key=depth)]


def _settled(item: Item) -> Item:
    if item.status not in RUNNING_STATUSES:
        return item
    return _as_failed(item)


def _as_failed(item: Item) -> Item:
    return replace(
        item,
        status=ItemStatus.FAILED,
        phase=None,
        progress=None,
        error_code=ErrorCode.INDEXING_INTERRUPTED.value,
        error_message=INTERRUPTED,
    )


def _trim_snapshot(
    path: Path, items: list[Item], dimensions: int | None
) -> tuple[list[Item], int, int]:
    """Make the snapshot hold exactly the completed leaves' materials; (items, chunks, vectors)."""
    store = IndexStore(path, create=True)
    try:
        if dimensions is not None:
            store.ensure_vectors(dimensions)
        completed = {
            i.id
            for i in items
            if i.status is ItemStatus.COMPLETED and i.type not in CONTAINER_TYPES
        }
        present = set(store.item_ids())
        for item_id in present - completed:
            store.delete_material(item_id)
        kept = [_as_failed(i) if i.id in completed and i.id not in present else i for i in items]
        return kept, store.chunk_count(), store.vector_count()
    finally:
        store.close()


def _member_info(name: str) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name, date_time=time.localtime()[:6])
    info.compress_type = zipfile.ZIP_STORED
    return info


def _write_member(
    zf: zipfile.ZipFile,
    name: str,
    src: IO[bytes],
    counter: _Counter,
    cancelled: Cancelled | None,
) -> Member:
    with zf.open(_member_info(name), "w", force_zip64=True) as dst:
        sha, size = copy_hashed(src, dst, on_block=counter.add, cancelled=cancelled)
    return Member(name, sha, size)


def _raw_files(parts: EngineParts, base_id: str, items: list[Item]) -> list[tuple[str, Path]]:
    raw = parts.layout.raw_dir(base_id)
    found: list[tuple[str, Path]] = []
    seen: set[str] = set()
    for item in items:
        for rel in stored_files(item):
            if rel in seen:
                continue
            try:
                path = path_safety.resolve_below(raw, rel)
            except path_safety.UnsafePathError:
                continue
            if path.is_file():
                seen.add(rel)
                found.append((rel, path))
    return found


def _with_originals(
    parts: EngineParts, items: list[Item]
) -> tuple[list[Item], list[tuple[str, Path]], list[str]]:
    """The originals of files indexed in place, carried as if they were copies: their items
    lose the in-place mark (the importing base keeps them as copies). Returns the items,
    the (raw name, original) pairs, and the originals that are gone or now lead outside
    their folder (those items stay in place, without an original in the file)."""
    carried: list[tuple[str, Path]] = []
    gone: list[str] = []
    out: list[Item] = []
    for item in items:
        if (
            not in_place(item)
            or item.relative_path is None
            or item.status is not ItemStatus.COMPLETED
        ):
            out.append(item)
            continue
        original = Path(item.source)
        if not original.is_file() or led_outside(parts.catalog, item) is not None:
            gone.append(item.source)
            out.append(item)
            continue
        options = {k: v for k, v in (item.options or {}).items() if k != IN_PLACE_KEY}
        out.append(replace(item, options=options or None))
        if material_path(item) != item.relative_path:  # a plain text's material is its copy
            carried.append((item.relative_path, original))
    return out, carried, gone


def export_base(
    parts: EngineParts,
    base_id: str,
    dest: Path,
    *,
    progress: Progress | None = None,
    cancelled: Cancelled | None = None,
    strip_sources: bool = False,
    with_originals: bool = False,
) -> ExportReport:
    """Write the base to `dest`; `strip_sources` leaves out where its files and folders
    are on this computer (without_path); `with_originals` carries the originals of files
    indexed in place (a linked folder's), which otherwise stay out: their text and index
    travel, their bytes live in the person's folder."""
    base = parts.catalog.require_base(base_id)
    read_only = parts.catalog.read_only  # a backup on read-only media: it only reads the base
    if not read_only:
        staging.clean_leftovers(parts.layout, {b.id for b in parts.catalog.list_bases()})
    items = exported_items(parts.catalog.list_items(base_id))
    dest.parent.mkdir(parents=True, exist_ok=True)
    work = _beside(dest) if read_only else staging.make_staging(parts.layout, "export")
    part = dest.with_name(dest.name + PART_SUFFIX)
    try:
        snapshot = work / INDEX_MEMBER
        store = parts.stores.get_if_exists(base_id)
        if store is not None:
            store.snapshot_to(snapshot)
        items, chunks, vectors = _trim_snapshot(snapshot, items, base.dimensions)
        files = _raw_files(parts, base_id, items)
        gone: list[str] = []
        if with_originals:
            items, originals, gone = _with_originals(parts, items)
            files.extend(originals)
        meta = json.dumps(base_settings(base), ensure_ascii=False).encode("utf-8")
        lines = work / ITEMS_MEMBER
        with lines.open("w", encoding="utf-8") as out:
            for item in items:
                row = without_path(item) if strip_sources else item
                out.write(json.dumps(item_json(row), ensure_ascii=False) + "\n")
        total = len(meta) + lines.stat().st_size + snapshot.stat().st_size
        total += sum(p.stat().st_size for _, p in files)
        counter = _Counter(0, total, progress)
        members: dict[str, Member] = {}
        with zipfile.ZipFile(part, "w", zipfile.ZIP_STORED, allowZip64=True) as zf:
            members[BASE_MEMBER] = _write_member(
                zf, BASE_MEMBER, io.BytesIO(meta), counter, cancelled
            )
            with lines.open("rb") as src:
                members[ITEMS_MEMBER] = _write_member(zf, ITEMS_MEMBER, src, counter, cancelled)
            with snapshot.open("rb") as src:
                members[INDEX_MEMBER] = _write_member(zf, INDEX_MEMBER, src, counter, cancelled)
            for rel, path in files:
                name = RAW_PREFIX + rel
                with path.open("rb") as src:
                    members[name] = _write_member(zf, name, src, counter, cancelled)
            manifest = Manifest(
                format_version=FORMAT_VERSION,
                app_version=__version__,
                base_name=base.name,
                embedding_model=base.embedding_model,
                dimensions=base.dimensions,
                counts={
                    "items": len(items),
                    "files": len(files),
                    "chunks": chunks,
                    "vectors": vectors,
                    "bytes": total,
                },
                members=members,
            )
            zf.writestr(
                _member_info(MANIFEST), json.dumps(manifest.to_json(), ensure_ascii=False, indent=1)
            )
        _fsync(part)
        os.replace(part, dest)
    except BaseException:
        part.unlink(missing_ok=True)
        raise
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return ExportReport(
        str(dest), len(items), len(files), chunks, vectors, total, originals_gone=gone
    )


def _beside(dest: Path) -> Path:
    """A work folder next to the export file, for a data folder Trove may not write."""
    folder = dest.with_name(f".{dest.name}.staging-{secrets.token_hex(8)}")
    folder.mkdir()
    return folder


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
