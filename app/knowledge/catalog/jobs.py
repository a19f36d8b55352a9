"""Catalog rows of the `jobs` table: the persistent queue the runtime claims from."""

from __future__ import annotations

import json
import time
from collections.abc import Iterable
from typing import Any

from app.knowledge import db
from app.knowledge.catalog.connection import CatalogConnection
from app.knowledge.catalog.rows import (
    JOB_COLUMNS,
    Job,
    decode_job,
)

# The vector stage comes after every other due job (see jobs/kinds.py LOW_PRIORITY_KINDS;
# the catalog stays free of the jobs package, so the kind is named here).
CLAIM_ORDER = "(kind = 'embed-vectors'), id"


class JobRows(CatalogConnection):
    """Enqueue, claim, finish and count job rows."""

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
                    f"SELECT {JOB_COLUMNS} FROM jobs WHERE idempotency_key = ? "
                    "AND status IN ('queued', 'running')",
                    (idempotency_key,),
                )
                if rows:
                    return decode_job(rows[0])
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
        rows = self._rows(f"SELECT {JOB_COLUMNS} FROM jobs WHERE id = ?", (job_id,))
        if not rows:
            raise KeyError(job_id)
        return decode_job(rows[0])

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
        sql = f"SELECT {JOB_COLUMNS} FROM jobs WHERE status = 'queued' AND not_before <= ?"
        args: list[Any] = [now]
        if base_id is not None:
            sql += " AND base_id = ?"
            args.append(base_id)
        for skip_base, skip_kind in skip:
            sql += " AND NOT (base_id = ? AND kind = ?)"
            args.extend((skip_base, skip_kind))
        with self._writing(), db.write_transaction(self._conn):
            rows = self._rows(sql + f" ORDER BY {CLAIM_ORDER} LIMIT 1", args)
            if not rows:
                return None
            job = decode_job(rows[0])
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

    def hand_back_job(self, job_id: int, error: str) -> None:
        """Put a running job back in the queue as it was before its claim (a normal exit
        stopped it): due at once, no owner, and the claim not counted as an attempt."""
        self._exec(
            "UPDATE jobs SET status = 'queued', owner = NULL, not_before = 0, "
            "attempts = CASE WHEN attempts > 0 THEN attempts - 1 ELSE 0 END, "
            "last_error = ?, updated_at = ? WHERE id = ? AND status = 'running'",
            (error, time.time(), job_id),
        )

    def mark_running_job(self, job_id: int, owner: str, error: str) -> None:
        """Note why a job still running under `owner` will stop (it keeps its owner). On
        a server the row names the owner with its machine (`host/owner`)."""
        self._exec(
            "UPDATE jobs SET last_error = ?, updated_at = ? "
            "WHERE id = ? AND status = 'running' AND (owner = ? OR owner LIKE ?)",
            (error, time.time(), job_id, owner, f"%/{owner}"),
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

    def poll_job(self, job_id: int, not_before: float, error: str, *, fresh: bool = False) -> None:
        """Queue a running job again from `not_before` without counting its claim as an
        attempt: it is not failing, only waiting (jobs.errors.PollLater); `fresh` forgets
        its earlier attempts too (it made progress)."""
        self._exec(
            "UPDATE jobs SET status = 'queued', owner = NULL, not_before = ?, last_error = ?, "
            "attempts = CASE WHEN ? = 1 THEN 0 WHEN attempts > 0 THEN attempts - 1 ELSE 0 END, "
            "updated_at = ? WHERE id = ? AND status = 'running'",
            (not_before, error, int(fresh), time.time(), job_id),
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

    def list_jobs(
        self, base_id: str | None = None, statuses: Iterable[str] | None = None
    ) -> list[Job]:
        sql = f"SELECT {JOB_COLUMNS} FROM jobs WHERE 1=1"
        args: list[Any] = []
        if base_id is not None:
            sql += " AND base_id = ?"
            args.append(base_id)
        if statuses is not None:
            wanted = list(statuses)
            sql += f" AND status IN ({','.join('?' * len(wanted))})"
            args.extend(wanted)
        return [decode_job(r) for r in self._rows(sql + " ORDER BY id", args)]

    def job_counts(self, base_id: str | None = None) -> tuple[int, int]:
        """(queued, running) jobs, counted in SQL: a queue can hold many thousands."""
        sql = "SELECT status, count(*) FROM jobs WHERE status IN ('queued', 'running')"
        args: list[Any] = []
        if base_id is not None:
            sql += " AND base_id = ?"
            args.append(base_id)
        counts = dict(self._rows(sql + " GROUP BY status", args))
        return int(counts.get("queued", 0)), int(counts.get("running", 0))

    def job_counts_by_base(self) -> dict[str, tuple[int, int]]:
        """(queued, running) jobs of each base that has any."""
        rows = self._rows(
            "SELECT base_id, status, count(*) FROM jobs WHERE status IN ('queued', 'running')"
            " GROUP BY base_id, status"
        )
        counts: dict[str, tuple[int, int]] = {}
        for base_id, status, n in rows:
            queued, running = counts.get(str(base_id), (0, 0))
            if status == "queued":
                queued += int(n)
            else:
                running += int(n)
            counts[str(base_id)] = (queued, running)
        return counts

    def count_live_jobs(self, base_id: str | None = None) -> int:
        return sum(self.job_counts(base_id))

    def take_job_lease(self, job_id: int, key: str) -> Job | None:
        """Give running job `job_id` the idempotency key `key` unless another live job holds
        it; returns that holder (None: the lease is taken). Either way the job lets go of
        its own key, so the next request for the same work can queue."""
        with self._writing(), db.write_transaction(self._conn):
            rows = self._rows(
                f"SELECT {JOB_COLUMNS} FROM jobs WHERE idempotency_key = ? "
                "AND status IN ('queued', 'running') AND id != ?",
                (key, job_id),
            )
            holder = decode_job(rows[0]) if rows else None
            self._conn.execute(
                "UPDATE jobs SET idempotency_key = ? WHERE id = ?",
                (None if holder else key, job_id),
            )
        return holder

    def defer_queued_job(self, base_id: str, key: str, not_before: float) -> None:
        """Make the queued job of `key` wait until `not_before` at least (a job handing its
        work to it had to wait that long)."""
        self._exec(
            # CASE rather than max(): the same SQL runs on a server's PostgreSQL catalog.
            "UPDATE jobs SET not_before = CASE WHEN not_before > ? THEN not_before ELSE ? END "
            "WHERE base_id = ? AND idempotency_key = ? AND status = 'queued'",
            (not_before, not_before, base_id, key),
        )

    def live_job_keys(self, base_id: str, prefix: str) -> set[str]:
        """Idempotency keys starting with `prefix` of a base's queued and running jobs (read
        often by the window: the base's other jobs, thousands in an import, stay in SQL)."""
        rows = self._rows(
            "SELECT idempotency_key FROM jobs WHERE base_id = ? AND status IN "
            "('queued', 'running') AND substr(idempotency_key, 1, ?) = ?",
            (base_id, len(prefix), prefix),
        )
        return {str(r[0]) for r in rows}
