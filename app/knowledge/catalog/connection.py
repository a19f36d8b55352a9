"""The catalog's connections: one writer under a lock, one reader per OS thread."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import apsw

from app.knowledge import db
from app.knowledge.catalog.migrations import MIGRATIONS


class CatalogConnection:
    """Writes go through one connection under a lock; reads outside a write use a
    connection per thread, so in WAL mode the GUI and many workers read without waiting."""

    def __init__(self, path: Path, *, read_only: bool = False) -> None:
        self.path = path
        self.read_only = read_only
        if not read_only:
            path.parent.mkdir(parents=True, exist_ok=True)
        self._conn = db.connect(path, create=not read_only, read_only=read_only)
        self._lock = threading.RLock()
        self._local = threading.local()
        self._readers: dict[int, apsw.Connection] = {}
        db.migrate(self._conn, MIGRATIONS, "catalog")

    def close(self) -> None:
        with self._lock:
            for reader in self._readers.values():
                reader.close()
            self._readers.clear()
            self._conn.close()

    @contextmanager
    def _writing(self) -> Iterator[None]:
        """Hold the write lock; reads in this thread meanwhile see the uncommitted writes."""
        with self._lock:
            self._local.depth = getattr(self._local, "depth", 0) + 1
            try:
                yield
            finally:
                self._local.depth -= 1

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """Group several catalog writes so they land together or not at all."""
        with self._writing(), db.write_transaction(self._conn):
            yield

    def _reader(self) -> apsw.Connection:
        # Keyed by OS thread id, not threading.local: a Qt pool thread gets a fresh Python
        # thread state for every job, so a thread-local connection would leak one per job.
        ident = threading.get_ident()
        conn = self._readers.get(ident)
        if conn is None:
            conn = db.connect(self.path, create=False, read_only=self.read_only)
            with self._lock:
                self._readers[ident] = conn
        return conn

    def _rows(self, sql: str, args: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        if getattr(self._local, "depth", 0):
            return [tuple(r) for r in self._conn.execute(sql, args)]
        return [tuple(r) for r in self._reader().execute(sql, args)]

    def _exec(self, sql: str, args: Sequence[Any] = ()) -> None:
        with self._writing():
            self._conn.execute(sql, args)
