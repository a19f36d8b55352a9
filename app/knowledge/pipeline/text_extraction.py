"""File -> text -> chunks, as pure functions that can run in a worker process.

Parsing documents and chunking their text is CPU-bound Python; running it in worker
processes uses every core (threads would share one interpreter lock) and keeps a crashing
or runaway parser away from the application.

`extract_to_file` is what indexing uses: the worker writes the text to a file and returns
only the chunks' spans, so no copy of a big text ever crosses the process boundary, and a
plain text or Markdown file is read, written and chunked a few megabytes at a time.
"""

from __future__ import annotations

import itertools
from array import array
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from app.knowledge.pipeline.indexing.chunker import Chunk, chunk_text, chunk_with
from app.knowledge.pipeline.indexing.spans import Spans, add_spans
from app.knowledge.pipeline.indexing.token_count import ChunkSizing
from app.knowledge.pipeline.readers.errors import ReaderError
from app.knowledge.pipeline.readers.registry import (
    TITLE_HEAD_CHARS,
    Document,
    NotUtf8Error,
    TextStream,
    read_document,
    read_document_stream,
)
from app.knowledge.pipeline.recognised_pages import read_pages

# A text longer than this is chunked a segment at a time, each segment cut at a paragraph,
# line or word boundary: the chunker's working memory is a few times its input, and this
# keeps it to tens of megabytes whatever the file. No chunk spans two segments, so a text
# of at most this many characters is chunked exactly as chunk_text chunks it whole.
SEGMENT_CHARS = 4 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class Extracted:
    text: str
    title: str
    page_starts: tuple[int, ...]
    chunks: list[Chunk]


def chunk_document(
    text: str, title: str, page_starts: tuple[int, ...], sizing: ChunkSizing
) -> Extracted:
    return Extracted(text, title, page_starts, chunk_with(text, sizing.with_title(title)))


@dataclass(frozen=True, slots=True)
class ExtractFailure:
    """A reader's failure as a plain value: it crosses the process boundary intact."""

    code: str
    message: str


def extract_file(path: str, max_bytes: int, sizing: ChunkSizing) -> Extracted | ExtractFailure:
    """Read a file with its reader and chunk the text."""
    try:
        doc = read_document(Path(path), max_bytes=max_bytes)
    except ReaderError as exc:
        return ExtractFailure(str(exc.code), exc.message)
    return chunk_document(doc.text, doc.title, tuple(doc.page_starts), sizing)


@dataclass(frozen=True, slots=True)
class ExtractedFile:
    """A document whose text a worker wrote to a file (UTF-8, no newline translation).

    `spans` holds each chunk's (start, end, token_count), flattened; the chunk texts are
    read back from the file (see indexing.spans). `units`, in the same form, holds the
    full-text passages when they differ from the chunks (see passage_units).
    `needs_ocr` and `ocr_spans` are the document's (see readers.document.Document).
    """

    title: str
    page_starts: tuple[int, ...]
    char_count: int
    spans: Spans
    units: Spans | None = None
    needs_ocr: tuple[int, ...] = ()
    ocr_spans: tuple[tuple[int, int], ...] = ()


@dataclass(frozen=True, slots=True)
class Chunked:
    """A text's chunk spans and, when they differ, its full-text passage spans."""

    spans: Spans
    units: Spans | None


def extract_to_file(
    path: str, max_bytes: int, sizing: ChunkSizing, out: str, recognised: str | None = None
) -> ExtractedFile | ExtractFailure:
    """Read a file with its reader, write its text to `out` (which exists) and chunk it.

    `recognised`: the file of pages text recognition read from the file's page images."""
    pages = read_pages(Path(recognised)) if recognised else None
    try:
        with open(out, "r+", encoding="utf-8", newline="") as sink:
            try:
                return _extract_streamed(Path(path), max_bytes, sizing, sink, pages)
            except NotUtf8Error:
                sink.seek(0)
                sink.truncate()
                doc = read_document(Path(path), max_bytes=max_bytes)
                return _write_document(doc, sizing, sink)
    except ReaderError as exc:
        return ExtractFailure(str(exc.code), exc.message)


