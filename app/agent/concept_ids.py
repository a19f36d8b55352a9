"""Concept IDs: the shape check every Concept ID an agent sends goes through first."""

from __future__ import annotations

from dataclasses import dataclass

from app.agent.errors import ToolError, invalid
from app.knowledge import path_safety
from app.knowledge.types import Base, ErrorCode, Item


def check_concept_id(value: object) -> str:
    """The Concept ID if its shape is safe; UNSAFE_PATH (or INVALID_ARGUMENT) otherwise.

    On top of the material-path guard (`path_safety.check_relative_path`: no '..', absolute or
    drive paths, NUL bytes, backslashes, or a first segment '.trove'), no segment may be
    '.trove': nothing an agent asks for may even look like the index.
    """
    if not isinstance(value, str) or not value:
        raise invalid("conceptId must be a non-empty string")
    try:
        checked = path_safety.check_relative_path(value)
    except path_safety.UnsafePathError as exc:
        raise ToolError(ErrorCode.UNSAFE_PATH, f"refused conceptId: {exc}") from exc
    if any(seg.casefold() == path_safety.RESERVED_SEGMENT for seg in checked.split("/")):
        raise ToolError(
            ErrorCode.UNSAFE_PATH,
            f"refused conceptId {value!r}: {path_safety.RESERVED_SEGMENT!r} is reserved for the index",
        )
    return checked


@dataclass(frozen=True, slots=True)
class Concept:
    """A Concept ID resolved to its visible item and indexed material."""

    base: Base
    item: Item
    concept_id: str
    char_count: int
