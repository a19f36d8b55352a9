"""The per-base index `bases/<id>/.trove/index.sqlite`: materials, chunks, FTS5, vectors.

Writes go through one connection under a lock, each in one transaction; searches use a
connection per thread, so in WAL mode they read while a job writes.

Full text is ranked over *passages* (`fts_units`), vectors over chunks. Without an
embedding model each chunk is its own passage. With one, chunks are sized to the model's
input (a few hundred of its tokens) while passages keep the base's chunk size: BM25 over
a unit that small loses the evidence spread across its neighbours (nDCG@10 fell on every
shared evaluation set), so a passage is ranked whole and the chunks in it take its rank.
A passage names its chunks as a range of their sequence numbers (see passage_ranges);
every chunk is in at least one passage.
"""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
import shutil
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import apsw
import numpy as np
import numpy.typing as npt

from app.knowledge import db
from app.knowledge.pipeline.indexing.tokenize import index_text
from app.knowledge.pipeline.store import vector_blocks
from app.knowledge.pipeline.store.memory_budget import MemoryBudget
from app.knowledge.pipeline.store.vector_codes import FloatMatrix
from app.knowledge.pipeline.store.vector_tier import TierStats, VectorTier
from app.knowledge.types import StoredChunk

log = logging.getLogger(__name__)


class SqlReader(Protocol):
    """A connection that runs a parameterless query and yields its rows: apsw's, or
    psycopg's for the PostgreSQL store's checks, which share the SQL below."""

    def execute(self, query: str, /) -> Iterable[Any]: ...


INDEX_DIR = ".trove"
INDEX_FILE = "index.sqlite"

# Title matches count more than body matches: a title names what the whole text is about.
TITLE_WEIGHT = 2.0
BODY_WEIGHT = 1.0


# Contentless: the text lives in `chunks`; the FTS table holds only the index (rowid = the
# passage's id in fts_units).
FTS_TABLE_SQL = """
    CREATE VIRTUAL TABLE chunks_fts USING fts5(
        body, title, content='', contentless_delete=1,
        tokenize='porter unicode61 remove_diacritics 2'
    )
"""


def _v1(conn: apsw.Connection) -> None:
    conn.execute(
        """
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE materials (
            id INTEGER PRIMARY KEY,
            item_id TEXT NOT NULL UNIQUE,
            relative_path TEXT NOT NULL,
            title TEXT NOT NULL,
            char_count INTEGER NOT NULL,
            content_hash TEXT
        );
        CREATE TABLE chunks (
            id INTEGER PRIMARY KEY,
            material_id INTEGER NOT NULL REFERENCES materials(id) ON DELETE CASCADE,
            item_id TEXT NOT NULL,
            seq INTEGER NOT NULL,
            char_start INTEGER NOT NULL,
            char_end INTEGER NOT NULL CHECK (char_end >= char_start),
            token_count INTEGER NOT NULL,
            text TEXT NOT NULL,
            text_hash TEXT NOT NULL,
            page INTEGER
        );
        CREATE INDEX chunks_material ON chunks(material_id, seq);
        CREATE INDEX chunks_item ON chunks(item_id);
        CREATE INDEX chunks_hash ON chunks(text_hash);
        INSERT INTO meta VALUES ('vector_epoch', '0');
        """
    )
    conn.execute(FTS_TABLE_SQL)


def _v2(conn: apsw.Connection) -> None:
    """sqlite-vec's vec0 table becomes plain float rows plus code blocks (vector_blocks).

    vec0 answers a lookup by rowid with a scan (0.5 s for 500 rows at 1M vectors), too slow
    to rescore candidates; a plain table answers it from its B-tree in about 2 ms.
    """
    row = conn.execute("SELECT value FROM meta WHERE key = 'dimensions'").fetchone()
    if row is None:
        return
    conn.execute("CREATE TABLE vectors_v1_rows (id INTEGER PRIMARY KEY, embedding BLOB NOT NULL)")
    conn.execute("INSERT INTO vectors_v1_rows SELECT rowid, embedding FROM vectors")
    conn.execute("DROP TABLE vectors")
    vector_blocks.create(conn)
    conn.execute("INSERT INTO vectors (id, embedding) SELECT id, embedding FROM vectors_v1_rows")
    conn.execute("DROP TABLE vectors_v1_rows")
    vector_blocks.rebuild(conn, int(row[0]), _bump_epoch(conn))


def _bump_epoch(conn: apsw.Connection) -> int:
    """Move the vector epoch on (in the caller's write transaction); the new value."""
    row = conn.execute(
        "UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'vector_epoch' "
        "RETURNING value"
    ).fetchone()
    assert row is not None, "the meta table always holds vector_epoch"
    return int(row[0])


def _v3(conn: apsw.Connection) -> None:
    """Passages: every existing chunk becomes its own passage, under its own id, so the
    full-text rows (rowid = chunk id until now) stay valid as they are."""
    conn.execute(
        """
        CREATE TABLE fts_units (
            id INTEGER PRIMARY KEY,
            material_id INTEGER NOT NULL REFERENCES materials(id) ON DELETE CASCADE,
            char_start INTEGER NOT NULL,
            char_end INTEGER NOT NULL CHECK (char_end >= char_start),
            first_seq INTEGER NOT NULL,
            last_seq INTEGER NOT NULL CHECK (last_seq >= first_seq)
        );
        CREATE INDEX fts_units_material ON fts_units(material_id, first_seq);
        INSERT INTO fts_units (id, material_id, char_start, char_end, first_seq, last_seq)
            SELECT id, material_id, char_start, char_end, seq, seq FROM chunks;
        """
    )


def _v4(conn: apsw.Connection) -> None:
    """Where each page of a paged material (PDF pages, slides) starts, so a hit names the
    page its words are on. Materials indexed before stay NULL (their chunks keep a page)."""
    columns = {str(row[1]) for row in conn.execute("PRAGMA table_info(materials)")}
    if "page_starts" not in columns:  # a file whose version was set back has it already
        conn.execute("ALTER TABLE materials ADD COLUMN page_starts TEXT")


def _v5(conn: apsw.Connection) -> None:
    """Whether a chunk's text was recognised from a page image (OCR), for search results."""
    columns = {str(row[1]) for row in conn.execute("PRAGMA table_info(chunks)")}
    if "ocr" not in columns:
        conn.execute("ALTER TABLE chunks ADD COLUMN ocr INTEGER NOT NULL DEFAULT 0")


MIGRATIONS: list[db.Migration] = [_v1, _v2, _v3, _v4, _v5]


class DimensionMismatchError(ValueError):
    pass


