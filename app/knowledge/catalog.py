"""The app database `trove.sqlite`: bases, items and jobs.

One apsw connection guarded by a lock: catalog statements are short, and WAL lets the
per-base index stores be read and written on their own connections meanwhile.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import apsw

from app.knowledge import db, states
from app.knowledge.types import (
    DEFAULT_CHUNK_OVERLAP,
    DEFAULT_CHUNK_SIZE,
    DEFAULT_DOCUMENT_COUNT,
    Base,
    BaseStatus,
    ErrorCode,
    Item,
    ItemPhase,
    ItemStatus,
    ItemType,
    TroveError,
)


def _v1(conn: apsw.Connection) -> None:
    conn.execute(
        """
        CREATE TABLE bases (
            id TEXT PRIMARY KEY,
            name TEXT NOT NULL,
            embedding_model TEXT,
            dimensions INTEGER,
            rerank_model TEXT,
            document_count INTEGER NOT NULL DEFAULT 10 CHECK (document_count BETWEEN 1 AND 200),
            threshold REAL CHECK (threshold IS NULL OR threshold BETWEEN 0 AND 1),
            chunk_size INTEGER NOT NULL CHECK (chunk_size > 0),
            chunk_overlap INTEGER NOT NULL CHECK (chunk_overlap >= 0 AND chunk_overlap < chunk_size),
            status TEXT NOT NULL CHECK (status IN ('completed', 'failed')),
            status_reason TEXT,
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL,
            CHECK ((embedding_model IS NULL) = (dimensions IS NULL))
        );
        CREATE TABLE items (
            id TEXT PRIMARY KEY,
            base_id TEXT NOT NULL REFERENCES bases(id) ON DELETE CASCADE,
            parent_id TEXT REFERENCES items(id) ON DELETE CASCADE,
            type TEXT NOT NULL CHECK (type IN ('file', 'directory', 'url', 'sitemap', 'note')),
            source TEXT NOT NULL,
            title TEXT NOT NULL,
            relative_path TEXT,
            status TEXT NOT NULL
                CHECK (status IN ('preparing', 'processing', 'completed', 'failed', 'deleting')),
            phase TEXT CHECK (phase IS NULL OR phase IN ('reading', 'embedding', 'writing', 'waiting')),
            progress REAL,
            error_code TEXT,
            error_message TEXT,
            chunk_count INTEGER NOT NULL DEFAULT 0,
            size INTEGER,
            content_hash TEXT,
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL
        );
        CREATE INDEX items_base_status ON items(base_id, status);
        CREATE INDEX items_parent ON items(parent_id);
        CREATE INDEX items_base_source ON items(base_id, source);
        CREATE INDEX items_base_hash ON items(base_id, content_hash);
        CREATE TABLE jobs (
            id INTEGER PRIMARY KEY,
            kind TEXT NOT NULL,
            base_id TEXT NOT NULL REFERENCES bases(id) ON DELETE CASCADE,
            item_id TEXT,
            payload TEXT NOT NULL DEFAULT '{}',
            idempotency_key TEXT,
            status TEXT NOT NULL DEFAULT 'queued'
                CHECK (status IN ('queued', 'running', 'done', 'failed', 'abandoned')),
            attempts INTEGER NOT NULL DEFAULT 0,
            not_before REAL NOT NULL DEFAULT 0,
            last_error TEXT,
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL
        );
        -- Only one live job per idempotency key: adding the same thing twice enqueues once.
        CREATE UNIQUE INDEX jobs_live_key ON jobs(idempotency_key)
            WHERE status IN ('queued', 'running');
        CREATE INDEX jobs_queue ON jobs(base_id, status, not_before);
        """
    )


def _v2(conn: apsw.Connection) -> None:
    # Which process runs a job, so recovery after a crash never touches a live process's work.
    conn.execute("ALTER TABLE jobs ADD COLUMN owner TEXT")
    # Options a folder root was added with (extensions, include/exclude globs), so a reindex
    # re-scans the folder the same way.
    conn.execute("ALTER TABLE items ADD COLUMN options TEXT")


def _v3(conn: apsw.Connection) -> None:
    # Provider settings; their API keys live in the OS keychain, never here.
    conn.execute(
        """
        CREATE TABLE providers (
            id TEXT PRIMARY KEY,
            kind TEXT NOT NULL,
            display_name TEXT NOT NULL DEFAULT '',
            base_url TEXT NOT NULL DEFAULT '',
            enabled INTEGER NOT NULL DEFAULT 1,
            models TEXT NOT NULL DEFAULT '[]',
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL
        )
        """
    )


def _v4(conn: apsw.Connection) -> None:
    # Whether agent tools (kb_manage over MCP) may add, delete and refresh items in a base.
    # Off unless the person turns it on.
    conn.execute("ALTER TABLE bases ADD COLUMN agent_writes INTEGER NOT NULL DEFAULT 0")


def _v5(conn: apsw.Connection) -> None:
    # Job ids are never reused (AUTOINCREMENT): finished jobs are deleted, and a plain rowid
    # key hands a deleted job's id to the next job, so a process still holding the old id
    # (its row removed by a base deletion, say) would finish or retry somebody else's job.
    conn.execute(
        """
        CREATE TABLE jobs_v5 (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            kind TEXT NOT NULL,
            base_id TEXT NOT NULL REFERENCES bases(id) ON DELETE CASCADE,
            item_id TEXT,
            payload TEXT NOT NULL DEFAULT '{}',
            idempotency_key TEXT,
            status TEXT NOT NULL DEFAULT 'queued'
                CHECK (status IN ('queued', 'running', 'done', 'failed', 'abandoned')),
            attempts INTEGER NOT NULL DEFAULT 0,
            not_before REAL NOT NULL DEFAULT 0,
            last_error TEXT,
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL,
            owner TEXT
        )
        """
    )
    # Rows the old table holds are copied as they are (damaged ones too: doctor reports them).
    conn.execute("PRAGMA ignore_check_constraints=ON")
    try:
        conn.execute(f"INSERT INTO jobs_v5 ({_JOB_COLUMNS}) SELECT {_JOB_COLUMNS} FROM jobs")
    finally:
        conn.execute("PRAGMA ignore_check_constraints=OFF")
    conn.execute("DROP TABLE jobs")
    conn.execute("ALTER TABLE jobs_v5 RENAME TO jobs")
    conn.execute(
        "CREATE UNIQUE INDEX jobs_live_key ON jobs(idempotency_key) "
        "WHERE status IN ('queued', 'running')"
    )
    conn.execute("CREATE INDEX jobs_queue ON jobs(base_id, status, not_before)")


MIGRATIONS: list[db.Migration] = [_v1, _v2, _v3, _v4, _v5]

_BASE_COLUMNS = (
    "id, name, embedding_model, dimensions, rerank_model, document_count, threshold, "
    "chunk_size, chunk_overlap, status, status_reason, created_at, updated_at, agent_writes"
)
_ITEM_COLUMNS = (
    "id, base_id, parent_id, type, source, title, relative_path, status, phase, progress, "
    "error_code, error_message, chunk_count, size, content_hash, created_at, updated_at, options"
)
_JOB_COLUMNS = (
    "id, kind, base_id, item_id, payload, idempotency_key, status, attempts, not_before, "
    "last_error, created_at, updated_at, owner"
)

_BASE_UPDATABLE = frozenset(
    {
        "name",
        "embedding_model",
        "dimensions",
        "rerank_model",
        "document_count",
        "threshold",
        "chunk_size",
        "chunk_overlap",
        "agent_writes",
    }
)
_ITEM_UPDATABLE = frozenset(
    {"title", "relative_path", "chunk_count", "size", "content_hash", "source"}
)


@dataclass(frozen=True, slots=True)
class Job:
    id: int
    kind: str
    base_id: str
    item_id: str | None
    payload: dict[str, Any]
    idempotency_key: str | None
    status: str
    attempts: int
    not_before: float
    last_error: str | None
    created_at: float
    updated_at: float
    owner: str | None = None
    # Why the stored payload could not be read (not JSON, not an object), or None.
    payload_error: str | None = None


# Statuses the schema's CHECK constraints allow; a row outside them is damage (written by
# hand or by a damaged file) that doctor reports and repairs.
ITEM_STATUSES = tuple(s.value for s in ItemStatus)
BASE_STATUSES = tuple(s.value for s in BaseStatus)


def new_id() -> str:
    return uuid.uuid4().hex[:16]


def _base(row: Sequence[Any]) -> Base:
    return Base(
        id=row[0],
        name=row[1],
        embedding_model=row[2],
        dimensions=row[3],
        rerank_model=row[4],
        document_count=row[5],
        threshold=row[6],
        chunk_size=row[7],
        chunk_overlap=row[8],
        status=_base_status(row[9]),
        status_reason=row[10] if row[9] in BASE_STATUSES else f"unknown status {row[9]!r}",
        created_at=row[11],
        updated_at=row[12],
        agent_writes=bool(row[13]),
    )


def _item(row: Sequence[Any]) -> Item:
    return Item(
        id=row[0],
        base_id=row[1],
        parent_id=row[2],
        type=ItemType(row[3]),
        source=row[4],
        title=row[5],
        relative_path=row[6],
        status=_item_status(row[7]),
        phase=ItemPhase(row[8]) if row[8] else None,
        progress=row[9],
        error_code=row[10],
        error_message=row[11],
        chunk_count=row[12],
        size=row[13],
        content_hash=row[14],
        created_at=row[15],
        updated_at=row[16],
        options=json.loads(row[17]) if row[17] else None,
    )


def _base_status(value: Any) -> BaseStatus:
    """A damaged status reads as failed: the base is shown and can be restored."""
    return BaseStatus(value) if value in BASE_STATUSES else BaseStatus.FAILED


def _item_status(value: Any) -> ItemStatus:
    """A damaged status reads as failed: never as work in flight or as searchable."""
    return ItemStatus(value) if value in ITEM_STATUSES else ItemStatus.FAILED


def _payload(raw: Any) -> tuple[dict[str, Any], str | None]:
    try:
        payload = json.loads(raw)
    except (TypeError, ValueError) as exc:
        return {}, f"the job's payload is not JSON: {exc}"
    if not isinstance(payload, dict):
        return {}, f"the job's payload is not a JSON object: {type(payload).__name__}"
    return payload, None


def _job(row: Sequence[Any]) -> Job:
    payload, payload_error = _payload(row[4])
    return Job(
        id=row[0],
        kind=row[1],
        base_id=row[2],
        item_id=row[3],
        payload=payload,
        idempotency_key=row[5],
        status=row[6],
        attempts=row[7],
        not_before=row[8],
        last_error=row[9],
        created_at=row[10],
        updated_at=row[11],
        owner=row[12],
        payload_error=payload_error,
    )


class Catalog:
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

    # -- bases -------------------------------------------------------------------------

    def create_base(
        self,
        name: str,
        *,
        base_id: str | None = None,
        embedding_model: str | None = None,
        dimensions: int | None = None,
        rerank_model: str | None = None,
        document_count: int = DEFAULT_DOCUMENT_COUNT,
        threshold: float | None = None,
        chunk_size: int = DEFAULT_CHUNK_SIZE,
        chunk_overlap: int = DEFAULT_CHUNK_OVERLAP,
    ) -> Base:
        now = time.time()
        bid = base_id or new_id()
        try:
            self._exec(
                f"INSERT INTO bases ({_BASE_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (
                    bid,
                    name,
                    embedding_model,
                    dimensions,
                    rerank_model,
                    document_count,
                    threshold,
                    chunk_size,
                    chunk_overlap,
                    BaseStatus.COMPLETED.value,
                    None,
                    now,
                    now,
                    0,
                ),
            )
        except apsw.ConstraintError as exc:
            raise TroveError(ErrorCode.INVALID_ARGUMENT, f"invalid base settings: {exc}") from exc
        return self.require_base(bid)

    def get_base(self, base_id: str) -> Base | None:
        rows = self._rows(f"SELECT {_BASE_COLUMNS} FROM bases WHERE id = ?", (base_id,))
        return _base(rows[0]) if rows else None

    def require_base(self, base_id: str) -> Base:
        base = self.get_base(base_id)
        if base is None:
            raise TroveError(ErrorCode.BASE_NOT_FOUND, f"no knowledge base with id {base_id!r}")
        return base

    def list_bases(self) -> list[Base]:
        return [
            _base(r) for r in self._rows(f"SELECT {_BASE_COLUMNS} FROM bases ORDER BY name, id")
        ]

    def find_bases_by_name(self, name: str) -> list[Base]:
        rows = self._rows(f"SELECT {_BASE_COLUMNS} FROM bases WHERE name = ? ORDER BY id", (name,))
        return [_base(r) for r in rows]

    def update_base(self, base_id: str, **fields: Any) -> Base:
        unknown = set(fields) - _BASE_UPDATABLE
        if unknown:
            raise ValueError(f"cannot update base fields {sorted(unknown)}")
        if fields:
            assignments = ", ".join(f"{k} = ?" for k in fields)
            try:
                self._exec(
                    f"UPDATE bases SET {assignments}, updated_at = ? WHERE id = ?",
                    (*fields.values(), time.time(), base_id),
                )
            except apsw.ConstraintError as exc:
                raise TroveError(
                    ErrorCode.INVALID_ARGUMENT, f"invalid base settings: {exc}"
                ) from exc
        return self.require_base(base_id)

    def set_base_status(self, base_id: str, status: BaseStatus, reason: str | None = None) -> Base:
        self._exec(
            "UPDATE bases SET status = ?, status_reason = ?, updated_at = ? WHERE id = ?",
            (status.value, reason, time.time(), base_id),
        )
        return self.require_base(base_id)

    def delete_base_row(self, base_id: str) -> None:
        self._exec("DELETE FROM bases WHERE id = ?", (base_id,))

    # -- items -------------------------------------------------------------------------

    def create_item(
        self,
        base_id: str,
        item_type: ItemType,
        source: str,
        title: str,
        *,
        status: ItemStatus,
        parent_id: str | None = None,
        relative_path: str | None = None,
        size: int | None = None,
        content_hash: str | None = None,
        item_id: str | None = None,
        options: dict[str, Any] | None = None,
    ) -> Item:
        iid = item_id or new_id()
        states.check_transition(iid, None, status)
        now = time.time()
        self._exec(
            f"INSERT INTO items ({_ITEM_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (
                iid,
                base_id,
                parent_id,
                item_type.value,
                source,
                title,
                relative_path,
                status.value,
                None,
                None,
                None,
                None,
                0,
                size,
                content_hash,
                now,
                now,
                json.dumps(options) if options else None,
            ),
        )
        return self.require_item(iid)

    def get_item(self, item_id: str) -> Item | None:
        rows = self._rows(f"SELECT {_ITEM_COLUMNS} FROM items WHERE id = ?", (item_id,))
        return _item(rows[0]) if rows else None

    def require_item(self, item_id: str) -> Item:
        item = self.get_item(item_id)
        if item is None:
            raise TroveError(ErrorCode.ITEM_NOT_FOUND, f"no item with id {item_id!r}")
        return item

    def get_items(self, item_ids: Iterable[str]) -> dict[str, Item]:
        ids = list(dict.fromkeys(item_ids))
        found: dict[str, Item] = {}
        # Stay well below SQLite's bound-parameter limit.
        for start in range(0, len(ids), 500):
            part = ids[start : start + 500]
            marks = ",".join("?" * len(part))
            for row in self._rows(f"SELECT {_ITEM_COLUMNS} FROM items WHERE id IN ({marks})", part):
                found[row[0]] = _item(row)
        return found

    def list_items(
        self,
        base_id: str,
        *,
        parent_id: str | None = None,
        roots_only: bool = False,
        statuses: Iterable[ItemStatus] | None = None,
    ) -> list[Item]:
        sql = f"SELECT {_ITEM_COLUMNS} FROM items WHERE base_id = ?"
        args: list[Any] = [base_id]
        if parent_id is not None:
            sql += " AND parent_id = ?"
            args.append(parent_id)
        elif roots_only:
            sql += " AND parent_id IS NULL"
        if statuses is not None:
            wanted = [s.value for s in statuses]
            sql += f" AND status IN ({','.join('?' * len(wanted))})"
            args.extend(wanted)
        sql += " ORDER BY created_at, id"
        return [_item(r) for r in self._rows(sql, args)]

    def find_items_by_source(self, base_id: str, source: str) -> list[Item]:
        rows = self._rows(
            f"SELECT {_ITEM_COLUMNS} FROM items WHERE base_id = ? AND source = ?", (base_id, source)
        )
        return [_item(r) for r in rows]

    def find_items_by_hash(self, base_id: str, content_hash: str) -> list[Item]:
        rows = self._rows(
            f"SELECT {_ITEM_COLUMNS} FROM items WHERE base_id = ? AND content_hash = ?",
            (base_id, content_hash),
        )
        return [_item(r) for r in rows]

    def child_status_counts(self, parent_id: str) -> dict[ItemStatus, int]:
        """How many of a root's children are in each status (counted in SQL)."""
        rows = self._rows(
            "SELECT status, count(*) FROM items WHERE parent_id = ? GROUP BY status", (parent_id,)
        )
        counts: dict[ItemStatus, int] = {}
        for status, n in rows:
            counts[_item_status(status)] = counts.get(_item_status(status), 0) + int(n)
        return counts

    def count_items(self, base_id: str, status: ItemStatus | None = None) -> int:
        if status is None:
            rows = self._rows("SELECT count(*) FROM items WHERE base_id = ?", (base_id,))
        else:
            rows = self._rows(
                "SELECT count(*) FROM items WHERE base_id = ? AND status = ?",
                (base_id, status.value),
            )
        return int(rows[0][0])

    def set_item_status(
        self,
        item_id: str,
        status: ItemStatus,
        *,
        error_code: str | None = None,
        error_message: str | None = None,
    ) -> Item:
        """The only way an item's status changes; illegal transitions raise."""
        with self._writing(), db.write_transaction(self._conn):
            current = self.require_item(item_id)
            states.check_transition(item_id, current.status, status)
            keep_error = status is ItemStatus.FAILED
            self._conn.execute(
                "UPDATE items SET status = ?, phase = NULL, progress = NULL, error_code = ?, "
                "error_message = ?, updated_at = ? WHERE id = ?",
                (
                    status.value,
                    error_code if keep_error else None,
                    error_message if keep_error else None,
                    time.time(),
                    item_id,
                ),
            )
        return self.require_item(item_id)

    def set_item_phase(
        self, item_id: str, phase: ItemPhase | None, progress: float | None = None
    ) -> None:
        with self._writing(), db.write_transaction(self._conn):
            current = self.require_item(item_id)
            states.check_phase(item_id, current.status, phase)
            self._conn.execute(
                "UPDATE items SET phase = ?, progress = ?, updated_at = ? WHERE id = ?",
                (phase.value if phase else None, progress, time.time(), item_id),
            )

    def update_item(self, item_id: str, **fields: Any) -> Item:
        unknown = set(fields) - _ITEM_UPDATABLE
        if unknown:
            raise ValueError(f"cannot update item fields {sorted(unknown)}")
        if fields:
            assignments = ", ".join(f"{k} = ?" for k in fields)
            self._exec(
                f"UPDATE items SET {assignments}, updated_at = ? WHERE id = ?",
                (*fields.values(), time.time(), item_id),
            )
        return self.require_item(item_id)

    def delete_item_row(self, item_id: str) -> None:
        """Remove a row; only items already marked deleting may go (DESIGN.md section 4)."""
        with self._writing(), db.write_transaction(self._conn):
            item = self.get_item(item_id)
            if item is None:
                return
            if item.status is not ItemStatus.DELETING:
                raise TroveError(
                    ErrorCode.ILLEGAL_TRANSITION,
                    f"item {item_id} must be marked deleting before its row is removed",
                )
            self._conn.execute("DELETE FROM items WHERE id = ?", (item_id,))

    def descendants(self, item_id: str) -> list[Item]:
        rows = self._rows(
            f"""
            WITH RECURSIVE sub(id) AS (
                SELECT id FROM items WHERE parent_id = ?
                UNION ALL SELECT items.id FROM items JOIN sub ON items.parent_id = sub.id
            )
            SELECT {_ITEM_COLUMNS} FROM items WHERE id IN (SELECT id FROM sub)
            """,
            (item_id,),
        )
        return [_item(r) for r in rows]

    # -- jobs --------------------------------------------------------------------------

    def enqueue_job(
        self,
        kind: str,
        base_id: str,
        *,
        item_id: str | None = None,
        payload: dict[str, Any] | None = None,
        idempotency_key: str | None = None,
        not_before: float = 0.0,
    ) -> Job:
        """Queue a job; a live job with the same idempotency key is returned instead."""
        now = time.time()
        with self._writing(), db.write_transaction(self._conn):
            if idempotency_key is not None:
                rows = self._rows(
                    f"SELECT {_JOB_COLUMNS} FROM jobs WHERE idempotency_key = ? "
                    "AND status IN ('queued', 'running')",
                    (idempotency_key,),
                )
                if rows:
                    return _job(rows[0])
            self._conn.execute(
                "INSERT INTO jobs (kind, base_id, item_id, payload, idempotency_key, not_before, "
                "created_at, updated_at) VALUES (?,?,?,?,?,?,?,?)",
                (
                    kind,
                    base_id,
                    item_id,
                    json.dumps(payload or {}),
                    idempotency_key,
                    not_before,
                    now,
                    now,
                ),
            )
            job_id = self._conn.last_insert_rowid()
        return self.require_job(job_id)

    def require_job(self, job_id: int) -> Job:
        rows = self._rows(f"SELECT {_JOB_COLUMNS} FROM jobs WHERE id = ?", (job_id,))
        if not rows:
            raise KeyError(job_id)
        return _job(rows[0])

    def claim_next_job(
        self,
        base_id: str | None = None,
        now: float | None = None,
        *,
        owner: str | None = None,
        skip: Iterable[tuple[str, str]] = (),
    ) -> Job | None:
        """Mark the oldest due queued job running and return it.

        `skip` lists (base id, kind) pairs that are at their concurrency limit.
        """
        now = time.time() if now is None else now
        sql = f"SELECT {_JOB_COLUMNS} FROM jobs WHERE status = 'queued' AND not_before <= ?"
        args: list[Any] = [now]
        if base_id is not None:
            sql += " AND base_id = ?"
            args.append(base_id)
        for skip_base, skip_kind in skip:
            sql += " AND NOT (base_id = ? AND kind = ?)"
            args.extend((skip_base, skip_kind))
        with self._writing(), db.write_transaction(self._conn):
            rows = self._rows(sql + " ORDER BY id LIMIT 1", args)
            if not rows:
                return None
            job = _job(rows[0])
            self._conn.execute(
                "UPDATE jobs SET status = 'running', attempts = attempts + 1, owner = ?, "
                "updated_at = ? WHERE id = ?",
                (owner, now, job.id),
            )
        return self.require_job(job.id)

    def next_due_time(self, base_id: str | None = None) -> float | None:
        """When the earliest queued job becomes due (None when nothing is queued)."""
        sql = "SELECT min(not_before) FROM jobs WHERE status = 'queued'"
        args: list[Any] = []
        if base_id is not None:
            sql += " AND base_id = ?"
            args.append(base_id)
        value = self._rows(sql, args)[0][0]
        return float(value) if value is not None else None

    def requeue_job(self, job_id: int, error: str | None = None) -> None:
        """Put a running job back in the queue at once (a retry-policy job after a crash)."""
        self._exec(
            "UPDATE jobs SET status = 'queued', owner = NULL, not_before = 0, last_error = ?, "
            "updated_at = ? WHERE id = ?",
            (error, time.time(), job_id),
        )

    def finish_job(self, job_id: int, status: str, error: str | None = None) -> None:
        """Record a job's end. Finished jobs are deleted: only failures are kept, for diagnosis."""
        if status == "done":
            self._exec("DELETE FROM jobs WHERE id = ?", (job_id,))
            return
        self._exec(
            "UPDATE jobs SET status = ?, last_error = ?, updated_at = ? WHERE id = ?",
            (status, error, time.time(), job_id),
        )

    def release_job(self, job_id: int, error: str) -> None:
        """Give up a running job whose outcome could not be recorded: without an owner it
        looks like a job of a dead process, so recovery applies its policy. A one-row update
        of fixed size: the most likely write to land when the others did not."""
        self._exec(
            "UPDATE jobs SET owner = NULL, last_error = ?, updated_at = ? "
            "WHERE id = ? AND status = 'running'",
            (error, time.time(), job_id),
        )

    def retry_job(self, job_id: int, not_before: float, error: str) -> None:
        self._exec(
            "UPDATE jobs SET status = 'queued', owner = NULL, not_before = ?, last_error = ?, "
            "updated_at = ? WHERE id = ?",
            (not_before, error, time.time(), job_id),
        )

    def prune_finished_jobs(self, older_than: float) -> int:
        """Delete failed and abandoned job rows last touched before `older_than` (epoch
        seconds); returns how many. They are kept only to diagnose recent failures."""
        with self._writing(), db.write_transaction(self._conn):
            self._conn.execute(
                "DELETE FROM jobs WHERE status IN ('failed', 'abandoned') AND updated_at < ?",
                (older_than,),
            )
            pruned = int(self._conn.changes())
        return pruned

    # -- damaged rows (doctor) ------------------------------------------------------------

    def damaged_item_rows(self) -> list[tuple[str, str, str]]:
        """(id, base id, stored status) of items whose status the schema does not allow."""
        marks = ",".join("?" * len(ITEM_STATUSES))
        rows = self._rows(
            f"SELECT id, base_id, status FROM items WHERE status NOT IN ({marks}) "
            "OR status IS NULL ORDER BY id",
            ITEM_STATUSES,
        )
        return [(str(r[0]), str(r[1]), str(r[2])) for r in rows]

    def damaged_base_rows(self) -> list[tuple[str, str]]:
        """(id, stored status) of bases whose status the schema does not allow."""
        marks = ",".join("?" * len(BASE_STATUSES))
        rows = self._rows(
            f"SELECT id, status FROM bases WHERE status NOT IN ({marks}) OR status IS NULL "
            "ORDER BY id",
            BASE_STATUSES,
        )
        return [(str(r[0]), str(r[1])) for r in rows]

    def orphan_item_rows(self) -> list[tuple[str, str]]:
        """(id, base id) of items whose base row does not exist."""
        rows = self._rows(
            "SELECT id, base_id FROM items WHERE base_id NOT IN (SELECT id FROM bases) ORDER BY id"
        )
        return [(str(r[0]), str(r[1])) for r in rows]

    def fail_damaged_item(self, item_id: str, message: str) -> None:
        """Set a damaged status to failed directly: there is no legal transition from garbage."""
        self._exec(
            "UPDATE items SET status = 'failed', phase = NULL, progress = NULL, error_code = ?, "
            "error_message = ?, updated_at = ? WHERE id = ?",
            (ErrorCode.READ_FAILED.value, message, time.time(), item_id),
        )

    def fail_damaged_base(self, base_id: str, reason: str) -> None:
        self._exec(
            "UPDATE bases SET status = 'failed', status_reason = ?, updated_at = ? WHERE id = ?",
            (reason, time.time(), base_id),
        )

    def delete_orphan_item(self, item_id: str) -> None:
        """Delete an item row of a base that does not exist (its children cascade)."""
        self._exec(
            "DELETE FROM items WHERE id = ? AND base_id NOT IN (SELECT id FROM bases)", (item_id,)
        )

    def list_jobs(
        self, base_id: str | None = None, statuses: Iterable[str] | None = None
    ) -> list[Job]:
        sql = f"SELECT {_JOB_COLUMNS} FROM jobs WHERE 1=1"
        args: list[Any] = []
        if base_id is not None:
            sql += " AND base_id = ?"
            args.append(base_id)
        if statuses is not None:
            wanted = list(statuses)
            sql += f" AND status IN ({','.join('?' * len(wanted))})"
            args.extend(wanted)
        return [_job(r) for r in self._rows(sql + " ORDER BY id", args)]

    def job_counts(self, base_id: str | None = None) -> tuple[int, int]:
        """(queued, running) jobs, counted in SQL: a queue can hold many thousands."""
        sql = "SELECT status, count(*) FROM jobs WHERE status IN ('queued', 'running')"
        args: list[Any] = []
        if base_id is not None:
            sql += " AND base_id = ?"
            args.append(base_id)
        counts = dict(self._rows(sql + " GROUP BY status", args))
        return int(counts.get("queued", 0)), int(counts.get("running", 0))

    def count_live_jobs(self, base_id: str | None = None) -> int:
        return sum(self.job_counts(base_id))

    # -- providers ---------------------------------------------------------------------

    def list_provider_rows(self) -> list[dict[str, Any]]:
        rows = self._rows(
            "SELECT id, kind, display_name, base_url, enabled, models FROM providers ORDER BY id"
        )
        return [
            {
                "id": r[0],
                "kind": r[1],
                "display_name": r[2],
                "base_url": r[3],
                "enabled": bool(r[4]),
                "models": json.loads(r[5]),
            }
            for r in rows
        ]

    def upsert_provider_row(
        self,
        provider_id: str,
        kind: str,
        display_name: str,
        base_url: str,
        enabled: bool,
        models: list[str],
    ) -> None:
        now = time.time()
        self._exec(
            "INSERT INTO providers (id, kind, display_name, base_url, enabled, models, created_at, "
            "updated_at) VALUES (?,?,?,?,?,?,?,?) ON CONFLICT(id) DO UPDATE SET kind = excluded.kind, "
            "display_name = excluded.display_name, base_url = excluded.base_url, "
            "enabled = excluded.enabled, models = excluded.models, updated_at = excluded.updated_at",
            (provider_id, kind, display_name, base_url, int(enabled), json.dumps(models), now, now),
        )

    def delete_provider_row(self, provider_id: str) -> bool:
        with self._writing(), db.write_transaction(self._conn):
            found = self._rows("SELECT 1 FROM providers WHERE id = ?", (provider_id,))
            self._conn.execute("DELETE FROM providers WHERE id = ?", (provider_id,))
        return bool(found)
