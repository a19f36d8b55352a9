"""Which page of a paged material (PDF pages, slides) a chunk or a hit is on.

`page_starts` are the offsets in the material where each page begins (page N starts at
page_starts[N - 1]); an empty tuple means the material has no pages.
"""

from __future__ import annotations

from collections.abc import Sequence

from app.knowledge.pipeline.readers.document import page_at
from app.knowledge.term_spans import Terms, hit_spans


def main_page(page_starts: Sequence[int], start: int, end: int) -> int | None:
    """The page holding most of the characters [start, end); the earlier one on a tie.

    A chunk's first characters are often the overlap carried over from the page before,
    so the page of its start would name the wrong page."""
    first = page_at(page_starts, start)
    if first is None:
        return None
    last = page_at(page_starts, max(start, end - 1)) or first
    best, best_share = first, -1
    for page in range(first, last + 1):
        page_start = page_starts[page - 1]
        page_end = page_starts[page] if page < len(page_starts) else end
        share = min(end, page_end) - max(start, page_start)
        if share > best_share:
            best, best_share = page, share
    return best


def hit_page(page_starts: Sequence[int], start: int, text: str, terms: Terms) -> int | None:
    """The page of the first query word in a chunk (`text`, which starts at `start` in the
    material), where its snippet is cut; the chunk's main page when no word is in it (a
    hit by meaning alone)."""
    if not page_starts:
        return None
    spans = hit_spans(text, terms) if terms else []
    if spans:
        return page_at(page_starts, start + spans[0][0])
    return main_page(page_starts, start, start + len(text))