def chunk_spans(text: str, title: str, sizing: ChunkSizing) -> Chunked:
    """The spans of a text's chunks (and passages), as extract_to_file chunks a text
    (segment by segment)."""
    spans: Spans = array("q")
    units = _unit_spans(sizing)
    _chunk_segments(_segments([text], SEGMENT_CHARS), sizing.with_title(title), spans, units, None)
    return Chunked(spans, units)


def _unit_spans(sizing: ChunkSizing) -> Spans | None:
    """Where full-text passages go, when they are not the chunks themselves.

    Chunks sized for an embedding model are ranked by full text in passages of the
    base's own chunk size, cut as a base without a model cuts its chunks (see
    store/index_store.py for why).
    """
    return None if sizing.limit is None else array("q")


def _extract_streamed(
    path: Path, max_bytes: int, sizing: ChunkSizing, sink: TextIO, pages: dict[int, str] | None
) -> ExtractedFile:
    got = read_document_stream(path, max_bytes=max_bytes, recognised=pages)
    if isinstance(got, Document):
        return _write_document(got, sizing, sink)
    return _write_stream(got, sizing, sink)


def _write_document(doc: Document, sizing: ChunkSizing, sink: TextIO) -> ExtractedFile:
    spans: Spans = array("q")
    units = _unit_spans(sizing)
    segments = _segments([doc.text], SEGMENT_CHARS)
    count = _chunk_segments(segments, sizing.with_title(doc.title), spans, units, sink)
    return ExtractedFile(
        doc.title,
        tuple(doc.page_starts),
        count,
        spans,
        units,
        needs_ocr=doc.needs_ocr,
        ocr_spans=doc.ocr_spans,
    )


def _write_stream(stream: TextStream, sizing: ChunkSizing, sink: TextIO) -> ExtractedFile:
    spans: Spans = array("q")
    units = _unit_spans(sizing)
    segments = _segments(stream.pieces, SEGMENT_CHARS)
    first = next(segments, "")
    # The title comes from the text's start, which the first segment holds: a segment is
    # at least half of SEGMENT_CHARS unless it is the whole text.
    title = stream.title(first[:TITLE_HEAD_CHARS])
    segments = itertools.chain([first] if first else [], segments)
    count = _chunk_segments(segments, sizing.with_title(title), spans, units, sink)
    return ExtractedFile(title, (), count, spans, units)


def _chunk_segments(
    segments: Iterable[str],
    sizing: ChunkSizing,
    spans: Spans,
    units: Spans | None,
    sink: TextIO | None,
) -> int:
    """Chunk each segment into `spans` (and passages into `units`, when given; offsets
    into the whole text), write it to `sink`; returns the text's length in characters."""
    offset = 0
    for segment in segments:
        if sink is not None:
            sink.write(segment)
        add_spans(spans, chunk_with(segment, sizing), offset)
        if units is not None:
            add_spans(units, chunk_text(segment, sizing.size, sizing.overlap), offset)
        offset += len(segment)
    return offset


def _segments(pieces: Iterable[str], limit: int) -> Iterator[str]:
    """The text the pieces make, re-cut into segments of at most `limit` characters.

    Each cut falls after a blank line, else a line break, else a space or tab, in the
    segment's second half; only a text without any of them there is cut at the limit.
    A text of at most `limit` characters is one segment, itself.
    """
    buffer, pos = "", 0
    for piece in pieces:
        buffer = buffer[pos:] + piece if pos or buffer else piece
        pos = 0
        while len(buffer) - pos > limit:
            cut = _cut(buffer, pos, pos + limit)
            yield buffer[pos:cut]
            pos = cut
    if pos < len(buffer):
        yield buffer[pos:] if pos else buffer


def _cut(text: str, start: int, limit: int) -> int:
    """Where to end the segment text[start:...] at the latest at `limit`."""
    low = start + (limit - start) // 2
    for separator in ("\n\n", "\n", " ", "\t"):
        at = text.rfind(separator, low, limit)
        if at >= 0:
            return at + len(separator)
    return limit
