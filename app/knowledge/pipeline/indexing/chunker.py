"""Split a material's text into overlapping chunks for embedding and retrieval.

Chunks are described by character offsets into the original text and never carry edited
text (``chunk.text == text[chunk.start:chunk.end]``), so a search hit can always be mapped
back to the exact place in the source, and highlighting needs no fuzzy matching.

Boundaries follow the document's structure, coarsest first:

1. Markdown blocks: fenced code blocks, headings, blank-line separated paragraphs.
2. Sentences, for blocks larger than ``size`` (Latin ``.!?`` before whitespace, CJK full
   stops which need no following space, and line breaks).
3. Word boundaries (and single characters inside CJK runs), for sentences still larger
   than ``size``.

Blocks (or their sentences) are then packed greedily into chunks of at most ``size``
tokens, and each chunk after the first repeats the trailing sentences of the previous one
(up to ``overlap`` tokens) so text near a boundary keeps some of its context.

Token counts are a cheap, tokenizer-independent estimate (see :func:`count_tokens`):
the real embedding tokenizer is not available at indexing time for every provider, and
this estimate is close enough for sizing while staying fast on gigabytes of text.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache

__all__ = ["Chunk", "chunk_text", "count_tokens"]


@dataclass(frozen=True, slots=True)
class Chunk:
    start: int  # char offset into the material text
    end: int  # exclusive
    text: str  # == material[start:end] ALWAYS
    token_count: int


# CJK scripts are written without spaces, so each character is estimated as one token
# (roughly what subword tokenizers produce for them). Only letters are listed: CJK
# punctuation such as 。 or ・ should count as zero, like Latin punctuation.
_CJK = (
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
_WORD_RUN_RE = re.compile(f"[^\\W{_CJK}]+")
_CJK_RUN_RE = re.compile(f"[{_CJK}]+")

# One token (a CJK character or a non-CJK word run), and what may precede it. Every
# character is exactly one of: CJK, other word character, or neither, so these agree
# with count_tokens.
_TOKEN = f"(?:[{_CJK}]|[^\\W{_CJK}]++)"
_NON_TOKEN = f"[^\\w{_CJK}]"
# Punctuation glued to the end of a word ("end.", "word,") stays with that word's piece.
_GLUED_PUNCT = f"[^\\w\\s{_CJK}]"

_SENTENCE_END_RE = re.compile(
    # Latin terminators only count before whitespace, so "3.14", "e.g" inside words and
    # file names do not split; closing quotes and brackets stay with their sentence.
    "[.!?]+[\"'\u201d\u2019\u00bb)\\]]*(?=\\s)"
    # CJK terminators need no following space; closing brackets/quotes stay attached.
    "|[\u3002\uff01\uff1f\uff1b\uff61\uff0e][\u300d\u300f\u201d\u2019\uff09\u300b\u3009\u3011\"')\\]]*"
    # Every line break: lists, poems and code-like text have no other terminators.
    "|[\n\r\v\f\x1c-\x1e\x85\u2028\u2029]"
)

# Markdown block structure is recognised from the first characters of a line. Lines end
# at "\n" (so "\r\n" works; a lone "\r", long obsolete, only ends sentences). CommonMark
# allows up to three spaces of indentation; four make an indented code block whose
# content merely looks like a fence or heading. A backtick fence's info string cannot
# contain backticks, otherwise "```code```" (inline code) would open a fence.
_LINE_KINDS = (
    r"(?P<fence> {0,3}(?:`{3,}(?=[^`\n]*(?:\n|\Z))|~{3,}))"
    r"|(?P<atx> {0,3}#{1,6}(?=\s|\Z))"
    r"|(?P<setext> {0,3}(?:=+|-+)[^\S\n]*(?=\n|\Z))"
    # A whole run of blank lines at once: blank lines carry no structure beyond the first.
    r"|(?P<blank>\s*(?=\n|\Z))"
)
_FIRST_LINE_RE = re.compile(_LINE_KINDS)
# Anchoring on the preceding "\n" plus a one-character filter lets the regex engine skip
# ordinary lines at C speed; a per-line Python loop costs ~1 us a line, which dominates
# on line-heavy text (logs, lists, hard-wrapped prose).
_MARKED_LINE_RE = re.compile(f"\\n(?=[`~#=\\-]|\\s|\\Z)(?:{_LINE_KINDS})")

# An atomic fence may exceed ``size`` (cutting code mid-block destroys its meaning), but
# not without bound: every embedding model truncates its input, so beyond this factor the
# tail of an unsplit fence would be silently dropped from the index anyway.
_MAX_FENCE_FACTOR = 4

# Real text averages well under this many characters per token (English ~5-6, CJK ~1),
# so a longer block is almost surely over budget and is split into sentences without
# first being counted whole, which would be a second pass over the same text. A wrong
# guess costs nothing: the sentence counts add up to the block's count.
_SURELY_OVERSIZED_CHARS_PER_TOKEN = 8

# Block kinds, from the Markdown scan.
_B_PARA = 0
_B_HEADING = 1
_B_FENCE = 2

# Unit kinds, for packing.
_U_PARA = 0  # whole paragraph; may be re-split into sentences to build an overlap
_U_PIECE = 1  # sentence or word piece; the finest granularity
_U_FENCE = 2  # whole code fence, atomic
_U_FENCE_PART = 3  # a line (or piece of one) of a fence too large to keep whole

# (start, end, tokens, kind, heading): plain tuples, as there can be millions of units
# and a NamedTuple costs several times more to create. ``heading`` marks the first unit of
# a heading block.
_Unit = tuple[int, int, int, int, bool]


def count_tokens(text: str) -> int:
    """Estimate tokens: one per non-CJK word run, one per CJK character, zero otherwise."""
    rest, words = _WORD_RUN_RE.subn("", text)
    if not rest:
        return words
    return words + len(rest) - len(_CJK_RUN_RE.sub("", rest))


def chunk_text(text: str, size: int = 512, overlap: int = 64) -> list[Chunk]:
    """Split ``text`` into chunks of at most ``size`` tokens, overlapping by up to ``overlap``.

    The only chunks above ``size`` are single code fences of at most ``4 * size`` tokens.
    """
    if size < 1:
        raise ValueError(f"size must be >= 1, got {size}")
    if not 0 <= overlap < size:
        raise ValueError(f"overlap must be in [0, size), got {overlap} with size {size}")
    return _pack(text, _units(text, size), size, overlap)


def _trim(text: str, start: int, end: int) -> tuple[int, int]:
    # Whitespace runs at unit edges are short in real text, so a plain loop beats slicing.
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


@lru_cache(maxsize=64)
def _fence_close_re(char: str, length: int) -> re.Pattern[str]:
    return re.compile(f"\\n {{0,3}}{re.escape(char)}{{{length},}}[^\\S\\n]*(?=\\n|\\Z)")


def _blocks(text: str) -> Iterator[tuple[int, int, int]]:
    """Yield (kind, start, end) of Markdown blocks; blank lines belong to no block.

    Only lines that can matter (blank, fence, heading, setext underline) are visited;
    the unmarked lines between them are paragraph text.
    """
    n = len(text)
    para_start = -1  # first line of the open paragraph
    line = 0  # first line not yet assigned
    m = _FIRST_LINE_RE.match(text)
    if m is None:
        m = _MARKED_LINE_RE.search(text)
    while m is not None:
        kind = m.lastgroup
        assert kind is not None  # every alternative of _LINE_KINDS is a named group
        start = m.start(kind)
        eol = text.find("\n", m.end())
        if eol < 0:
            eol = n
        if start > line and para_start < 0:
            para_start = line
        if kind == "blank":
            if para_start >= 0:
                yield _B_PARA, para_start, start
                para_start = -1
        elif kind == "atx":
            if para_start >= 0:
                yield _B_PARA, para_start, start
                para_start = -1
            yield _B_HEADING, start, eol
        elif kind == "fence":
            if para_start >= 0:
                yield _B_PARA, para_start, start
                para_start = -1
            marker = m[kind].lstrip(" ")
            close = _fence_close_re(marker[0], len(marker)).search(text, eol)
            # An unclosed fence runs to the end of the text, as in CommonMark.
            eol = n if close is None else close.end()
            yield _B_FENCE, start, eol
        elif para_start >= 0:
            # A setext underline makes a heading of the line above it only: that line is
            # the title, the paragraph's other lines stay a paragraph.
            above = max(text.rfind("\n", para_start, start - 1) + 1, para_start)
            if above > para_start:
                yield _B_PARA, para_start, above
            yield _B_HEADING, above, eol
            para_start = -1
        else:
            # "---" or "===" with no paragraph above is a thematic break or plain text.
            para_start = start
        line = eol + 1
        if line > n:
            break
        m = _MARKED_LINE_RE.search(text, eol)
    if para_start < 0 and line < n:
        para_start = line
    if para_start >= 0:
        yield _B_PARA, para_start, n


def _sentences(text: str, start: int, end: int) -> list[tuple[int, int, int]]:
    """(start, end, tokens) of the trimmed, non-blank sentences in text[start:end]."""
    out: list[tuple[int, int, int]] = []
    prev = start
    # Trimming is inlined: this loop runs once per sentence of every oversized paragraph.
    for m in _SENTENCE_END_RE.finditer(text, start, end):
        a = prev
        b = prev = m.end()
        while a < b and text[a].isspace():
            a += 1
        while b > a and text[b - 1].isspace():
            b -= 1
        if a < b:
            out.append((a, b, count_tokens(text[a:b])))
    a, b = _trim(text, prev, end)
    if a < b:
        out.append((a, b, count_tokens(text[a:b])))
    return out


@lru_cache(maxsize=32)
def _piece_re(size: int) -> re.Pattern[str]:
    # One regex match takes up to ``size`` tokens at once, so oversized sentences (e.g. a
    # long unpunctuated Chinese paragraph) cost one match per piece, not one per token.
    return re.compile(f"(?:{_NON_TOKEN}*+{_TOKEN}){{1,{size}}}{_GLUED_PUNCT}*+")


def _split_words(
    text: str, start: int, end: int, tokens: int, size: int, kind: int, out: list[_Unit]
) -> None:
    """Cut trimmed text[start:end] (``tokens`` > size) into pieces of <= size tokens.

    Cuts fall only before a token (never inside a word run), so the pieces' counts add up
    to ``tokens``; CJK runs are thereby cut between characters.
    """
    pattern = _piece_re(size)
    pieces: list[tuple[int, int]] = []
    pos = start
    while (m := pattern.match(text, pos, end)) is not None:
        pieces.append((pos, m.end()))
        pos = m.end()
    # Trailing symbols without a token (e.g. "word 🎉 !") belong to the last piece.
    pieces[-1] = (pieces[-1][0], end)
    # A piece with fewer than ``size`` tokens means no tokens were left after it, so only
    # the last piece can be short.
    last = len(pieces) - 1
    for i, (a, b) in enumerate(pieces):
        a, b = _trim(text, a, b)
        out.append((a, b, size if i < last else tokens - size * last, kind, False))


def _split_fence(text: str, start: int, end: int, size: int, out: list[_Unit]) -> None:
    line = start
    while line < end:
        eol = text.find("\n", line, end)
        if eol < 0:
            eol = end
        a, b = _trim(text, line, eol)
        line = eol + 1
        if a == b:
            continue
        tokens = count_tokens(text[a:b])
        if tokens <= size:
            out.append((a, b, tokens, _U_FENCE_PART, False))
        else:
            _split_words(text, a, b, tokens, size, _U_FENCE_PART, out)


def _units(text: str, size: int) -> list[_Unit]:
    """Packing units in text order: each <= size tokens, except atomic fences."""
    units: list[_Unit] = []
    fence_limit = _MAX_FENCE_FACTOR * size
    surely_oversized = _SURELY_OVERSIZED_CHARS_PER_TOKEN * size
    for kind, block_start, block_end in _blocks(text):
        start, end = _trim(text, block_start, block_end)
        if start == end:
            continue
        heading = kind == _B_HEADING
        if kind == _B_FENCE:
            tokens = count_tokens(text[start:end])
            if tokens <= fence_limit:
                units.append((start, end, tokens, _U_FENCE, False))
            else:
                _split_fence(text, start, end, size, units)
            continue
        if end - start <= surely_oversized:
            tokens = count_tokens(text[start:end])
            if tokens <= size:
                units.append((start, end, tokens, _U_PARA, heading))
                continue
        sentences = _sentences(text, start, end)
        tokens = sum(n for _, _, n in sentences)
        if tokens <= size:
            units.append((start, end, tokens, _U_PARA, heading))
            continue
        first = len(units)
        for a, b, n in sentences:
            if n <= size:
                units.append((a, b, n, _U_PIECE, False))
            else:
                _split_words(text, a, b, n, size, _U_PIECE, units)
        if heading:
            a, b, n, unit_kind, _ = units[first]
            units[first] = (a, b, n, unit_kind, True)
    return units


def _overlap(
    text: str, units: list[_Unit], chunk_start: int, overlap: int
) -> list[tuple[int, int]]:
    """(start, tokens) of the trailing sentences of a chunk to repeat in the next one."""
    picked: list[tuple[int, int]] = []
    total = 0
    for start, end, tokens, kind, _ in reversed(units):
        # Starting the next chunk inside a fence would hand the embedder a code fragment
        # without its opening line; repeating prose is useful, repeating code is not.
        if kind in (_U_FENCE, _U_FENCE_PART):
            break
        sentences = [(start, end, tokens)] if kind == _U_PIECE else _sentences(text, start, end)
        for sentence_start, _, sentence_tokens in reversed(sentences):
            # The chunk's first sentence is never repeated: that would repeat it whole
            # (or, for its overlap prefix, reach back two chunks).
            if sentence_start <= chunk_start or total + sentence_tokens > overlap:
                picked.reverse()
                return picked
            picked.append((sentence_start, sentence_tokens))
            total += sentence_tokens
    picked.reverse()
    return picked


def _pack(text: str, units: list[_Unit], size: int, overlap: int) -> list[Chunk]:
    """Greedily fill chunks with units in order, carrying overlap between them."""
    chunks: list[Chunk] = []
    current: list[_Unit] = []  # units not yet emitted in any chunk
    carried: list[tuple[int, int]] = []  # (start, tokens) of overlap opening the chunk
    dropped = 0  # carried[:dropped] were given up to make room for a unit
    tokens = 0  # of the chunk being built, including the kept carried sentences

    def emit() -> int:
        start = carried[dropped][0] if dropped < len(carried) else current[0][0]
        end = current[-1][1]
        chunks.append(Chunk(start, end, text[start:end], tokens))
        return start

    count = len(units)
    for i, unit in enumerate(units):
        start, end, unit_tokens, _, heading = unit
        if heading and current:
            # Retrieval works best when a section starts a chunk, so a chunk past half its
            # budget is closed before a heading, as is one that cannot also take the
            # heading's first unit (a heading alone at a chunk's end helps nobody).
            after = units[i + 1][2] if i + 1 < count else 0
            both = unit_tokens + after
            if 2 * tokens > size or tokens + both > size >= both:
                emit()
                current, carried, dropped, tokens = [], [], 0, 0
        if unit_tokens > size:
            # Only an atomic fence gets here; it forms a chunk on its own and, being code,
            # neither receives nor provides overlap.
            if current:
                emit()
            chunks.append(Chunk(start, end, text[start:end], unit_tokens))
            current, carried, dropped, tokens = [], [], 0, 0
            continue
        if current and tokens + unit_tokens > size:
            chunk_start = emit()
            # A heading should begin its chunk, so it gets no overlap in front of it.
            if heading or not overlap:
                carried = []
            else:
                carried = _overlap(text, current, chunk_start, overlap)
            dropped = 0
            tokens = sum(n for _, n in carried)
            current = []
        # The new unit has priority over repeated context: give up the oldest carried
        # sentences until it fits (the unit alone always fits here).
        while tokens + unit_tokens > size:
            tokens -= carried[dropped][1]
            dropped += 1
        current.append(unit)
        tokens += unit_tokens
    if current:
        emit()
    return chunks
