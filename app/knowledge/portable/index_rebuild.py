"""The index of an imported base, rebuilt from the archive's rows into a fresh file.

An archive's `index.sqlite` is a SQLite file someone else made, and a SQLite file carries
code: a trigger fires on every later write (rewriting each new chunk's text for good), a
view stands where a table should be, a recursive query never ends, a generated column
calls a function on every read. So that file is never opened for writing, migrated or
moved into the base. It is opened read-only with triggers and views switched off, an
untrusted schema and an authorizer that allows plain reads of Trove's own tables only;
its objects are compared with those Trove's schema creates (no trigger, view or unknown
object; indexes exactly as Trove defines them, so no lookup turns into a scan per row).
Its rows are then read by named columns, checked (types; offsets inside their material;
passages naming chunks that exist; one vector of the right size per chunk) and written by
IndexStore into a new file made by Trove's own schema code, which computes the full-text
rows and the vector codes again. Only that new file becomes the base's index.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import apsw
import numpy as np

from app.knowledge import db
from app.knowledge.pipeline.store import index_store
from app.knowledge.pipeline.store.index_store import (
    MIGRATIONS,
    ChunkRecord,
    IndexStore,
    UnitRecord,
    decode_page_starts,
)
from app.knowledge.pipeline.store.vector_codes import FloatMatrix
from app.knowledge.portable.archive import (
    INDEX_MEMBER,
    Cancelled,
    Progress,
    TransferCancelled,
    damaged,
)
from app.knowledge.types import ErrorCode, TroveError

# The oldest index an export can carry: portable bases came with index schema 4.
OLDEST_SCHEMA = 4
# SQLite calls the progress handler every this many virtual machine steps: often enough
# that a cancel (or Ctrl-C) stops a long read at once, rarely enough to cost nothing.
_PROGRESS_STEPS = 10_000
_BATCH = 500

# The columns read from each table; a table the archive's file defines without one of
# them is damage. `ocr` came with schema 5: an index of schema 4 has no such column.
_COLUMNS: dict[str, tuple[str, ...]] = {
    "meta": ("key", "value"),
    "materials": (
        "id",
        "item_id",
        "relative_path",
        "title",
        "char_count",
        "content_hash",
        "page_starts",
    ),
    "chunks": (
        "id",
        "material_id",
        "item_id",
        "seq",
        "char_start",
        "char_end",
        "token_count",
        "text",
        "text_hash",
        "page",
    ),
    "fts_units": ("id", "material_id", "char_start", "char_end", "first_seq", "last_seq"),
    "vectors": ("id", "embedding"),
}
# Functions the reads below call; the authorizer refuses every other one.
_FUNCTIONS = frozenset({"count"})
_PRAGMAS = frozenset({"user_version", "table_xinfo"})


def unsafe(detail: str) -> TroveError:
    return TroveError(
        ErrorCode.ARCHIVE_UNSAFE,
        f"the export file holds what no Trove export does, nothing was imported: {detail}",
    )


@dataclass(frozen=True, slots=True)
class Wanted:
    """An archive item whose material the new index takes: a completed document."""

    new_id: str
    title: str
    material: str  # its material's path under raw/
    material_bytes: int  # the size of that file in the archive


@dataclass(slots=True)
class Rebuilt:
    """What the new index holds: chunks per (new) item id, and vectors in all."""

    chunk_counts: dict[str, int] = field(default_factory=dict)
    vectors: int = 0

    @property
    def chunks(self) -> int:
        return sum(self.chunk_counts.values())


def rebuild(
    foreign: Path,
    fresh: Path,
    dimensions: int | None,
    wanted: dict[str, Wanted],
    cancelled: Cancelled | None = None,
    progress: Progress | None = None,
) -> Rebuilt:
    """Check the archive's index at `foreign` and write the materials of `wanted` (old item
    id -> what the new base calls it) into a new index at `fresh`; `progress(done, total)`
    counts the materials written."""
    source = _Foreign(foreign, cancelled)
    try:
        store = IndexStore(fresh, create=True)
        try:
            store.seed_epoch()
            if dimensions is not None:
                store.ensure_vectors(dimensions)
            version = source.check_schema(store.schema_objects())
            source.check_dimensions(dimensions)
            with store.filling():
                return _copy(source, store, version, dimensions, wanted, cancelled, progress)
        finally:
            store.close()
    finally:
        source.close()


def _copy(
    source: _Foreign,
    store: IndexStore,
    version: int,
    dimensions: int | None,
    wanted: dict[str, Wanted],
    cancelled: Cancelled | None,
    progress: Progress | None,
) -> Rebuilt:
    result = Rebuilt()
    ocr = version >= 5
    for row in source.rows(
        "SELECT id, item_id, relative_path, title, char_count, content_hash, page_starts "
        "FROM materials ORDER BY id"
    ):
        if cancelled is not None and cancelled():
            raise TransferCancelled()
        item_id = _text(row[1], "a material's item id")
        target = wanted.get(item_id)
        if target is None:
            continue  # the material of an item the archive does not list as a document
        if target.new_id in result.chunk_counts:
            raise damaged(f"{INDEX_MEMBER} holds two materials of {target.title!r}")
        material = _Material.read(source, row, target, ocr, dimensions)
        store.add_material(
            target.new_id,
            target.material,
            material.title,
            material.char_count,
            material.chunks,
            material.vectors,
            material.content_hash,
            material.units,
            material.page_starts,
        )
        result.chunk_counts[target.new_id] = len(material.chunks)
        result.vectors += 0 if material.vectors is None else len(material.vectors)
        if progress is not None:
            progress(len(result.chunk_counts), len(wanted))
    return result


@dataclass(slots=True)
class _Material:
    title: str
    char_count: int
    content_hash: str | None
    page_starts: tuple[int, ...]
    chunks: list[ChunkRecord]
    units: list[UnitRecord] | None
    vectors: FloatMatrix | None

    @classmethod
    def read(
        cls,
        source: _Foreign,
        row: Sequence[Any],
        target: Wanted,
        ocr: bool,
        dimensions: int | None,
    ) -> _Material:
        material_id = _int(row[0], "a material's id")
        where = f"the material of {target.title!r}"
        if row[2] != target.material:
            raise damaged(f"{INDEX_MEMBER}: {where} is at {row[2]!r}, not {target.material!r}")
        char_count = _int(row[4], f"{where}: its length")
        if not 0 <= char_count <= target.material_bytes:
            # A UTF-8 file holds at most one character per byte.
            raise damaged(
                f"{INDEX_MEMBER}: {where} claims {char_count} characters, its file has "
                f"{target.material_bytes} bytes"
            )
        chunks, ids = _chunks(source, material_id, row[1], char_count, ocr, where)
        if not chunks:
            raise damaged(f"{INDEX_MEMBER}: {where} has no chunks")
        return cls(
            title=_text(row[3], f"{where}: its title"),
            char_count=char_count,
            content_hash=_optional_text(row[5], f"{where}: its content hash"),
            page_starts=_page_starts(row[6], char_count, where),
            chunks=chunks,
            units=_units(source, material_id, chunks, char_count, where),
            vectors=None if dimensions is None else _vectors(source, ids, dimensions, where),
        )


def _chunks(
    source: _Foreign, material_id: int, item_id: object, char_count: int, ocr: bool, where: str
) -> tuple[list[ChunkRecord], list[int]]:
    """The material's chunks in order, each inside the material; and their ids."""
    chunks: list[ChunkRecord] = []
    ids: list[int] = []
    flag = ", ocr" if ocr else ""
    for row in source.rows(
        "SELECT id, item_id, seq, char_start, char_end, token_count, text, text_hash, page"
        f"{flag} FROM chunks WHERE material_id = ? ORDER BY seq",
        (material_id,),
    ):
        seq = len(chunks)
        what = f"{where}: chunk {seq}"
        if seq > char_count:
            # Every chunk Trove writes holds text: more chunks than characters is a file
            # made to fill memory with empty ones.
            raise damaged(f"{INDEX_MEMBER}: {where} has more chunks than characters")
        if row[1] != item_id:
            raise damaged(f"{INDEX_MEMBER}: {what} belongs to another item")
        if _int(row[2], f"{what}: its number") != seq:
            raise damaged(f"{INDEX_MEMBER}: {what} is out of sequence")
        start, end = _int(row[3], f"{what}: its start"), _int(row[4], f"{what}: its end")
        if not 0 <= start <= end <= char_count:
            raise damaged(
                f"{INDEX_MEMBER}: {what} spans {start}..{end}, outside its material's "
                f"{char_count} characters"
            )
        text = _text(row[6], f"{what}: its text")
        if len(text) != end - start:
            raise damaged(f"{INDEX_MEMBER}: {what} has a text of another length than its span")
        page = row[8]
        if page is not None and (not isinstance(page, int) or page < 1):
            raise damaged(f"{INDEX_MEMBER}: {what} names no valid page")
        chunks.append(
            ChunkRecord(
                start,
                end,
                text,
                _int(row[5], f"{what}: its token count"),
                _text(row[7], f"{what}: its text hash"),
                page,
                bool(_int(row[9], f"{what}: its OCR flag")) if ocr else False,
            )
        )
        ids.append(_int(row[0], f"{what}: its id"))
    return chunks, ids


