"""Import a `.trovebase` file as a new base, verified before anything becomes visible.

Every member is unpacked into a staging folder and hashed as it is copied; one checksum or
size that disagrees with the manifest, or a file cut short, refuses the whole import. The
staged index gets the new item ids, then the finished base folder moves into `bases/` (one
rename on the same file system) with an `importing` marker, the catalog rows follow in one
transaction, and the marker goes: a killed import leaves a staging folder or a marked
folder that no catalog row names, and recovery removes either (staging.py).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import time
import zipfile
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import apsw

from app.knowledge import path_safety
from app.knowledge.catalog import new_id
from app.knowledge.engine import EngineParts
from app.knowledge.ocr.settings import checked_ocr_settings
from app.knowledge.pipeline.store.index_store import INDEX_DIR, INDEX_FILE, IndexStore
from app.knowledge.portable import staging
from app.knowledge.portable.archive import (
    BASE_MEMBER,
    INDEX_MEMBER,
    ITEMS_MEMBER,
    MANIFEST,
    MANIFEST_MAX_BYTES,
    RAW_PREFIX,
    Cancelled,
    Manifest,
    Member,
    Progress,
    TransferCancelled,
    copy_hashed,
    damaged,
    parse_manifest,
)
from app.knowledge.source_origin import Origin, with_origin
from app.knowledge.types import (
    DEFAULT_CHUNK_OVERLAP,
    DEFAULT_CHUNK_SIZE,
    DEFAULT_DOCUMENT_COUNT,
    DEFAULT_OCR_MAX_PAGES,
    OCR_LANGUAGES,
    RUNNING_STATUSES,
    Base,
    BaseStatus,
    ErrorCode,
    ImportReport,
    Item,
    ItemStatus,
    ItemType,
    OcrSettings,
    TroveError,
)

_NUMBERED = re.compile(r"^(.*) \((\d+)\)$")
# Errors a damaged or truncated zip raises while it is read.
_ZIP_ERRORS = (zipfile.BadZipFile, zlib.error, EOFError, zipfile.LargeZipFile)


def free_name(taken: set[str], wanted: str) -> str:
    """`wanted`, or `wanted (2)`, `(3)`... when a base already has that name."""
    if wanted not in taken:
        return wanted
    match = _NUMBERED.match(wanted)
    stem = match.group(1) if match else wanted
    n = 2
    while f"{stem} ({n})" in taken:
        n += 1
    return f"{stem} ({n})"


@contextmanager
def _open_zip(src: Path) -> Iterator[zipfile.ZipFile]:
    try:
        zf = zipfile.ZipFile(src)
    except _ZIP_ERRORS as exc:
        raise damaged(f"{exc} (cut short, or not a .trovebase file)") from exc
    with zf:
        yield zf


def _manifest(zf: zipfile.ZipFile) -> Manifest:
    try:
        info = zf.getinfo(MANIFEST)
    except KeyError as exc:
        raise damaged(f"it has no {MANIFEST}") from exc
    if info.file_size > MANIFEST_MAX_BYTES:
        raise damaged(f"{MANIFEST} is too large")
    try:
        data = zf.read(info)
    except _ZIP_ERRORS as exc:
        raise damaged(f"{MANIFEST} cannot be read ({exc})") from exc
    manifest = parse_manifest(data)
    names = {i.filename for i in zf.infolist()} - {MANIFEST}
    if names != set(manifest.members):
        extra = sorted(names - set(manifest.members))[:3]
        missing = sorted(set(manifest.members) - names)[:3]
        raise damaged(f"its members and its manifest disagree (extra {extra}, missing {missing})")
    for name, member in manifest.members.items():
        if zf.getinfo(name).file_size != member.size:
            raise damaged(f"{name} has another size than its manifest says")
    return manifest


def _unpack(
    zf: zipfile.ZipFile,
    member: Member,
    target: Path,
    on_block: Progress | None,
    done: list[int],
    total: int,
    cancelled: Cancelled | None,
) -> None:
    def step(n: int) -> None:
        done[0] += n
        if on_block is not None:
            on_block(done[0], total)

    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        with zf.open(member.name) as src, target.open("wb") as dst:
            sha, size = copy_hashed(src, dst, limit=member.size, on_block=step, cancelled=cancelled)
    except _ZIP_ERRORS as exc:
        raise damaged(f"{member.name} cannot be read ({exc})") from exc
    if size != member.size or sha != member.sha256:
        raise damaged(f"{member.name} does not match its checksum")


def _staged_path(base_dir: Path, name: str, work: Path) -> Path:
    if name == INDEX_MEMBER:
        return base_dir / INDEX_DIR / INDEX_FILE
    if name in (BASE_MEMBER, ITEMS_MEMBER):
        return work / name
    try:
        return path_safety.resolve_below(base_dir / "raw", name[len(RAW_PREFIX) :])
    except path_safety.UnsafePathError as exc:
        raise TroveError(ErrorCode.UNSAFE_PATH, f"unsafe path {name!r} in the export file") from exc


def _read_settings(path: Path, manifest: Manifest) -> dict[str, Any]:
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise damaged(f"{BASE_MEMBER} is not JSON") from exc
    if not isinstance(raw, dict):
        raise damaged(f"{BASE_MEMBER} is not an object")
    if (
        raw.get("embeddingModel") != manifest.embedding_model
        or raw.get("dimensions") != manifest.dimensions
    ):
        raise damaged("the base's model disagrees with the manifest")
    return raw


def _read_items(path: Path, base_id: str) -> tuple[list[Item], dict[str, str]]:
    """The items with new ids in the new base; and old id -> new id."""
    items: list[Item] = []
    new_ids: dict[str, str] = {}
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            try:
                row = json.loads(line)
                old = str(row["id"])
                parent = row.get("parentId")
                if parent is not None and parent not in new_ids:
                    raise ValueError("its parent is not listed before it")
                rel = row.get("relativePath")
                if rel is not None:
                    path_safety.check_relative_path(rel)
                new_ids[old] = new_id()
                item = Item(
                    id=new_ids[old],
                    base_id=base_id,
                    parent_id=new_ids[parent] if parent is not None else None,
                    type=ItemType(row["type"]),
                    source=str(row["source"]),
                    title=str(row["title"]),
                    relative_path=rel,
                    status=ItemStatus(row["status"]),
                    phase=None,
                    progress=None,
                    error_code=row.get("errorCode"),
                    error_message=row.get("errorMessage"),
                    chunk_count=int(row.get("chunkCount") or 0),
                    size=row.get("size"),
                    content_hash=row.get("contentHash"),
                    created_at=float(row["createdAt"]),
                    updated_at=float(row["updatedAt"]),
                    # Its URLs are someone else's choice: fetched again, they reach only
                    # public addresses unless the person allows more (source_origin.py).
                    options=with_origin(row.get("options"), Origin.IMPORT),
                )
            except path_safety.UnsafePathError as exc:
                raise TroveError(
                    ErrorCode.UNSAFE_PATH, f"{ITEMS_MEMBER} line {number}: unsafe path: {exc}"
                ) from exc
            except (KeyError, TypeError, ValueError) as exc:
                raise damaged(f"{ITEMS_MEMBER} line {number}: {exc}") from exc
            if item.status in RUNNING_STATUSES or item.status is ItemStatus.DELETING:
                raise damaged(f"{ITEMS_MEMBER} line {number}: an item in state {item.status}")
            items.append(item)
    return items, new_ids


def _new_base(parts: EngineParts, settings: dict[str, Any], name: str) -> Base:
    try:
        return replace(base_from_settings(settings, new_id()), name=name)
    except (TypeError, ValueError, TroveError) as exc:
        raise damaged(f"{BASE_MEMBER}: {exc}") from exc


def base_from_settings(settings: dict[str, Any], base_id: str) -> Base:
    """A base row from exported settings (export.base_settings); agent writes stay off."""
    now = time.time()
    return Base(
        id=base_id,
        name=str(settings.get("name") or "").strip() or "Shared base",
        embedding_model=settings.get("embeddingModel"),
        dimensions=settings.get("dimensions"),
        rerank_model=settings.get("rerankModel"),
        document_count=int(settings.get("documentCount", DEFAULT_DOCUMENT_COUNT)),
        threshold=settings.get("threshold"),
        chunk_size=int(settings.get("chunkSize", DEFAULT_CHUNK_SIZE)),
        chunk_overlap=int(settings.get("chunkOverlap", DEFAULT_CHUNK_OVERLAP)),
        status=BaseStatus.COMPLETED,
        status_reason=None,
        created_at=float(settings.get("createdAt", now)),
        updated_at=now,
        agent_writes=False,
        ocr=_ocr_settings(settings.get("ocr")),
    )


def _ocr_settings(raw: object) -> OcrSettings:
    """The base's text recognition settings; files from before OCR carry none: defaults."""
    if raw is None:
        return OcrSettings()
    if not isinstance(raw, dict):
        raise ValueError("ocr is not an object")
    enabled = raw.get("enabled")
    if enabled is not None and not isinstance(enabled, bool):
        raise ValueError("ocr.enabled is not true, false or null")
    languages = raw.get("languages", list(OCR_LANGUAGES))
    if not isinstance(languages, list) or not all(isinstance(c, str) for c in languages):
        raise ValueError("ocr.languages is not a list of codes")
    return checked_ocr_settings(
        OcrSettings(enabled, tuple(languages), int(raw.get("maxPages", DEFAULT_OCR_MAX_PAGES)))
    )


