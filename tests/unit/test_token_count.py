"""Chunks measured in the embedding model's own tokens fit the model and keep their offsets.

Uses the built-in model's tokenizer (resources/models/all-MiniLM-L6-v2/tokenizer.json) through
the `tokenizers` package of the `local` extra; skipped without it.
"""

from __future__ import annotations

import importlib.util
import itertools

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from app.knowledge.pipeline.indexing.chunker import chunk_text, chunk_with
from app.knowledge.pipeline.indexing.estimate import count_tokens
from app.knowledge.pipeline.indexing.token_count import (
    ESTIMATE,
    HEADER_MAX_TOKENS,
    ChunkSizing,
    ModelTokens,
    embedding_input,
)
from app.providers.local_model import MAX_TOKENS, tokenizer_path

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("tokenizers") is None,
    reason="the tokenizers package (the `local` extra) is not installed",
)

LIMIT = MAX_TOKENS - 2  # [CLS] and [SEP]

PROSE = (
    "The lighthouse keeper climbed the spiral stairs every evening at dusk, carrying a can "
    "of paraffin and a rag for the lens. Storms came in from the west, and on the worst "
    "nights the tower shook so hard that the glass rattled in its brass frame. "
    "Ships depended on the light; a single missed night could mean a wreck on the reef. "
)


@pytest.fixture(scope="module")
def tokens() -> ModelTokens:
    return ModelTokens(str(tokenizer_path()))


def _raw(tokens: ModelTokens, text: str) -> int:
    """The model's count with its special tokens, as it embeds the text."""
    return len(tokens._tok.encode(text, add_special_tokens=True).ids)


def _one_character(tokens: ModelTokens, text: str) -> bool:
    """Every token of text starts at the same character (a Hangul syllable's jamo)."""
    starts = {start for start, _ in tokens._tok.encode(text, add_special_tokens=False).offsets}
    return len(starts) == 1


def _long_prose(paragraphs: int) -> str:
    parts = []
    for i in range(paragraphs):
        # Paragraphs of very different lengths, one far longer than a chunk, a heading now
        # and then, a code fence longer than the model's input.
        parts.append(f"## Part {i}" if i % 7 == 0 else PROSE * (1 + (i * 5) % 9))
        if i == 11:
            parts.append("```python\n" + "value = compute(alpha, beta)\n" * 120 + "```")
    return "\n\n".join(parts)


def test_every_chunk_of_long_prose_fits_the_model_with_its_header(tokens: ModelTokens) -> None:
    text = _long_prose(40)
    title = "Keepers of the western lighthouse: a history of lamps, storms and shipwrecks"
    sizing = ChunkSizing(512, 64, LIMIT, str(tokenizer_path()))
    header = sizing.header(title)
    chunks = chunk_with(text, sizing.with_title(title))
    assert len(chunks) > 20
    for chunk in chunks:
        assert chunk.text == text[chunk.start : chunk.end]
        assert chunk.token_count == tokens.count(chunk.text)
        # What the model reads: the header (when added), the chunk, [CLS] and [SEP].
        assert _raw(tokens, embedding_input(header, chunk.text)) <= MAX_TOKENS
    # The old sizing (512 estimated tokens) would not have fit: the test means something.
    old = chunk_text(text, 512, 64)
    assert max(_raw(tokens, c.text) for c in old) > MAX_TOKENS


def test_a_run_of_text_is_cut_into_equal_chunks_not_a_long_one_and_a_stub(
    tokens: ModelTokens,
) -> None:
    sentences = [f"Sentence number {i} says something about tides and the moon." for i in range(30)]
    text = " ".join(sentences)
    total = tokens.count(text)
    assert LIMIT < total < 2 * LIMIT - 64
    chunks = chunk_with(text, ChunkSizing(512, 64, LIMIT, str(tokenizer_path())))
    assert len(chunks) == 2
    small, large = sorted(c.token_count for c in chunks)
    assert large - small < 40, [c.token_count for c in chunks]


def test_a_word_longer_than_a_chunk_is_cut_between_tokens(tokens: ModelTokens) -> None:
    blob = "Q29tcHJlc3NlZCBkYXRh" * 200  # base64-like, one "word" of ~1,500 tokens
    text = f"Before the blob.\n\n{blob}\n\nAfter the blob."
    chunks = chunk_with(text, ChunkSizing(512, 64, LIMIT, str(tokenizer_path())))
    assert all(c.token_count <= LIMIT for c in chunks)
    assert "".join(c.text for c in chunks if blob[:50] in c.text or c.text in blob)
    covered = "".join(text[c.start : c.end] for c in chunks)
    assert blob[:100] in covered and blob[-100:] in covered