def _units(
    source: _Foreign, material_id: int, chunks: list[ChunkRecord], char_count: int, where: str
) -> list[UnitRecord] | None:
    """The material's passages (text put together from its chunks), every chunk in one;
    None when it has none (each chunk is then its own passage, as for a base without an
    embedding model)."""
    spans = sorted((c.start, c.end, c.text) for c in chunks)
    units: list[UnitRecord] = []
    covered = [False] * len(chunks)
    for row in source.rows(
        "SELECT char_start, char_end, first_seq, last_seq FROM fts_units "
        "WHERE material_id = ? ORDER BY id",
        (material_id,),
    ):
        what = f"{where}: passage {len(units)}"
        if len(units) > char_count:
            raise damaged(f"{INDEX_MEMBER}: {where} has more passages than characters")
        start, end = _int(row[0], f"{what}: its start"), _int(row[1], f"{what}: its end")
        first, last = _int(row[2], f"{what}: its first chunk"), _int(row[3], f"{what}: last")
        if not 0 <= start <= end <= char_count:
            raise damaged(f"{INDEX_MEMBER}: {what} lies outside its material")
        if not 0 <= first <= last < len(chunks):
            raise damaged(f"{INDEX_MEMBER}: {what} names chunks its material does not have")
        covered[first : last + 1] = [True] * (last - first + 1)
        units.append(
            UnitRecord(start, end, index_store._text_within(spans, start, end), first, last)
        )
    if not units:
        return None
    if not all(covered):
        raise damaged(f"{INDEX_MEMBER}: {where} has chunks in no passage")
    return units


