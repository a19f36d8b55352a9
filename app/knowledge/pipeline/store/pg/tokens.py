"""Full-text tokens exactly as the SQLite index's FTS5 makes them, computed in Python.

The SQLite index hands `index_text(...)` (CJK runs as bigrams) to FTS5's `porter unicode61
remove_diacritics 2` tokenizer. Here the same C tokenizer is called through apsw, so a
PostgreSQL base and a SQLite base hold identical tokens: no server text-search
configuration (whose stemmer and folding differ) is involved, and BM25 (bm25.py) ranks
both the same.
"""

from __future__ import annotations

import re
import threading
from collections import Counter
from dataclasses import dataclass

import apsw

from app.knowledge.pipeline.indexing.tokenize import index_text

_local = threading.local()  # apsw connections are not shared between threads


def _tokenizer() -> apsw.FTS5Tokenizer:
    tokenizer: apsw.FTS5Tokenizer | None = getattr(_local, "tokenizer", None)
    if tokenizer is None:
        conn = apsw.Connection(":memory:")
        tokenizer = conn.fts5_tokenizer("porter", ["unicode61", "remove_diacritics", "2"])
        _local.conn, _local.tokenizer = conn, tokenizer
    return tokenizer


def _tokenize(text: str, flags: int) -> list[str]:
    if not text:
        return []
    found = _tokenizer()(
        text.encode("utf-8"), flags, None, include_offsets=False, include_colocated=False
    )
    return [str(t) for t in found]


def document_tokens(text: str) -> list[str]:
    """The tokens FTS5 stores for a passage body or title (`text` as given to the store)."""
    return _tokenize(index_text(text), apsw.FTS5_TOKENIZE_DOCUMENT)


@dataclass(frozen=True, slots=True)
class Posting:
    term: str
    body_tf: int
    title_tf: int


def postings(body: list[str], title: list[str]) -> list[Posting]:
    """One row per distinct token of a passage: its count in the body and in the title."""
    in_body, in_title = Counter(body), Counter(title)
    return [Posting(t, in_body.get(t, 0), in_title.get(t, 0)) for t in {*in_body, *in_title}]


@dataclass(frozen=True, slots=True)
class Phrase:
    """One phrase of a MATCH string, tokenised: `prefix` matches every term it begins."""

    term: str
    prefix: bool


_PHRASE = re.compile(r'\s*"((?:[^"]|"")*)"(\s*\*)?\s*(?:OR\b|$)')


def parse_match(match: str) -> list[Phrase]:
    """The phrases of a MATCH string as `fts_match_expression` writes it: quoted tokens
    joined by OR, a `*` after one making it a prefix. Each is tokenised in FTS5's query
    mode. A quoted string FTS5 would read as several tokens (a phrase) becomes one
    phrase per token: query_tokens never writes one, as it splits words the same way.
    """
    phrases: list[Phrase] = []
    pos = 0
    text = match.strip()
    while pos < len(text):
        found = _PHRASE.match(text, pos)
        if found is None:
            raise ValueError(f"unsupported full-text expression at {pos}: {match!r}")
        prefix = found[2] is not None
        flags = apsw.FTS5_TOKENIZE_QUERY | (apsw.FTS5_TOKENIZE_PREFIX if prefix else 0)
        for term in _tokenize(found[1].replace('""', '"'), flags):
            phrases.append(Phrase(term, prefix))
        pos = found.end()
    return phrases