def test_a_bm25_only_sizing_is_the_old_estimate() -> None:
    text = _long_prose(12)
    assert chunk_with(text, ChunkSizing(512, 64)) == chunk_text(text, 512, 64)
    sizing = ChunkSizing(512, 64)
    assert sizing.header("Any title") == ""
    assert sizing.with_title("Any title") is sizing


def test_a_provider_limit_caps_estimated_tokens_and_keeps_the_overlap_share() -> None:
    sizing = ChunkSizing(512, 64, limit=200)
    assert sizing.effective_size == 200
    assert sizing.effective_overlap == 25  # 64/512 of 200
    chunks = chunk_with(_long_prose(20), sizing)
    assert all(c.token_count <= 200 and c.token_count == count_tokens(c.text) for c in chunks)


def test_the_header_is_the_title_clipped_and_only_in_front_of_chunks_without_it(
    tokens: ModelTokens,
) -> None:
    sizing = ChunkSizing(512, 64, LIMIT, str(tokenizer_path()))
    assert sizing.header("Tides") == "Tides\n\n"
    long_title = " ".join(f"word{i}" for i in range(100))
    header = sizing.header(long_title)
    assert 0 < tokens.count(header) <= HEADER_MAX_TOKENS
    assert sizing.with_title(long_title).reserve == tokens.count(header)
    assert (
        embedding_input("Tides\n\n", "# Tides\n\nThe moon pulls.") == "# Tides\n\nThe moon pulls."
    )
    assert embedding_input("Tides\n\n", "Twice a day.") == "Tides\n\nTwice a day."
    assert embedding_input("", "Twice a day.") == "Twice a day."


_PIECES = st.sampled_from(
    [
        "word", "Word.", " ", "\n", "\n\n", "\u200b", "국", "한국어", "中文", "。", "é", "e\u0301",
        "🎉", "x" * 40, "3.14", "https://example.org/a/b?c=d", "```", "# ", "\t", "ﬁ", "Ⅻ",
    ]
)  # fmt: skip


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pieces=st.lists(_PIECES, max_size=80), size=st.integers(1, 24), data=st.data())
def test_model_sized_chunks_fit_and_keep_their_offsets(
    tokens: ModelTokens, pieces: list[str], size: int, data: st.DataObject
) -> None:
    text = "".join(pieces)
    overlap = data.draw(st.integers(0, size - 1))
    chunks = chunk_text(text, size, overlap, counter=tokens, strict=True)
    for chunk in chunks:
        assert chunk.text == text[chunk.start : chunk.end] and chunk.text.strip()
        assert chunk.token_count == tokens.count(chunk.text)
        # Only a character the tokenizer alone makes more than `size` tokens of may exceed.
        if chunk.token_count > size:
            assert _one_character(tokens, chunk.text), chunk
    assert [c.start for c in chunks] == sorted(c.start for c in chunks)
    # Every character the model reads as a token is in some chunk.
    covered = set()
    for chunk in chunks:
        covered.update(range(chunk.start, chunk.end))
    encoding = tokens._tok.encode(text, add_special_tokens=False)
    for begin, end in encoding.offsets:
        assert any(i in covered for i in range(begin, max(end, begin + 1))), (begin, text)


@settings(max_examples=150, deadline=None)
@given(pieces=st.lists(_PIECES, max_size=60), size=st.integers(1, 12))
@example(pieces=["\u200b", "국"], size=1)  # one character, three WordPiece tokens
def test_cut_covers_the_span_in_pieces_of_at_most_size(
    tokens: ModelTokens, pieces: list[str], size: int
) -> None:
    text = "".join(pieces)
    for counter in (tokens, ESTIMATE):
        cut = counter.cut(text, 0, len(text), size)
        assert cut[0][0] == 0 and cut[-1][1] == len(text)
        assert all(a[1] == b[0] for a, b in itertools.pairwise(cut))
        assert sum(n for _, _, n in cut) == counter.count(text)
        for a, b, n in cut:
            # Above size only when one character alone is more tokens than that.
            assert n <= size or (counter is tokens and _one_character(tokens, text[a:b]))
