"""The reader result type and helpers shared by every reader."""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass

MAX_TITLE_CHARS = 200

_WS = re.compile(r"\s+")
_HEADING_MARK = re.compile(r"^#{1,6}\s+")
# Titles that authoring tools write by default; they say nothing about the document.
_PLACEHOLDER_TITLES = frozenset(
    {
        "untitled",
        "untitled document",
        "document",
        "presentation",
        "powerpoint presentation",
        "microsoft word document",
        "slide 1",
        "title",
        "book",
        "unknown",
    }
)


@dataclass(frozen=True, slots=True)
class Document:
    """What a reader produces: the material text (Markdown or plain text) and a title.

    `page_starts` is set for paged formats (PDF pages, PPTX slides): the offset in `text`
    where each page begins, so page_starts[0] == 0 and page N starts at page_starts[N - 1].
    It is empty for unpaged formats and for a paged document without any text.

    `needs_ocr` lists the pages (0-based) whose text must be recognised from their image:
    a scanned PDF page without a usable text layer, a picture (page 0). `ocr_spans` are
    the (start, end) ranges of `text` that were recognised so.
    """

    text: str
    title: str
    page_starts: tuple[int, ...] = ()
    needs_ocr: tuple[int, ...] = ()
    ocr_spans: tuple[tuple[int, int], ...] = ()


def page_at(doc_or_starts: Document | Sequence[int], offset: int) -> int | None:
    """The 1-based page holding the character at `offset`, or None for an unpaged text."""
    starts = doc_or_starts.page_starts if isinstance(doc_or_starts, Document) else doc_or_starts
    if not starts or offset < 0:
        return None
    return max(1, bisect_right(starts, offset))


def clean_title(raw: object) -> str | None:
    """A metadata or heading title made presentable; None when it is empty or a placeholder."""
    if raw is None:
        return None
    text = _WS.sub(" ", str(raw)).strip()
    text = _HEADING_MARK.sub("", text).strip()
    if not text or text.lower() in _PLACEHOLDER_TITLES:
        return None
    if len(text) > MAX_TITLE_CHARS:
        text = text[: MAX_TITLE_CHARS - 1].rstrip() + "…"
    return text


def first_line_title(text: str) -> str | None:
    """The first non-blank line of a text, as a title."""
    for line in text[:8192].splitlines():
        title = clean_title(line)
        if title:
            return title
    return None


def describe(exc: BaseException) -> str:
    """A short, human-sized description of a parser's exception (no traceback)."""
    # str(KeyError("x")) is "'x'": use the argument itself.
    raw = str(exc.args[0]) if isinstance(exc, KeyError) and exc.args else str(exc)
    detail = " ".join(raw.split()) or type(exc).__name__
    if len(detail) > 200:
        detail = detail[:199] + "…"
    return detail


def human_size(size: int) -> str:
    """Bytes in the units a desktop shows (1 MB = 1024 * 1024 bytes)."""
    if size < 1024:
        return f"{size} bytes"
    for unit, scale in (("GB", 1024**3), ("MB", 1024**2), ("kB", 1024)):
        if size >= scale:
            value = size / scale
            return f"{value:.0f} {unit}" if value == int(value) else f"{value:.1f} {unit}"
    return f"{size} bytes"  # pragma: no cover
