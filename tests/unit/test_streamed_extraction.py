"""Extraction that never holds a big text whole: the worker writes the text to a file and
returns chunk spans; plain text and Markdown are read and chunked a segment at a time.

The streamed path must give what the whole-text path gives (same text, title, pages and
chunk offsets) for every text up to a segment, and cut longer ones only at boundaries.
"""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from array import array
from pathlib import Path
from typing import IO, Any

import pytest

from app.knowledge.jobs.index_documents import TEMP_SUFFIX
from app.knowledge.pipeline import text_extraction
from app.knowledge.pipeline.indexing.chunker import chunk_text
from app.knowledge.pipeline.indexing.spans import iter_spans, texts_from_file
from app.knowledge.pipeline.indexing.token_count import ChunkSizing
from app.knowledge.pipeline.readers.registry import TextStream, read_document_stream
from app.knowledge.pipeline.readers.text import NotUtf8Error
from app.knowledge.pipeline.text_extraction import (
    ExtractedFile,
    ExtractFailure,
    chunk_spans,
    extract_file,
    extract_to_file,
)
from app.knowledge.service import KnowledgeService
from app.knowledge.types import ErrorCode
from tests.unit.make_files import make_docx, pdf_bytes

ROOT = Path(__file__).resolve().parents[2]
PARAGRAPH = "Alpha beta gamma. Δέλτα έψιλον!  中文文本测试。 Plain words go on here,\r\n"


def _text(paragraphs: int) -> str:
    return "\n\n".join(f"{PARAGRAPH * (i % 5 + 1)}item {i}." for i in range(paragraphs))


def _files(folder: Path) -> list[Path]:
    folder.mkdir()
    text = _text(400)
    (folder / "notes.md").write_text("# The Title\n\n" + text, encoding="utf-8", newline="")
    (folder / "wide.txt").write_bytes(text.encode("utf-16"))  # BOM: streamed
    (folder / "bom.txt").write_bytes(b"\xef\xbb\xbf" + text.encode("utf-8"))
    (folder / "legacy.txt").write_bytes(("café naïve façade. " * 2000).encode("cp1252"))
    (folder / "code.py").write_text("def f():\n    return 1\n\n" * 500, encoding="utf-8")
    (folder / "paged.pdf").write_bytes(pdf_bytes(["first page words " * 80, "second " * 120]))
    make_docx(folder / "report.docx", ["a paragraph of words " * 20] * 15, heading="Report")
    return sorted(folder.iterdir())


def _extract(path: Path, tmp_path: Path, size: int = 64, overlap: int = 8) -> ExtractedFile:
    out = tmp_path / (path.name + ".out")
    out.touch()
    got = extract_to_file(str(path), 1 << 30, ChunkSizing(size, overlap), str(out))
    assert isinstance(got, ExtractedFile), got
    return got


def _written(tmp_path: Path, path: Path) -> str:
    with (tmp_path / (path.name + ".out")).open(encoding="utf-8", newline="") as fh:
        return fh.read()


def test_extract_to_file_matches_the_whole_text_path_for_every_kind(tmp_path: Path) -> None:
    for path in _files(tmp_path / "docs"):
        whole = extract_file(str(path), 1 << 30, ChunkSizing(64, 8))
        assert not isinstance(whole, ExtractFailure)
        got = _extract(path, tmp_path)
        assert _written(tmp_path, path) == whole.text, path.name
        assert (got.title, got.page_starts, got.char_count) == (
            whole.title,
            whole.page_starts,
            len(whole.text),
        ), path.name
        assert list(iter_spans(got.spans)) == [
            (c.start, c.end, c.token_count) for c in whole.chunks
        ], path.name
        out = tmp_path / (path.name + ".out")
        assert list(texts_from_file(out, got.spans)) == [c.text for c in whole.chunks]


def test_plain_text_streams_and_a_legacy_encoding_says_so(tmp_path: Path) -> None:
    utf8 = tmp_path / "a.md"
    utf8.write_text("# Head\n\n" + _text(50), encoding="utf-8")
    stream = read_document_stream(utf8)
    assert isinstance(stream, TextStream)
    assert "".join(stream.pieces) == utf8.read_bytes().decode("utf-8")
    legacy = tmp_path / "b.txt"
    legacy.write_bytes("naïve ".encode("cp1252") * 10)
    stream = read_document_stream(legacy)
    assert isinstance(stream, TextStream)
    with pytest.raises(NotUtf8Error):
        "".join(stream.pieces)


