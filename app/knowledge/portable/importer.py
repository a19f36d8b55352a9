"""Import a `.trovebase` file as a new base, verified before anything becomes visible.

Every member is unpacked into a staging folder and hashed as it is copied; one checksum or
size that disagrees with the manifest, or a file cut short, refuses the whole import. The
file is someone else's, so nothing in it is trusted further than it is checked: the JSON
members are read within caps, the items are checked against each other and against the raw
files, and the archive's index is never written to or moved in: a fresh index is rebuilt
from its rows (index_rebuild.py). Every item is marked imported, so its source is kept as
information and never read (imported_sources.py). Then the finished base folder moves into
`bases/` (one rename on the same file system) with an `importing` marker, the catalog rows
follow in one transaction, and the marker goes: a killed import leaves a staging folder or
a marked folder that no catalog row names, and recovery removes either (staging.py).
"""

from __future__ import annotations

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
from urllib.parse import urlsplit

import apsw

from app.knowledge import imported_sources, path_safety
from app.knowledge.base_names import checked_name, fitted_name
from app.knowledge.catalog import new_id
from app.knowledge.engine import EngineParts
from app.knowledge.material_paths import CONTAINER_TYPES, material_path, stored_files
from app.knowledge.ocr.settings import checked_ocr_settings
from app.knowledge.pipeline.store.index_store import INDEX_DIR, INDEX_FILE
from app.knowledge.portable import index_rebuild, staging
from app.knowledge.portable.archive import (
    BASE_MEMBER,
    INDEX_MEMBER,
    ITEM_LINE_MAX_BYTES,
    ITEMS_MEMBER,
    MANIFEST,
    MANIFEST_BASE_BYTES,
    MANIFEST_BYTES_PER_MEMBER,
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
    read_json,
)
from app.knowledge.portable.index_rebuild import Wanted
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
# The name of a base whose file names none.
SHARED_BASE_NAME = "Shared base"
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
    infos = zf.infolist()
    _check_entries(infos)
    # Read whole, so no larger than the zip's own directory makes plausible.
    plausible = MANIFEST_BASE_BYTES + sum(
        len(i.filename.encode("utf-8", "surrogatepass")) + MANIFEST_BYTES_PER_MEMBER for i in infos
    )
    if info.file_size > min(MANIFEST_MAX_BYTES, plausible):
        raise damaged(f"{MANIFEST} is larger than a list of its {len(infos)} members can be")
    try:
        data = zf.read(info)
    except _ZIP_ERRORS as exc:
        raise damaged(f"{MANIFEST} cannot be read ({exc})") from exc
    manifest = parse_manifest(data)
    names = {i.filename for i in infos} - {MANIFEST}
    if names != set(manifest.members):
        extra = sorted(names - set(manifest.members))[:3]
        missing = sorted(set(manifest.members) - names)[:3]
        raise damaged(f"its members and its manifest disagree (extra {extra}, missing {missing})")
    for name, member in manifest.members.items():
        if zf.getinfo(name).file_size != member.size:
            raise damaged(f"{name} has another size than its manifest says")
    return manifest


def _check_entries(infos: list[zipfile.ZipInfo]) -> None:
    """Trove writes every member once and stored: a compressed member (a zip bomb expands
    a thousandfold) or one listed twice was not written by Trove."""
    names = [i.filename for i in infos]
    if len(set(names)) != len(names):
        raise damaged("a member is in it twice")
    packed = next((i.filename for i in infos if i.compress_type != zipfile.ZIP_STORED), None)
    if packed is not None:
        raise damaged(f"{packed!r} is compressed; Trove stores every member as it is")


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
    if name in (BASE_MEMBER, ITEMS_MEMBER, INDEX_MEMBER):
        # The archive's index stays in the work folder: only its rebuilt copy goes in.
        return work / name
    try:
        return path_safety.resolve_below(base_dir / "raw", name[len(RAW_PREFIX) :])
    except path_safety.UnsafePathError as exc:
        raise TroveError(ErrorCode.UNSAFE_PATH, f"unsafe path {name!r} in the export file") from exc