@dataclass(frozen=True, slots=True)
class ChunkRecord:
    """A chunk to write; offsets are into the material text."""

    start: int
    end: int
    text: str
    token_count: int
    text_hash: str
    page: int | None = None
    ocr: bool = False  # recognised from a page image


@dataclass(frozen=True, slots=True)
class UnitRecord:
    """A passage to write (ranked by full text); offsets are into the material text, and
    its chunks are those with sequence numbers first_chunk..last_chunk."""

    start: int
    end: int
    text: str
    first_chunk: int
    last_chunk: int


@dataclass(frozen=True, slots=True)
class Bm25Hit:
    """A chunk found by full text: its passage, and the passage's score and rank (1 = best)."""

    chunk_id: int
    score: float
    rank: int
    passage: int


@dataclass(frozen=True, slots=True)
class MaterialInfo:
    item_id: str
    relative_path: str
    title: str
    char_count: int
    chunk_count: int
    # Offsets in the material where its pages start (page N at [N - 1]); () when unpaged.
    page_starts: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class ChunkOwner:
    """Who a chunk row belongs to: its own item id and its material's (None: no material)."""

    chunk_id: int
    item_id: str
    material_item_id: str | None


@dataclass(frozen=True, slots=True)
class PendingChunk:
    """A chunk whose vector is still to be computed (the vector stage), with what it takes
    to embed it: its text and its document's title (the header in front of it)."""

    chunk_id: int
    item_id: str
    text: str
    text_hash: str
    title: str


@dataclass(frozen=True, slots=True)
class IndexSnapshot:
    """The rows the integrity checker compares, read in one snapshot."""

    materials: list[MaterialInfo]
    chunks: list[ChunkOwner]
    fts_rowids: set[int]
    # Passages that belong to a material and name at least one of its chunks.
    unit_ids: set[int]
    # Chunks in no passage: full text cannot find them.
    unitless_chunks: int
    # None when the index has no vector table.
    vector_rowids: set[int] | None


def encode_page_starts(page_starts: Sequence[int]) -> str | None:
    return ",".join(str(int(s)) for s in page_starts) if page_starts else None


def decode_page_starts(encoded: object) -> tuple[int, ...]:
    """The stored page starts; () for an unpaged material or an unreadable value."""
    if not isinstance(encoded, str) or not encoded:
        return ()
    try:
        return tuple(int(s) for s in encoded.split(","))
    except ValueError:
        return ()


def index_path(base_dir: Path) -> Path:
    return base_dir / INDEX_DIR / INDEX_FILE


# Errors that mean the index file itself is damaged (not busy, not full, not read-only).
CORRUPTION_ERRORS: tuple[type[apsw.Error], ...] = (apsw.CorruptError, apsw.NotADBError)

FileIdentity = tuple[int, int]

# How often a writer follows a replaced file before giving up (each replacement is a
# whole restore, so more than one in a row means something keeps swapping the file).
_SWAP_RETRIES = 3