def model_available(parts: EngineParts, model_id: str | None) -> bool:
    """Whether this Trove can embed with the model (configured here); asks it nothing."""
    if model_id is None:
        return True
    try:
        parts.models.embedder(model_id)
    except Exception:
        return False
    return True


def import_base(
    parts: EngineParts,
    src: Path,
    *,
    name: str | None = None,
    progress: Progress | None = None,
    cancelled: Cancelled | None = None,
) -> ImportReport:
    staging.clean_leftovers(parts.layout, {b.id for b in parts.catalog.list_bases()})
    work = staging.make_staging(parts.layout, "import")
    try:
        return _import(parts, src, work, name, progress, cancelled)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _import(
    parts: EngineParts,
    src: Path,
    work: Path,
    name: str | None,
    progress: Progress | None,
    cancelled: Cancelled | None,
) -> ImportReport:
    staged = work / "base"
    (staged / "raw").mkdir(parents=True)
    with _open_zip(src) as zf:
        manifest = _manifest(zf)
        total = sum(m.size for m in manifest.members.values())
        done = [0]
        for member in manifest.members.values():
            target = _staged_path(staged, member.name, work)
            _unpack(zf, member, target, progress, done, total, cancelled)
    settings = _read_settings(work / BASE_MEMBER, manifest)
    wanted = (name or "").strip() or str(settings.get("name") or manifest.base_name).strip()
    if not wanted:
        raise TroveError(ErrorCode.INVALID_ARGUMENT, "a knowledge base needs a name")
    base = _new_base(parts, settings, wanted)
    items, new_ids = _read_items(work / ITEMS_MEMBER, base.id)
    chunks, vectors = _prepare_index(staged / INDEX_DIR / INDEX_FILE, manifest, new_ids)
    if cancelled is not None and cancelled():
        raise TransferCancelled()
    available = model_available(parts, base.embedding_model)
    final = parts.layout.base_dir(base.id)
    with parts.mutex.lock(base.id):
        staging.mark_importing(staged)
        os.replace(staged, final)
        marker = staging.import_marker(final)
        try:
            with parts.catalog.transaction():
                taken = {b.name for b in parts.catalog.list_bases()}
                base = replace(base, name=free_name(taken, base.name))
                parts.catalog.insert_base_row(base)
                parts.catalog.insert_settled_items(items)
        except (apsw.ConstraintError, ValueError) as exc:
            # Settings or rows the catalog's schema refuses: the file was made by hand.
            shutil.rmtree(final, ignore_errors=True)
            raise damaged(f"its base or items break the catalog's rules ({exc})") from exc
        except BaseException:
            shutil.rmtree(final, ignore_errors=True)
            raise
        marker.unlink(missing_ok=True)
    files = sum(1 for m in manifest.members if m.startswith(RAW_PREFIX))
    return ImportReport(base, len(items), files, chunks, vectors, available)


def _prepare_index(path: Path, manifest: Manifest, new_ids: dict[str, str]) -> tuple[int, int]:
    """Migrate the staged index, give its rows the new item ids; (chunks, vectors)."""
    try:
        store = IndexStore(path, create=False)
    except Exception as exc:
        raise damaged(f"{INDEX_MEMBER} is not a usable index ({exc})") from exc
    try:
        if store.integrity_check():
            raise damaged(f"{INDEX_MEMBER} fails SQLite's integrity check")
        if store.dimensions != manifest.dimensions:
            raise damaged("the index's vector size disagrees with the manifest")
        store.rename_items(new_ids)
        store.seed_epoch()
        return store.chunk_count(), store.vector_count()
    finally:
        store.close()