def _read_settings(path: Path, manifest: Manifest) -> dict[str, Any]:
    # Capped by the manifest check (SETTINGS_MAX_BYTES) before it was unpacked.
    raw = read_json(path.read_bytes(), BASE_MEMBER)
    if not isinstance(raw, dict):
        raise damaged(f"{BASE_MEMBER} is not an object")
    if (
        raw.get("embeddingModel") != manifest.embedding_model
        or raw.get("dimensions") != manifest.dimensions
    ):
        raise damaged("the base's model disagrees with the manifest")
    return raw


def _lines(path: Path) -> Iterator[tuple[int, Any]]:
    """(line number, JSON) of each line of items.jsonl, a line at a time, each capped."""
    with path.open("rb") as lines:
        number = 0
        while line := lines.readline(ITEM_LINE_MAX_BYTES + 1):
            number += 1
            if len(line) > ITEM_LINE_MAX_BYTES:
                raise damaged(f"{ITEMS_MEMBER} line {number} is longer than an item can be")
            if line.strip():
                yield number, read_json(line, f"{ITEMS_MEMBER} line {number}")


def _read_items(path: Path, base_id: str) -> tuple[list[Item], dict[str, str]]:
    """The items with new ids in the new base; and old id -> new id."""
    items: list[Item] = []
    new_ids: dict[str, str] = {}
    by_new: dict[str, Item] = {}
    for number, row in _lines(path):
        try:
            if not isinstance(row, dict):
                raise ValueError("it is not an object")
            item = _item(row, base_id, new_ids, by_new)
        except path_safety.UnsafePathError as exc:
            raise TroveError(
                ErrorCode.UNSAFE_PATH, f"{ITEMS_MEMBER} line {number}: unsafe path: {exc}"
            ) from exc
        except (KeyError, TypeError, ValueError) as exc:
            raise damaged(f"{ITEMS_MEMBER} line {number}: {exc}") from exc
        if item.status in RUNNING_STATUSES or item.status is ItemStatus.DELETING:
            raise damaged(f"{ITEMS_MEMBER} line {number}: an item in state {item.status}")
        items.append(item)
        by_new[item.id] = item
    return items, new_ids


def _item(
    row: dict[str, Any], base_id: str, new_ids: dict[str, str], by_new: dict[str, Item]
) -> Item:
    """One item row as the new base keeps it; new_ids learns its new id."""
    old = str(row["id"])
    if old in new_ids:
        raise ValueError(f"the id {old!r} is listed twice")
    kind = ItemType(row["type"])
    parent = row.get("parentId")
    if parent is not None:
        parent_item = by_new.get(new_ids.get(str(parent), ""))
        if parent_item is None:
            raise ValueError("its parent is not listed before it")
        if _CHILD_TYPES.get(parent_item.type) is not kind or parent_item.parent_id is not None:
            raise ValueError(f"a {kind} cannot be inside a {parent_item.type}")
    source = _text(row["source"], "source")
    if kind in _WEB_TYPES and urlsplit(source).scheme.lower() not in ("http", "https"):
        # Opened in a browser from the window: no file:, smb: or javascript: address.
        raise ValueError(f"a {kind} whose address is not http or https")
    rel = row.get("relativePath")
    if rel is not None:
        path_safety.check_relative_path(_text(rel, "relativePath"))
    options = row.get("options")
    if options is not None and not isinstance(options, dict):
        raise ValueError("its options are not an object")
    new_ids[old] = new_id()
    return Item(
        id=new_ids[old],
        base_id=base_id,
        parent_id=new_ids[str(parent)] if parent is not None else None,
        type=kind,
        source=source,
        title=_text(row["title"], "title"),
        relative_path=rel,
        status=ItemStatus(row["status"]),
        phase=None,
        progress=None,
        error_code=_optional_text(row.get("errorCode"), "errorCode"),
        error_message=_optional_text(row.get("errorMessage"), "errorMessage"),
        chunk_count=int(row.get("chunkCount") or 0),
        size=None if row.get("size") is None else int(row["size"]),
        content_hash=_optional_text(row.get("contentHash"), "contentHash"),
        created_at=float(row["createdAt"]),
        updated_at=float(row["updatedAt"]),
        # Whatever the file says: every item it brings is imported (imported_sources.py).
        # Its URLs are someone else's choice: fetched again, they reach only public
        # addresses unless the person allows more (source_origin.py).
        options=with_origin(imported_sources.marked(options), Origin.IMPORT),
    )


