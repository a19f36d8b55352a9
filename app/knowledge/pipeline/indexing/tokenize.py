"""Full-text tokens for FTS5, the same for documents and queries.

FTS5's own tokenizers fail Chinese, Japanese and Korean (unicode61 makes a whole sentence
one token; trigram cannot match two-character words), so Trove tokenises in Python and
stores space-separated tokens that FTS5 only needs to split on spaces:

- Latin and other spaced scripts: NFKC, case folding, diacritics removed, English
  Snowball stemming for ASCII words.
- CJK runs (Han, kana, Hangul): overlapping character bigrams, plus the run's last
  character alone, so a one-character query can match every occurrence by prefix.

User query syntax never reaches FTS5: the query is reduced to these tokens, each quoted.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

import Stemmer

_CJK_RANGES = (
    "\u1100-\u11ff"  # Hangul jamo
    "\u3040-\u30ff"  # Hiragana, Katakana
    "\u3130-\u318f"  # Hangul compatibility jamo
    "\u31f0-\u31ff"  # Katakana phonetic extensions
    "\u3400-\u4dbf"  # CJK extension A
    "\u4e00-\u9fff"  # CJK unified ideographs
    "\uac00-\ud7af"  # Hangul syllables
    "\uf900-\ufaff"  # CJK compatibility ideographs
    "\U00020000-\U0003134f"  # CJK extensions B..G
)
_TOKEN_RE = re.compile(f"([{_CJK_RANGES}]+)|([^\\W_{_CJK_RANGES}]+)")
_ASCII_WORD_RE = re.compile(r"[a-z]+")

_stemmer = Stemmer.Stemmer("english")
_stemmer.maxCacheSize = 50_000


@lru_cache(maxsize=100_000)
def _fold(word: str) -> str:
    folded = word.casefold()
    if folded.isascii():
        return folded
    decomposed = unicodedata.normalize("NFD", folded)
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def _words(text: str) -> list[tuple[str, bool]]:
    """(run, is_cjk) pairs in text order."""
    normalized = unicodedata.normalize("NFKC", text)
    return [(m[0], True) if m[1] else (m[0], False) for m in _TOKEN_RE.finditer(normalized)]


def _latin_tokens(words: list[str]) -> list[str]:
    folded = [_fold(w) for w in words]
    stem_idx = [i for i, w in enumerate(folded) if _ASCII_WORD_RE.fullmatch(w)]
    if stem_idx:
        stems = _stemmer.stemWords([folded[i] for i in stem_idx])
        for i, stem in zip(stem_idx, stems, strict=True):
            folded[i] = stem
    return folded


def _cjk_bigrams(run: str) -> list[str]:
    return [run[i : i + 2] for i in range(len(run) - 1)]


def index_tokens(text: str) -> list[str]:
    """Tokens stored in the FTS index for a chunk or title."""
    out: list[str] = []
    latin: list[str] = []
    for run, is_cjk in _words(text):
        if not is_cjk:
            latin.append(run)
            continue
        if latin:
            out.extend(_latin_tokens(latin))
            latin = []
        out.extend(_cjk_bigrams(run))
        out.append(run[-1])
    if latin:
        out.extend(_latin_tokens(latin))
    return out


def index_text(text: str) -> str:
    return " ".join(index_tokens(text))


class QueryTokens:
    """A query reduced to FTS tokens; `prefix` tokens match any token they begin."""

    __slots__ = ("prefix", "terms")

    def __init__(self, terms: list[str], prefix: list[str]) -> None:
        self.terms = terms
        self.prefix = prefix

    def __bool__(self) -> bool:
        return bool(self.terms or self.prefix)

    def all(self) -> list[str]:
        return self.terms + self.prefix


def query_tokens(query: str) -> QueryTokens:
    terms: list[str] = []
    prefix: list[str] = []
    latin: list[str] = []
    for run, is_cjk in _words(query):
        if not is_cjk:
            latin.append(run)
        elif len(run) == 1:
            prefix.append(run)
        else:
            terms.extend(_cjk_bigrams(run))
    terms.extend(_latin_tokens(latin))
    return QueryTokens(list(dict.fromkeys(terms)), list(dict.fromkeys(prefix)))


def _quote(token: str) -> str:
    return '"' + token.replace('"', '""') + '"'


def fts_match_expression(tokens: QueryTokens) -> str:
    """An FTS5 MATCH string built only from quoted tokens: no user syntax survives."""
    parts = [_quote(t) for t in tokens.terms] + [_quote(t) + " *" for t in tokens.prefix]
    return " OR ".join(parts)
