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

Tokens are counted by a `TokenCounter`: the cheap estimate (see estimate.py) by default,
or the embedding model's own tokenizer when a base's model has one (see token_count.py,
which also says how a base's settings and its model become a `ChunkSizing`). Under a
model's limit (``strict``) no chunk exceeds ``size``, code fences included, every chunk
is checked against the tokenizer's count of its own text, and runs of text are cut into
chunks of about equal size rather than greedily.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache

from app.knowledge.pipeline.indexing.estimate import count_tokens
from app.knowledge.pipeline.indexing.token_count import ESTIMATE, ChunkSizing, TokenCounter

__all__ = ["Chunk", "chunk_text", "chunk_with", "count_tokens"]


@dataclass(frozen=True, slots=True)
class Chunk:
    start: int  # char offset into the material text
    end: int  # exclusive
    text: str  # == material[start:end] ALWAYS
    token_count: int


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
# tail of an unsplit fence would be silently dropped from the index anyway. Under a
# model's limit (strict) the factor is 1: the model would drop the tail.
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


def chunk_text(
    text: str,
    size: int = 512,
    overlap: int = 64,
    *,
    counter: TokenCounter = ESTIMATE,
    strict: bool = False,
) -> list[Chunk]:
    """Split ``text`` into chunks of at most ``size`` tokens, overlapping by up to ``overlap``.

    Without ``strict``, the only chunks above ``size`` are single code fences of at most
    ``4 * size`` tokens. With it, no chunk is above ``size`` as ``counter`` counts its text.
    """
    if size < 1:
        raise ValueError(f"size must be >= 1, got {size}")
    if not 0 <= overlap < size:
        raise ValueError(f"overlap must be in [0, size), got {overlap} with size {size}")
    fence_limit = size if strict else _MAX_FENCE_FACTOR * size
    units = _units(text, size, counter, fence_limit)
    target = _balanced_target(units, size, overlap) if strict else size
    chunks = _pack(text, units, size, overlap, counter, target)
    return _fit(text, chunks, size, counter) if strict else chunks


def chunk_with(text: str, sizing: ChunkSizing) -> list[Chunk]:
    """Chunk ``text`` as a base's sizing says (see token_count.ChunkSizing)."""
    return chunk_text(
        text,
        sizing.effective_size,
        sizing.effective_overlap,
        counter=sizing.counter(),
        strict=sizing.limit is not None,
    )


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


def _sentences(
    text: str, start: int, end: int, counter: TokenCounter
) -> list[tuple[int, int, int]]:
    """(start, end, tokens) of the trimmed, non-blank sentences in text[start:end]."""
    spans: list[tuple[int, int]] = []
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
            spans.append((a, b))
    a, b = _trim(text, prev, end)
    if a < b:
        spans.append((a, b))
    counts = counter.counts([text[a:b] for a, b in spans])
    return [(a, b, n) for (a, b), n in zip(spans, counts, strict=True)]


def _split_words(
    text: str,
    start: int,
    end: int,
    size: int,
    kind: int,
    counter: TokenCounter,
    out: list[_Unit],
) -> None:
    """Cut trimmed text[start:end] (more than ``size`` tokens) into pieces of <= size tokens.

    Cuts fall only before a token, between words where a word fits a piece, so CJK runs
    are cut between characters and the pieces' counts add up to the text's.
    """
    for a, b, tokens in counter.cut(text, start, end, size):
        a, b = _trim(text, a, b)
        if a < b:
            out.append((a, b, tokens, kind, False))


def _split_fence(
    text: str, start: int, end: int, size: int, counter: TokenCounter, out: list[_Unit]
) -> None:
    lines: list[tuple[int, int]] = []
    line = start
    while line < end:
        eol = text.find("\n", line, end)
        if eol < 0:
            eol = end
        a, b = _trim(text, line, eol)
        line = eol + 1
        if a < b:
            lines.append((a, b))
    counts = counter.counts([text[a:b] for a, b in lines])
    for (a, b), tokens in zip(lines, counts, strict=True):
        if tokens <= size:
            out.append((a, b, tokens, _U_FENCE_PART, False))
        else:
            _split_words(text, a, b, size, _U_FENCE_PART, counter, out)


def _units(text: str, size: int, counter: TokenCounter, fence_limit: int) -> list[_Unit]:
    """Packing units in text order: each <= size tokens, except atomic fences."""
    surely_oversized = _SURELY_OVERSIZED_CHARS_PER_TOKEN * size
    blocks: list[tuple[int, int, int]] = []
    for kind, block_start, block_end in _blocks(text):
        start, end = _trim(text, block_start, block_end)
        if start < end:
            blocks.append((kind, start, end))
    # Blocks are counted in one call (a tokenizer batches them); a block surely too large
    # for one chunk is not counted whole, only its sentences are.
    counted = [i for i, (kind, a, b) in enumerate(blocks) if b - a <= surely_oversized]
    counted.extend(
        i for i, (kind, a, b) in enumerate(blocks) if kind == _B_FENCE and b - a > surely_oversized
    )
    counts = dict(
        zip(
            counted,
            counter.counts([text[a:b] for _, a, b in (blocks[i] for i in counted)]),
            strict=True,
        )
    )
    units: list[_Unit] = []
    for i, (kind, start, end) in enumerate(blocks):
        tokens = counts.get(i)
        heading = kind == _B_HEADING
        if kind == _B_FENCE:
            assert tokens is not None
            if tokens <= fence_limit:
                units.append((start, end, tokens, _U_FENCE, False))
            else:
                _split_fence(text, start, end, size, counter, units)
            continue
        if tokens is not None and tokens <= size:
            units.append((start, end, tokens, _U_PARA, heading))
            continue
        sentences = _sentences(text, start, end, counter)
        tokens = sum(n for _, _, n in sentences)
        if tokens <= size:
            units.append((start, end, tokens, _U_PARA, heading))
            continue
        first = len(units)
        for a, b, n in sentences:
            if n <= size:
                units.append((a, b, n, _U_PIECE, False))
            else:
                _split_words(text, a, b, size, _U_PIECE, counter, units)
        if heading:
            a, b, n, unit_kind, _ = units[first]
            units[first] = (a, b, n, unit_kind, True)
    return units


def _balanced_target(units: list[_Unit], size: int, overlap: int) -> int:
    """The chunk size that cuts the text into as many chunks as greedy packing needs, but
    about equal ones: a 300-token abstract becomes two of 150, not 254 and 46 (a short tail
    chunk embeds and ranks poorly). Overlap repeats text, so it counts in every chunk."""
    total = sum(u[2] for u in units)
    if total <= size:
        return size
    chunks = -(-(total - overlap) // (size - overlap))
    return min(size, -(-(total + (chunks - 1) * overlap) // chunks))


def _overlap(
    text: str, units: list[_Unit], chunk_start: int, overlap: int, counter: TokenCounter
) -> list[tuple[int, int]]:
    """(start, tokens) of the trailing sentences of a chunk to repeat in the next one."""
    picked: list[tuple[int, int]] = []
    total = 0
    for start, end, tokens, kind, _ in reversed(units):
        # Starting the next chunk inside a fence would hand the embedder a code fragment
        # without its opening line; repeating prose is useful, repeating code is not.
        if kind in (_U_FENCE, _U_FENCE_PART):
            break
        if kind == _U_PIECE:
            sentences = [(start, end, tokens)]
        else:
            sentences = _sentences(text, start, end, counter)
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


def _pack(
    text: str,
    units: list[_Unit],
    size: int,
    overlap: int,
    counter: TokenCounter,
    target: int,
) -> list[Chunk]:
    """Fill chunks with units in order, carrying overlap between them.

    A chunk is closed before a unit that would take it past ``size``, or past ``target``
    by more than half the unit (``target`` == ``size`` is plain greedy packing).
    """
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
            if 2 * tokens > target or tokens + both > size >= both:
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
        if current and (
            tokens + unit_tokens > size or 2 * (tokens + unit_tokens - target) > unit_tokens
        ):
            chunk_start = emit()
            # A heading should begin its chunk, so it gets no overlap in front of it.
            if heading or not overlap:
                carried = []
            else:
                carried = _overlap(text, current, chunk_start, overlap, counter)
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


def _fit(text: str, chunks: list[Chunk], size: int, counter: TokenCounter) -> list[Chunk]:
    """Chunks as ``counter`` counts each one's own text, none above ``size``.

    A subword tokenizer's counts are not always additive (characters it drops, like a
    zero-width space, join the words on either side), so a packed chunk can come out a
    few tokens over; it is cut again, from its own tokens, in place (spans stay in order).
    """
    counts = counter.counts([c.text for c in chunks])
    out: list[Chunk] = []
    for chunk, tokens in zip(chunks, counts, strict=True):
        if tokens <= size:
            out.append(Chunk(chunk.start, chunk.end, chunk.text, tokens))
        else:
            out.extend(_recut(text, chunk, tokens, size, counter))
    return out


def _recut(text: str, chunk: Chunk, tokens: int, size: int, counter: TokenCounter) -> list[Chunk]:
    pieces = []
    for a, b, _ in counter.cut(text, chunk.start, chunk.end, size):
        a, b = _trim(text, a, b)
        if a < b:
            pieces.append(Chunk(a, b, text[a:b], 0))
    if len(pieces) < 2:
        # One character the tokenizer makes more than `size` tokens of: nothing to cut.
        return [Chunk(chunk.start, chunk.end, chunk.text, tokens)]
    # Each piece is smaller than the chunk, so this ends.
    return _fit(text, pieces, size, counter)
