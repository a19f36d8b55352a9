"""Tool error codes and the result every tool call returns."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from app.knowledge.types import ErrorCode


class ToolErrorCode(StrEnum):
    """Codes of the agent tools' own errors; engine errors keep their `ErrorCode`."""

    CONCEPT_NOT_FOUND = "CONCEPT_NOT_FOUND"
    CONCEPT_NOT_VISIBLE = "CONCEPT_NOT_VISIBLE"
    AGENT_WRITES_DISABLED = "AGENT_WRITES_DISABLED"
    INVALID_PATTERN = "INVALID_PATTERN"
    INVALID_CURSOR = "INVALID_CURSOR"
    UNKNOWN_TOOL = "UNKNOWN_TOOL"
    INTERNAL_ERROR = "INTERNAL_ERROR"


class ToolError(Exception):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = str(code)
        self.message = message

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"


@dataclass(frozen=True, slots=True)
class ToolResult:
    data: dict[str, Any]
    is_error: bool = False

    @classmethod
    def failure(cls, code: str, message: str) -> ToolResult:
        return cls({"error": {"code": str(code), "message": message}}, is_error=True)


def invalid(message: str) -> ToolError:
    return ToolError(ErrorCode.INVALID_ARGUMENT, message)
