"""File -> text by extension. Each reader returns the text that becomes the material."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from app.knowledge.pipeline.readers.errors import ReaderError
from app.knowledge.pipeline.readers.text import decode_text, markdown_title
from app.knowledge.types import ErrorCode

TEXT_EXTENSIONS = frozenset({".txt", ".text", ".log"})
MARKDOWN_EXTENSIONS = frozenset({".md", ".markdown", ".mdown", ".mkd"})
SUPPORTED_EXTENSIONS = TEXT_EXTENSIONS | MARKDOWN_EXTENSIONS

DEFAULT_MAX_BYTES = 200 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class Document:
    text: str
    title: str


def is_supported(path: Path) -> bool:
    return path.suffix.lower() in SUPPORTED_EXTENSIONS


def read_document(path: Path, *, max_bytes: int = DEFAULT_MAX_BYTES) -> Document:
    suffix = path.suffix.lower()
    if suffix not in SUPPORTED_EXTENSIONS:
        raise ReaderError(
            ErrorCode.UNSUPPORTED_FILE_TYPE, f"files of type {suffix or '(none)'!r} are not supported"
        )
    try:
        size = path.stat().st_size
        if size > max_bytes:
            raise ReaderError(
                ErrorCode.FILE_TOO_LARGE,
                f"the file is {size / 1e6:.1f} MB; the limit is {max_bytes / 1e6:.0f} MB",
            )
        data = path.read_bytes()
    except FileNotFoundError as exc:
        raise ReaderError(ErrorCode.SOURCE_MISSING, f"the file {path} no longer exists") from exc
    except OSError as exc:
        raise ReaderError(ErrorCode.READ_FAILED, f"the file could not be read: {exc}") from exc
    text = decode_text(data)
    title = (markdown_title(text) if suffix in MARKDOWN_EXTENSIONS else None) or path.stem
    return Document(text=text, title=title)
