"""The one failure type readers raise; it carries the item's error code."""

from __future__ import annotations

from app.knowledge.types import ErrorCode


class ReaderError(Exception):
    def __init__(self, code: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
