"""apsw connections with the settings every Trove database shares, and forward migrations."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

import apsw
import sqlite_vec

log = logging.getLogger(__name__)

Migration = Callable[[apsw.Connection], None]

BUSY_TIMEOUT_MS = 30_000


def read_only_uri(path: Path) -> str:
    """A `mode=ro` URI for a file in a folder Trove may not write.

    `immutable=1` (no locks, no -shm to create) only when no -wal/-shm lies beside the file:
    with a WAL present its committed pages live there and must be read through it.
    """
    sidecars = any(Path(f"{path}{suffix}").exists() for suffix in ("-wal", "-shm"))
    uri = f"file:{quote(str(path.absolute()))}?mode=ro"
    return uri if sidecars else uri + "&immutable=1"


def connect(
    path: Path, *, create: bool = True, vectors: bool = False, read_only: bool = False
) -> apsw.Connection:
    """Open a WAL connection; `create=False` refuses to make a file that is not there;
    `read_only` opens it without ever writing (a read-only data folder)."""
    if read_only:
        conn = apsw.Connection(
            read_only_uri(path), flags=apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI
        )
    else:
        flags = apsw.SQLITE_OPEN_READWRITE | (apsw.SQLITE_OPEN_CREATE if create else 0)
        conn = apsw.Connection(str(path), flags=flags)
    conn.set_busy_timeout(BUSY_TIMEOUT_MS)
    if vectors:
        conn.enable_load_extension(True)
        conn.load_extension(sqlite_vec.loadable_path())
        conn.enable_load_extension(False)
    if read_only:
        return conn
    conn.execute("PRAGMA journal_mode=WAL")
    # NORMAL is durable against application crashes in WAL mode; only an OS crash or
    # power loss can roll back the last transactions, never corrupt the file.
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("PRAGMA foreign_keys=ON")
    return conn


def catalog_readable(path: Path) -> bool:
    """Whether the database at `path` opens and passes SQLite's quick check (read-only)."""
    try:
        conn = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
        try:
            return [str(r[0]) for r in conn.execute("PRAGMA quick_check")] == ["ok"]
        finally:
            conn.close()
    except apsw.Error:
        return False


@contextmanager
def write_transaction(conn: apsw.Connection) -> Iterator[None]:
    """A transaction that takes SQLite's write lock up front (`BEGIN IMMEDIATE`).

    A deferred transaction that reads and then writes must upgrade its read snapshot to a
    write lock; when another process committed meanwhile, WAL answers SQLITE_BUSY at once and
    the busy timeout cannot help (the snapshot is stale). Taking the write lock first makes
    the busy handler wait its turn instead. Nested uses become savepoints of the outer one.
    """
    if conn.in_transaction:
        with conn:
            yield
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


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
    if conn.readonly("main") and current != target:
        raise apsw.ReadOnlyError(
            f"{name} has schema version {current} and needs {target}; it cannot be "
            "upgraded in a read-only folder"
        )
    if current > target:
        raise RuntimeError(
            f"{name} has schema version {current}, newer than this Trove understands ({target})"
        )
    for version in range(current, target):
        with write_transaction(conn):
            if schema_version(conn) != version:  # another process migrated meanwhile
                continue
            migrations[version](conn)
            conn.execute(f"PRAGMA user_version={version + 1}")
        log.info("%s migrated to schema version %d", name, version + 1)
    return target
