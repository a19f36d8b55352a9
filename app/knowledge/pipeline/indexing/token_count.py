"""Counting tokens for chunk sizes: the embedding model's own tokenizer, or an estimate.

A chunk is embedded whole only if it fits the model's input; past that the model silently
drops the tail (the built-in model keeps 256 WordPiece tokens). So when a base's model has
a tokenizer Trove can load (the built-in model, a local model), chunks are measured in that
model's tokens and capped at its input size. For a provider's model the tokenizer is
unknown: chunks are measured with the cheap estimate and capped at a fraction of the
model's input size that the estimate never exceeds in real text (see `ChunkSizing`).

Everything here runs in reader worker processes too: `ChunkSizing` is a plain picklable
value, and a worker loads the tokenizer it names once.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Protocol

from app.knowledge.pipeline.indexing.estimate import (
    GLUED_PUNCT,
    NON_TOKEN,
    TOKEN,
    count_tokens,
)

__all__ = [
    "ESTIMATE",
    "ChunkSizing",
    "ModelTokens",
    "TokenCounter",
    "counter_for",
]

# The longest title repeated in front of a later chunk of its document when it is embedded.
HEADER_MAX_TOKENS = 32
REPEAT_TITLE = True


class TokenCounter(Protocol):
    """How the chunker measures text."""

    def count(self, text: str) -> int:
        """Tokens in `text`."""
        ...

    def counts(self, texts: Sequence[str]) -> list[int]:
        """Tokens in each text (one call: the tokenizer batches them)."""
        ...

    def cut(self, text: str, start: int, end: int, size: int) -> list[tuple[int, int, int]]:
        """Cut text[start:end] into contiguous pieces of at most `size` tokens.

        Returns (start, end, tokens) per piece, covering [start, end) in order: cuts fall
        between words where possible, else between tokens. Pieces are not trimmed.
        """
        ...


class _Estimate:
    """One token per non-CJK word run, one per CJK character (see estimate.py)."""

    def count(self, text: str) -> int:
        return count_tokens(text)

    def counts(self, texts: Sequence[str]) -> list[int]:
        return [count_tokens(t) for t in texts]

    def cut(self, text: str, start: int, end: int, size: int) -> list[tuple[int, int, int]]:
        tokens = count_tokens(text[start:end])
        pattern = _piece_re(size)
        pieces: list[tuple[int, int, int]] = []
        pos = start
        while pos < end and (m := pattern.match(text, pos, end)) is not None:
            pieces.append((pos, m.end(), size))
            pos = m.end()
        if not pieces:
            return [(start, end, tokens)]
        # Trailing symbols without a token (e.g. "word 🎉 !") belong to the last piece; a
        # piece with fewer than `size` tokens means none were left after it, so only the
        # last piece can be short.
        last = len(pieces) - 1
        a, _, _ = pieces[last]
        pieces[last] = (a, end, tokens - size * last)
        return pieces


@lru_cache(maxsize=32)
def _piece_re(size: int) -> re.Pattern[str]:
    # One regex match takes up to `size` tokens at once, so an oversized sentence (e.g. a
    # long unpunctuated Chinese paragraph) costs one match per piece, not one per token.
    return re.compile(f"(?:{NON_TOKEN}*+{TOKEN}){{1,{size}}}{GLUED_PUNCT}*+")


ESTIMATE: TokenCounter = _Estimate()


class ModelTokens:
    """A model's own tokenizer (a `tokenizers` tokenizer.json), without special tokens."""

    def __init__(self, tokenizer_file: str) -> None:
        tokenizers: Any = importlib.import_module("tokenizers")
        tok = tokenizers.Tokenizer.from_file(tokenizer_file)
        tok.no_padding()
        tok.no_truncation()
        self._tok: Any = tok

    def count(self, text: str) -> int:
        return len(self._tok.encode(text, add_special_tokens=False).ids)

    def counts(self, texts: Sequence[str]) -> list[int]:
        if not texts:
            return []
        encodings = self._tok.encode_batch(list(texts), add_special_tokens=False)
        return [len(e.ids) for e in encodings]

    def cut(self, text: str, start: int, end: int, size: int) -> list[tuple[int, int, int]]:
        encoding = self._tok.encode(text[start:end], add_special_tokens=False)
        groups = _token_groups(encoding.offsets, encoding.word_ids)
        if not groups:
            return [(start, end, 0)]
        pieces: list[tuple[int, int, int]] = []
        piece_start, tokens = start, 0
        for word in groups:
            word_tokens = sum(n for _, n in word)
            if tokens and tokens + word_tokens > size:
                cut = start + word[0][0]
                pieces.append((piece_start, cut, tokens))
                piece_start, tokens = cut, 0
            if word_tokens <= size:
                tokens += word_tokens
                continue
            # A word longer than a whole piece (a hash, a URL, base64): cut between tokens.
            for offset, n in word:
                if tokens and tokens + n > size:
                    cut = start + offset
                    pieces.append((piece_start, cut, tokens))
                    piece_start, tokens = cut, 0
                tokens += n
        pieces.append((piece_start, end, tokens))
        return pieces


