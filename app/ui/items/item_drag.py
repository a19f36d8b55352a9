"""Items dragged out of the item tree: a MIME type of Trove's own that names the base and
the items, so a drop on another base in the base list copies (Shift: moves) them there."""

from __future__ import annotations

import json
from dataclasses import dataclass

from PySide6.QtCore import QByteArray, QMimeData, Qt

ITEMS_MIME = "application/x-trove-items"


@dataclass(frozen=True, slots=True)
class DraggedItems:
    base_id: str
    item_ids: list[str]


def items_mime(base_id: str, item_ids: list[str]) -> QMimeData:
    mime = QMimeData()
    payload = json.dumps({"baseId": base_id, "itemIds": item_ids}).encode("utf-8")
    mime.setData(ITEMS_MIME, QByteArray(payload))
    return mime


def dragged_items(mime: QMimeData) -> DraggedItems | None:
    """The items a drag carries, or None for anything else (files, links, damage)."""
    if not mime.hasFormat(ITEMS_MIME):
        return None
    try:
        raw = json.loads(bytes(mime.data(ITEMS_MIME).data()).decode("utf-8"))
        base_id = str(raw["baseId"])
        ids = [str(i) for i in raw["itemIds"]]
    except (ValueError, KeyError, TypeError):
        return None
    return DraggedItems(base_id, ids) if ids else None


def wants_move(modifiers: Qt.KeyboardModifier) -> bool:
    """Shift held while dropping moves the items; otherwise they are copied."""
    return bool(modifiers & Qt.KeyboardModifier.ShiftModifier)