def _vectors(source: _Foreign, ids: list[int], dimensions: int, where: str) -> FloatMatrix:
    """One finite float32 vector of `dimensions` per chunk id, in the ids' order."""
    size = 4 * dimensions
    found: dict[int, bytes] = {}
    for start in range(0, len(ids), _BATCH):
        part = ids[start : start + _BATCH]
        marks = ",".join("?" * len(part))
        for chunk_id, blob in source.rows(
            f"SELECT id, embedding FROM vectors WHERE id IN ({marks})", part
        ):
            if not isinstance(blob, bytes) or len(blob) != size:
                raise damaged(f"{INDEX_MEMBER}: {where} has a vector of another size")
            found[int(chunk_id)] = blob
    if len(found) != len(ids):
        raise damaged(f"{INDEX_MEMBER}: {where}: {len(ids) - len(found)} chunk(s) have no vector")
    matrix = np.frombuffer(b"".join(found[i] for i in ids), dtype=np.float32).reshape(
        len(ids), dimensions
    )
    if not np.isfinite(matrix).all():
        raise damaged(f"{INDEX_MEMBER}: {where} has a vector that is not a number")
    return matrix


def _page_starts(value: object, char_count: int, where: str) -> tuple[int, ...]:
    if value is None:
        return ()
    starts = decode_page_starts(_text(value, f"{where}: its page starts"))
    if any(not 0 <= s <= char_count for s in starts) or list(starts) != sorted(starts):
        raise damaged(f"{INDEX_MEMBER}: {where} has pages outside its text")
    return starts


