from __future__ import annotations

import itertools
import random
import string
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.knowledge.pipeline.indexing.chunker import Chunk, chunk_text, count_tokens

FENCE_FACTOR = 4


def check_invariants(text: str, chunks: list[Chunk], size: int, overlap: int) -> None:
    covered = [0] * (len(text) + 1)
    for i, c in enumerate(chunks):
        assert c.text == text[c.start : c.end]
        assert c.text, "empty chunk"
        assert not c.text[0].isspace() and not c.text[-1].isspace(), repr(c.text)
        assert c.token_count == count_tokens(c.text)
        if c.token_count > size:
            # Only a single atomic code fence may exceed the budget, and only up to 4x.
            assert c.text.startswith(("```", "~~~")), repr(c.text)
            assert c.token_count <= FENCE_FACTOR * size
        if i:
            prev = chunks[i - 1]
            assert prev.start < c.start, "a chunk must not start at or before the previous"
            assert prev.end < c.end, "end offsets must strictly increase"
            if overlap == 0:
                assert prev.end <= c.start, "overlap 0 must not repeat text"
        covered[c.start] += 1
        covered[c.end] -= 1
    depth = 0
    for pos, ch in enumerate(text):
        depth += covered[pos]
        if not ch.isspace():
            assert depth > 0, f"non-space char {ch!r} at {pos} is in no chunk"


# --- text generation --------------------------------------------------------------------

CJK_CHARS = "中文字測試漢語日本語のテキストひらがなカタカナ한국어문장입니다𠀀𠀁丽"
CJK_PUNCT = "。！？；，、「」"
EMOJI = [
    "👩‍💻",
    "👨‍👩‍👧‍👦",
    "🇯🇵",
    "🏳️‍🌈",
    "👍🏽",
    "1️⃣",
    "😀",
    "𝔘𝔫𝔦",
    "e\u0301",
    "\u200b",
    "\ufeff",
]

words = st.text(alphabet=string.ascii_letters + string.digits + "_", min_size=1, max_size=12)
separators = st.sampled_from(
    [" ", "  ", "\n", "\n\n", "\t", ". ", "! ", "? ", ",", "...", "-", "—", "\r\n", "\u3000"]
)
markdown = st.sampled_from(
    [
        "# Heading\n",
        "\n## Sub heading\n\n",
        "###### h6\n",
        "Title\n=====\n",
        "Sub\n---\n",
        "\n---\n",
        "#nohead ",
        "```\ncode line\n```\n",
        "```py\nx = 1\n\ny = 2\n```\n",
        "\n~~~\ntilde fence\n~~~\n",
        "```\nunclosed fence",
        "~~~~\n```\nnested\n~~~~\n",
        "    ```\nindented, not a fence\n",
        "```inline``` text",
    ]
)
cjk = st.text(alphabet=CJK_CHARS + CJK_PUNCT, min_size=1, max_size=30)
emoji = st.sampled_from(EMOJI)
long_fence = st.integers(1, 120).map(
    lambda n: "\n```\n" + "\n".join(f"value_{i} = f({i}, x)" for i in range(n)) + "\n```\n"
)
long_run = st.one_of(
    st.integers(1, 400).map(lambda n: "字" * n),
    st.integers(1, 200).map(lambda n: " ".join(["word"] * n)),
)
fragment = st.one_of(words, separators, markdown, cjk, emoji, long_fence, long_run)
mixed_text = st.lists(fragment, max_size=80).map("".join)


@st.composite
def size_and_overlap(draw: st.DrawFn, max_size: int = 300) -> tuple[int, int]:
    size = draw(st.integers(1, max_size))
    overlap = draw(st.integers(0, size - 1))
    return size, overlap


# --- properties -------------------------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(text=mixed_text, params=size_and_overlap())
def test_offsets_coverage_and_budget(text: str, params: tuple[int, int]) -> None:
    size, overlap = params
    check_invariants(text, chunk_text(text, size, overlap), size, overlap)


@settings(max_examples=150, deadline=None)
@given(text=st.text(max_size=400), params=size_and_overlap())
def test_arbitrary_unicode(text: str, params: tuple[int, int]) -> None:
    size, overlap = params
    check_invariants(text, chunk_text(text, size, overlap), size, overlap)