def file_identity(path: Path) -> FileIdentity | None:
    """(st_dev, st_ino) of the file now at `path`: it changes when restore swaps it."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return (st.st_dev, st.st_ino)


class IndexStore:
    def __init__(
        self,
        path: Path,
        *,
        create: bool = True,
        read_only: bool = False,
        budget: MemoryBudget | None = None,
    ) -> None:
        self.path = path
        self.read_only = read_only
        if create and not read_only:
            path.parent.mkdir(parents=True, exist_ok=True)
        self._write_lock = threading.RLock()
        # Read-only: the "writer" is a read-only connection too; a write fails with
        # apsw.ReadOnlyError, which callers classify as STORAGE_READ_ONLY.
        self._writer = self._connect(create=create)
        self._identity = file_identity(path)
        with self._write_lock:
            db.migrate(self._writer, MIGRATIONS, f"index {path}")
        # Thread id -> (identity of the file the connection opened, connection).
        self._readers: dict[int, tuple[FileIdentity | None, apsw.Connection]] = {}
        self._readers_lock = threading.Lock()
        self._tier: VectorTier | None = None
        self._tier_lock = threading.Lock()
        self._budget = budget if budget is not None else MemoryBudget()
        # Full loads and incremental refreshes of the searchable view, for tests and benches.
        self.vector_stats = TierStats()
        self._closed = False
        self._filling = False  # inside filling(): add_material may write

    # -- connections -------------------------------------------------------------------

    def _reader(self) -> apsw.Connection:
        # Keyed by OS thread id, not threading.local: a Qt pool thread gets a fresh Python
        # thread state for every job, so a thread-local connection would leak one per job.
        ident = threading.get_ident()
        current = file_identity(self.path)
        entry = self._readers.get(ident)
        if entry is not None and (entry[0] == current or current is None):
            return entry[1]
        if entry is not None:
            # Restore swapped a fresh file in: this connection still reads the old one.
            log.info("index %s was replaced; reopening", self.path)
            entry[1].close()
            self._release_tier()
        conn = self._connect(create=False)
        with self._readers_lock:
            self._readers[ident] = (file_identity(self.path), conn)
        return conn

    def _connect(self, *, create: bool) -> apsw.Connection:
        return db.connect(self.path, create=create, vectors=True, read_only=self.read_only)

    def _follow_replacement(self) -> None:
        """Reopen the writer when the file at `path` is no longer the one it opened."""
        current = file_identity(self.path)
        if current is None or current == self._identity:
            return
        log.info("index %s was replaced; reopening its writer", self.path)
        self._writer.close()
        self._writer = self._connect(create=False)
        self._identity = file_identity(self.path)
        self._release_tier()

    @contextmanager
    def _writing(self) -> Iterator[None]:
        """A write transaction on the file now at `path` (db.write_transaction semantics).

        The file's identity is checked again after the write lock is taken: a restore in
        another process may have swapped the file between the first check and the lock, and
        a write to the replaced file would be lost with it.
        """
        with self._write_lock:
            if self._writer.in_transaction:
                with db.write_transaction(self._writer):
                    yield
                return
            for _ in range(_SWAP_RETRIES):
                self._follow_replacement()
                self._writer.execute("BEGIN IMMEDIATE")
                if file_identity(self.path) in (self._identity, None):
                    break
                self._writer.execute("ROLLBACK")
            else:
                raise apsw.BusyError(f"index {self.path} keeps being replaced")
            try:
                yield
                self._writer.execute("COMMIT")
            except BaseException:
                if self._writer.in_transaction:
                    self._writer.execute("ROLLBACK")
                raise

    def close(self) -> None:
        with self._write_lock, self._readers_lock:
            if self._closed:
                return
            self._closed = True
            for _, conn in self._readers.values():
                conn.close()
            self._readers.clear()
            self._writer.close()
        self._release_tier()

    # -- meta and dimensions -----------------------------------------------------------

    def _meta(self, conn: apsw.Connection, key: str) -> str | None:
        row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return str(row[0]) if row else None

    @property
    def dimensions(self) -> int | None:
        value = self._meta(self._reader(), "dimensions")
        return int(value) if value is not None else None

    def ensure_vectors(self, dimensions: int) -> None:
        """Create the vec0 table for this base's dimension, or check it matches."""
        with self._writing():
            current = self._meta(self._writer, "dimensions")
            if current is not None:
                if int(current) != dimensions:
                    raise DimensionMismatchError(
                        f"this base stores {current}-dimensional vectors, got {dimensions}"
                    )
                return
            vector_blocks.create(self._writer)
            self._writer.execute(
                "INSERT INTO meta VALUES ('dimensions', ?)", (str(int(dimensions)),)
            )

    def seed_epoch(self) -> None:
        """Start the vector epoch at a random value: a searchable view of a file this one
        replaces can then never match its epoch by chance."""
        with self._writing():
            self._writer.execute(
                "UPDATE meta SET value = ? WHERE key = 'vector_epoch'",
                (str(secrets.randbelow(2**62)),),
            )

    def drop_vectors(self) -> None:
        """Remove every vector (the base's embedding model changes)."""
        with self._writing():
            vector_blocks.drop(self._writer)
            self._writer.execute("DELETE FROM meta WHERE key = 'dimensions'")
            self._bump_epoch()
        self._release_tier()

    def _bump_epoch(self) -> int:
        return _bump_epoch(self._writer)

    # -- writes ------------------------------------------------------------------------

    def rebuild_material(
        self,
        item_id: str,
        relative_path: str,
        title: str,
        char_count: int,
        chunks: Iterable[ChunkRecord],
        vectors: FloatMatrix | None = None,
        content_hash: str | None = None,
        units: Iterable[UnitRecord] | None = None,
        page_starts: Sequence[int] = (),
        known_vectors: Mapping[str, npt.NDArray[np.float32]] | None = None,
    ) -> list[int]:
        """Replace an item's material, chunks, passages, FTS rows and vectors in one
        transaction. Without `units` each chunk is its own passage.

        `vectors` has one row per chunk; `known_vectors` (text hash -> vector) gives only the
        chunks whose vectors are known already, the others waiting for the vector stage.

        `chunks` and `units` may be streams (in text order): each is consumed once, inside
        the transaction, and no list of their texts is built, so a material's size does not
        set the memory it needs.
        """
        with self._write_lock, self._writing():
            self._delete_material_rows(item_id)
            hashes: list[str] = []
            chunk_ids = self._insert_material(
                item_id,
                relative_path,
                title,
                char_count,
                chunks,
                content_hash,
                units,
                page_starts,
                hashes_out=hashes,
            )
            vectored = chunk_ids
            if vectors is None and known_vectors:
                vectors, vectored = known_vector_rows(chunk_ids, hashes, known_vectors)
            elif vectors is not None and len(vectors) != len(chunk_ids):
                raise ValueError("one vector per chunk is required")
            if vectors is not None and len(vectored):
                dimensions = self._check_dimensions(vectors.shape[1])
                vector_blocks.add(self._writer, vectored, vectors, dimensions, self._bump_epoch())
        return chunk_ids

    @contextmanager
    def filling(self) -> Iterator[None]:
        """Fill a new, empty file in one write transaction (an imported index rebuilt from
        its rows): `add_material` inside writes rows without looking for old ones to
        replace, and vectors as floats only; their code blocks are built once, at the end,
        from all of them (vector_blocks.rebuild), instead of the tail block per material."""
        with self._write_lock, self._writing():
            if self.material_count():
                raise RuntimeError(f"index {self.path} is not empty; filling is for new files")
            self._filling = True
            try:
                yield
            finally:
                self._filling = False
            dims = self._meta(self._writer, "dimensions")
            if dims is not None:
                vector_blocks.rebuild(self._writer, int(dims), self._bump_epoch())

    def add_material(
        self,
        item_id: str,
        relative_path: str,
        title: str,
        char_count: int,
        chunks: Iterable[ChunkRecord],
        vectors: FloatMatrix | None,
        content_hash: str | None,
        units: Iterable[UnitRecord] | None,
        page_starts: Sequence[int],
    ) -> list[int]:
        """rebuild_material for a file being filled (inside `filling()` only)."""
        # filling() holds the write lock and the one transaction: no savepoint per material.
        if not self._filling:
            raise RuntimeError("add_material writes inside filling() only")
        chunk_ids = self._insert_material(
            item_id, relative_path, title, char_count, chunks, content_hash, units, page_starts
        )
        if vectors is not None and len(vectors) != len(chunk_ids):
            raise ValueError("one vector per chunk is required")
        if vectors is not None and len(chunk_ids):
            self._check_dimensions(vectors.shape[1])
            matrix = np.ascontiguousarray(vectors, dtype=np.float32)
            self._writer.executemany(
                "INSERT INTO vectors (id, embedding) VALUES (?, ?)",
                ((i, matrix[row].tobytes()) for row, i in enumerate(chunk_ids)),
            )
        return chunk_ids

    def _insert_material(
        self,
        item_id: str,
        relative_path: str,
        title: str,
        char_count: int,
        chunks: Iterable[ChunkRecord],
        content_hash: str | None,
        units: Iterable[UnitRecord] | None,
        page_starts: Sequence[int],
        *,
        hashes_out: list[str] | None = None,
    ) -> list[int]:
        """Insert a material, its passages (with their FTS rows) and its chunks; the chunk
        ids (inside the caller's write transaction), their text hashes into `hashes_out`."""
        title_tokens = index_text(title)
        self._writer.execute(
            "INSERT INTO materials (item_id, relative_path, title, char_count, content_hash, "
            "page_starts) VALUES (?,?,?,?,?,?)",
            (
                item_id,
                relative_path,
                title,
                char_count,
                content_hash,
                encode_page_starts(page_starts),
            ),
        )
        material_id = self._writer.last_insert_rowid()
        for unit in units or ():
            self._write_unit(material_id, unit, title_tokens)
        chunk_ids: list[int] = []
        for seq, chunk in enumerate(chunks):
            if units is None:
                own = UnitRecord(chunk.start, chunk.end, chunk.text, seq, seq)
                self._write_unit(material_id, own, title_tokens)
            self._writer.execute(
                "INSERT INTO chunks (material_id, item_id, seq, char_start, char_end, "
                "token_count, text, text_hash, page, ocr) VALUES (?,?,?,?,?,?,?,?,?,?)",
                (
                    material_id,
                    item_id,
                    seq,
                    chunk.start,
                    chunk.end,
                    chunk.token_count,
                    chunk.text,
                    chunk.text_hash,
                    chunk.page,
                    int(chunk.ocr),
                ),
            )
            chunk_ids.append(self._writer.last_insert_rowid())
            if hashes_out is not None:
                hashes_out.append(chunk.text_hash)
        return chunk_ids

    def _write_unit(self, material_id: int, unit: UnitRecord, title_tokens: str) -> None:
        self._writer.execute(
            "INSERT INTO fts_units (material_id, char_start, char_end, first_seq, last_seq) "
            "VALUES (?,?,?,?,?)",
            (material_id, unit.start, unit.end, unit.first_chunk, unit.last_chunk),
        )
        self._writer.execute(
            "INSERT INTO chunks_fts (rowid, body, title) VALUES (?,?,?)",
            (self._writer.last_insert_rowid(), index_text(unit.text), title_tokens),
        )

    def delete_material(self, item_id: str) -> int:
        """Remove an item's material, chunks, FTS rows and vectors; returns chunks removed."""
        with self._write_lock, self._writing():
            removed = self._delete_material_rows(item_id)
        return len(removed)

    # -- the vector stage (jobs/embed_vectors.py) ---------------------------------------

    def pending_vectors(self, after: int, limit: int) -> list[PendingChunk]:
        """Up to `limit` chunks with no vector yet, of ids above `after`, in id order."""
        conn = self._reader()
        if not self._has_vector_table(conn):
            return []
        rows = conn.execute(
            "SELECT c.id, c.item_id, c.text, c.text_hash, m.title FROM chunks c "
            "JOIN materials m ON m.id = c.material_id WHERE c.id > ? "
            "AND NOT EXISTS (SELECT 1 FROM vectors v WHERE v.id = c.id) ORDER BY c.id LIMIT ?",
            (after, limit),
        )
        return [PendingChunk(int(r[0]), str(r[1]), r[2], str(r[3]), r[4]) for r in rows]

    def add_vectors(self, chunk_ids: Sequence[int], vectors: FloatMatrix) -> int:
        """Store the vectors of chunks that still exist and have none (a chunk deleted or
        given a vector meanwhile is passed over); how many were stored."""
        if len(vectors) != len(chunk_ids):
            raise ValueError("one vector per chunk is required")
        if not len(chunk_ids):
            return 0
        with self._write_lock, self._writing():
            dimensions = self._check_dimensions(vectors.shape[1])
            wanted = set(_missing_vectors(self._writer, list(chunk_ids)))
            rows = [row for row, cid in enumerate(chunk_ids) if cid in wanted]
            if rows:
                vector_blocks.add(
                    self._writer,
                    [chunk_ids[row] for row in rows],
                    vectors[rows],
                    dimensions,
                    self._bump_epoch(),
                )
        return len(rows)

    def vector_progress(self, item_ids: Iterable[str]) -> dict[str, tuple[int, int]]:
        """(chunks with a vector, chunks) of each of these items that has chunks."""
        ids = list(dict.fromkeys(item_ids))
        conn = self._reader()
        with_table = self._has_vector_table(conn)
        found: dict[str, tuple[int, int]] = {}
        for start in range(0, len(ids), 500):
            part = ids[start : start + 500]
            marks = ",".join("?" * len(part))
            vectored = "(SELECT count(*) FROM vectors v WHERE v.id = c.id)" if with_table else "0"
            rows = conn.execute(
                f"SELECT c.item_id, total({vectored}), count(*) FROM chunks c "
                f"WHERE c.item_id IN ({marks}) GROUP BY c.item_id",
                part,
            )
            for item_id, done, total in rows:
                found[str(item_id)] = (int(done), int(total))
        return found

    def _check_dimensions(self, got: int) -> int:
        current = self._meta(self._writer, "dimensions")
        if current is None:
            raise DimensionMismatchError("this base has no vector table; call ensure_vectors first")
        if int(current) != got:
            raise DimensionMismatchError(
                f"the embedding model returned {got}-dimensional vectors; this base stores {current}"
            )
        return got

    def _has_vector_table(self, conn: apsw.Connection) -> bool:
        return self._meta(conn, "dimensions") is not None

    def _delete_material_rows(self, item_id: str) -> list[int]:
        ids = [
            int(r[0])
            for r in self._writer.execute("SELECT id FROM chunks WHERE item_id = ?", (item_id,))
        ]
        units = [
            int(r[0])
            for r in self._writer.execute(
                "SELECT u.id FROM fts_units u JOIN materials m ON m.id = u.material_id "
                "WHERE m.item_id = ?",
                (item_id,),
            )
        ]
        for unit in units:
            self._writer.execute("DELETE FROM chunks_fts WHERE rowid = ?", (unit,))
        if units:
            self._writer.execute(
                "DELETE FROM fts_units WHERE material_id IN "
                "(SELECT id FROM materials WHERE item_id = ?)",
                (item_id,),
            )
        if ids:
            self._remove_vectors(ids)
            self._writer.execute("DELETE FROM chunks WHERE item_id = ?", (item_id,))
        self._writer.execute("DELETE FROM materials WHERE item_id = ?", (item_id,))
        return ids

    def _remove_vectors(self, chunk_ids: list[int]) -> int:
        """Delete these chunks' vectors and codes (inside the caller's write transaction)."""
        dims = self._meta(self._writer, "dimensions")
        if dims is None or not chunk_ids:
            return 0
        return vector_blocks.remove(self._writer, chunk_ids, int(dims), self._bump_epoch())

    # -- reads -------------------------------------------------------------------------

    def material_count(self) -> int:
        row = self._reader().execute("SELECT count(*) FROM materials").fetchone()
        return int(row[0]) if row else 0

    def chunk_count(self) -> int:
        row = self._reader().execute("SELECT count(*) FROM chunks").fetchone()
        return int(row[0]) if row else 0

    def vector_count(self) -> int:
        conn = self._reader()
        if not self._has_vector_table(conn):
            return 0
        row = conn.execute("SELECT count(*) FROM vectors").fetchone()
        return int(row[0]) if row else 0

    def material(self, item_id: str) -> MaterialInfo | None:
        row = (
            self._reader()
            .execute(
                "SELECT m.item_id, m.relative_path, m.title, m.char_count, "
                "(SELECT count(*) FROM chunks c WHERE c.material_id = m.id), m.page_starts "
                "FROM materials m WHERE m.item_id = ?",
                (item_id,),
            )
            .fetchone()
        )
        if row is None:
            return None
        return MaterialInfo(
            row[0], row[1], row[2], int(row[3]), int(row[4]), decode_page_starts(row[5])
        )

    def page_starts(self, item_ids: Iterable[str]) -> dict[str, tuple[int, ...]]:
        """Where the pages of these items' materials start, for the paged ones."""
        ids = list(dict.fromkeys(item_ids))
        found: dict[str, tuple[int, ...]] = {}
        conn = self._reader()
        for start in range(0, len(ids), 500):
            part = ids[start : start + 500]
            marks = ",".join("?" * len(part))
            for item_id, encoded in conn.execute(
                f"SELECT item_id, page_starts FROM materials WHERE item_id IN ({marks}) "
                "AND page_starts IS NOT NULL",
                part,
            ):
                found[str(item_id)] = decode_page_starts(encoded)
        return found

    def material_by_path(self, relative_path: str) -> MaterialInfo | None:
        row = (
            self._reader()
            .execute("SELECT item_id FROM materials WHERE relative_path = ?", (relative_path,))
            .fetchone()
        )
        return self.material(str(row[0])) if row else None

    def item_ids(self) -> list[str]:
        return [str(r[0]) for r in self._reader().execute("SELECT item_id FROM materials")]

    def titles(self) -> dict[str, str]:
        """Each material's title by item id (shown with its search results, and indexed)."""
        rows = self._reader().execute("SELECT item_id, title FROM materials")
        return {str(item_id): str(title) for item_id, title in rows}

    def retitle_material(self, item_id: str, title: str) -> bool:
        """Give an item's material another title (its file was renamed): the stored title
        and the title column of its full-text rows; chunks and vectors stay. False when the
        item has no material."""
        with self._write_lock, self._writing():
            row = self._writer.execute(
                "SELECT id FROM materials WHERE item_id = ?", (item_id,)
            ).fetchone()
            if row is None:
                return False
            material_id = int(row[0])
            self._writer.execute(
                "UPDATE materials SET title = ? WHERE id = ?", (title, material_id)
            )
            units = [
                int(r[0])
                for r in self._writer.execute(
                    "SELECT id FROM fts_units WHERE material_id = ?", (material_id,)
                )
            ]
            for unit in units:
                self._writer.execute("DELETE FROM chunks_fts WHERE rowid = ?", (unit,))
            self._rebuild_material_fts(material_id, index_text(title))
        return True

    def vectors_for_hashes(self, hashes: Iterable[str]) -> dict[str, npt.NDArray[np.float32]]:
        """Stored vectors for chunk texts already embedded in this base (reuse, not re-spend)."""
        conn = self._reader()
        if not self._has_vector_table(conn):
            return {}
        wanted = list(dict.fromkeys(hashes))
        found: dict[str, npt.NDArray[np.float32]] = {}
        for start in range(0, len(wanted), 500):
            part = wanted[start : start + 500]
            marks = ",".join("?" * len(part))
            rows = conn.execute(
                f"SELECT c.text_hash, v.embedding FROM chunks c JOIN vectors v ON v.rowid = c.id "
                f"WHERE c.text_hash IN ({marks})",
                part,
            )
            for text_hash, blob in rows:
                found.setdefault(str(text_hash), np.frombuffer(blob, dtype=np.float32).copy())
        return found

    def bm25_search(self, match: str, limit: int) -> list[Bm25Hit]:
        """The chunks of the best `limit` passages for an already-sanitised MATCH string,
        best passage first, a passage's chunks in text order (BM25: higher is better)."""
        conn = self._reader()
        with conn:  # one read snapshot: the passages found and their chunks agree
            units = [
                (int(r[0]), float(r[1]))
                for r in conn.execute(
                    "SELECT rowid, -bm25(chunks_fts, ?, ?) AS score FROM chunks_fts "
                    "WHERE chunks_fts MATCH ? ORDER BY score DESC LIMIT ?",
                    (BODY_WEIGHT, TITLE_WEIGHT, match, limit),
                )
            ]
            members: dict[int, list[int]] = {}
            for start in range(0, len(units), 500):
                part = [u for u, _ in units[start : start + 500]]
                marks = ",".join("?" * len(part))
                for unit, chunk_id in conn.execute(
                    "SELECT u.id, c.id FROM fts_units u JOIN chunks c "
                    "ON c.material_id = u.material_id AND c.seq BETWEEN u.first_seq AND u.last_seq "
                    f"WHERE u.id IN ({marks}) ORDER BY c.seq",
                    part,
                ):
                    members.setdefault(int(unit), []).append(int(chunk_id))
        hits: list[Bm25Hit] = []
        seen: set[int] = set()
        for rank, (unit, score) in enumerate(units, start=1):
            for chunk_id in members.get(unit, ()):
                if chunk_id not in seen:  # a chunk in two passages keeps the better rank
                    seen.add(chunk_id)
                    hits.append(Bm25Hit(chunk_id, score, rank, unit))
        return hits

    def passages_of(self, chunk_ids: Iterable[int]) -> dict[int, int]:
        """The full-text passage of each chunk (of two overlapping ones, the later)."""
        ids = list(dict.fromkeys(chunk_ids))
        found: dict[int, int] = {}
        conn = self._reader()
        for start in range(0, len(ids), 500):
            part = ids[start : start + 500]
            marks = ",".join("?" * len(part))
            # Passages are in text order, so their first and last chunks both only grow:
            # the last one starting at or before a chunk holds it if any does.
            rows = conn.execute(
                "SELECT c.id, (SELECT u.id FROM fts_units u WHERE u.material_id = c.material_id "
                "AND u.first_seq <= c.seq AND u.last_seq >= c.seq "
                "ORDER BY u.first_seq DESC LIMIT 1) FROM chunks c "
                f"WHERE c.id IN ({marks})",
                part,
            )
            for chunk_id, unit in rows:
                if unit is not None:
                    found[int(chunk_id)] = int(unit)
        return found

    def vector_search(self, query: npt.NDArray[np.float32], limit: int) -> list[tuple[int, float]]:
        """(chunk id, cosine similarity), best first: exact on small bases, Hamming-ranked
        candidates rescored exactly on large ones (vector_tier)."""
        conn = self._reader()
        with conn:  # one read snapshot: the epoch, the blocks and the floats agree
            meta = dict(
                conn.execute(
                    "SELECT key, value FROM meta WHERE key IN ('dimensions', 'vector_epoch')"
                )
            )
            dims = meta.get("dimensions")
            if dims is None:
                return []
            if query.shape[-1] != int(dims):
                raise DimensionMismatchError(
                    f"query vector has {query.shape[-1]} dimensions; this base stores {dims}"
                )
            epoch = int(meta.get("vector_epoch") or 0)
            tier = self._current_tier(int(dims))
            tier.refresh(conn, epoch)
            hits = tier.search(conn, query, limit)
        self._budget.charge(self, tier.resident_bytes(), self._release_tier)
        return hits

    def _current_tier(self, dimensions: int) -> VectorTier:
        with self._tier_lock:
            if self._tier is None or self._tier.dimensions != dimensions:
                self._tier = VectorTier(dimensions, self.vector_stats)
            return self._tier

    def _release_tier(self) -> None:
        """Drop the searchable view (memory budget, restore, model change); the next
        search loads it again."""
        with self._tier_lock:
            self._tier = None
        self._budget.forget(self)

    def vector_memory_bytes(self) -> int:
        with self._tier_lock:
            return 0 if self._tier is None else self._tier.resident_bytes()

    def chunks(self, chunk_ids: Iterable[int]) -> dict[int, StoredChunk]:
        ids = list(dict.fromkeys(chunk_ids))
        found: dict[int, StoredChunk] = {}
        conn = self._reader()
        for start in range(0, len(ids), 500):
            part = ids[start : start + 500]
            marks = ",".join("?" * len(part))
            rows = conn.execute(
                "SELECT c.id, c.item_id, c.seq, c.char_start, c.char_end, c.text, c.page, "
                "m.relative_path, m.title, c.ocr "
                "FROM chunks c JOIN materials m ON m.id = c.material_id "
                f"WHERE c.id IN ({marks})",
                part,
            )
            for r in rows:
                found[int(r[0])] = StoredChunk(
                    int(r[0]),
                    r[1],
                    int(r[2]),
                    int(r[3]),
                    int(r[4]),
                    r[5],
                    r[6],
                    r[7],
                    r[8],
                    ocr=bool(r[9]),
                )
        return found

    def item_chunks(self, item_id: str) -> list[StoredChunk]:
        ids = [
            int(r[0])
            for r in self._reader().execute(
                "SELECT id FROM chunks WHERE item_id = ? ORDER BY seq", (item_id,)
            )
        ]
        by_id = self.chunks(ids)
        return [by_id[i] for i in ids]

    def schema_objects(self) -> dict[tuple[str, str], str | None]:
        """(type, name) -> SQL of every object in the file's schema: what an index made by
        this code holds, to compare an imported one with (portable/index_rebuild.py)."""
        return schema_objects(self._reader())

    def integrity_check(self) -> list[str]:
        problems: list[Any] = [
            r[0] for r in self._reader().execute("PRAGMA integrity_check") if r[0] != "ok"
        ]
        return [str(p) for p in problems]

    # -- integrity (trove doctor) -------------------------------------------------------

    def integrity_snapshot(self) -> IndexSnapshot:
        """Materials, chunk owners, FTS rowids and vector rowids, all from one read snapshot."""
        conn = self._reader()
        with conn:  # one read transaction: the four lists agree with each other
            materials = [
                MaterialInfo(r[0], r[1], r[2], int(r[3]), int(r[4]))
                for r in conn.execute(
                    "SELECT m.item_id, m.relative_path, m.title, m.char_count, "
                    "(SELECT count(*) FROM chunks c WHERE c.material_id = m.id) FROM materials m"
                )
            ]
            chunks = [
                ChunkOwner(int(r[0]), str(r[1]), None if r[2] is None else str(r[2]))
                for r in conn.execute(
                    "SELECT c.id, c.item_id, m.item_id FROM chunks c "
                    "LEFT JOIN materials m ON m.id = c.material_id"
                )
            ]
            fts = {int(r[0]) for r in conn.execute("SELECT rowid FROM chunks_fts")}
            units, unitless = _passage_coverage(conn)
            vectors: set[int] | None = None
            if self._has_vector_table(conn):
                vectors = {int(r[0]) for r in conn.execute("SELECT rowid FROM vectors")}
        return IndexSnapshot(materials, chunks, fts, units, unitless, vectors)

    def fts_integrity_check(self) -> list[str]:
        """FTS5's own 'integrity-check' of the full-text index ([] when it passes)."""
        if self.read_only:
            # FTS5 runs its check as a write command: it cannot run on a read-only file,
            # and the table-level PRAGMA integrity_check has still been done.
            return []
        with self._write_lock:
            try:
                self._writer.execute(
                    "INSERT INTO chunks_fts(chunks_fts) VALUES ('integrity-check')"
                )
            except apsw.Error as exc:
                return [f"{type(exc).__name__}: {exc}"]
        return []

    def delete_chunk_rows(self, chunk_ids: Iterable[int]) -> int:
        """Remove chunk rows (and their FTS rows and vectors) that belong to no material."""
        ids = sorted(set(chunk_ids))
        if not ids:
            return 0
        with self._write_lock, self._writing():
            for chunk_id in ids:
                self._writer.execute("DELETE FROM chunks WHERE id = ?", (chunk_id,))
            self._remove_vectors(ids)
        # Their passages, now without chunks, are left to rebuild_fts (the doctor asks).
        return len(ids)

    def delete_vector_rows(self, rowids: Iterable[int]) -> int:
        """Remove vectors whose chunk row is gone."""
        ids = sorted(set(rowids))
        if not ids:
            return 0
        with self._write_lock, self._writing():
            removed = self._remove_vectors(ids)
        return removed

    def vector_block_problems(self) -> list[str]:
        """How the code blocks disagree with the stored vectors ([] when they agree)."""
        conn = self._reader()
        with conn:
            dims = self._meta(conn, "dimensions")
            problems = [] if dims is None else vector_blocks.mismatches(conn, int(dims))
        return problems

    def rebuild_vector_blocks(self) -> int:
        """Write the code blocks again from the stored vectors; returns vectors placed."""
        placed = 0
        with self._write_lock, self._writing():
            dims = self._meta(self._writer, "dimensions")
            if dims is not None:
                placed = vector_blocks.rebuild(self._writer, int(dims), self._bump_epoch())
        return placed

    def rebuild_fts(self) -> int:
        """Rewrite the whole full-text index from the passages and chunks: passages of no
        material or naming no chunk go, a chunk in no passage becomes its own, and each
        passage's text is put together from its material's chunks (as rebuild_material
        writes it: body tokens of the passage, title tokens of its material). Returns the
        number of full-text rows written."""
        with self._writing():
            # Dropped and created again, which also clears an index too damaged to delete
            # from. Not FTS5's 'delete-all': other connections keep a cached structure of
            # the table after it and then read it as corrupt (SQLite 3.54); a schema change
            # makes every connection load the table afresh.
            self._writer.execute("DROP TABLE chunks_fts")
            self._writer.execute(FTS_TABLE_SQL)
            valid, _ = _passage_coverage(self._writer)
            units = [int(r[0]) for r in self._writer.execute("SELECT id FROM fts_units")]
            for unit in units:
                if unit not in valid:
                    self._writer.execute("DELETE FROM fts_units WHERE id = ?", (unit,))
            for material_id, seq, start, end in _unpassaged_chunks(self._writer):
                self._writer.execute(
                    "INSERT INTO fts_units (material_id, char_start, char_end, first_seq, "
                    "last_seq) VALUES (?,?,?,?,?)",
                    (material_id, start, end, seq, seq),
                )
            written = 0
            materials: list[tuple[Any, ...]] = self._writer.execute(
                "SELECT id, title FROM materials ORDER BY id"
            ).fetchall()
            for material_id, title in materials:
                written += self._rebuild_material_fts(int(material_id), index_text(str(title)))
        return written

    def _rebuild_material_fts(self, material_id: int, title_tokens: str) -> int:
        chunks = [
            (int(r[0]), int(r[1]), str(r[2]))
            for r in self._writer.execute(
                "SELECT char_start, char_end, text FROM chunks WHERE material_id = ? "
                "ORDER BY char_start, char_end",
                (material_id,),
            )
        ]
        units = [
            (int(r[0]), int(r[1]), int(r[2]))
            for r in self._writer.execute(
                "SELECT id, char_start, char_end FROM fts_units WHERE material_id = ? ORDER BY id",
                (material_id,),
            )
        ]
        for unit, start, end in units:
            self._writer.execute(
                "INSERT INTO chunks_fts (rowid, body, title) VALUES (?,?,?)",
                (unit, index_text(_text_within(chunks, start, end)), title_tokens),
            )
        return len(units)

    # -- portable bases and copies between bases ----------------------------------------

    def snapshot_to(self, target: Path) -> None:
        """A consistent copy of the whole index at `target` (SQLite's VACUUM INTO, one read
        transaction): other processes may write meanwhile."""
        self._reader().execute("VACUUM INTO ?", (str(target),))

    def material_copy(self, item_id: str) -> MaterialCopy | None:
        """Everything the index holds for one item's material, to write into another base:
        its chunks, its passages (with their text, for the full-text index) and vectors."""
        conn = self._reader()
        with conn:  # one read transaction: the rows agree with each other
            found = conn.execute(
                "SELECT id, relative_path, title, char_count, content_hash, page_starts "
                "FROM materials WHERE item_id = ?",
                (item_id,),
            ).fetchone()
            if found is None:
                return None
            row: tuple[Any, ...] = tuple(found)
            material_id = int(row[0])
            rows: list[tuple[Any, ...]] = [
                tuple(r)
                for r in conn.execute(
                    "SELECT id, char_start, char_end, text, token_count, text_hash, page "
                    "FROM chunks WHERE material_id = ? ORDER BY seq",
                    (material_id,),
                )
            ]
            chunks = [
                ChunkRecord(int(r[1]), int(r[2]), str(r[3]), int(r[4]), str(r[5]), _page(r[6]))
                for r in rows
            ]
            spans = sorted((c.start, c.end, c.text) for c in chunks)
            units = [
                UnitRecord(
                    int(u[0]),
                    int(u[1]),
                    _text_within(spans, int(u[0]), int(u[1])),
                    int(u[2]),
                    int(u[3]),
                )
                for u in conn.execute(
                    "SELECT char_start, char_end, first_seq, last_seq FROM fts_units "
                    "WHERE material_id = ? ORDER BY id",
                    (material_id,),
                )
            ]
            vectors: FloatMatrix | None = None
            dims = self._meta(conn, "dimensions")
            if dims is not None and rows:
                ids = [int(r[0]) for r in rows]
                blobs = vector_blocks.floats(conn, ids, int(dims))
                if len(blobs) == len(ids):
                    vectors = np.stack([np.frombuffer(blobs[i], dtype=np.float32) for i in ids])
        return MaterialCopy(
            relative_path=str(row[1]),
            title=str(row[2]),
            char_count=int(row[3]),
            content_hash=row[4],
            page_starts=decode_page_starts(row[5]),
            chunks=chunks,
            units=units,
            vectors=vectors,
        )

    def rename_items(self, new_ids: dict[str, str]) -> int:
        """Give the materials and chunks of the items in `new_ids` their new item ids and
        drop the rows of any other item (an imported index, before anyone reads it)."""
        with self._write_lock, self._writing():
            others = [
                str(r[0])
                for r in self._writer.execute("SELECT item_id FROM materials")
                if str(r[0]) not in new_ids
            ]
            for item_id in others:
                self._delete_material_rows(item_id)
            self._writer.execute("CREATE TEMP TABLE renamed (old TEXT PRIMARY KEY, new TEXT)")
            try:
                self._writer.executemany("INSERT INTO renamed VALUES (?, ?)", new_ids.items())
                for table in ("materials", "chunks"):
                    self._writer.execute(
                        f"UPDATE {table} SET item_id = "
                        "(SELECT new FROM renamed WHERE old = item_id) "
                        "WHERE item_id IN (SELECT old FROM renamed)"
                    )
            finally:
                self._writer.execute("DROP TABLE temp.renamed")
        return len(others)


