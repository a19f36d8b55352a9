"""The cheap, tokenizer-independent token estimate.

One token per run of non-CJK word characters, one per CJK character, none for anything
else. Close enough to subword tokenizers for sizing chunks, and fast on gigabytes of text;
used for bases without an embedding model and for providers' models, whose tokenizer
Trove does not have.
"""

from __future__ import annotations

import re

__all__ = ["CJK", "GLUED_PUNCT", "NON_TOKEN", "TOKEN", "count_tokens"]

# CJK scripts are written without spaces, so each character is estimated as one token
# (roughly what subword tokenizers produce for them). Only letters are listed: CJK
# punctuation such as 。 or ・ should count as zero, like Latin punctuation.
CJK = (
    "\u1100-\u11ff"  # Hangul jamo
    "\u3005-\u3007"  # 々 〆 〇, used inside Han words
    "\u3021-\u3029\u3038-\u303b"  # Hangzhou numerals, more Han iteration marks
    "\u3041-\u3096\u309d-\u309f"  # Hiragana letters and iteration marks
    "\u30a1-\u30fa\u30fc-\u30ff"  # Katakana letters, prolonged sound mark
    "\u3131-\u318e"  # Hangul compatibility jamo
    "\u31f0-\u31ff"  # Katakana phonetic extensions
    "\u3400-\u4dbf"  # CJK extension A
    "\u4e00-\u9fff"  # CJK unified ideographs
    "\ua960-\ua97c"  # Hangul jamo extended A
    "\uac00-\ud7a3"  # Hangul syllables
    "\ud7b0-\ud7fb"  # Hangul jamo extended B
    "\uf900-\ufaff"  # CJK compatibility ideographs
    "\uff66-\uff9f"  # halfwidth Katakana
    "\uffa0-\uffdc"  # halfwidth Hangul
    "\U00020000-\U0003ffff"  # planes 2 and 3: CJK extensions B.. and compatibility supplement
)

# Counting is split into two substitutions rather than one ``findall`` of
# ``[CJK]|[^\W CJK]+``: the regex engine's cost is dominated by per-match overhead, and
# this way CJK is matched in whole runs instead of one match per character.
_WORD_RUN_RE = re.compile(f"[^\\W{CJK}]+")
_CJK_RUN_RE = re.compile(f"[{CJK}]+")

# One token (a CJK character or a non-CJK word run), and what may precede it. Every
# character is exactly one of: CJK, other word character, or neither, so these agree
# with count_tokens.
TOKEN = f"(?:[{CJK}]|[^\\W{CJK}]++)"
NON_TOKEN = f"[^\\w{CJK}]"
# Punctuation glued to the end of a word ("end.", "word,") stays with that word's piece.
GLUED_PUNCT = f"[^\\w\\s{CJK}]"


def count_tokens(text: str) -> int:
    """Estimate tokens: one per non-CJK word run, one per CJK character, zero otherwise."""
    rest, words = _WORD_RUN_RE.subn("", text)
    if not rest:
        return words
    return words + len(rest) - len(_CJK_RUN_RE.sub("", rest))