VOCAB = [
    *[
        "alpha",
        "beta",
        "gamma",
        "delta",
        "epsilon",
        "zeta",
        "eta",
        "theta",
        "iota",
        "kappa",
        "lambda",
        "mu",
    ],
    *["x1", "foo_bar", "3.14", "e.g.", "don't"],
    *["中文", "測試", "日本語", "ひらがな", "カタカナ", "한국어", "문장", "字"],
]
CODE_LINES = ["x = 1", "    return f(x)", "", "# comment", "print('hi')", "}", "~~", "``"]
SENTENCE_ENDS = [".", "!", "?", "。", "！", "；"]


@st.composite
def structured_doc(draw: st.DrawFn) -> tuple[str, list[tuple[int, int]], list[int]]:
    """Markdown with known fence spans and heading starts (blocks joined by blank lines)."""
    # Drawn from fixed vocabularies: generating free text here costs more than chunking it.
    sentence = st.tuples(
        st.lists(st.sampled_from(VOCAB), min_size=1, max_size=8), st.sampled_from(SENTENCE_ENDS)
    ).map(lambda t: " ".join(t[0]) + t[1])
    paragraph = st.lists(sentence, min_size=1, max_size=5).map(" ".join)
    fence = st.lists(st.sampled_from(CODE_LINES), max_size=12).map(
        lambda lines: "```\n" + "".join(line + "\n" for line in lines) + "```"
    )
    heading = st.lists(st.sampled_from(VOCAB), min_size=1, max_size=3).map(
        lambda ws: "## " + " ".join(ws)
    )
    blocks = draw(st.lists(st.one_of(paragraph, fence, heading), min_size=1, max_size=12))
    fences: list[tuple[int, int]] = []
    headings: list[int] = []
    pos = 0
    for block in blocks:
        if block.startswith("```"):
            fences.append((pos, pos + len(block)))
        elif block.startswith("## "):
            headings.append(pos)
        pos += len(block) + 2
    return "\n\n".join(blocks), fences, headings


# Small budgets, so that these small documents still need splitting.
@settings(max_examples=150, deadline=None)
@given(doc=structured_doc(), params=size_and_overlap(max_size=60))
def test_fences_are_atomic_and_headings_start_full_chunks(
    doc: tuple[str, list[tuple[int, int]], list[int]], params: tuple[int, int]
) -> None:
    text, fences, headings = doc
    size, overlap = params
    chunks = chunk_text(text, size, overlap)
    check_invariants(text, chunks, size, overlap)
    for start, end in fences:
        if count_tokens(text[start:end]) > FENCE_FACTOR * size:
            continue
        assert any(c.start <= start and end <= c.end for c in chunks), "fence was split"
        for c in chunks:
            assert not start < c.start < end, "a chunk starts inside a fence"
            assert not start < c.end < end, "a chunk ends inside a fence"
    for h in headings:
        first = next(c for c in chunks if c.start <= h < c.end)
        # Where a heading joins a chunk, that chunk was at most half full before it.
        assert first.start == h or 2 * count_tokens(text[first.start : h]) <= size


# --- examples ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", 0),
        ("hello world", 2),
        ("snake_case foo-bar", 3),
        ("你好", 2),
        ("日本語とEnglish", 5),
        ("안녕하세요", 5),
        ("abc中def", 3),
        ("👩‍💻🎉!! — …", 0),
        ("Hello, world! 你好世界。", 6),
        ("𠀀𠀁", 2),
        ("v3.14", 2),
    ],
)
def test_count_tokens(text: str, expected: int) -> None:
    assert count_tokens(text) == expected


@pytest.mark.parametrize(("size", "overlap"), [(0, 0), (-1, 0), (10, 10), (10, 11), (10, -1)])
def test_invalid_parameters(size: int, overlap: int) -> None:
    with pytest.raises(ValueError):
        chunk_text("some text", size, overlap)


@pytest.mark.parametrize("text", ["", "   ", "\n\n\t \n", "\u3000\u2028\r\n"])
def test_empty_and_blank_input(text: str) -> None:
    assert chunk_text(text) == []


