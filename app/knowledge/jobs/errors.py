"""How a job handler says it failed or stopped."""

from __future__ import annotations

from enum import StrEnum

from app.knowledge.types import ErrorCode


class CancelReason(StrEnum):
    ITEM_GONE = "item-gone"  # deleted or settled meanwhile: nothing to record
    TIMEOUT = "timeout"  # the job ran past its policy's timeout
    SHUTDOWN = "shutdown"  # Trove is closing


class JobCancelled(Exception):
    def __init__(self, reason: CancelReason) -> None:
        super().__init__(str(reason))
        self.reason = reason


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
