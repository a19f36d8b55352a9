"""Catalog rows of linked folders: the link, its sync state, each file's last-seen snapshot,
the change log of recent syncs, and the scheduled refresh of URL and sitemap items."""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Sequence
from typing import Any

from app.knowledge import db
from app.knowledge.catalog.connection import CatalogConnection
from app.knowledge.sync_types import FileSnapshot, LinkedFolder, PageValidators, SyncChanges

# How many syncs of one folder the change log keeps.
SYNC_LOG_KEEP = 20

_LINK_COLUMNS = (
    "item_id, base_id, ignore_patterns, state, done, total, last_synced_at, last_error, "
    "created_at, updated_at"
)


def _decode_link(row: Sequence[Any]) -> LinkedFolder:
    try:
        patterns = [str(p) for p in json.loads(row[2] or "[]")]
    except (ValueError, TypeError):
        patterns = []
    return LinkedFolder(
        item_id=str(row[0]),
        base_id=str(row[1]),
        ignore_patterns=tuple(patterns),
        syncing=row[3] == "syncing",
        done=int(row[4]),
        total=int(row[5]),
        last_synced_at=float(row[6]) if row[6] is not None else None,
        last_error=str(row[7]) if row[7] is not None else None,
    )


class LinkedFolderRows(CatalogConnection):
    """Links, sync state, file snapshots and the change log."""

    # -- links -------------------------------------------------------------------------

    def link_folder(self, item_id: str, base_id: str, ignore_patterns: Sequence[str]) -> None:
        now = time.time()
        self._exec(
            "INSERT INTO linked_folders (item_id, base_id, ignore_patterns, created_at, "
            "updated_at) VALUES (?,?,?,?,?) ON CONFLICT(item_id) DO UPDATE SET "
            "ignore_patterns = excluded.ignore_patterns, updated_at = excluded.updated_at",
            (item_id, base_id, json.dumps(list(ignore_patterns)), now, now),
        )

    def unlink_folder(self, item_id: str) -> None:
        with self._writing(), db.write_transaction(self._conn):
            self._conn.execute("DELETE FROM linked_folders WHERE item_id = ?", (item_id,))
            self._conn.execute("DELETE FROM sync_files WHERE root_id = ?", (item_id,))

    def get_link(self, item_id: str) -> LinkedFolder | None:
        rows = self._rows(
            f"SELECT {_LINK_COLUMNS} FROM linked_folders WHERE item_id = ?", (item_id,)
        )
        return _decode_link(rows[0]) if rows else None

    def list_links(self, base_id: str | None = None) -> list[LinkedFolder]:
        sql = f"SELECT {_LINK_COLUMNS} FROM linked_folders"
        args: list[Any] = []
        if base_id is not None:
            sql += " WHERE base_id = ?"
            args.append(base_id)
        return [_decode_link(r) for r in self._rows(sql + " ORDER BY created_at", args)]

    def set_sync_progress(self, item_id: str, done: int, total: int) -> None:
        self._exec(
            "UPDATE linked_folders SET state = 'syncing', done = ?, total = ?, updated_at = ? "
            "WHERE item_id = ?",
            (done, total, time.time(), item_id),
        )

    def set_sync_finished(self, item_id: str, error: str | None, *, synced: bool = True) -> None:
        """A sync ended: with `error`, or fine (the folder is synced as of now) unless
        `synced` is false (it stopped without looking: another write came first)."""
        now = time.time()
        done = synced and error is None
        self._exec(
            "UPDATE linked_folders SET state = 'idle', last_error = ?, updated_at = ?, "
            "last_synced_at = CASE WHEN ? THEN ? ELSE last_synced_at END "
            "WHERE item_id = ?",
            (error, now, done, now, item_id),
        )

    # -- file snapshots ----------------------------------------------------------------

    def file_snapshots(self, root_id: str) -> dict[str, FileSnapshot]:
        rows = self._rows(
            "SELECT item_id, size, mtime_ns, content_hash FROM sync_files WHERE root_id = ?",
            (root_id,),
        )
        return {str(r[0]): FileSnapshot(int(r[1]), int(r[2]), str(r[3])) for r in rows}

    def put_file_snapshots(
        self, root_id: str, snapshots: Iterable[tuple[str, FileSnapshot]]
    ) -> None:
        """Record what children's sources looked like when taken in. Caller's transaction
        or its own."""
        with self._writing(), db.write_transaction(self._conn):
            for item_id, snap in snapshots:
                self._conn.execute(
                    "INSERT INTO sync_files (item_id, root_id, size, mtime_ns, content_hash) "
                    "VALUES (?,?,?,?,?) ON CONFLICT(item_id) DO UPDATE SET size = excluded.size,"
                    " mtime_ns = excluded.mtime_ns, content_hash = excluded.content_hash",
                    (item_id, root_id, snap.size, snap.mtime_ns, snap.content_hash),
                )

    # -- change log --------------------------------------------------------------------

    def log_sync(self, root_id: str, changes: SyncChanges) -> None:
        with self._writing(), db.write_transaction(self._conn):
            self._conn.execute(
                "INSERT INTO sync_log (root_id, finished_at, added, changed, removed, renamed, "
                "deferred, paths) VALUES (?,?,?,?,?,?,?,?)",
                (
                    root_id,
                    changes.finished_at,
                    len(changes.added),
                    len(changes.changed),
                    len(changes.removed),
                    len(changes.renamed),
                    len(changes.deferred),
                    json.dumps(changes.paths_json()),
                ),
            )
            self._conn.execute(
                "DELETE FROM sync_log WHERE root_id = ? AND id NOT IN "
                "(SELECT id FROM sync_log WHERE root_id = ? ORDER BY id DESC LIMIT ?)",
                (root_id, root_id, SYNC_LOG_KEEP),
            )

    def sync_log(self, root_id: str) -> list[SyncChanges]:
        """The folder's recent syncs, newest first."""
        rows = self._rows(
            "SELECT finished_at, paths FROM sync_log WHERE root_id = ? ORDER BY id DESC",
            (root_id,),
        )
        return [SyncChanges.from_json(float(r[0]), r[1]) for r in rows]

    # -- scheduled refresh of web pages ------------------------------------------------

    def set_refresh(self, item_id: str, base_id: str, interval_s: float | None) -> None:
        """Refresh a URL or sitemap item every `interval_s` seconds; None turns it off."""
        if interval_s is None:
            self._exec("DELETE FROM url_refresh WHERE item_id = ?", (item_id,))
            return
        self._exec(
            "INSERT INTO url_refresh (item_id, base_id, interval_s, next_at) VALUES (?,?,?,?) "
            "ON CONFLICT(item_id) DO UPDATE SET interval_s = excluded.interval_s, "
            "next_at = excluded.next_at",
            (item_id, base_id, interval_s, time.time() + interval_s),
        )

    def refresh_interval(self, item_id: str) -> float | None:
        rows = self._rows("SELECT interval_s FROM url_refresh WHERE item_id = ?", (item_id,))
        return float(rows[0][0]) if rows else None

    def due_refreshes(self, now: float) -> list[tuple[str, str]]:
        """(item id, base id) of refreshes due now; each is moved to its next time."""
        with self._writing(), db.write_transaction(self._conn):
            rows = self._rows("SELECT item_id, base_id FROM url_refresh WHERE next_at <= ?", (now,))
            self._conn.execute(
                "UPDATE url_refresh SET next_at = ? + interval_s WHERE next_at <= ?", (now, now)
            )
        return [(str(r[0]), str(r[1])) for r in rows]

    def page_validators(self, item_id: str) -> PageValidators | None:
        rows = self._rows(
            "SELECT etag, last_modified, text_hash FROM page_validators WHERE item_id = ?",
            (item_id,),
        )
        if not rows:
            return None
        etag, modified, text_hash = rows[0]
        return PageValidators(etag, modified, text_hash)

    def put_page_validators(self, item_id: str, validators: PageValidators) -> None:
        self._exec(
            "INSERT INTO page_validators (item_id, etag, last_modified, text_hash, checked_at) "
            "VALUES (?,?,?,?,?) ON CONFLICT(item_id) DO UPDATE SET etag = excluded.etag, "
            "last_modified = excluded.last_modified, text_hash = excluded.text_hash, "
            "checked_at = excluded.checked_at",
            (
                item_id,
                validators.etag,
                validators.last_modified,
                validators.text_hash,
                time.time(),
            ),
        )
