"""Catalog rows of the `bases` table."""

from __future__ import annotations

import time
from typing import Any

import apsw

from app.knowledge.catalog.connection import CatalogConnection
from app.knowledge.catalog.rows import (
    BASE_COLUMNS,
    decode_base,
    encode_languages,
    new_id,
)
from app.knowledge.types import (
    DEFAULT_CHUNK_OVERLAP,
    DEFAULT_CHUNK_SIZE,
    DEFAULT_DOCUMENT_COUNT,
    Base,
    BaseStatus,
    ErrorCode,
    IndexBackend,
    OcrSettings,
    TroveError,
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
        "agent_private_urls",
        "ocr_enabled",
        "ocr_languages",
        "ocr_max_pages",
    }
)


class BaseRows(CatalogConnection):
    """Create, read, update and delete knowledge-base rows."""

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
        ocr: OcrSettings | None = None,
        backend: IndexBackend = IndexBackend.SQLITE,
        dsn: str | None = None,
    ) -> Base:
        now = time.time()
        bid = base_id or new_id()
        ocr = ocr or OcrSettings()
        try:
            self._exec(
                f"INSERT INTO bases ({BASE_COLUMNS}) VALUES ({','.join('?' * 20)})",
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
                    None if ocr.enabled is None else int(ocr.enabled),
                    encode_languages(ocr.languages),
                    ocr.max_pages,
                    backend.value,
                    dsn,
                    0,
                ),
            )
        except apsw.ConstraintError as exc:
            raise TroveError(ErrorCode.INVALID_ARGUMENT, f"invalid base settings: {exc}") from exc
        return self.require_base(bid)

    def get_base(self, base_id: str) -> Base | None:
        rows = self._rows(f"SELECT {BASE_COLUMNS} FROM bases WHERE id = ?", (base_id,))
        return decode_base(rows[0]) if rows else None

    def require_base(self, base_id: str) -> Base:
        base = self.get_base(base_id)
        if base is None:
            raise TroveError(ErrorCode.BASE_NOT_FOUND, f"no knowledge base with id {base_id!r}")
        return base

    def list_bases(self) -> list[Base]:
        return [
            decode_base(r)
            for r in self._rows(f"SELECT {BASE_COLUMNS} FROM bases ORDER BY name, id")
        ]

    def find_bases_by_name(self, name: str) -> list[Base]:
        rows = self._rows(f"SELECT {BASE_COLUMNS} FROM bases WHERE name = ? ORDER BY id", (name,))
        return [decode_base(r) for r in rows]

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
