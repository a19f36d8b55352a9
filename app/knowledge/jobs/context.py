"""What a job handler receives: the engine's parts, a progress callback, a cancel flag."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from app.knowledge.catalog import Catalog
from app.knowledge.data_layout import DataLayout
from app.knowledge.jobs.errors import CancelReason, JobCancelled
from app.knowledge.jobs.reader_pool import Extraction, InlineExtraction
from app.knowledge.locks import KeyedMutex
from app.knowledge.pipeline.sources.sitemap import SitemapLimits
from app.knowledge.pipeline.sources.web import FetchLimits
from app.knowledge.pipeline.store.registry import StoreRegistry
from app.knowledge.types import ItemPhase, ItemStatus
from app.providers.interfaces import ModelResolver

ProgressCallback = Callable[[str, ItemPhase | None, float | None], None]
CancelCheck = Callable[[], "CancelReason | None"]


def _no_progress(item_id: str, phase: ItemPhase | None, percent: float | None) -> None:
    return None


def _never() -> CancelReason | None:
    return None


@dataclass(slots=True)
class EngineParts:
    layout: DataLayout
    catalog: Catalog
    stores: StoreRegistry
    mutex: KeyedMutex
    models: ModelResolver
    embed_batch_size: int = 10
    max_file_bytes: int = 200 * 1024 * 1024
    fetch_limits: FetchLimits = field(default_factory=FetchLimits)
    # Where documents are read and chunked: worker processes in the app, inline in tests.
    extraction: Extraction = field(default_factory=InlineExtraction)
    sitemap_limits: SitemapLimits = field(default_factory=SitemapLimits)


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
