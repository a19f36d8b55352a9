"""Rows the schema's CHECK constraints do not allow: what doctor reports and repairs."""

from __future__ import annotations

import time

from app.knowledge.catalog.connection import CatalogConnection
from app.knowledge.catalog.rows import (
    BASE_STATUSES,
    ITEM_STATUSES,
)
from app.knowledge.types import (
    ErrorCode,
)


class DamagedRows(CatalogConnection):
    """Find and repair damaged or orphaned base and item rows."""

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
