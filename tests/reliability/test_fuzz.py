"""One hypothesis fuzz module for what hostile input reaches: the search query parser (through
a real search), the chunker (as a job runs it, through the index and back), and the readers
with mutated real files and zip bombs.

It complements, not repeats: tests/unit/test_tokenize.py (any query is a valid MATCH
expression on a bare FTS table), tests/unit/test_chunker.py (chunk_text's invariants on
generated Markdown), tests/unit/test_readers.py::test_mutated_files_read_or_fail_cleanly
(byte flips and truncation through read_document) and the fixed zip-bomb tests there and
in tests/integration/test_bad_input.py. Here:

- queries run through `KnowledgeService.search` on an indexed base, BM25 and hybrid: the
  outcome is results whose offsets point into their material, or NO_SEARCHABLE_TOKEN
  exactly when the query has no word; never another error;
- text with page breaks goes through `chunk_document`, then the index's writer and reader:
  offsets survive the round trip, chunks cover every non-space character, pages are right;
- real PDF/DOCX/EPUB/XLSX/PPTX files are mutated by splicing (delete, insert, duplicate a
  range) and, for the zip-based ones, by rewriting one part inside a valid zip (so parsers,
  not the zip layer, meet the damage); they go through `extract_to_file`, the job's entry:
  it writes the text and returns chunk spans, or returns an ExtractFailure, and nothing
  else escapes;
- an XML zip bomb inside a real DOCX and EPUB, its declared size rewritten to lie: refused
  by the zip size cap, with memory bounded by the cap (this found that zipfile inflates a
  whole entry before cutting it to its declared size: a bomb declaring 0 bytes was
  inflated in full, 125 MB for 48 MB of markup; archive.check_inflated_sizes now stops it).

Every test is bounded (max_examples, deadline=None); the module runs in well under 30 s.
"""

from __future__ import annotations

import io
import struct
import time
import tracemalloc
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from app.knowledge.jobs.index_documents import page_at, text_hash
from app.knowledge.jobs.reader_pool import InlineExtraction
from app.knowledge.pipeline.indexing.chunker import Chunk
from app.knowledge.pipeline.indexing.spans import iter_spans, texts_from_file
from app.knowledge.pipeline.indexing.token_count import ChunkSizing
from app.knowledge.pipeline.indexing.tokenize import query_tokens
from app.knowledge.pipeline.readers.archive import ZipLimits
from app.knowledge.pipeline.readers.errors import ReaderError
from app.knowledge.pipeline.readers.registry import read_document
from app.knowledge.pipeline.store.index_store import ChunkRecord, IndexStore
from app.knowledge.pipeline.text_extraction import (
    ExtractedFile,
    ExtractFailure,
    chunk_document,
    extract_to_file,
)
from app.knowledge.service import KnowledgeService
from app.knowledge.types import Base, ErrorCode, SearchMode, TroveError
from tests.conftest import write_files
from tests.fakes import FakeModels
from tests.unit.make_files import Sample, make_samples

FUZZ = settings(
    max_examples=120,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

# -- the search query parser, through a real search -------------------------------------------

DOCS = {
    "fruit.md": "# Fruit\n\nApples and pears grow near the river; 知识库 keeps notes.\n",
    "title.md": "# Title\n\nThe title mentions apples, NEAR and OR as plain words.\n",
    "code.md": "# Code\n\n```\nSELECT * FROM chunks WHERE x MATCH 'y';\n```\n",
}
SYNTAX = [*"\"*^():-+{}[]'\\;,.!?@#$%&|~`<>=/", "\x00", "\t", "\n", "\r", "\u3000"]
WORDS = ["NEAR", "OR", "AND", "NOT", "apples", "pears", "title:", "body:", "知识", "库", "é", "🙂"]
queries = st.one_of(
    st.text(max_size=40),
    st.lists(st.sampled_from(SYNTAX + WORDS), max_size=12).map("".join),
    st.lists(st.sampled_from(SYNTAX + WORDS + [" "]), max_size=16).map(" ".join),
)


@dataclass
class Indexed:
    svc: KnowledgeService
    base: Base
    texts: dict[str, str]  # item id -> material text


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Indexed]:
    root = tmp_path_factory.mktemp("search")
    svc = KnowledgeService(root / "home", models=FakeModels(), extraction=InlineExtraction())
    base = svc.create_base("kb", embedding_model="fake:bow", chunk_size=32, chunk_overlap=4)
    svc.add(base.id, [write_files(root / "docs", DOCS)])
    svc.run_pending_jobs(base.id)
    texts = {}
    for item in svc.list_items(base.id):
        info = svc.find_material(base.id, item.relative_path or "")
        if info is not None:
            texts[item.id] = svc.material_file(base.id, info.relative_path).read_text("utf-8")
    assert len(texts) == len(DOCS)
    yield Indexed(svc, base, texts)
    svc.close()


