"""Catalog rows of the `items` table: status transitions are checked by `states`."""

from __future__ import annotations

import json
import time
from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from app.knowledge import db, states
from app.knowledge.catalog.connection import CatalogConnection
from app.knowledge.catalog.rows import (
    ITEM_COLUMNS,
    decode_item,
    item_status,
    new_id,
)
from app.knowledge.types import (
    ErrorCode,
    Item,
    ItemPhase,
    ItemStatus,
    ItemType,
    TroveError,
    WorkCounts,
)

_ITEM_UPDATABLE = frozenset(
    {"title", "relative_path", "chunk_count", "size", "content_hash", "source", "options"}
)


class ItemRows(CatalogConnection):
    """Create, read and move item rows through their statuses."""

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
            f"INSERT INTO items ({ITEM_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
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
        rows = self._rows(f"SELECT {ITEM_COLUMNS} FROM items WHERE id = ?", (item_id,))
        return decode_item(rows[0]) if rows else None

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
            for row in self._rows(f"SELECT {ITEM_COLUMNS} FROM items WHERE id IN ({marks})", part):
                found[row[0]] = decode_item(row)
        return found

    def list_items(
        self,
        base_id: str,
        *,
        parent_id: str | None = None,
        roots_only: bool = False,
        statuses: Iterable[ItemStatus] | None = None,
        phase: ItemPhase | None = None,
        changed_since: float | None = None,
    ) -> list[Item]:
        sql = f"SELECT {ITEM_COLUMNS} FROM items WHERE base_id = ?"
        args: list[Any] = [base_id]
        if changed_since is not None:  # every change of a row moves its updated_at
            sql += " AND updated_at >= ?"
            args.append(changed_since)
        if phase is not None:
            sql += " AND phase = ?"
            args.append(phase.value)
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
        return [decode_item(r) for r in self._rows(sql, args)]

    def item_ids(self, base_id: str) -> set[str]:
        """The ids of every item of the base (a cheap read: no rows decoded)."""
        return {str(r[0]) for r in self._rows("SELECT id FROM items WHERE base_id = ?", (base_id,))}

    def find_items_by_source(self, base_id: str, source: str) -> list[Item]:
        rows = self._rows(
            f"SELECT {ITEM_COLUMNS} FROM items WHERE base_id = ? AND source = ?", (base_id, source)
        )
        return [decode_item(r) for r in rows]

    def find_items_by_hash(self, base_id: str, content_hash: str) -> list[Item]:
        rows = self._rows(
            f"SELECT {ITEM_COLUMNS} FROM items WHERE base_id = ? AND content_hash = ?",
            (base_id, content_hash),
        )
        return [decode_item(r) for r in rows]

    def child_status_counts(self, parent_id: str) -> dict[ItemStatus, int]:
        """How many of a root's children are in each status (counted in SQL)."""
        rows = self._rows(
            "SELECT status, count(*) FROM items WHERE parent_id = ? GROUP BY status", (parent_id,)
        )
        counts: dict[ItemStatus, int] = {}
        for status, n in rows:
            counts[item_status(status)] = counts.get(item_status(status), 0) + int(n)
        return counts

    def work_counts(self) -> dict[str, WorkCounts]:
        """Every base's documents by where they stand in indexing, in one grouped scan (the
        window asks every few seconds while work goes on; the rows never leave SQL)."""
        rows = self._rows(
            "SELECT base_id, status, type IN ('directory', 'sitemap'), count(*), count(size),"
            " total(size), total(CASE WHEN size IS NULL THEN 0"
            " WHEN phase = 'writing' THEN size"
            " WHEN phase = 'embedding' AND progress > 0 THEN size * min(progress, 100.0) / 100.0"
            " ELSE 0 END)"
            " FROM items GROUP BY 1, 2, 3"
        )
        found: dict[str, WorkCounts] = {}
        for base_id, status, container, n, sized, size, partial in rows:
            was = found.get(str(base_id), WorkCounts())
            if container:
                if status == ItemStatus.PREPARING.value:
                    found[str(base_id)] = replace(was, preparing=was.preparing + int(n))
            elif status in (ItemStatus.COMPLETED.value, ItemStatus.FAILED.value):
                found[str(base_id)] = replace(
                    was, settled=was.settled + int(n), settled_bytes=was.settled_bytes + int(size)
                )
            elif status == ItemStatus.DELETING.value:
                found[str(base_id)] = replace(was, deleting=was.deleting + int(n))
            else:
                found[str(base_id)] = replace(
                    was,
                    pending=was.pending + int(n),
                    pending_bytes=was.pending_bytes + int(size),
                    unsized=was.unsized + int(n) - int(sized),
                    partial_bytes=was.partial_bytes + float(partial),
                )
        return found

    def vectors_waiting(self, base_id: str) -> bool:
        """Whether a completed document of the base still waits for vectors (vector stage)."""
        rows = self._rows(
            "SELECT 1 FROM items WHERE base_id = ? AND status = 'completed' "
            "AND phase = 'embedding' LIMIT 1",
            (base_id,),
        )
        return bool(rows)

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
        if "options" in fields:
            fields["options"] = json.dumps(fields["options"]) if fields["options"] else None
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
            SELECT {ITEM_COLUMNS} FROM items WHERE id IN (SELECT id FROM sub)
            """,
            (item_id,),
        )
        return [decode_item(r) for r in rows]
