"""apsw connections with the settings every Trove database shares, and forward migrations."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from pathlib import Path

import apsw
import sqlite_vec

log = logging.getLogger(__name__)

Migration = Callable[[apsw.Connection], None]

BUSY_TIMEOUT_MS = 30_000


def connect(path: Path, *, create: bool = True, vectors: bool = False) -> apsw.Connection:
    """Open a WAL connection; `create=False` refuses to make a file that is not there."""
    flags = apsw.SQLITE_OPEN_READWRITE | (apsw.SQLITE_OPEN_CREATE if create else 0)
    conn = apsw.Connection(str(path), flags=flags)
    conn.set_busy_timeout(BUSY_TIMEOUT_MS)
    if vectors:
        conn.enable_load_extension(True)
        conn.load_extension(sqlite_vec.loadable_path())
        conn.enable_load_extension(False)
    conn.execute("PRAGMA journal_mode=WAL")
    # NORMAL is durable against application crashes in WAL mode; only an OS crash or
    # power loss can roll back the last transactions, never corrupt the file.
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("PRAGMA foreign_keys=ON")
    return conn


def schema_version(conn: apsw.Connection) -> int:
    row = conn.execute("PRAGMA user_version").fetchone()
    return int(row[0]) if row else 0


def migrate(conn: apsw.Connection, migrations: Sequence[Migration], name: str) -> int:
    """Apply the migrations after the file's version, each in its own transaction.

    A file written by a newer Trove (version above what we know) is refused rather than
    guessed at, so an older build can never damage it.
    """
    current = schema_version(conn)
    target = len(migrations)
    if current > target:
        raise RuntimeError(
            f"{name} has schema version {current}, newer than this Trove understands ({target})"
        )
    for version in range(current, target):
        with conn:
            migrations[version](conn)
            conn.execute(f"PRAGMA user_version={version + 1}")
        log.info("%s migrated to schema version %d", name, version + 1)
    return target