def known_vector_rows(
    chunk_ids: list[int], hashes: list[str], known: Mapping[str, npt.NDArray[np.float32]]
) -> tuple[FloatMatrix | None, list[int]]:
    """The vectors known by their chunk's text hash, and those chunks' ids."""
    rows = [(cid, known[h]) for cid, h in zip(chunk_ids, hashes, strict=True) if h in known]
    if not rows:
        return None, []
    return np.stack([v for _, v in rows]).astype(np.float32, copy=False), [c for c, _ in rows]


def _missing_vectors(conn: apsw.Connection, chunk_ids: list[int]) -> list[int]:
    """Of these chunk ids, those that exist and have no vector."""
    missing: list[int] = []
    for start in range(0, len(chunk_ids), 500):
        part = chunk_ids[start : start + 500]
        marks = ",".join("?" * len(part))
        missing.extend(
            int(r[0])
            for r in conn.execute(
                f"SELECT c.id FROM chunks c WHERE c.id IN ({marks}) "
                "AND NOT EXISTS (SELECT 1 FROM vectors v WHERE v.id = c.id)",
                part,
            )
        )
    return missing


def schema_objects(conn: SqlReader) -> dict[tuple[str, str], str | None]:
    """(type, name) -> SQL (whitespace folded) of every object in a file's schema."""
    return {
        (str(kind), str(name)): None if sql is None else " ".join(str(sql).split())
        for kind, name, sql in conn.execute("SELECT type, name, sql FROM sqlite_schema")
    }


