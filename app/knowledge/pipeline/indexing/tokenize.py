"""Full-text tokens for FTS5, the same rules for documents and queries.

FTS5's tokenizers fail Chinese, Japanese and Korean: unicode61 makes a whole unspaced
sentence one token and trigram cannot match two-character words. So before text reaches
FTS5, every CJK run (Han, kana, Hangul) is rewritten as its overlapping character bigrams
plus the run's last character alone (so a one-character query can match any occurrence
by prefix). Everything else is left to FTS5's C tokenizer, `porter unicode61
remove_diacritics 2`: case folding, diacritics removed, English Porter stemming — at C
speed, which matters when a gigabyte of text is indexed.

User query syntax never reaches FTS5: a query is reduced to word tokens, each quoted.
"""

from __future__ import annotations

import re
import unicodedata

# The FTS5 tokenizer the index is created with; queries rely on the same one.
FTS_TOKENIZER = "porter unicode61 remove_diacritics 2"

_CJK_RANGES = (
    "\u1100-\u11ff"  # Hangul jamo
    "\u3040-\u30ff"  # Hiragana, Katakana
    "\u3130-\u318f"  # Hangul compatibility jamo
    "\u31f0-\u31ff"  # Katakana phonetic extensions
    "\u3400-\u4dbf"  # CJK extension A
    "\u4e00-\u9fff"  # CJK unified ideographs
    "\uac00-\ud7af"  # Hangul syllables
    "\uf900-\ufaff"  # CJK compatibility ideographs
    "\uff66-\uff9f"  # halfwidth Katakana
    "\U00020000-\U0003134f"  # CJK extensions B..G
)
_CJK_RUN = re.compile(f"[{_CJK_RANGES}]+")
_TOKEN = re.compile(f"([{_CJK_RANGES}]+)|([^\\W_{_CJK_RANGES}]+)")


def has_cjk(text: str) -> bool:
    return _CJK_RUN.search(text) is not None


def _bigrams(run: str) -> list[str]:
    return [run[i : i + 2] for i in range(len(run) - 1)]


def _expand_run(match: re.Match[str]) -> str:
    run = match[0]
    return " " + " ".join([*_bigrams(run), run[-1]]) + " "


def index_text(text: str) -> str:
    """The text stored in the FTS index for a chunk or title."""
    if not text.isascii():
        # Full-width Latin letters and digits match their ASCII forms, as in queries.
        text = unicodedata.normalize("NFKC", text)
    if not _CJK_RUN.search(text):
        return text  # the common case costs one regex scan
    return _CJK_RUN.sub(_expand_run, text)


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
    normalized = unicodedata.normalize("NFKC", query)
    for match in _TOKEN.finditer(normalized):
        cjk, word = match.groups()
        if word:
            terms.append(word.casefold())
        elif len(cjk) == 1:
            prefix.append(cjk)
        else:
            terms.extend(_bigrams(cjk))
    return QueryTokens(list(dict.fromkeys(terms)), list(dict.fromkeys(prefix)))


def _quote(token: str) -> str:
    return '"' + token.replace('"', '""') + '"'


def fts_match_expression(tokens: QueryTokens) -> str:
    """An FTS5 MATCH string built only from quoted tokens: no user syntax survives."""
    parts = [_quote(t) for t in tokens.terms] + [_quote(t) + " *" for t in tokens.prefix]
    return " OR ".join(parts)
