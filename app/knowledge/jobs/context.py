"""What a job handler receives: the engine's parts, a progress callback, a cancel flag."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from app.knowledge.engine import EngineParts
from app.knowledge.jobs.errors import JobCancelled
from app.knowledge.types import CancelReason, ItemPhase, ItemStatus

ProgressCallback = Callable[[str, ItemPhase | None, float | None], None]
CancelCheck = Callable[[], "CancelReason | None"]


def _no_progress(item_id: str, phase: ItemPhase | None, percent: float | None) -> None:
    return None


def _never() -> CancelReason | None:
    return None


@dataclass(slots=True)
class JobContext:
    parts: EngineParts
    progress: ProgressCallback = field(default=_no_progress)
    # Polled by handlers between steps; a reason means stop now (cooperative cancel).
    cancelled: CancelCheck = field(default=_never)

    def raise_if_cancelled(self, item_id: str | None = None) -> None:
        """Stop between steps when asked to, or when the item was deleted or settled meanwhile."""
        reason = self.cancelled()
        if reason is None and item_id is not None:
            item = self.parts.catalog.get_item(item_id)
            if item is None or item.status not in (ItemStatus.PREPARING, ItemStatus.PROCESSING):
                reason = CancelReason.ITEM_GONE
        if reason is not None:
            raise JobCancelled(reason)
