"""Catalog rows of the `settings` table: app-wide choices that belong to no base or provider
(the model hub mirror), one text value per key."""

from __future__ import annotations

import time

from app.knowledge.catalog.connection import CatalogConnection


class SettingRows(CatalogConnection):
    """Read and write app-wide settings."""

    def get_setting(self, key: str) -> str | None:
        rows = self._rows("SELECT value FROM settings WHERE key = ?", (key,))
        return str(rows[0][0]) if rows else None

    def set_setting(self, key: str, value: str | None) -> None:
        """Store a value; None removes the setting (its default applies again)."""
        if value is None:
            self._exec("DELETE FROM settings WHERE key = ?", (key,))
            return
        self._exec(
            "INSERT INTO settings (key, value, updated_at) VALUES (?, ?, ?) "
            "ON CONFLICT(key) DO UPDATE SET value = excluded.value, "
            "updated_at = excluded.updated_at",
            (key, value, time.time()),
        )
