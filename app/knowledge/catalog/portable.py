"""Rows written as they were recorded elsewhere: an imported base and its items, and items
copied from another base.

These are copies of states other rows already passed through (a completed item, with its
chunks and vectors written beside it), not status changes, so they bypass the state
machine's "new rows start preparing or processing" rule; a caller writes them inside
`transaction()` together, so they appear whole or not at all.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from app.knowledge.catalog.connection import CatalogConnection
from app.knowledge.catalog.rows import BASE_COLUMNS, ITEM_COLUMNS, encode_languages
from app.knowledge.types import RUNNING_STATUSES, Base, Item, ItemStatus


class PortableRows(CatalogConnection):
    def insert_base_row(self, base: Base) -> None:
        self._exec(
            f"INSERT INTO bases ({BASE_COLUMNS}) VALUES ({','.join('?' * 20)})",
            (
                base.id,
                base.name,
                base.embedding_model,
                base.dimensions,
                base.rerank_model,
                base.document_count,
                base.threshold,
                base.chunk_size,
                base.chunk_overlap,
                base.status.value,
                base.status_reason,
                base.created_at,
                base.updated_at,
                int(base.agent_writes),
                None if base.ocr.enabled is None else int(base.ocr.enabled),
                encode_languages(base.ocr.languages),
                base.ocr.max_pages,
                base.backend.value,
                base.dsn,
                int(base.agent_private_urls),
            ),
        )

    def insert_settled_items(self, items: Iterable[Item]) -> int:
        """Insert settled items as they are (parents before children); returns how many."""
        count = 0
        for item in items:
            if item.status in RUNNING_STATUSES or item.status is ItemStatus.DELETING:
                raise ValueError(f"item {item.id} is {item.status}; only settled items are copied")
            self._exec(
                f"INSERT INTO items ({ITEM_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (
                    item.id,
                    item.base_id,
                    item.parent_id,
                    item.type.value,
                    item.source,
                    item.title,
                    item.relative_path,
                    item.status.value,
                    None,
                    None,
                    item.error_code,
                    item.error_message,
                    item.chunk_count,
                    item.size,
                    item.content_hash,
                    item.created_at,
                    item.updated_at,
                    json.dumps(item.options) if item.options else None,
                ),
            )
            count += 1
        return count