def test_small_input_is_one_trimmed_chunk() -> None:
    text = "\n\n  Hello there, world.  \n"
    [chunk] = chunk_text(text)
    assert chunk.text == "Hello there, world."
    assert (chunk.start, chunk.end, chunk.token_count) == (4, 23, 3)


def test_code_fence_smaller_than_size_is_never_split() -> None:
    fence = "```python\ndef f(x):\n    return x + 1\n\n\nprint(f(2))\n```"
    prose = " ".join(f"Sentence {i} is here." for i in range(12))
    text = f"{prose}\n\n{fence}\n\n{prose}"
    for overlap in (0, 5, 15):
        chunks = chunk_text(text, size=20, overlap=overlap)
        check_invariants(text, chunks, 20, overlap)
        holders = [c for c in chunks if fence in c.text]
        assert len(holders) == 1
        start = text.index(fence)
        assert all(not start < c.start < start + len(fence) for c in chunks)


def test_oversized_fence_is_one_chunk_up_to_four_times_size() -> None:
    fence = "```\n" + "\n".join(f"line {i}" for i in range(15)) + "\n```"  # 30 tokens
    text = f"Intro text.\n\n{fence}\n\nOutro text."
    chunks = chunk_text(text, size=10, overlap=3)
    check_invariants(text, chunks, 10, 3)
    assert [c.text for c in chunks] == ["Intro text.", fence, "Outro text."]
    assert chunks[1].token_count == 30


def test_fence_above_four_times_size_is_split_at_lines() -> None:
    lines = [f"value_{i} = {i}" for i in range(40)]  # 3 tokens a line
    fence = "```\n" + "\n".join(lines) + "\n```"
    chunks = chunk_text(fence, size=10, overlap=4)
    check_invariants(fence, chunks, 10, 4)
    assert len(chunks) > 1
    assert all(c.token_count <= 10 for c in chunks)
    # Line boundaries, and no overlap inside code.
    assert all(c.text.split("\n")[0] in (*lines, "```") for c in chunks)
    assert all(a.end <= b.start for a, b in itertools.pairwise(chunks))


def test_unclosed_fence_runs_to_end_of_text() -> None:
    text = "Before.\n\n```\ncode a\n\n# not a heading\n\ncode b"
    chunks = chunk_text(text, size=4, overlap=2)  # the fence has 7 tokens
    check_invariants(text, chunks, 4, 2)
    assert [c.text for c in chunks] == ["Before.", text[text.index("```") :]]


def test_heading_starts_chunk_when_previous_is_over_half_full() -> None:
    first = "One two three four five six seven eight nine ten eleven twelve."  # 12 tokens
    rest = "Alpha beta gamma delta."
    for heading in ("## Next section", "Next section\n------------"):
        text = f"{first}\n\n{heading}\n\n{rest}"
        for overlap in (0, 8):
            chunks = chunk_text(text, size=20, overlap=overlap)
            check_invariants(text, chunks, 20, overlap)
            assert [c.text for c in chunks] == [first, f"{heading}\n\n{rest}"]


def test_crlf_line_endings_keep_structure() -> None:
    first = "One two three four five six seven eight nine ten eleven twelve."
    text = f"{first}\r\n\r\n## Next\r\n\r\n```\r\ncode = 1\r\n\r\nmore = 2\r\n```\r\n"
    chunks = chunk_text(text, size=20, overlap=5)
    check_invariants(text, chunks, 20, 5)
    assert [c.text for c in chunks] == [first, text[text.index("## Next") :].rstrip()]


def test_heading_stays_in_chunk_that_is_under_half_full() -> None:
    text = "Short intro.\n\n## Section\n\nAlpha beta gamma delta."
    [chunk] = chunk_text(text, size=20, overlap=0)
    assert chunk.text == text


def test_heading_is_not_left_alone_at_chunk_end() -> None:
    body = " ".join(["word"] * 15) + "."
    text = f"Intro here.\n\n# Title\n\n{body}"  # 2 + 1 + 15 tokens
    chunks = chunk_text(text, size=17, overlap=0)
    assert [c.text for c in chunks] == ["Intro here.", f"# Title\n\n{body}"]


