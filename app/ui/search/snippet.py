"""Query-term highlighting for result snippets and the chunk viewer. Pure Python, no Qt.

Where the words are is the engine's own matcher (app/knowledge/term_spans.py): the engine
names a hit's page after its first span, and a snippet is cut around the same span, so the
page a result names is the page of the words it shows.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from dataclasses import dataclass

from app.knowledge.term_spans import Span, Terms, hit_spans, merge_spans, query_terms

__all__ = [
    "HIT_CLOSE",
    "HIT_OPEN",
    "Snippet",
    "Span",
    "Terms",
    "hit_spans",
    "make_snippet",
    "marked_html",
    "merge_spans",
    "query_terms",
]

_WS = re.compile(r"\s+")

HIT_OPEN = '<span style="background-color:#ffd54f;color:#000000;">'
HIT_CLOSE = "</span>"
SNIPPET_CHARS = 320
SNIPPET_LEAD = 80
ELLIPSIS = "\u2026"


def marked_html(text: str, spans: Sequence[Span]) -> str:
    """`text` as escaped HTML with the spans wrapped in highlight markup."""
    out: list[str] = []
    pos = 0
    for start, end in spans:
        out.append(_escape(text[pos:start]))
        out.append(HIT_OPEN + _escape(text[start:end]) + HIT_CLOSE)
        pos = end
    out.append(_escape(text[pos:]))
    return "".join(out)


def _escape(text: str) -> str:
    return html.escape(_WS.sub(" ", text), quote=True)


@dataclass(frozen=True, slots=True)
class Snippet:
    text: str  # the plain excerpt, whitespace collapsed in the HTML only
    spans: tuple[Span, ...]  # hits inside `text`
    html: str


def make_snippet(text: str, terms: Terms, limit: int = SNIPPET_CHARS) -> Snippet:
    """An excerpt of a chunk around its first hit, at most `limit` characters, highlighted."""
    spans = hit_spans(text, terms)
    start = 0
    if len(text) > limit and spans:
        start = max(0, min(spans[0][0] - SNIPPET_LEAD, len(text) - limit))
        # Begin at a word boundary when one is near, so the excerpt opens on a whole word.
        space = text.find(" ", start, spans[0][0])
        if start > 0 and space != -1 and space - start < 20:
            start = space + 1
    end = min(len(text), start + limit)
    excerpt = text[start:end]
    inside = tuple(
        (max(s, start) - start, min(e, end) - start) for s, e in spans if s < end and e > start
    )
    body = marked_html(excerpt, inside)
    if start > 0:
        body = ELLIPSIS + body
    if end < len(text):
        body += ELLIPSIS
    return Snippet(excerpt, inside, body)