def _page(value: object) -> int | None:
    return int(value) if isinstance(value, int) else None


@dataclass(frozen=True, slots=True)
class MaterialCopy:
    """One item's material as `IndexStore.material_copy` reads it."""

    relative_path: str
    title: str
    char_count: int
    content_hash: str | None
    page_starts: tuple[int, ...]
    chunks: list[ChunkRecord]
    units: list[UnitRecord]
    vectors: FloatMatrix | None


def passage_ranges(
    chunks: Sequence[tuple[int, int]], passages: Sequence[tuple[int, int]]
) -> list[tuple[int, int]]:
    """For each passage (start, end), the first and last index of the chunks in it.

    A chunk is in a passage when at least half of the shorter of the two is shared (a
    chunk that only reaches into a passage's overlap with its neighbour is not); a
    chunk in no passage by that rule joins the passage it shares most with, and so does
    a passage with no chunk, so full text reaches every chunk and every passage names
    one. Both lists are in text order; a passage's chunks are a contiguous run.
    """
    firsts: list[int] = [-1] * len(passages)
    lasts: list[int] = [-1] * len(passages)

    def join(p: int, c: int) -> None:
        firsts[p] = c if firsts[p] < 0 else min(firsts[p], c)
        lasts[p] = max(lasts[p], c)

    low = 0  # the first passage that may still reach the current chunk
    best_chunk: list[tuple[int, int]] = [(-1, -1)] * len(passages)  # (shared, chunk)
    for c, (start, end) in enumerate(chunks):
        while low < len(passages) - 1 and passages[low][1] <= start:
            low += 1
        best, best_shared, placed = -1, -1, False
        p = low
        while p < len(passages) and (passages[p][0] < end or best < 0):
            p_start, p_end = passages[p]
            shared = min(end, p_end) - max(start, p_start)
            if shared > best_shared:
                best, best_shared = p, shared
            if shared > best_chunk[p][0]:
                best_chunk[p] = (shared, c)
            if shared > 0 and 2 * shared >= min(end - start, p_end - p_start):
                join(p, c)
                placed = True
            p += 1
        if not placed and best >= 0:
            join(best, c)
    for p, (_, c) in enumerate(best_chunk):
        if firsts[p] < 0 and c >= 0:
            join(p, c)
    return [(first, last) for first, last in zip(firsts, lasts, strict=True)]


