"""An empty index in place of a base's on its server (restore), keeping the base's other
rows: the items, jobs and settings that live in the same schema (catalog/server.py)."""

from __future__ import annotations

import psycopg
from psycopg import sql

from app.knowledge.pipeline.store.pg import schema
from app.knowledge.pipeline.store.pg.errors import PgUnavailableError, server_address

# Every table the index migrations create; `meta` keeps the catalog's keys and loses the
# index's own (schema_version, vector_epoch, dimensions).
INDEX_TABLES = ("vectors", "postings", "fts_stats", "fts_units", "chunks", "materials")
INDEX_META_KEYS = ("schema_version", "vector_epoch", "dimensions")


def reset_index(dsn: str, schema_name: str) -> None:
    """Drop the index tables and create them again empty, in one transaction under the
    schema's migration lock: other desktops' stores find the new tables on their next
    statement (their queries never see half of it)."""
    try:
        conn = psycopg.connect(dsn, connect_timeout=10)
    except psycopg.OperationalError as exc:
        raise PgUnavailableError(server_address(dsn), str(exc).splitlines()[0]) from exc
    with conn:
        extension = schema.ensure_extension(conn)
        schema.set_search_path(conn, schema_name, extension)
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"trove:{schema_name}",))
            for table in INDEX_TABLES:
                conn.execute(
                    sql.SQL("DROP TABLE IF EXISTS {} CASCADE").format(sql.Identifier(table))
                )
            conn.execute("DELETE FROM meta WHERE key = ANY(%s)", (list(INDEX_META_KEYS),))
        schema.migrate(conn, schema_name)
