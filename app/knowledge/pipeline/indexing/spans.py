"""Chunk spans and the chunk texts they point at, read back from a material's text.

A worker returns chunks as spans (start, end, token_count) into a text it wrote to a file;
the texts are read back from that file a window at a time, so indexing a text of hundreds
of megabytes never holds it (or all of its chunk texts) in memory.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TypeAlias

from app.knowledge.pipeline.indexing.chunker import Chunk

# Flattened (start, end, token_count) triples: 24 bytes a chunk, pickled as one buffer.
Spans: TypeAlias = "array[int]"  # typecode "q"
Span: TypeAlias = tuple[int, int, int]

# How much of the material is decoded at a time when reading chunk texts back.
READ_CHARS = 1024 * 1024


def add_spans(spans: Spans, chunks: Iterable[Chunk], offset: int = 0) -> None:
    for chunk in chunks:
        spans.extend((chunk.start + offset, chunk.end + offset, chunk.token_count))


def span_count(spans: Spans) -> int:
    return len(spans) // 3


def iter_spans(spans: Spans) -> Iterator[Span]:
    for i in range(0, len(spans), 3):
        yield spans[i], spans[i + 1], spans[i + 2]


def texts_from_text(text: str, spans: Spans) -> Iterator[str]:
    for start, end, _ in iter_spans(spans):
        yield text[start:end]


def texts_from_file(path: Path, spans: Spans) -> Iterator[str]:
    """Each span's text from a UTF-8 file, read in one forward pass for spans in order.

    Chunk spans go forward (each starts and ends no earlier than the one before), so only
    a window from the current chunk's start on is kept; a span starting before the window
    (never from the chunker) makes the file be read again from its start.
    """
    with path.open(encoding="utf-8", newline="") as fh:
        window, base = "", 0  # window == text[base : base + len(window)]
        for start, end, _ in iter_spans(spans):
            if start < base:
                fh.seek(0)
                window, base = "", 0
            while base + len(window) < end:
                # Drop what lies before the span only when reading more: dropping it for
                # every chunk would copy the window once per chunk.
                drop = min(start - base, len(window))
                more = fh.read(READ_CHARS)
                if not more:
                    raise ValueError(f"{path.name} ends before the chunk at {start}..{end}")
                window = window[drop:] + more
                base += drop
            yield window[start - base : end - base]
