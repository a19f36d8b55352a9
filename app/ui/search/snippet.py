"""Query-term highlighting for result snippets and the chunk viewer. Pure Python, no Qt.

The terms follow the index's tokenisation closely enough to show *why* a chunk matched:
words case-insensitively, and for Chinese/Japanese/Korean runs the character bigrams the
full-text index matches on (a one-character run matches that character). Porter stemming
is approximated by matching common English suffixes, so "quokkas" also marks "quokka".
"""

from __future__ import annotations

import html
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

Span = tuple[int, int]

# The same scripts the full-text tokeniser splits into bigrams.
_CJK_RANGES = (
    "\u1100-\u11ff"
    "\u3040-\u30ff"
    "\u3130-\u318f"
    "\u31f0-\u31ff"
    "\u3400-\u4dbf"
    "\u4e00-\u9fff"
    "\uac00-\ud7af"
    "\uf900-\ufaff"
    "\uff66-\uff9f"
    "\U00020000-\U0003134f"
)
_TOKEN = re.compile(f"([{_CJK_RANGES}]+)|([^\\W_{_CJK_RANGES}]+)")
_WS = re.compile(r"\s+")
# Suffixes stripped so a query word also marks its other forms; the stem must stay long
# enough not to mark every word that shares two letters.
_SUFFIXES = ("ing", "ed", "es", "s")
_MIN_STEM = 3
_ENDINGS = "(?:s|es|d|ed|ing|ings|er|ers|ly)?"

HIT_OPEN = '<span style="background-color:#ffd54f;color:#000000;">'
HIT_CLOSE = "</span>"
SNIPPET_CHARS = 320
SNIPPET_LEAD = 80
ELLIPSIS = "\u2026"


@dataclass(frozen=True, slots=True)
class Terms:
    """Latin-script words (lower case) and CJK fragments to mark."""

    words: tuple[str, ...]
    cjk: tuple[str, ...]

    def __bool__(self) -> bool:
        return bool(self.words or self.cjk)


def query_terms(query: str) -> Terms:
    words: list[str] = []
    cjk: list[str] = []
    for match in _TOKEN.finditer(unicodedata.normalize("NFKC", query)):
        run, word = match.groups()
        if word:
            words.append(word.lower())
        elif len(run) == 1:
            cjk.append(run)
        else:
            cjk.extend(run[i : i + 2] for i in range(len(run) - 1))
    return Terms(tuple(dict.fromkeys(words)), tuple(dict.fromkeys(cjk)))


def _word_pattern(word: str) -> str:
    stem = word
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= _MIN_STEM:
            stem = word[: -len(suffix)]
            break
    return rf"(?<![^\W_]){re.escape(stem)}{_ENDINGS}(?![^\W_])"


def _pattern(terms: Terms) -> re.Pattern[str] | None:
    parts = [_word_pattern(w) for w in terms.words]
    # Longer fragments first so the alternation prefers them.
    parts.extend(re.escape(c) for c in sorted(terms.cjk, key=len, reverse=True))
    if not parts:
        return None
    return re.compile("|".join(parts), re.IGNORECASE)


def merge_spans(spans: Iterable[Span]) -> list[Span]:
    merged: list[Span] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def hit_spans(text: str, terms: Terms) -> list[Span]:
    """Where the terms occur in `text`, as merged [start, end) character ranges."""
    pattern = _pattern(terms)
    if pattern is None:
        return []
    spans: list[Span] = []
    # CJK bigrams overlap ("知识库" -> "知识", "识库"): search from every position a match
    # may start, not only after the previous match.
    pos = 0
    while True:
        match = pattern.search(text, pos)
        if match is None:
            break
        if match.end() > match.start():
            spans.append((match.start(), match.end()))
        pos = match.start() + 1
    return merge_spans(spans)


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