def _passage_coverage(conn: SqlReader) -> tuple[set[int], int]:
    """The passages that name chunks of their own material, and how many chunks no
    passage names (read in the caller's snapshot; the same SQL on both backends)."""
    counts = {
        int(m): int(n)
        for m, n in conn.execute("SELECT material_id, count(*) FROM chunks GROUP BY material_id")
    }
    valid: set[int] = set()
    ranges: dict[int, list[tuple[int, int]]] = {}
    for unit, material_id, first, last in conn.execute(
        "SELECT u.id, u.material_id, u.first_seq, u.last_seq FROM fts_units u "
        "JOIN materials m ON m.id = u.material_id"
    ):
        n = counts.get(int(material_id), 0)
        if 0 <= int(first) <= int(last) < n:
            valid.add(int(unit))
            ranges.setdefault(int(material_id), []).append((int(first), int(last)))
    covered = sum(_covered(ranges.get(m, [])) for m in counts)
    return valid, sum(counts.values()) - covered


def _covered(ranges: list[tuple[int, int]]) -> int:
    """How many sequence numbers the inclusive ranges cover together."""
    total, reach = 0, -1
    for first, last in sorted(ranges):
        if last > reach:
            total += last - max(first, reach + 1) + 1
            reach = last
    return total


def _unpassaged_chunks(conn: SqlReader) -> list[tuple[int, int, int, int]]:
    """(material id, seq, start, end) of chunks that no passage of their material names."""
    ranges: dict[int, list[tuple[int, int]]] = {}
    for material_id, first, last in conn.execute(
        "SELECT material_id, first_seq, last_seq FROM fts_units"
    ):
        ranges.setdefault(int(material_id), []).append((int(first), int(last)))
    found = []
    for material_id, seq, start, end in conn.execute(
        "SELECT material_id, seq, char_start, char_end FROM chunks ORDER BY material_id, seq"
    ):
        spans = ranges.get(int(material_id), [])
        if not any(first <= int(seq) <= last for first, last in spans):
            found.append((int(material_id), int(seq), int(start), int(end)))
    return found


