"""File -> text -> chunks, as one pure function that can run in a worker process.

Parsing documents and chunking their text is CPU-bound Python; running it in worker
processes uses every core (threads would share one interpreter lock) and keeps a crashing
or runaway parser away from the application.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from app.knowledge.pipeline.indexing.chunker import Chunk, chunk_text
from app.knowledge.pipeline.readers.errors import ReaderError
from app.knowledge.pipeline.readers.registry import read_document


@dataclass(frozen=True, slots=True)
class Extracted:
    text: str
    title: str
    page_starts: tuple[int, ...]
    chunks: list[Chunk]


def chunk_document(
    text: str, title: str, page_starts: tuple[int, ...], size: int, overlap: int
) -> Extracted:
    return Extracted(text, title, page_starts, chunk_text(text, size, overlap))


@dataclass(frozen=True, slots=True)
class ExtractFailure:
    """A reader's failure as a plain value: it crosses the process boundary intact."""

    code: str
    message: str


def extract_file(path: str, max_bytes: int, size: int, overlap: int) -> Extracted | ExtractFailure:
    """Read a file with its reader and chunk the text."""
    try:
        doc = read_document(Path(path), max_bytes=max_bytes)
    except ReaderError as exc:
        return ExtractFailure(str(exc.code), exc.message)
    return chunk_document(doc.text, doc.title, tuple(doc.page_starts), size, overlap)
