"""What a job handler receives: the engine's parts, a progress callback, a cancel flag."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from app.knowledge.catalog import Catalog
from app.knowledge.layout import DataLayout
from app.knowledge.locks import KeyedMutex
from app.knowledge.pipeline.store.registry import StoreRegistry
from app.knowledge.types import ErrorCode, ItemPhase
from app.providers.interfaces import ModelResolver

ProgressCallback = Callable[[str, ItemPhase | None, float | None], None]


def _no_progress(item_id: str, phase: ItemPhase | None, percent: float | None) -> None:
    return None


def _never() -> bool:
    return False


@dataclass(slots=True)
class EngineParts:
    layout: DataLayout
    catalog: Catalog
    stores: StoreRegistry
    mutex: KeyedMutex
    models: ModelResolver
    embed_batch_size: int = 10
    max_file_bytes: int = 200 * 1024 * 1024


@dataclass(slots=True)
class JobContext:
    parts: EngineParts
    progress: ProgressCallback = field(default=_no_progress)
    cancelled: Callable[[], bool] = field(default=_never)


class ItemFailure(Exception):
    """The job's item fails with this code; not retried."""

    def __init__(self, code: ErrorCode | str, message: str) -> None:
        super().__init__(message)
        self.code = str(code)
        self.message = message


class RetryableFailure(Exception):
    """A transient failure (network, rate limit): the runner retries with backoff."""

    def __init__(
        self, code: ErrorCode | str, message: str, retry_after: float | None = None
    ) -> None:
        super().__init__(message)
        self.code = str(code)
        self.message = message
        self.retry_after = retry_after


class JobCancelled(Exception):
    pass