def test_a_long_single_line_is_cut_at_spaces_into_whole_chunks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(text_extraction, "SEGMENT_CHARS", 5000)
    words = [f"w{i % 97}x" for i in range(20_000)]
    text = " ".join(words)  # no line break anywhere
    source = tmp_path / "line.txt"
    source.write_text(text, encoding="utf-8")
    got = _extract(source, tmp_path, size=50, overlap=5)
    assert _written(tmp_path, source) == text
    spans = list(iter_spans(got.spans))
    texts = list(texts_from_file(tmp_path / "line.txt.out", got.spans))
    for (start, end, tokens), chunk in zip(spans, texts, strict=True):
        assert chunk == text[start:end]
        assert 0 < tokens <= 50
        # Cut between words only: no chunk starts or ends inside one.
        assert start == 0 or text[start - 1] == " "
        assert end == len(text) or text[end] == " "
    assert [s for s, _, _ in spans] == sorted(s for s, _, _ in spans)
    assert {w for chunk in texts for w in chunk.split()} == set(words)
    assert chunk_spans(text, "", ChunkSizing(50, 5)).spans == got.spans


def test_a_text_within_one_segment_is_chunked_as_chunk_text_chunks_it() -> None:
    text = _text(300)
    assert len(text) <= text_extraction.SEGMENT_CHARS
    expected = array("q")
    for c in chunk_text(text, 100, 10):
        expected.extend((c.start, c.end, c.token_count))
    assert chunk_spans(text, "", ChunkSizing(100, 10)).spans == expected


def test_texts_from_file_reads_spans_that_skip_ahead_or_go_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from app.knowledge.pipeline.indexing import spans as spans_module

    monkeypatch.setattr(spans_module, "READ_CHARS", 7)  # many refills, windows dropped
    text = "".join(f"{i:04d}é中\r\n" for i in range(500))
    path = tmp_path / "t.txt"
    path.write_text(text, encoding="utf-8", newline="")
    wanted = [(0, 5), (3, 40), (1000, 1013), (2000, 3000), (10, 20), (3499, 3500)]
    flat = array("q", [n for a, b in wanted for n in (a, b, 1)])
    assert list(texts_from_file(path, flat)) == [text[a:b] for a, b in wanted]
    with pytest.raises(ValueError, match="ends before"):
        list(texts_from_file(path, array("q", [len(text) - 5, len(text) + 5, 1])))


def test_the_readers_registry_imports_no_format_library(tmp_path: Path) -> None:
    """A reader worker imports the registry at start; the parsers of binary formats cost
    tens of megabytes each and only load when a file of their kind is read."""
    heavy = ("pypdf", "docx", "pptx", "openpyxl", "lxml", "charset_normalizer")
    code = (
        "import sys, importlib; importlib.import_module('app.knowledge.pipeline.text_extraction'); "
        f"print([m for m in {heavy!r} if m in sys.modules])"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"


def test_indexing_from_the_bases_own_copy_leaves_no_scratch_file(
    svc: KnowledgeService, tmp_path: Path
) -> None:
    """Restore reads the copy under raw/ (which is also the material): the worker's text
    goes to a scratch file beside it, removed once the item is indexed."""
    source = tmp_path / "src" / "doc.txt"
    source.parent.mkdir()
    source.write_bytes(("plain words here. " * 400).encode("utf-16"))
    base = svc.create_base("kb")
    svc.add(base.id, [source])
    svc.run_pending_jobs(base.id)
    source.unlink()
    assert svc.restore_base(base.id).restored == 1
    svc.run_pending_jobs(base.id)
    (item,) = [i for i in svc.list_items(base.id) if i.parent_id is None]
    assert item.status == "completed" and item.chunk_count
    raw = svc.layout.raw_dir(base.id)
    assert [p.name for p in raw.rglob("*") if p.name.endswith(TEMP_SUFFIX)] == []
    hits = svc.search(base.id, "plain words").results
    assert hits and hits[0].item_id == item.id


class _FullDisk:
    """A text file on a disk that fills up at the first write."""

    def __init__(self, handle: IO[str]) -> None:
        self._handle = handle

    def write(self, text: str) -> int:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._handle, name)

    def __enter__(self) -> _FullDisk:
        return self

    def __exit__(self, *exc: object) -> None:
        self._handle.close()


def test_disk_full_while_the_worker_writes_the_text_fails_the_item_and_leaves_nothing(
    svc: KnowledgeService, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = tmp_path / "src" / "page.html"  # its text goes to a .md product under raw/
    source.parent.mkdir()
    source.write_text("<html><body><p>fullword text</p></body></html>", encoding="utf-8")
    monkeypatch.setattr(
        text_extraction,
        "open",
        lambda *a, **k: _FullDisk(open(*a, **k)),  # noqa: SIM115 (closed by _FullDisk)
        raising=False,
    )
    base = svc.create_base("kb")
    (added,) = svc.add(base.id, [source]).added
    svc.run_pending_jobs(base.id)
    item = svc.get_item(added.id)
    assert item.status == "failed" and item.error_code == ErrorCode.STORAGE_FULL
    raw = svc.layout.raw_dir(base.id)
    assert [p.name for p in raw.rglob("*") if p.is_file()] == []