# What a folder or sitemap holds (only roots hold anything).
_CHILD_TYPES = {ItemType.DIRECTORY: ItemType.FILE, ItemType.SITEMAP: ItemType.URL}
_WEB_TYPES = frozenset({ItemType.URL, ItemType.SITEMAP})


def _text(value: object, what: str) -> str:
    if not isinstance(value, str):
        raise ValueError(f"its {what} is not text")
    return value


def _optional_text(value: object, what: str) -> str | None:
    return None if value is None else _text(value, what)


def _documents(
    items: list[Item], old_ids: dict[str, str], raw: dict[str, int]
) -> dict[str, Wanted]:
    """Old item id -> where the new index puts each completed document's material; every
    raw file belongs to exactly one item, and every completed document has its files."""
    by_new = {item.id: item for item in items}
    owners: dict[str, str] = {}
    for item in items:
        for rel in stored_files(item):
            if rel in owners:
                raise damaged(f"{item.title!r} and another item both claim raw/{rel}")
            owners[rel] = item.id
    stray = sorted(set(raw) - set(owners))
    if stray:
        raise damaged(f"raw/{stray[0]} belongs to no item")
    wanted: dict[str, Wanted] = {}
    for old, new in old_ids.items():
        item = by_new[new]
        if item.status is not ItemStatus.COMPLETED or item.type in CONTAINER_TYPES:
            continue
        material = material_path(item)
        missing = [rel for rel in stored_files(item) if rel not in raw]
        if material is None or missing:
            raise damaged(f"the completed {item.type} {item.title!r} has no copy in the file")
        wanted[old] = Wanted(item.id, item.title, material, raw[material])
    return wanted


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
        name=fitted_name(str(settings.get("name") or ""), SHARED_BASE_NAME),
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
    if name is not None and name.strip():
        checked_name(name)  # before anything is unpacked
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
        # The index is read once more when it is rebuilt: counted twice in the progress.
        rebuilding = manifest.members[INDEX_MEMBER].size
        total = sum(m.size for m in manifest.members.values()) + rebuilding
        done = [0]
        for member in manifest.members.values():
            target = _staged_path(staged, member.name, work)
            _unpack(zf, member, target, progress, done, total, cancelled)
    settings = _read_settings(work / BASE_MEMBER, manifest)
    base = _new_base(parts, settings, _name(name, settings, manifest))
    items, new_ids = _read_items(work / ITEMS_MEMBER, base.id)
    raw = {
        n[len(RAW_PREFIX) :]: m.size
        for n, m in manifest.members.items()
        if n.startswith(RAW_PREFIX)
    }
    documents = _documents(items, new_ids, raw)

    def rebuild_step(materials: int, of: int) -> None:
        if progress is not None:
            progress(done[0] + rebuilding * materials // max(of, 1), total)

    rebuilt = index_rebuild.rebuild(
        work / INDEX_MEMBER,
        staged / INDEX_DIR / INDEX_FILE,
        base.dimensions,
        documents,
        cancelled,
        rebuild_step,
    )
    rebuild_step(1, 1)  # all of it, also when the base has no documents
    items = _settled_counts(items, documents, rebuilt)
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
    return ImportReport(base, len(items), len(raw), rebuilt.chunks, rebuilt.vectors, available)


def _name(given: str | None, settings: dict[str, Any], manifest: Manifest) -> str:
    """The name the person gave (checked), else the file's (made to fit: base_names.py)."""
    if given is not None and given.strip():
        return checked_name(given)
    return fitted_name(str(settings.get("name") or manifest.base_name), SHARED_BASE_NAME)


def _settled_counts(
    items: list[Item], documents: dict[str, Wanted], rebuilt: index_rebuild.Rebuilt
) -> list[Item]:
    """The items with the chunk counts of the new index; a completed document whose
    material the index lacks is damage (the doctor's MISSING_MATERIAL)."""
    for wanted in documents.values():
        if wanted.new_id not in rebuilt.chunk_counts:
            raise damaged(f"the completed document {wanted.title!r} is not in {INDEX_MEMBER}")
    return [
        replace(i, chunk_count=rebuilt.chunk_counts[i.id]) if i.id in rebuilt.chunk_counts else i
        for i in items
    ]