def _token_groups(
    offsets: Sequence[tuple[int, int]], word_ids: Sequence[int | None]
) -> list[list[tuple[int, int]]]:
    """Tokens grouped into words, each word a list of (start offset, tokens starting there).

    Several tokens can start at one character (a Hangul syllable is three WordPiece jamo),
    and a cut can only fall between characters, so they stay together, across words too.
    """
    words: list[list[tuple[int, int]]] = []
    last_word: int | None = None
    for (begin, _), word in zip(offsets, word_ids, strict=True):
        if words and begin <= words[-1][-1][0]:
            offset, n = words[-1][-1]
            words[-1][-1] = (offset, n + 1)
        elif not words or word is None or word != last_word:
            words.append([(begin, 1)])
        else:
            words[-1].append((begin, 1))
        last_word = word
    return words


@lru_cache(maxsize=4)
def _model_tokens(tokenizer_file: str) -> ModelTokens:
    return ModelTokens(tokenizer_file)


@dataclass(frozen=True, slots=True)
class ChunkSizing:
    """How big a base's chunks are, and in which tokens; crosses to reader workers.

    `size` and `overlap` are the base's settings. `limit`, when set, is the most tokens
    a chunk may have so that the embedding model reads all of it: with `tokenizer` set
    it counts the model's own tokens (its input size less its special tokens), without
    it, estimated tokens. Under a limit no chunk exceeds it, code fences included, and a
    run of text that needs k chunks is cut into k about equal ones (a short tail chunk
    embeds poorly and ranks poorly). `reserve` tokens are kept free in every chunk for the
    title repeated in front of it when it is embedded (see `embedding_header`).
    """

    size: int
    overlap: int
    limit: int | None = None
    tokenizer: str | None = None
    reserve: int = 0

    @property
    def effective_size(self) -> int:
        if self.limit is None:
            return self.size
        return max(1, min(self.size, self.limit - self.reserve))

    @property
    def effective_overlap(self) -> int:
        size = self.effective_size
        # The base's overlap was chosen against its size: keep the proportion.
        if size < self.size:
            return min(size - 1, self.overlap * size // self.size)
        return min(self.overlap, size - 1)

    def counter(self) -> TokenCounter:
        return counter_for(self.tokenizer)

    def header(self, title: str) -> str:
        """What is embedded in front of a chunk of a document titled `title` that does not
        show the title itself: the title, clipped to HEADER_MAX_TOKENS (none without a
        limit). A later chunk of a document is often about its title's subject without
        naming it; with the title in front its vector says what it is about."""
        if self.limit is None or not REPEAT_TITLE:
            return ""
        words = title.split()[:HEADER_MAX_TOKENS]
        counter = self.counter()
        while words and counter.count(header_text(words)) > HEADER_MAX_TOKENS:
            words.pop()
        return header_text(words) if words else ""

    def with_title(self, title: str) -> ChunkSizing:
        """This sizing with room kept in every chunk for `title`'s header."""
        header = self.header(title)
        if not header:
            return self
        reserve = self.counter().count(header)
        return ChunkSizing(self.size, self.overlap, self.limit, self.tokenizer, reserve)


def counter_for(tokenizer: str | None) -> TokenCounter:
    return ESTIMATE if tokenizer is None else _model_tokens(tokenizer)


def header_text(words: Sequence[str]) -> str:
    return " ".join(words) + "\n\n"


def embedding_input(header: str, text: str) -> str:
    """The text embedded for a chunk: `header` in front unless the chunk shows it already
    (a document's first chunk starts with its title)."""
    if not header:
        return text
    title = header.strip().lower()
    if title in " ".join(text[: 2 * len(title) + 16].split()).lower():
        return text
    return header + text