def _text_within(chunks: list[tuple[int, int, str]], start: int, end: int) -> str:
    """The text of [start, end) of a material, from its chunks (start, end, text) in order;
    stretches no chunk covers (whitespace between chunks) become one space."""
    pieces: list[str] = []
    pos = start
    for chunk_start, chunk_end, text in chunks:
        a, b = max(chunk_start, pos), min(chunk_end, end)
        if a >= b:
            continue
        if a > pos and pieces:
            pieces.append(" ")
        pieces.append(text[a - chunk_start : b - chunk_start])
        pos = b
    return "".join(pieces)


# -- restore: a fresh file swapped in ------------------------------------------------------


def build_fresh(path: Path, dimensions: int | None) -> Path:
    """An empty, migrated index beside `path`, closed and synced, ready for `swap_in`.

    Built beside the old file (same folder, same file system) so `os.replace` is atomic.
    """
    fresh = path.with_name(f"{path.name}.fresh-{os.getpid()}-{secrets.token_hex(4)}")
    try:
        store = IndexStore(fresh, create=True)
        try:
            store.seed_epoch()
            if dimensions is not None:
                store.ensure_vectors(dimensions)
        finally:
            store.close()  # the last connection checkpoints the WAL into the file
        _fsync_file(fresh)
    except BaseException:
        for leftover in [*_sidecars(fresh), fresh]:
            leftover.unlink(missing_ok=True)
        raise
    return fresh


def swap_in(fresh: Path, path: Path) -> None:
    """Put `fresh` in place of `path` atomically and durably; on failure `fresh` is gone.

    The old file's -wal/-shm/-journal go first: SQLite would replay an old WAL's frames
    onto the new file and damage it. Whatever else stands at those paths is damage too (a
    folder where the index should be: a file cannot replace it) and is removed.
    """
    try:
        for sidecar in _sidecars(path):
            _discard(sidecar)
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        os.replace(fresh, path)
    except BaseException:
        for leftover in [*_sidecars(fresh), fresh]:
            with contextlib.suppress(OSError):
                _discard(leftover)
        raise
    _fsync_dir(path.parent)


def _discard(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink(missing_ok=True)


def _sidecars(path: Path) -> list[Path]:
    return [path.with_name(path.name + suffix) for suffix in ("-wal", "-shm", "-journal")]


def _fsync_file(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_dir(folder: Path) -> None:
    if os.name != "posix":
        return  # Windows cannot open a folder for fsync; os.replace is its durable rename
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