@FUZZ
@given(query=queries, hybrid=st.booleans())
def test_any_query_gives_results_or_no_searchable_token(
    indexed: Indexed, query: str, hybrid: bool
) -> None:
    mode = SearchMode.HYBRID if hybrid else SearchMode.BM25
    try:
        response = indexed.svc.search(indexed.base.id, query, mode=mode)
    except TroveError as exc:
        assert exc.code == ErrorCode.NO_SEARCHABLE_TOKEN, exc
        assert not query_tokens(query)
        return
    assert query_tokens(query), "a query without words must be refused, not run"
    assert [r.rank for r in response.results] == list(range(1, len(response.results) + 1))
    for result in response.results:
        material = indexed.texts[result.item_id]
        assert material[result.char_start : result.char_end] == result.text


# -- the chunker, as a job runs it --------------------------------------------------------------

EDGE = ["\x00", "\r\n", "\r", "\u2028", "\u0301", "\ufeff", "\u200b", "```", "#", "\n\n", "字"]
texts = st.lists(st.one_of(st.text(max_size=30), st.sampled_from(EDGE)), max_size=60).map("".join)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[IndexStore]:
    opened = IndexStore(tmp_path_factory.mktemp("store") / "index.sqlite")
    opened.ensure_vectors(4)
    yield opened
    opened.close()


def _covered(text: str, chunks: list[Chunk]) -> None:
    marks = [0] * (len(text) + 1)
    for chunk in chunks:
        marks[chunk.start] += 1
        marks[chunk.end] -= 1
    depth = 0
    for pos, ch in enumerate(text):
        depth += marks[pos]
        assert ch.isspace() or depth > 0, f"{ch!r} at {pos} is in no chunk"


@FUZZ
@given(
    text=texts,
    cuts=st.lists(st.floats(0.0, 1.0), max_size=4),
    size=st.integers(1, 40),
    data=st.data(),
)
def test_chunks_keep_their_offsets_through_the_index(
    store: IndexStore, text: str, cuts: list[float], size: int, data: st.DataObject
) -> None:
    overlap = data.draw(st.integers(0, size - 1))
    pages = tuple(sorted({0, *(int(c * len(text)) for c in cuts)})) if text else ()
    extracted = chunk_document(text, "Fuzzed", pages, ChunkSizing(size, overlap))
    chunks = extracted.chunks
    for chunk in chunks:
        assert chunk.text == text[chunk.start : chunk.end] and chunk.text.strip()
    _covered(text, chunks)
    on_pages = [page_at(pages, c.start) or 0 for c in chunks]
    assert on_pages == sorted(on_pages)  # pages never go backwards
    assert all(1 <= p <= len(pages) for p in on_pages) if pages else set(on_pages) <= {0}

    records = [
        ChunkRecord(
            c.start, c.end, c.text, c.token_count, text_hash(c.text), page_at(pages, c.start)
        )
        for c in chunks
    ]
    vectors = np.ones((len(records), 4), dtype=np.float32) if records else None
    store.rebuild_material("fuzz", "fuzz.md", "Fuzzed", len(text), records, vectors)
    back = store.item_chunks("fuzz")
    assert [(c.char_start, c.char_end, c.text, c.page) for c in back] == [
        (r.start, r.end, r.text, r.page) for r in records
    ]
    assert store.vector_count() == store.chunk_count() == len(records)


def test_the_index_stays_sound_after_the_fuzzed_writes(store: IndexStore) -> None:
    """Runs after the property above in this module: every rewrite left a sound index."""
    assert store.integrity_check() == [] and store.fts_integrity_check() == []


# -- readers with mutated real files --------------------------------------------------------------

ZIP_KINDS = ("docx", "epub", "xlsx", "pptx")
# The part of each container its reader parses first and most.
MAIN_PART = {
    "docx": "word/document.xml",
    "xlsx": "xl/worksheets/sheet1.xml",
    "pptx": "ppt/slides/slide1.xml",
    "epub": "OEBPS/text/c01.xhtml",
}
CLEAN_FAILURES = {ErrorCode.READ_FAILED, ErrorCode.FILE_TOO_LARGE}


