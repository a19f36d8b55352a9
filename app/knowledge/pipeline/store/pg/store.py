"""A base's index in PostgreSQL: the API of IndexStore over one schema (schema.py).

Several machines may write one base at once, so nothing is held in this process between
calls: every write method is one transaction (READ COMMITTED) on a connection of a small
pool; writes to one item are serialised across processes by a transaction-scoped
advisory lock on it; reads that must agree with themselves run in one REPEATABLE READ
snapshot. Vectors are searched by pgvector's HNSW index, full text by BM25 over postings
computed like FTS5's (bm25.py), so the search pipeline, jobs, doctor and export run on
this store unchanged.
"""

from __future__ import annotations

import logging
import math
import secrets
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import psycopg
from pgvector.psycopg import register_vector
from psycopg import sql
from psycopg_pool import ConnectionPool, PoolTimeout

from app.knowledge.pipeline.store import index_store
from app.knowledge.pipeline.store.index_store import (
    Bm25Hit,
    ChunkOwner,
    ChunkRecord,
    DimensionMismatchError,
    IndexSnapshot,
    MaterialCopy,
    MaterialInfo,
    PendingChunk,
    UnitRecord,
    decode_page_starts,
    encode_page_starts,
)
from app.knowledge.pipeline.store.memory_budget import MemoryBudget
from app.knowledge.pipeline.store.pg import bm25, schema
from app.knowledge.pipeline.store.pg.errors import (
    PgSchemaMissingError,
    PgUnavailableError,
    server_address,
    without_password,
)
from app.knowledge.pipeline.store.pg.tokens import document_tokens, parse_match, postings
from app.knowledge.pipeline.store.vector_codes import FloatMatrix
from app.knowledge.pipeline.store.vector_tier import TierStats
from app.knowledge.types import StoredChunk

log = logging.getLogger(__name__)

Conn = psycopg.Connection[Any]

# Seconds to wait for a connection (pool checkout, first connect) before giving up.
CONNECT_TIMEOUT = 10
POOL_MAX = 4
# pgvector reads ef_search from 1 to 1000. At least 400 candidates: on 100k MiniLM-like
# vectors that finds 0.970 of the exact top 10 (0.819 at 100) for 11.5 ms p50; a larger
# graph needs a longer list for the same recall (1M: 0.782 at 400, 0.883 at 1000 for 23
# against 50 ms p50; README, PostgreSQL backend). A knowledge base wants the recall.
_EF_SEARCH_MAX = 1000
EF_SEARCH = 400
_EF_SEARCH_GROWS_FROM = 100_000
# One write in this many folds the fts_stats deltas together (bm25.py reads their sum).
_FOLD_EVERY = 64
_BATCH = 500


