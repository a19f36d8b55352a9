"""How engine objects look to agents: items, resolved documents and search hits as JSON.

A note's source is its whole text, so it is never repeated in these views.
"""

from __future__ import annotations

from typing import Any

from app.agent.concept_ids import Concept
from app.knowledge.material_paths import CONTAINER_TYPES, material_path
from app.knowledge.types import (
    RUNNING_STATUSES,
    Base,
    Item,
    ItemStatus,
    ItemType,
    SearchResult,
)


def hit_json(
    rank: int, base: Base, result: SearchResult, item_type: ItemType | None
) -> dict[str, Any]:
    hit: dict[str, Any] = {
        "rank": rank,
        "baseId": base.id,
        "baseName": base.name,
        "conceptId": result.concept_id,
        "title": result.title,
        "type": str(item_type) if item_type else None,
        "itemId": result.item_id,
        "score": result.score,
        "scoreKind": str(result.score_kind),
        "baseRank": result.rank,
        "charStart": result.char_start,
        "charEnd": result.char_end,
        "text": result.text,
    }
    if result.page is not None:
        hit["page"] = result.page
    if result.ocr:
        hit["ocr"] = True  # recognised from a scan or picture: may hold misread characters
    if item_type is not ItemType.NOTE:
        hit["source"] = result.source
    return hit


def concept_json(concept: Concept) -> dict[str, Any]:
    return {
        "baseId": concept.base.id,
        "conceptId": concept.concept_id,
        "title": concept.item.title,
        "type": str(concept.item.type),
        "itemId": concept.item.id,
    }


def item_json(item: Item) -> dict[str, Any]:
    """An item as agents see it; a note's source is its whole text, so it is left out."""
    data: dict[str, Any] = {
        "itemId": item.id,
        "type": str(item.type),
        "title": item.title,
        "status": str(item.status),
    }
    if item.type is not ItemType.NOTE:
        data["source"] = item.source
    if item.type not in CONTAINER_TYPES:
        data["conceptId"] = material_path(item)
        data["chunkCount"] = item.chunk_count
    if item.status in RUNNING_STATUSES and item.phase is not None:
        data["phase"] = str(item.phase)
        if item.progress is not None:
            data["progress"] = round(item.progress, 1)
    if item.status is ItemStatus.FAILED:
        data["errorCode"] = item.error_code
        data["errorMessage"] = item.error_message
    return data