def _int(value: object, what: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise damaged(f"{INDEX_MEMBER}: {what} is not a number")
    return value


def _text(value: object, what: str) -> str:
    if not isinstance(value, str):
        raise damaged(f"{INDEX_MEMBER}: {what} is not text")
    return value


def _optional_text(value: object, what: str) -> str | None:
    return None if value is None else _text(value, what)


class _Foreign:
    """The archive's index, readable and nothing else; every read error is the file's."""

    def __init__(self, path: Path, cancelled: Cancelled | None) -> None:
        self._cancelled = cancelled
        try:
            self._conn = apsw.Connection(
                db.read_only_uri(path), flags=apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI
            )
        except apsw.Error as exc:
            raise damaged(f"{INDEX_MEMBER} cannot be opened ({exc})") from exc
        for option, value in (
            (apsw.SQLITE_DBCONFIG_ENABLE_TRIGGER, 0),
            (apsw.SQLITE_DBCONFIG_ENABLE_VIEW, 0),
            (apsw.SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0),
            (apsw.SQLITE_DBCONFIG_DEFENSIVE, 1),
            (apsw.SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0),
        ):
            self._conn.config(option, value)
        self._conn.set_authorizer(_authorize)
        self._conn.set_progress_handler(self._progress, _PROGRESS_STEPS)

    def _progress(self) -> bool:
        """True stops the statement (SQLite's interrupt): the person cancelled."""
        return self._cancelled is not None and bool(self._cancelled())

    def rows(self, sql: str, args: Sequence[object] = ()) -> Iterator[tuple[Any, ...]]:
        try:
            for row in self._conn.execute(sql, args):
                yield tuple(row)
        except apsw.InterruptError as exc:
            raise TransferCancelled() from exc
        except apsw.AuthError as exc:
            raise unsafe(f"{INDEX_MEMBER} asks for more than reading its rows ({exc})") from exc
        except apsw.Error as exc:
            raise damaged(f"{INDEX_MEMBER} cannot be read ({exc})") from exc

    def check_schema(self, expected: dict[tuple[str, str], str | None]) -> int:
        """Refuse anything Trove's schema would not have made; the file's schema version."""
        version = self._version()
        found = dict(
            ((str(kind), str(name)), None if sql is None else " ".join(str(sql).split()))
            for kind, name, sql in self.rows("SELECT type, name, sql FROM sqlite_schema")
        )
        for kind, name in sorted(found):
            if kind in ("trigger", "view"):
                raise unsafe(f"{INDEX_MEMBER} holds a {kind} {name!r}; Trove's indexes have none")
        unknown = sorted(name for kind, name in found if (kind, name) not in expected)
        if unknown:
            raise unsafe(f"{INDEX_MEMBER} holds objects Trove's indexes do not: {unknown[:5]}")
        missing = sorted(name for kind, name in expected if (kind, name) not in found)
        if missing:
            raise damaged(f"{INDEX_MEMBER} is not a Trove index (it lacks {missing[:5]})")
        for (kind, name), sql in found.items():
            if kind == "index" and sql != expected[(kind, name)]:
                raise unsafe(f"{INDEX_MEMBER} defines the index {name!r} otherwise than Trove")
        for table in _COLUMNS:
            if ("table", table) in expected:
                self._check_columns(table)
        return version

    def _version(self) -> int:
        (row,) = list(self.rows("PRAGMA user_version"))
        version = _int(row[0], "its schema version")
        if version > len(MIGRATIONS):
            raise TroveError(
                ErrorCode.ARCHIVE_NEWER_FORMAT,
                f"this file was exported by a newer Trove (index schema {version}); this "
                f"Trove reads up to {len(MIGRATIONS)}: update Trove to import it",
                params={"version": version, "supported": len(MIGRATIONS)},
            )
        if version < OLDEST_SCHEMA:
            raise damaged(f"{INDEX_MEMBER} is not a Trove index (schema version {version})")
        return version

    def _check_columns(self, table: str) -> None:
        columns: dict[str, int] = {
            str(row[1]): int(row[6]) for row in self.rows(f"PRAGMA table_xinfo({table})")
        }
        generated = sorted(name for name, hidden in columns.items() if hidden)
        if generated:
            raise unsafe(f"{INDEX_MEMBER}: {table} has computed columns {generated}")
        lacking = [c for c in _COLUMNS[table] if c not in columns]
        if lacking:
            raise damaged(f"{INDEX_MEMBER}: {table} has no column {lacking[0]!r}")

    def check_dimensions(self, dimensions: int | None) -> None:
        found = list(self.rows("SELECT value FROM meta WHERE key = 'dimensions' LIMIT 2"))
        if len(found) > 1:
            raise damaged(f"{INDEX_MEMBER} names its vector size twice")
        stored = found[0][0] if found else None
        if (None if stored is None else str(stored)) != (
            None if dimensions is None else str(dimensions)
        ):
            raise damaged("the index's vector size disagrees with the manifest")

    def close(self) -> None:
        self._conn.close()


def _authorize(
    action: int, first: str | None, second: str | None, _db: str | None, via: str | None
) -> int:
    """Plain reads of Trove's tables and nothing else: no trigger or view reaches here
    (they are off), and should one, what it asks for is refused."""
    if via is not None:
        return apsw.SQLITE_DENY
    if action == apsw.SQLITE_SELECT:
        return apsw.SQLITE_OK
    if action == apsw.SQLITE_READ:
        allowed = first in _COLUMNS or first in ("sqlite_schema", "sqlite_master")
        return apsw.SQLITE_OK if allowed else apsw.SQLITE_DENY
    if action == apsw.SQLITE_FUNCTION:
        return apsw.SQLITE_OK if second in _FUNCTIONS else apsw.SQLITE_DENY
    if action == apsw.SQLITE_PRAGMA:
        return apsw.SQLITE_OK if first in _PRAGMAS else apsw.SQLITE_DENY
    return apsw.SQLITE_DENY