@pytest.fixture(scope="module")
def samples(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Sample]:
    return make_samples(tmp_path_factory.mktemp("samples"))


@pytest.fixture(scope="module")
def mutants(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("mutants")


@st.composite
def splices(draw: st.DrawFn, size: int) -> list[tuple[str, int, int, bytes]]:
    """Up to four edits: delete a range, insert bytes, or duplicate a range."""
    edits = []
    for _ in range(draw(st.integers(1, 4))):
        op = draw(st.sampled_from(["delete", "insert", "duplicate"]))
        start = draw(st.integers(0, max(0, size - 1)))
        length = draw(st.integers(1, 512))
        payload = draw(st.binary(max_size=64)) if op == "insert" else b""
        edits.append((op, start, length, payload))
    return edits


def _splice(data: bytes, edits: list[tuple[str, int, int, bytes]]) -> bytes:
    out = bytearray(data)
    for op, start, length, payload in edits:
        start = min(start, len(out))
        if op == "delete":
            del out[start : start + length]
        elif op == "insert":
            out[start:start] = payload
        else:
            out[start:start] = out[start : start + length]
    return bytes(out)


def _extract_cleanly(path: Path) -> None:
    """What the index job sees: text and chunks, or a failure value; nothing raised."""
    out = path.with_name(path.name + ".text")
    out.write_bytes(b"")
    result = extract_to_file(str(path), 50 * 1024 * 1024, ChunkSizing(64, 8), str(out))
    if isinstance(result, ExtractFailure):
        assert result.code in CLEAN_FAILURES, result
        assert result.message and "Traceback" not in result.message
        return
    assert isinstance(result, ExtractedFile)
    with out.open(encoding="utf-8", newline="") as fh:
        text = fh.read()
    assert len(text) == result.char_count
    chunks = [
        Chunk(start, end, chunk_text, tokens)
        for (start, end, tokens), chunk_text in zip(
            iter_spans(result.spans), texts_from_file(out, result.spans), strict=True
        )
    ]
    for chunk in chunks:
        assert text[chunk.start : chunk.end] == chunk.text
    _covered(text, chunks)


@FUZZ
@given(kind=st.sampled_from(["pdf", *ZIP_KINDS]), data=st.data())
def test_spliced_documents_extract_or_fail_cleanly(
    samples: dict[str, Sample], mutants: Path, kind: str, data: st.DataObject
) -> None:
    original = samples[kind].path.read_bytes()
    mutated = _splice(original, data.draw(splices(len(original))))
    path = mutants / f"spliced.{kind}"
    path.write_bytes(mutated)
    _extract_cleanly(path)


def _rezip(original: bytes, part: str, content: bytes) -> bytes:
    """The same container with one part's bytes replaced (a valid zip around them)."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(original)) as source, zipfile.ZipFile(out, "w") as target:
        for info in source.infolist():
            body = content if info.filename == part else source.read(info.filename)
            target.writestr(info, body)
    return out.getvalue()


@FUZZ
@given(kind=st.sampled_from(ZIP_KINDS), data=st.data())
def test_documents_with_a_damaged_part_inside_a_valid_zip_extract_or_fail_cleanly(
    samples: dict[str, Sample], mutants: Path, kind: str, data: st.DataObject
) -> None:
    original = samples[kind].path.read_bytes()
    with zipfile.ZipFile(io.BytesIO(original)) as archive:
        names = archive.namelist()
        assert MAIN_PART[kind] in names
        # The main part half the time: most other parts are only looked at, if at all.
        part = data.draw(st.sampled_from([MAIN_PART[kind]] * len(names) + names))
        content = archive.read(part)
    choice = data.draw(st.sampled_from(["splice", "truncate", "garbage", "empty", "entity"]))
    if choice == "splice":
        content = _splice(content, data.draw(splices(len(content))))
    elif choice == "truncate":
        content = content[: data.draw(st.integers(0, max(0, len(content) - 1)))]
    elif choice == "garbage":
        content = data.draw(st.binary(min_size=1, max_size=256))
    elif choice == "empty":
        content = b""
    else:
        # An XML entity bomb ("billion laughs") in place of the part.
        content = (
            b'<?xml version="1.0"?><!DOCTYPE l [<!ENTITY a "aaaaaaaaaa">'
            + b"".join(
                f'<!ENTITY {chr(98 + i)} "{("&" + chr(97 + i) + ";") * 10}">'.encode()
                for i in range(8)
            )
            + b"]><l>&i;</l>"
        )
    path = mutants / f"part.{kind}"
    path.write_bytes(_rezip(original, part, content))
    started = time.monotonic()
    _extract_cleanly(path)
    assert time.monotonic() - started < 10


# -- zip bombs under a size cap ---------------------------------------------------------------------

BOMB_BYTES = 48 * 1024 * 1024
LIMITS = ZipLimits(max_total_bytes=8 * 1024 * 1024, ratio_min_bytes=1024 * 1024)


# Endlessly repeated valid markup for the part each reader parses.
BOMB_MARKUP = {
    "docx": (
        b'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
        b'<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">'
        b"<w:body>",
        b"<w:p><w:r><w:t>bomb</w:t></w:r></w:p>",
        b"</w:body></w:document>",
    ),
    "epub": (
        b'<?xml version="1.0" encoding="utf-8"?><html xmlns="http://www.w3.org/1999/xhtml">'
        b"<head><title>Bomb</title></head><body>",
        b"<p>bomb</p>",
        b"</body></html>",
    ),
}


@pytest.fixture(scope="module")
def xml_bombs(samples: dict[str, Sample], mutants: Path) -> dict[str, Path]:
    """A real DOCX and EPUB whose main part is 48 MB of valid, endlessly repeated markup."""
    made = {}
    for kind, (head, unit, tail) in BOMB_MARKUP.items():
        original = samples[kind].path.read_bytes()
        block = unit * (64 * 1024 // len(unit))
        out = io.BytesIO()
        with (
            zipfile.ZipFile(io.BytesIO(original)) as source,
            zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as target,
        ):
            for info in source.infolist():
                if info.filename == MAIN_PART[kind]:
                    with target.open(info.filename, "w") as handle:
                        handle.write(head)
                        for _ in range(BOMB_BYTES // len(block)):
                            handle.write(block)
                        handle.write(tail)
                else:
                    target.writestr(info, source.read(info.filename))
        data = out.getvalue()
        with zipfile.ZipFile(io.BytesIO(data)) as made_zip:
            assert made_zip.getinfo(MAIN_PART[kind]).file_size > BOMB_BYTES * 0.99
        assert len(data) < BOMB_BYTES // 100
        made[kind] = mutants / f"bomb-original.{kind}"
        made[kind].write_bytes(data)
    return made


def _declare_size(data: bytes, part: str, size: int) -> bytes:
    """Rewrite the uncompressed size a zip declares for `part` (central directory and
    local header), as a hostile file would lie about it."""
    out = bytearray(data)
    name = part.encode()
    at = out.find(b"PK\x01\x02")
    while at != -1:
        name_len = struct.unpack_from("<H", out, at + 28)[0]
        if bytes(out[at + 46 : at + 46 + name_len]) == name:
            struct.pack_into("<I", out, at + 24, size)
            local = struct.unpack_from("<I", out, at + 42)[0]
            struct.pack_into("<I", out, local + 22, size)
        at = out.find(b"PK\x01\x02", at + 4)
    return bytes(out)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(kind=st.sampled_from(sorted(BOMB_MARKUP)), declared=st.none() | st.integers(0, 2**32 - 2))
@example(kind="docx", declared=0).via("a lie zipfile would inflate in full")
@example(kind="epub", declared=4096).via("a lie below every cap")
@example(kind="docx", declared=BOMB_BYTES).via("the truth, above the cap")
def test_a_zip_bomb_is_stopped_by_the_size_cap_whatever_it_declares(
    xml_bombs: dict[str, Path], mutants: Path, kind: str, declared: int | None
) -> None:
    data = xml_bombs[kind].read_bytes()
    if declared is not None:
        data = _declare_size(data, MAIN_PART[kind], declared)
    path = mutants / f"bomb.{kind}"
    path.write_bytes(data)
    tracemalloc.start()
    started = time.monotonic()
    try:
        document = read_document(path, zip_limits=LIMITS)
    except ReaderError as exc:
        assert exc.code == ErrorCode.READ_FAILED, exc
        outcome = exc.message
    else:  # a lie small enough to pass the cap: only that much was inflated
        outcome = document.text
        assert declared is not None and declared <= LIMITS.max_total_bytes
    finally:
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    assert time.monotonic() - started < 10, outcome[:200]
    # Never the 48 MB the bomb holds (nor the parsed tree of it): at most the cap, some
    # copies of it while parsing, and the rest of the document.
    assert peak < 6 * LIMITS.max_total_bytes, (declared, peak, outcome[:200])