class PgIndexStore:
    def __init__(
        self,
        dsn: str,
        schema_name: str,
        *,
        create: bool = True,
        read_only: bool = False,
        budget: MemoryBudget | None = None,
    ) -> None:
        self.dsn = dsn
        self.schema = schema_name
        self.read_only = read_only
        # Logs and messages name a store by its path; this one names the server and schema.
        self.path = Path(f"postgres/{schema_name}")
        self.where = server_address(dsn)
        # Vectors stay in the server: no searchable view in this process, no budget to charge.
        self._budget = budget
        self.vector_stats = TierStats()
        self._closed = False
        with self._direct() as conn:
            self._extension = self._prepare(conn, create=create and not read_only)
        self._pool = ConnectionPool(
            dsn,
            min_size=1,
            max_size=POOL_MAX,
            kwargs={"connect_timeout": CONNECT_TIMEOUT},
            configure=self._configure,
            check=ConnectionPool.check_connection,
            timeout=CONNECT_TIMEOUT,
            name=f"trove-{schema_name}",
            open=False,
        )
        try:
            self._pool.open(wait=True, timeout=CONNECT_TIMEOUT)
        except PoolTimeout as exc:
            self._pool.close()
            raise PgUnavailableError(self.where, "no connection within the timeout") from exc

    # -- connections -------------------------------------------------------------------

    @contextmanager
    def _direct(self) -> Iterator[Conn]:
        """One connection outside the pool (opening: extension, schema, migrations)."""
        try:
            conn = psycopg.connect(self.dsn, connect_timeout=CONNECT_TIMEOUT)
        except psycopg.OperationalError as exc:
            raise PgUnavailableError(self.where, without_password(str(exc), self.dsn)) from exc
        with conn:
            yield conn

    def _prepare(self, conn: Conn, *, create: bool) -> str:
        """Check or create the schema; the schema pgvector lives in."""
        if create:
            extension = schema.ensure_extension(conn)
        else:
            extension = schema.extension_schema(conn) or "public"
        version = schema.extension_version(conn)
        if version is not None and schema.version_tuple(version) < schema.MIN_PGVECTOR:
            conn.rollback()
            raise PgUnavailableError(
                self.where,
                f"its pgvector is version {version}; Trove needs 0.7 or later (half-precision "
                "vector index): the server's administrator runs ALTER EXTENSION vector UPDATE",
            )
        exists = conn.execute(
            "SELECT 1 FROM pg_namespace WHERE nspname = %s", (self.schema,)
        ).fetchone()
        conn.commit()
        if exists is None and not create:
            raise PgSchemaMissingError(f"index schema {self.schema} does not exist at {self.where}")
        schema.set_search_path(conn, self.schema, extension)
        if create or not self.read_only:
            schema.migrate(conn, self.schema)
        else:
            found = schema.schema_version(conn)
            if found != len(schema.MIGRATIONS):
                raise psycopg.errors.ReadOnlySqlTransaction(
                    f"index schema {self.schema} has version {found} and needs "
                    f"{len(schema.MIGRATIONS)}; it cannot be upgraded read-only"
                )
        return extension

    def _configure(self, conn: Conn) -> None:
        conn.autocommit = True
        schema.set_search_path(conn, self.schema, self._extension)
        if self.read_only:
            conn.execute("SET default_transaction_read_only = on")
        try:
            register_vector(conn)
        except psycopg.ProgrammingError:
            log.warning("pgvector is not installed in the database at %s", self.where)
        conn.autocommit = False

    @contextmanager
    def _connection(self) -> Iterator[Conn]:
        try:
            with self._pool.connection() as conn:
                try:
                    yield conn
                except psycopg.OperationalError as exc:
                    if conn.broken:
                        reason = without_password(str(exc), self.dsn)
                        raise PgUnavailableError(self.where, reason) from exc
                    raise
        except PoolTimeout as exc:
            raise PgUnavailableError(self.where, "no connection within the timeout") from exc

    @contextmanager
    def _write(self) -> Iterator[Conn]:
        """One write transaction (READ COMMITTED), committed when the block ends."""
        with self._connection() as conn, conn.transaction():
            yield conn

    @contextmanager
    def _read(self) -> Iterator[Conn]:
        """One read-only snapshot: every statement in the block sees the same data."""
        with self._connection() as conn, conn.transaction():
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            yield conn

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._pool.close()

    def drop(self) -> None:
        """Remove the base's whole index from the server (the base is deleted)."""
        self.close()
        with self._direct() as conn, conn.transaction():
            schema.drop_schema(conn, self.schema)

    # -- locks and bookkeeping (inside the caller's write transaction) ------------------

    def _lock(self, conn: Conn, what: str) -> None:
        conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"trove:{self.schema}:{what}",))

    def _add_stats(self, conn: Conn, units: int, tokens: int) -> None:
        """Append this transaction's change to N and the total length (bm25.py)."""
        if units == 0 and tokens == 0:
            return
        row = conn.execute(
            "INSERT INTO fts_stats (units, tokens) VALUES (%s, %s) RETURNING id", (units, tokens)
        ).fetchone()
        if row is not None and int(row[0]) % _FOLD_EVERY == 0:
            self._fold_stats(conn)

    def _fold_stats(self, conn: Conn) -> None:
        """Replace the committed deltas by their sum. One folder at a time (others skip):
        two would delete the same rows; the sum is of the rows this one deleted, so a
        delta committed meanwhile is neither lost nor counted twice."""
        got = conn.execute(
            "SELECT pg_try_advisory_xact_lock(hashtext(%s))", (f"trove:{self.schema}:fold",)
        ).fetchone()
        if got is None or not got[0]:
            return
        conn.execute(
            "WITH gone AS (DELETE FROM fts_stats RETURNING units, tokens) "
            "INSERT INTO fts_stats (units, tokens) "
            "SELECT coalesce(sum(units), 0), coalesce(sum(tokens), 0) FROM gone"
        )

    # -- meta and dimensions -----------------------------------------------------------

    @staticmethod
    def _meta(conn: Conn, key: str) -> str | None:
        row = conn.execute("SELECT value FROM meta WHERE key = %s", (key,)).fetchone()
        return str(row[0]) if row else None

    @property
    def dimensions(self) -> int | None:
        with self._read() as conn:
            value = self._meta(conn, "dimensions")
        return int(value) if value is not None else None

    def ensure_vectors(self, dimensions: int) -> None:
        """Create the vector table for this base's dimension, or check it matches."""
        with self._write() as conn:
            self._lock(conn, "vectors")
            current = self._meta(conn, "dimensions")
            if current is not None:
                if int(current) != dimensions:
                    raise DimensionMismatchError(
                        f"this base stores {current}-dimensional vectors, got {dimensions}"
                    )
                return
            schema.create_vectors(conn, dimensions)
            conn.execute("INSERT INTO meta VALUES ('dimensions', %s)", (str(int(dimensions)),))

    def seed_epoch(self) -> None:
        """Start the vector epoch at a random value (kept for IndexStore's API: no view of
        the vectors is cached in this process, so nothing reads it here)."""
        with self._write() as conn:
            conn.execute(
                "UPDATE meta SET value = %s WHERE key = 'vector_epoch'",
                (str(secrets.randbelow(2**62)),),
            )

    def drop_vectors(self) -> None:
        """Remove every vector (the base's embedding model changes)."""
        with self._write() as conn:
            self._lock(conn, "vectors")
            schema.drop_vectors(conn)
            conn.execute("DELETE FROM meta WHERE key = 'dimensions'")
            conn.execute(
                "UPDATE meta SET value = (value::bigint + 1)::text WHERE key = 'vector_epoch'"
            )

    def _check_dimensions(self, conn: Conn, got: int) -> int:
        current = self._meta(conn, "dimensions")
        if current is None:
            raise DimensionMismatchError("this base has no vector table; call ensure_vectors first")
        if int(current) != got:
            raise DimensionMismatchError(
                f"the embedding model returned {got}-dimensional vectors; this base stores {current}"
            )
        return got

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
        """Replace an item's material, chunks, passages, postings and vectors in one
        transaction. Without `units` each chunk is its own passage. `chunks` and `units`
        are consumed once, in batches, so a material's size does not set the memory used.
        `known_vectors` (text hash -> vector) gives the vectors of only some chunks, as
        IndexStore.rebuild_material."""
        title_tokens = document_tokens(title)
        with self._write() as conn:
            self._lock(conn, f"item:{item_id}")
            _, removed_units, removed_tokens = self._delete_material_rows(conn, item_id)
            row = conn.execute(
                "INSERT INTO materials (item_id, relative_path, title, char_count, "
                "content_hash, page_starts) VALUES (%s, %s, %s, %s, %s, %s) RETURNING id",
                (
                    item_id,
                    relative_path,
                    title,
                    char_count,
                    content_hash,
                    encode_page_starts(page_starts),
                ),
            ).fetchone()
            assert row is not None, "INSERT ... RETURNING returns the row"
            material_id = int(row[0])
            writer = _UnitWriter(conn, material_id, title_tokens)
            for unit in units or ():
                writer.add(unit)
            writer.flush()
            chunk_ids: list[int] = []
            hashes: list[str] = []
            batch: list[tuple[Any, ...]] = []
            for seq, chunk in enumerate(chunks):
                hashes.append(chunk.text_hash)
                if units is None:
                    writer.add(UnitRecord(chunk.start, chunk.end, chunk.text, seq, seq))
                batch.append(
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
                        chunk.ocr,
                    )
                )
                if len(batch) >= _BATCH:
                    chunk_ids.extend(_insert_chunks(conn, batch))
                    batch.clear()
            chunk_ids.extend(_insert_chunks(conn, batch))
            writer.flush()
            vectored = chunk_ids
            if vectors is None and known_vectors:
                vectors, vectored = index_store.known_vector_rows(chunk_ids, hashes, known_vectors)
            elif vectors is not None and len(vectors) != len(chunk_ids):
                raise ValueError("one vector per chunk is required")
            if vectors is not None and vectored:
                self._check_dimensions(conn, int(vectors.shape[1]))
                _insert_vectors(conn, vectored, vectors)
            self._add_stats(conn, writer.units - removed_units, writer.tokens - removed_tokens)
        return chunk_ids

    def delete_material(self, item_id: str) -> int:
        """Remove an item's material, chunks, postings and vectors; returns chunks removed."""
        with self._write() as conn:
            self._lock(conn, f"item:{item_id}")
            ids, units, tokens = self._delete_material_rows(conn, item_id)
            self._add_stats(conn, -units, -tokens)
        return len(ids)

    def _delete_material_rows(self, conn: Conn, item_id: str) -> tuple[list[int], int, int]:
        """(chunk ids, passages, passage tokens) removed; the caller records the stats."""
        ids = [
            int(r[0]) for r in conn.execute("SELECT id FROM chunks WHERE item_id = %s", (item_id,))
        ]
        row = conn.execute(
            "DELETE FROM fts_units u USING materials m WHERE m.id = u.material_id "
            "AND m.item_id = %s RETURNING u.length",
            (item_id,),
        ).fetchall()
        if ids:
            conn.execute("DELETE FROM chunks WHERE item_id = %s", (item_id,))
        # The foreign keys take the material's postings and vectors along.
        conn.execute("DELETE FROM materials WHERE item_id = %s", (item_id,))
        return ids, len(row), sum(int(r[0]) for r in row)

    def delete_chunk_rows(self, chunk_ids: Iterable[int]) -> int:
        """Remove chunk rows (and their vectors) that belong to no material. Their
        passages, now without chunks, are left to rebuild_fts (the doctor asks)."""
        ids = sorted(set(chunk_ids))
        if not ids:
            return 0
        with self._write() as conn:
            conn.execute("DELETE FROM chunks WHERE id = ANY(%s)", (ids,))
        return len(ids)

    def delete_vector_rows(self, rowids: Iterable[int]) -> int:
        """Remove vectors whose chunk row is gone (the foreign key keeps there being none)."""
        ids = sorted(set(rowids))
        if not ids or self.dimensions is None:
            return 0
        with self._write() as conn:
            cur = conn.execute("DELETE FROM vectors WHERE chunk_id = ANY(%s)", (ids,))
            return cur.rowcount

    # -- the vector stage (jobs/embed_vectors.py) ---------------------------------------

    def pending_vectors(self, after: int, limit: int) -> list[PendingChunk]:
        """Up to `limit` chunks with no vector yet, of ids above `after`, in id order."""
        with self._read() as conn:
            if self._meta(conn, "dimensions") is None:
                return []
            rows = conn.execute(
                "SELECT c.id, c.item_id, c.text, c.text_hash, m.title FROM chunks c "
                "JOIN materials m ON m.id = c.material_id WHERE c.id > %s "
                "AND NOT EXISTS (SELECT 1 FROM vectors v WHERE v.chunk_id = c.id) "
                "ORDER BY c.id LIMIT %s",
                (after, limit),
            ).fetchall()
        return [PendingChunk(int(r[0]), str(r[1]), r[2], str(r[3]), r[4]) for r in rows]

    def add_vectors(self, chunk_ids: Sequence[int], vectors: FloatMatrix) -> int:
        """Store the vectors of chunks that still exist and have none; how many were."""
        if len(vectors) != len(chunk_ids):
            raise ValueError("one vector per chunk is required")
        if not len(chunk_ids):
            return 0
        with self._write() as conn:
            self._check_dimensions(conn, int(vectors.shape[1]))
            wanted = {
                int(r[0])
                for r in conn.execute(
                    "SELECT c.id FROM chunks c WHERE c.id = ANY(%s) AND NOT EXISTS "
                    "(SELECT 1 FROM vectors v WHERE v.chunk_id = c.id) FOR UPDATE",
                    (list(chunk_ids),),
                )
            }
            rows = [row for row, cid in enumerate(chunk_ids) if cid in wanted]
            if rows:
                # Another process may store the same chunk's vector at this moment.
                _insert_vectors(conn, [chunk_ids[r] for r in rows], vectors[rows], on_conflict=True)
        return len(rows)

    def vector_progress(self, item_ids: Iterable[str]) -> dict[str, tuple[int, int]]:
        """(chunks with a vector, chunks) of each of these items that has chunks."""
        ids = list(dict.fromkeys(item_ids))
        with self._read() as conn:
            if self._meta(conn, "dimensions") is None:
                rows = conn.execute(
                    "SELECT item_id, 0, count(*) FROM chunks WHERE item_id = ANY(%s) "
                    "GROUP BY item_id",
                    (ids,),
                ).fetchall()
            else:
                rows = conn.execute(
                    "SELECT c.item_id, count(v.chunk_id), count(*) FROM chunks c "
                    "LEFT JOIN vectors v ON v.chunk_id = c.id WHERE c.item_id = ANY(%s) "
                    "GROUP BY c.item_id",
                    (ids,),
                ).fetchall()
        return {str(i): (int(done), int(total)) for i, done, total in rows}

    def rename_items(self, new_ids: dict[str, str]) -> int:
        """Give the materials and chunks of the items in `new_ids` their new item ids and
        drop the rows of any other item (an imported index, before anyone reads it)."""
        with self._write() as conn:
            self._lock(conn, "rename")
            others = [
                str(r[0])
                for r in conn.execute("SELECT item_id FROM materials")
                if str(r[0]) not in new_ids
            ]
            units = tokens = 0
            for item_id in others:
                _, u, t = self._delete_material_rows(conn, item_id)
                units, tokens = units + u, tokens + t
            self._add_stats(conn, -units, -tokens)
            old, new = list(new_ids), list(new_ids.values())
            for table in ("materials", "chunks"):
                conn.execute(
                    sql.SQL(
                        "UPDATE {} t SET item_id = r.new "
                        "FROM unnest(%s::text[], %s::text[]) AS r(old, new) "
                        "WHERE t.item_id = r.old"
                    ).format(sql.Identifier(table)),
                    (old, new),
                )
        return len(others)

    # -- reads -------------------------------------------------------------------------

    def _count(self, query: str) -> int:
        with self._read() as conn:
            row = conn.execute(query).fetchone()
        return int(row[0]) if row else 0

    def material_count(self) -> int:
        return self._count("SELECT count(*) FROM materials")

    def chunk_count(self) -> int:
        return self._count("SELECT count(*) FROM chunks")

    def vector_count(self) -> int:
        with self._read() as conn:
            if self._meta(conn, "dimensions") is None:
                return 0
            row = conn.execute("SELECT count(*) FROM vectors").fetchone()
        return int(row[0]) if row else 0

    def material(self, item_id: str) -> MaterialInfo | None:
        with self._read() as conn:
            return _material(conn, "item_id", item_id)

    def material_by_path(self, relative_path: str) -> MaterialInfo | None:
        with self._read() as conn:
            return _material(conn, "relative_path", relative_path)

    def page_starts(self, item_ids: Iterable[str]) -> dict[str, tuple[int, ...]]:
        """Where the pages of these items' materials start, for the paged ones."""
        ids = list(dict.fromkeys(item_ids))
        with self._read() as conn:
            rows = conn.execute(
                "SELECT item_id, page_starts FROM materials WHERE item_id = ANY(%s) "
                "AND page_starts IS NOT NULL",
                (ids,),
            ).fetchall()
        return {str(item_id): decode_page_starts(encoded) for item_id, encoded in rows}

    def item_ids(self) -> list[str]:
        with self._read() as conn:
            return [str(r[0]) for r in conn.execute("SELECT item_id FROM materials")]

    def vectors_for_hashes(self, hashes: Iterable[str]) -> dict[str, npt.NDArray[np.float32]]:
        """Stored vectors for chunk texts already embedded in this base (reuse, not re-spend)."""
        wanted = list(dict.fromkeys(hashes))
        with self._read() as conn:
            if self._meta(conn, "dimensions") is None or not wanted:
                return {}
            rows = conn.execute(
                "SELECT DISTINCT ON (c.text_hash) c.text_hash, v.embedding FROM chunks c "
                "JOIN vectors v ON v.chunk_id = c.id WHERE c.text_hash = ANY(%s)",
                (wanted,),
            ).fetchall()
        return {str(h): _floats(v) for h, v in rows}

    def bm25_search(self, match: str, limit: int) -> list[Bm25Hit]:
        """The chunks of the best `limit` passages for a MATCH string as
        fts_match_expression writes it, best passage first, a passage's chunks in text
        order (BM25 as FTS5 computes it: higher is better)."""
        phrases = parse_match(match)
        if not phrases or limit <= 0:
            return []
        query, params = bm25.ranking_query(phrases, limit)
        with self._read() as conn:  # one snapshot: the passages found and their chunks agree
            units = [(int(r[0]), float(r[1])) for r in conn.execute(query, params)]
            members: dict[int, list[int]] = {}
            for unit, chunk_id in conn.execute(
                "SELECT u.id, c.id FROM fts_units u JOIN chunks c "
                "ON c.material_id = u.material_id AND c.seq BETWEEN u.first_seq AND u.last_seq "
                "WHERE u.id = ANY(%s) ORDER BY c.seq",
                ([u for u, _ in units],),
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
        with self._read() as conn:
            rows = conn.execute(
                "SELECT c.id, (SELECT u.id FROM fts_units u WHERE u.material_id = c.material_id "
                "AND u.first_seq <= c.seq AND u.last_seq >= c.seq "
                "ORDER BY u.first_seq DESC LIMIT 1) FROM chunks c WHERE c.id = ANY(%s)",
                (ids,),
            ).fetchall()
        return {int(c): int(u) for c, u in rows if u is not None}

    def vector_search(self, query: npt.NDArray[np.float32], limit: int) -> list[tuple[int, float]]:
        """(chunk id, cosine similarity), best first, from the HNSW index; its candidate
        list (ef_search) is at least `limit` long, up to pgvector's 1000."""
        if limit <= 0:
            return []
        with self._read() as conn:
            dims, vectors = conn.execute(
                "SELECT (SELECT value FROM meta WHERE key = 'dimensions'), "
                "(SELECT reltuples FROM pg_class WHERE oid = to_regclass('vectors'))"
            ).fetchone() or (None, None)
            if dims is None:
                return []
            if query.shape[-1] != int(dims):
                raise DimensionMismatchError(
                    f"query vector has {query.shape[-1]} dimensions; this base stores {dims}"
                )
            ef = ef_search_for(float(vectors or 0), limit)
            conn.execute(sql.SQL("SET LOCAL hnsw.ef_search = {}").format(sql.Literal(ef)))
            vector = np.asarray(query, dtype=np.float32).reshape(-1)
            rows = conn.execute(_vector_query(int(dims)), {"q": vector, "limit": limit}).fetchall()
        return [(int(c), float(s)) for c, s in rows]

    def vector_memory_bytes(self) -> int:
        """0: the vectors and their index are held by the server, not this process."""
        return 0

    def chunks(self, chunk_ids: Iterable[int]) -> dict[int, StoredChunk]:
        ids = list(dict.fromkeys(chunk_ids))
        with self._read() as conn:
            rows = conn.execute(
                "SELECT c.id, c.item_id, c.seq, c.char_start, c.char_end, c.text, c.page, "
                "m.relative_path, m.title, c.ocr "
                "FROM chunks c JOIN materials m ON m.id = c.material_id WHERE c.id = ANY(%s)",
                (ids,),
            ).fetchall()
        return {
            int(r[0]): StoredChunk(
                int(r[0]), r[1], int(r[2]), int(r[3]), int(r[4]), r[5], r[6], r[7], r[8], bool(r[9])
            )
            for r in rows
        }

    def item_chunks(self, item_id: str) -> list[StoredChunk]:
        with self._read() as conn:
            ids = [
                int(r[0])
                for r in conn.execute(
                    "SELECT id FROM chunks WHERE item_id = %s ORDER BY seq", (item_id,)
                )
            ]
        by_id = self.chunks(ids)
        return [by_id[i] for i in ids if i in by_id]

    # -- integrity (trove doctor) -------------------------------------------------------

    def integrity_check(self) -> list[str]:
        """That the schema is at this Trove's version and every table answers ([] when
        so). The server keeps its own storage consistent; amcheck is left to its admin."""
        problems: list[str] = []
        try:
            with self._read() as conn:
                version = schema.schema_version(conn)
                if version != len(schema.MIGRATIONS):
                    problems.append(
                        f"schema {self.schema} has version {version}, "
                        f"expected {len(schema.MIGRATIONS)}"
                    )
                tables = ["meta", "materials", "chunks", "fts_units", "postings", "fts_stats"]
                if self._meta(conn, "dimensions") is not None:
                    tables.append("vectors")
                for table in tables:
                    conn.execute(sql.SQL("SELECT 1 FROM {} LIMIT 1").format(sql.Identifier(table)))
        except (psycopg.errors.UndefinedTable, psycopg.errors.InvalidSchemaName) as exc:
            problems.append(f"{type(exc).__name__}: {exc}")
        return problems

    def integrity_snapshot(self) -> IndexSnapshot:
        """Materials, chunk owners, full-text rows and vector ids from one snapshot. A
        passage counts as in the full-text index when it has postings or no tokens."""
        with self._read() as conn:
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
            fts = {
                int(r[0])
                for r in conn.execute(
                    "SELECT id FROM fts_units u WHERE u.length = 0 "
                    "OR EXISTS (SELECT 1 FROM postings p WHERE p.unit_id = u.id)"
                )
            }
            units, unitless = index_store._passage_coverage(conn)
            vectors: set[int] | None = None
            if self._meta(conn, "dimensions") is not None:
                vectors = {int(r[0]) for r in conn.execute("SELECT chunk_id FROM vectors")}
        return IndexSnapshot(materials, chunks, fts, units, unitless, vectors)

    def fts_integrity_check(self) -> list[str]:
        """That the postings add up to each passage's length (and carry that length), and
        the stats deltas to the passages' count and total length ([] when they agree)."""
        with self._read() as conn:
            wrong = conn.execute(
                "SELECT count(*), min(u.id) FROM fts_units u LEFT JOIN "
                "(SELECT unit_id, sum(body_tf + title_tf) AS n, min(unit_length) AS lo, "
                "max(unit_length) AS hi FROM postings GROUP BY unit_id) p "
                "ON p.unit_id = u.id WHERE u.length <> coalesce(p.n, 0) "
                "OR p.lo <> u.length OR p.hi <> u.length"
            ).fetchone()
            stats = conn.execute(
                "SELECT coalesce(sum(units), 0), coalesce(sum(tokens), 0) FROM fts_stats"
            ).fetchone()
            actual = conn.execute(
                "SELECT count(*), coalesce(sum(length), 0) FROM fts_units"
            ).fetchone()
        problems: list[str] = []
        if wrong is not None and int(wrong[0]):
            problems.append(
                f"{wrong[0]} passage(s) whose postings do not add up to their length "
                "or carry another "
                f"(first: {wrong[1]})"
            )
        if (
            stats is not None
            and actual is not None
            and tuple(map(int, stats)) != tuple(map(int, actual))
        ):
            problems.append(
                f"full-text statistics say {stats[0]} passages of {stats[1]} tokens; "
                f"there are {actual[0]} of {actual[1]}"
            )
        return problems

    def vector_block_problems(self) -> list[str]:
        """Always []: a PostgreSQL base has no code blocks (vector_blocks.py is the SQLite
        index's search structure); its HNSW index is the server's to keep consistent."""
        return []

    def rebuild_vector_blocks(self) -> int:
        """Rebuild the HNSW index from the stored vectors; returns the vectors in it."""
        with self._write() as conn:
            if self._meta(conn, "dimensions") is None:
                return 0
            conn.execute("REINDEX INDEX vectors_hnsw")
            row = conn.execute("SELECT count(*) FROM vectors").fetchone()
        return int(row[0]) if row else 0

    def rebuild_fts(self) -> int:
        """Rewrite the postings and statistics from the passages and chunks: passages of
        no material or naming no chunk go, a chunk in no passage becomes its own, and each
        passage's tokens are those of its material's chunks and title (as
        rebuild_material writes them). Returns the number of passages written."""
        with self._write() as conn:
            # Writers of materials wait (they take ROW EXCLUSIVE); readers go on.
            conn.execute("LOCK TABLE fts_units, postings, fts_stats IN EXCLUSIVE MODE")
            conn.execute("DELETE FROM postings")
            conn.execute("DELETE FROM fts_stats")
            valid, _ = index_store._passage_coverage(conn)
            conn.execute("DELETE FROM fts_units WHERE NOT (id = ANY(%s))", (sorted(valid),))
            with conn.cursor() as cur:
                cur.executemany(
                    "INSERT INTO fts_units (material_id, char_start, char_end, first_seq, "
                    "last_seq, length) VALUES (%s, %s, %s, %s, %s, 0)",
                    [
                        (m, start, end, seq, seq)
                        for m, seq, start, end in index_store._unpassaged_chunks(conn)
                    ],
                )
            written = tokens = 0
            materials = conn.execute("SELECT id, title FROM materials ORDER BY id").fetchall()
            for material_id, title in materials:
                n, t = _rebuild_material_postings(conn, int(material_id), str(title))
                written, tokens = written + n, tokens + t
            total = conn.execute("SELECT count(*) FROM fts_units").fetchone()
            units = int(total[0]) if total else 0
            conn.execute("INSERT INTO fts_stats (units, tokens) VALUES (%s, %s)", (units, tokens))
        return written

    # -- portable bases and copies between bases ----------------------------------------

    def snapshot_to(self, target: Path) -> None:
        """A SQLite index at `target` holding everything this one does, read in one
        snapshot (others may write meanwhile): export makes a normal portable archive
        of a PostgreSQL base with it."""
        copy = index_store.IndexStore(target, create=True)
        try:
            with self._read() as conn:
                dims = self._meta(conn, "dimensions")
                if dims is not None:
                    copy.ensure_vectors(int(dims))
                items = [
                    str(r[0]) for r in conn.execute("SELECT item_id FROM materials ORDER BY id")
                ]
                for item_id in items:
                    found = _material_copy(conn, item_id, dims)
                    if found is None:
                        continue
                    copy.rebuild_material(
                        item_id,
                        found.relative_path,
                        found.title,
                        found.char_count,
                        found.chunks,
                        vectors=found.vectors,
                        content_hash=found.content_hash,
                        units=found.units,
                        page_starts=found.page_starts,
                    )
        finally:
            copy.close()

    def material_copy(self, item_id: str) -> MaterialCopy | None:
        """Everything the index holds for one item's material, to write into another base:
        its chunks, its passages (with their text, for the full-text index) and vectors."""
        with self._read() as conn:
            return _material_copy(conn, item_id, self._meta(conn, "dimensions"))


class _UnitWriter:
    """Writes passages and their postings in batches, counting what it wrote."""

    def __init__(self, conn: Conn, material_id: int, title_tokens: list[str]) -> None:
        self._conn = conn
        self._material_id = material_id
        self._title = title_tokens
        self._pending: list[tuple[UnitRecord, list[str]]] = []
        self.units = 0
        self.tokens = 0

    def add(self, unit: UnitRecord) -> None:
        self._pending.append((unit, document_tokens(unit.text)))
        if len(self._pending) >= _BATCH:
            self.flush()

    def flush(self) -> None:
        if not self._pending:
            return
        rows = [
            (
                self._material_id,
                u.start,
                u.end,
                u.first_chunk,
                u.last_chunk,
                len(body) + len(self._title),
            )
            for u, body in self._pending
        ]
        ids = _insert_returning(
            self._conn,
            "INSERT INTO fts_units (material_id, char_start, char_end, first_seq, last_seq, "
            "length) VALUES (%s, %s, %s, %s, %s, %s) RETURNING id",
            rows,
        )
        _write_postings(
            self._conn,
            [(uid, body, self._title) for uid, (_, body) in zip(ids, self._pending, strict=True)],
        )
        self.units += len(rows)
        self.tokens += sum(r[5] for r in rows)
        self._pending.clear()


def _write_postings(conn: Conn, units: list[tuple[int, list[str], list[str]]]) -> None:
    """The postings of passages (id, body tokens, title tokens), by COPY. Each carries
    its passage's length, which is fts_units.length by construction (body + title)."""
    with (
        conn.cursor() as cur,
        cur.copy(
            "COPY postings (term, unit_id, body_tf, title_tf, unit_length) FROM STDIN"
        ) as copy,
    ):
        for unit_id, body, title in units:
            length = len(body) + len(title)
            for p in postings(body, title):
                copy.write_row((p.term, unit_id, p.body_tf, p.title_tf, length))


def ef_search_for(vectors: float, limit: int) -> int:
    """The HNSW candidate list for the top `limit` of about `vectors` vectors (the
    planner's estimate; -1 before the table was first analysed): 400 up to 100k, then
    growing with the square root of the size up to pgvector's cap (1,000 from 625k), and
    never shorter than 4 x limit."""
    grown = EF_SEARCH * math.sqrt(max(vectors, 0.0) / _EF_SEARCH_GROWS_FROM)
    return min(_EF_SEARCH_MAX, max(EF_SEARCH, 4 * limit, math.ceil(grown)))


def _vector_query(dimensions: int) -> sql.Composed:
    """Candidates in the HNSW index's order (half precision), then scored and ordered by
    the stored full-precision vectors, so scores are exact cosine similarities."""
    return sql.SQL(
        "SELECT chunk_id, score FROM ("
        "SELECT chunk_id, 1 - (embedding <=> %(q)s) AS score FROM vectors "
        "ORDER BY {} <=> (%(q)s::vector)::halfvec({}) LIMIT %(limit)s"
        ") found ORDER BY score DESC, chunk_id"
    ).format(schema.halfvec_of("embedding", dimensions), sql.Literal(dimensions))


def _insert_returning(conn: Conn, query: str, rows: list[tuple[Any, ...]]) -> list[int]:
    """Insert rows one statement each (pipelined); their ids in the order given."""
    if not rows:
        return []
    ids: list[int] = []
    with conn.cursor() as cur:
        cur.executemany(query, rows, returning=True)
        while True:
            row = cur.fetchone()
            assert row is not None, "RETURNING id returns one row per insert"
            ids.append(int(row[0]))
            if not cur.nextset():
                break
    return ids


def _insert_chunks(conn: Conn, rows: list[tuple[Any, ...]]) -> list[int]:
    return _insert_returning(
        conn,
        "INSERT INTO chunks (material_id, item_id, seq, char_start, char_end, token_count, "
        "text, text_hash, page, ocr) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s) "
        "RETURNING id",
        rows,
    )


def _insert_vectors(
    conn: Conn, chunk_ids: Sequence[int], vectors: FloatMatrix, *, on_conflict: bool = False
) -> None:
    query = "INSERT INTO vectors (chunk_id, embedding) VALUES (%s, %s)"
    if on_conflict:
        query += " ON CONFLICT (chunk_id) DO NOTHING"
    with conn.cursor() as cur:
        cur.executemany(
            query,
            [
                (cid, np.asarray(v, dtype=np.float32))
                for cid, v in zip(chunk_ids, vectors, strict=True)
            ],
        )


def _floats(value: Any) -> npt.NDArray[np.float32]:
    """A vector column's value (pgvector's Vector) as a float32 array of its own."""
    array: npt.NDArray[np.float32] = np.array(value.to_numpy(), dtype=np.float32)
    return array


def _material(conn: Conn, column: str, value: str) -> MaterialInfo | None:
    row = conn.execute(
        sql.SQL(
            "SELECT m.item_id, m.relative_path, m.title, m.char_count, "
            "(SELECT count(*) FROM chunks c WHERE c.material_id = m.id), m.page_starts "
            "FROM materials m WHERE {} = %s ORDER BY m.id LIMIT 1"
        ).format(sql.Identifier("m", column)),
        (value,),
    ).fetchone()
    if row is None:
        return None
    return MaterialInfo(
        row[0], row[1], row[2], int(row[3]), int(row[4]), decode_page_starts(row[5])
    )


def _material_copy(conn: Conn, item_id: str, dims: str | None) -> MaterialCopy | None:
    found = conn.execute(
        "SELECT id, relative_path, title, char_count, content_hash, page_starts "
        "FROM materials WHERE item_id = %s",
        (item_id,),
    ).fetchone()
    if found is None:
        return None
    material_id = int(found[0])
    rows = conn.execute(
        "SELECT id, char_start, char_end, text, token_count, text_hash, page, ocr "
        "FROM chunks WHERE material_id = %s ORDER BY seq",
        (material_id,),
    ).fetchall()
    chunks = [
        ChunkRecord(int(r[1]), int(r[2]), str(r[3]), int(r[4]), str(r[5]), r[6], ocr=bool(r[7]))
        for r in rows
    ]
    spans = sorted((c.start, c.end, c.text) for c in chunks)
    units = [
        UnitRecord(
            int(u[0]),
            int(u[1]),
            index_store._text_within(spans, int(u[0]), int(u[1])),
            int(u[2]),
            int(u[3]),
        )
        for u in conn.execute(
            "SELECT char_start, char_end, first_seq, last_seq FROM fts_units "
            "WHERE material_id = %s ORDER BY id",
            (material_id,),
        )
    ]
    vectors: FloatMatrix | None = None
    if dims is not None and rows:
        ids = [int(r[0]) for r in rows]
        stored = dict(
            conn.execute(
                "SELECT chunk_id, embedding FROM vectors WHERE chunk_id = ANY(%s)", (ids,)
            ).fetchall()
        )
        if len(stored) == len(ids):
            vectors = np.stack([_floats(stored[i]) for i in ids])
    return MaterialCopy(
        relative_path=str(found[1]),
        title=str(found[2]),
        char_count=int(found[3]),
        content_hash=found[4],
        page_starts=decode_page_starts(found[5]),
        chunks=chunks,
        units=units,
        vectors=vectors,
    )


def _rebuild_material_postings(conn: Conn, material_id: int, title: str) -> tuple[int, int]:
    """Postings and lengths of one material's passages from its chunks; (passages, tokens)."""
    chunks = [
        (int(r[0]), int(r[1]), str(r[2]))
        for r in conn.execute(
            "SELECT char_start, char_end, text FROM chunks WHERE material_id = %s "
            "ORDER BY char_start, char_end",
            (material_id,),
        )
    ]
    units = conn.execute(
        "SELECT id, char_start, char_end FROM fts_units WHERE material_id = %s ORDER BY id",
        (material_id,),
    ).fetchall()
    title_tokens = document_tokens(title)
    written: list[tuple[int, list[str], list[str]]] = []
    lengths: list[tuple[int, int]] = []
    for unit, start, end in units:
        body = document_tokens(index_store._text_within(chunks, int(start), int(end)))
        written.append((int(unit), body, title_tokens))
        lengths.append((len(body) + len(title_tokens), int(unit)))
    with conn.cursor() as cur:
        cur.executemany("UPDATE fts_units SET length = %s WHERE id = %s", lengths)
    _write_postings(conn, written)
    return len(units), sum(n for n, _ in lengths)
