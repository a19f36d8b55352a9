"""Catalog rows of asking a base: the conversation turns kept per base (`ask_turns`) and each
base's ask options (`ask_options`). Rows only; app/knowledge/ask/turns.py gives them meaning."""

from __future__ import annotations

import time
from typing import Any

from app.knowledge.catalog.connection import CatalogConnection

TURN_COLUMNS = "id, base_id, question, query, answer, sources, chat_model, state, created_at"


class AskRows(CatalogConnection):
    """Read and write conversation turns and ask options."""

    def add_ask_turn(
        self,
        base_id: str,
        question: str,
        query: str,
        answer: str,
        sources: str,
        chat_model: str,
        state: str,
    ) -> int:
        with self._writing():
            conn = self._conn
            conn.execute(
                "INSERT INTO ask_turns (base_id, question, query, answer, sources, chat_model, "
                "state, created_at) VALUES (?,?,?,?,?,?,?,?)",
                (base_id, question, query, answer, sources, chat_model, state, time.time()),
            )
            return int(conn.last_insert_rowid())

    def list_ask_turns(self, base_id: str, limit: int | None = None) -> list[tuple[Any, ...]]:
        """The base's turns, oldest first; with `limit`, only the latest `limit`."""
        if limit is None:
            return self._rows(
                f"SELECT {TURN_COLUMNS} FROM ask_turns WHERE base_id = ? ORDER BY id", (base_id,)
            )
        rows = self._rows(
            f"SELECT {TURN_COLUMNS} FROM ask_turns WHERE base_id = ? ORDER BY id DESC LIMIT ?",
            (base_id, limit),
        )
        return rows[::-1]

    def clear_ask_turns(self, base_id: str) -> int:
        with self._writing():
            self._conn.execute("DELETE FROM ask_turns WHERE base_id = ?", (base_id,))
            return int(self._conn.changes())

    def ask_rewrite(self, base_id: str) -> bool:
        rows = self._rows("SELECT rewrite FROM ask_options WHERE base_id = ?", (base_id,))
        return bool(rows and rows[0][0])

    def set_ask_rewrite(self, base_id: str, rewrite: bool) -> None:
        self._exec(
            "INSERT INTO ask_options (base_id, rewrite, updated_at) VALUES (?, ?, ?) "
            "ON CONFLICT(base_id) DO UPDATE SET rewrite = excluded.rewrite, "
            "updated_at = excluded.updated_at",
            (base_id, int(rewrite), time.time()),
        )
