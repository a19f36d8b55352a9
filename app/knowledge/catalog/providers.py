"""Catalog rows of the `providers` table (settings only; keys live in the keychain)."""

from __future__ import annotations

import json
import time
from typing import Any

from app.knowledge import db
from app.knowledge.catalog.connection import CatalogConnection


class ProviderRows(CatalogConnection):
    """Read and write provider settings rows."""

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
