"""Decoding catalog rows into entities, and the column lists the queries select."""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from app.knowledge.types import (
    Base,
    BaseStatus,
    IndexBackend,
    Item,
    ItemPhase,
    ItemStatus,
    ItemType,
    OcrSettings,
)

BASE_COLUMNS = (
    "id, name, embedding_model, dimensions, rerank_model, document_count, threshold, "
    "chunk_size, chunk_overlap, status, status_reason, created_at, updated_at, agent_writes, "
    "ocr_enabled, ocr_languages, ocr_max_pages, backend, dsn, agent_private_urls"
)
ITEM_COLUMNS = (
    "id, base_id, parent_id, type, source, title, relative_path, status, phase, progress, "
    "error_code, error_message, chunk_count, size, content_hash, created_at, updated_at, options"
)
JOB_COLUMNS = (
    "id, kind, base_id, item_id, payload, idempotency_key, status, attempts, not_before, "
    "last_error, created_at, updated_at, owner"
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
BACKENDS = tuple(b.value for b in IndexBackend)


def new_id() -> str:
    return uuid.uuid4().hex[:16]


def decode_base(row: Sequence[Any]) -> Base:
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
        status=base_status(row[9]),
        status_reason=row[10] if row[9] in BASE_STATUSES else f"unknown status {row[9]!r}",
        created_at=row[11],
        updated_at=row[12],
        agent_writes=bool(row[13]),
        ocr=OcrSettings(
            enabled=None if row[14] is None else bool(row[14]),
            languages=decode_languages(row[15]),
            max_pages=int(row[16]),
        ),
        backend=IndexBackend(row[17]) if row[17] in BACKENDS else IndexBackend.SQLITE,
        dsn=row[18],
        agent_private_urls=bool(row[19]),
    )


def encode_languages(languages: Sequence[str]) -> str:
    return ",".join(languages)


def decode_languages(encoded: object) -> tuple[str, ...]:
    return tuple(code for code in str(encoded or "").split(",") if code)


def decode_item(row: Sequence[Any]) -> Item:
    return Item(
        id=row[0],
        base_id=row[1],
        parent_id=row[2],
        type=ItemType(row[3]),
        source=row[4],
        title=row[5],
        relative_path=row[6],
        status=item_status(row[7]),
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


def base_status(value: Any) -> BaseStatus:
    """A damaged status reads as failed: the base is shown and can be restored."""
    return BaseStatus(value) if value in BASE_STATUSES else BaseStatus.FAILED


def item_status(value: Any) -> ItemStatus:
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


def decode_job(row: Sequence[Any]) -> Job:
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
