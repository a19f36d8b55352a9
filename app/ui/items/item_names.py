"""How the item tree names items and orders them.

A file keeps its file name: the title a reader finds inside ("Document 30", a PDF's first
sentence) is only a hint, and a name that changed when indexing finished would move the
row under the person's cursor. Names sort naturally ("doc-9" before "doc-10").
"""

from __future__ import annotations

import re
from pathlib import PurePath

from app.knowledge.types import Item, ItemType

_DIGITS = re.compile(r"[0-9]+")
# A note's text can be long; its tooltip shows the beginning.
NOTE_PREVIEW_CHARS = 300


def display_name(item: Item) -> str:
    """What the Name column shows: the file or folder name, a page's title (or its address
    until the page is read), a note's title."""
    if item.type in (ItemType.FILE, ItemType.DIRECTORY):
        return PurePath(item.source).name or item.source
    return item.title or item.source


def secondary_text(item: Item, name: str) -> list[str]:
    """Lines that tell more than the name: the title found inside, then where it came from."""
    lines: list[str] = []
    if item.title and item.title != name:
        lines.append(item.title)
    if item.type is ItemType.NOTE:
        preview = item.source[:NOTE_PREVIEW_CHARS].strip()
        if preview:
            lines.append(preview + ("…" if len(item.source) > NOTE_PREVIEW_CHARS else ""))
    elif item.source not in (name, item.title):
        lines.append(item.source)
    return lines


def natural_key(text: str) -> str:
    """A string whose plain order is the natural, case-insensitive order of `text`.

    Every run of digits becomes its length (3 digits) and its value without leading zeros,
    so numbers compare by value; the text itself follows, so "doc-030" and "doc-30" still
    get a fixed order.
    """
    folded = text.casefold()

    def number(match: re.Match[str]) -> str:
        digits = match.group().lstrip("0") or "0"
        return f"{len(digits):03d}{digits}"

    return f"{_DIGITS.sub(number, folded)}\x00{folded}"


def sort_key(name: str, *, folder: bool, tie: str) -> str:
    """The Name column's sort value: folders before files, then the natural order of the
    name; `tie` (an id) keeps equal names in one order while rows change."""
    return f"{'0' if folder else '1'}{natural_key(name)}\x00{tie}"


def folder_parts(item: Item, folder: Item) -> tuple[str, ...]:
    """The folders between a folder item and a file found in it: ("a", "b") for a/b/c.md."""
    try:
        relative = PurePath(item.source).relative_to(PurePath(folder.source))
    except ValueError:
        return ()
    return relative.parts[:-1]
