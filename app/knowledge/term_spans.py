"""Where a query's words occur in a text: for highlighting snippets and for placing a hit.

The terms follow the index's tokenisation closely enough to show *why* a chunk matched:
words case-insensitively, and for Chinese/Japanese/Korean runs the character bigrams the
full-text index matches on (a one-character run matches that character). Porter stemming
is approximated by matching common English suffixes, so "quokkas" also marks "quokka".

The engine places a hit's page at its first span, and the window cuts its snippets around
the first span too (app/ui/search/snippet.py imports this module: it is pure Python, the
one engine helper the window may use besides the facade and the public types), so the
page a result names is the page of the words its snippet shows.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
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
# Suffixes stripped so a query word also marks its other forms; the stem must stay long
# enough not to mark every word that shares two letters.
_SUFFIXES = ("ing", "ed", "es", "s")
_MIN_STEM = 3
_ENDINGS = "(?:s|es|d|ed|ing|ings|er|ers|ly)?"


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