def test_long_chinese_paragraph_splits_at_sentence_ends() -> None:
    sentences = [f"这是第{'一二三四五六七八九十'[i % 10]}个关于分块测试的句子" for i in range(40)]
    ends = "。！？；"
    text = "".join(s + ends[i % 4] for i, s in enumerate(sentences))
    for overlap in (0, 12):
        chunks = chunk_text(text, size=50, overlap=overlap)
        check_invariants(text, chunks, 50, overlap)
        assert len(chunks) > 5
        assert all(c.token_count <= 50 for c in chunks)
        assert all(c.text[-1] in ends for c in chunks[:-1])
        assert all(c.text[0] == "这" for c in chunks)


def test_unpunctuated_chinese_is_cut_between_characters() -> None:
    text = "字" * 1000
    chunks = chunk_text(text, size=64, overlap=0)
    check_invariants(text, chunks, 64, 0)
    assert [c.token_count for c in chunks] == [64] * 15 + [40]


def test_overlong_sentence_is_cut_at_word_boundaries() -> None:
    text = " ".join(f"w{i}" for i in range(100)) + "."
    chunks = chunk_text(text, size=30, overlap=0)
    check_invariants(text, chunks, 30, 0)
    assert [c.token_count for c in chunks] == [30, 30, 30, 10]
    assert all(c.text.split(" ")[0].startswith("w") for c in chunks)


def test_overlap_repeats_trailing_sentences() -> None:
    text = " ".join(f"Sentence number {i} is short." for i in range(30))  # 5 tokens each
    chunks = chunk_text(text, size=20, overlap=6)
    check_invariants(text, chunks, 20, 6)
    assert len(chunks) > 3
    for a, b in itertools.pairwise(chunks):
        assert b.start < a.end
        repeated = text[b.start : a.end]
        assert a.text.endswith(repeated) and b.text.startswith(repeated)
        assert count_tokens(repeated) == 5  # one sentence fits in 6 tokens, two do not


def test_overlap_zero_repeats_nothing() -> None:
    text = " ".join(f"Sentence number {i} is short." for i in range(30))
    chunks = chunk_text(text, size=20, overlap=0)
    check_invariants(text, chunks, 20, 0)
    assert all(a.end < b.start for a, b in itertools.pairwise(chunks))
    assert sum(c.token_count for c in chunks) == count_tokens(text)


def test_overlap_never_reaches_into_a_fence() -> None:
    prose = " ".join(f"Prose {i} here." for i in range(6))  # 3 tokens each
    text = f"{prose}\n\n```\nx = 1\n```\n\n{prose}"
    chunks = chunk_text(text, size=24, overlap=10)
    check_invariants(text, chunks, 24, 10)
    fence_start = text.index("```")
    fence_end = text.index("```", fence_start + 3) + 3
    assert all(not fence_start <= c.start < fence_end or c.start == fence_start for c in chunks)


def _ten_megabytes() -> str:
    rng = random.Random(7)
    vocab = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "theta", "kappa", "sigma"]
    parts: list[str] = []
    total = 0
    while total < 10_000_000:
        r = rng.random()
        if r < 0.05:
            part = f"## Heading {rng.randrange(10**6)}\n\n"
        elif r < 0.10:
            code = "\n".join(f"x_{i} = compute({i}, 'v')" for i in range(rng.randint(3, 40)))
            part = f"```python\n{code}\n```\n\n"
        elif r < 0.25:
            part = "这是第一个中文句子，用于测试分块。" * rng.randint(1, 60) + "\n\n"
        else:
            sentences = (
                " ".join(rng.choice(vocab) for _ in range(rng.randint(3, 25))).capitalize() + "."
                for _ in range(rng.randint(1, 12))
            )
            part = " ".join(sentences) + "\n\n"
        parts.append(part)
        total += len(part)
    return "".join(parts)


def test_smoke_bound_10mb_chunks_quickly() -> None:
    """Smoke bound only (catches quadratic behaviour), not a benchmark: ~1-3 s is typical."""
    text = _ten_megabytes()
    began = time.perf_counter()
    chunks = chunk_text(text, size=512, overlap=64)
    elapsed = time.perf_counter() - began
    assert elapsed < 15.0, f"chunking 10 MB took {elapsed:.1f} s"
    assert chunks[0].start == 0 and chunks[-1].end == len(text.rstrip())
    assert all(c.token_count <= 512 for c in chunks)
