"""File -> Document by extension. Each reader returns the text that becomes the material.

`read_document` is the reader boundary: whatever goes wrong inside a parser, the only
exception that leaves it is ReaderError, with an item error code and a human message.

The parsers of binary formats (pypdf, python-docx, python-pptx, openpyxl, lxml) are
imported on first use, not with this module: every reader worker imports the registry,
and tens of megabytes of libraries per worker for formats it may never see are memory
the whole machine pays for.
"""

from __future__ import annotations

import stat
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from app.knowledge.pipeline.readers.archive import DEFAULT_ZIP_LIMITS, ZipLimits
from app.knowledge.pipeline.readers.code import CODE_EXTENSIONS
from app.knowledge.pipeline.readers.document import Document, describe, human_size, page_at
from app.knowledge.pipeline.readers.errors import ReaderError
from app.knowledge.pipeline.readers.image import IMAGE_EXTENSIONS
from app.knowledge.pipeline.readers.structured import delimited_to_markdown, json_to_text
from app.knowledge.pipeline.readers.text import (
    NotUtf8Error,
    decode_stream,
    decode_text,
    markdown_title,
)
from app.knowledge.types import ErrorCode

__all__ = [
    "DEFAULT_MAX_BYTES",
    "SUPPORTED_EXTENSIONS",
    "Document",
    "NotUtf8Error",
    "TextStream",
    "ZipLimits",
    "is_supported",
    "page_at",
    "read_document",
    "read_document_stream",
]

TEXT_EXTENSIONS = frozenset({".txt", ".text", ".log"})
MARKDOWN_EXTENSIONS = frozenset({".md", ".markdown", ".mdown", ".mkd"})
HTML_EXTENSIONS = frozenset({".html", ".htm", ".xhtml", ".xht"})
PDF_EXTENSIONS = frozenset({".pdf"})
DOCX_EXTENSIONS = frozenset({".docx"})
PPTX_EXTENSIONS = frozenset({".pptx"})
XLSX_EXTENSIONS = frozenset({".xlsx", ".xlsm"})
EPUB_EXTENSIONS = frozenset({".epub"})
CSV_EXTENSIONS = frozenset({".csv"})
TSV_EXTENSIONS = frozenset({".tsv", ".tab"})
JSON_EXTENSIONS = frozenset({".json"})
JSON_LINES_EXTENSIONS = frozenset({".jsonl", ".ndjson"})

DEFAULT_MAX_BYTES = 200 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class _Options:
    max_bytes: int
    zip_limits: ZipLimits
    # Text recognised from page images (0-based page -> text), for scans and pictures.
    recognised: Mapping[int, str] | None = None


_PathReader = Callable[[Path, _Options], Document]
_TextReader = Callable[[Path, str], Document]


# The title of a text streamed in pieces comes from its first this many characters.
TITLE_HEAD_CHARS = 4096
_STREAM_BLOCK_BYTES = 1024 * 1024

_Titler = Callable[[Path, str], str]


@dataclass(frozen=True, slots=True)
class _Format:
    kind: str  # how messages name the file: "the {kind} is damaged"
    binary: bool
    read: _PathReader
    # Set for formats whose text is the file's decoded bytes unchanged: they can be
    # streamed; the title is taken from the first TITLE_HEAD_CHARS of the text.
    title: _Titler | None = None


@dataclass(frozen=True, slots=True)
class TextStream:
    """A text read in pieces; joined, they are exactly read_document's text.

    Iterating `pieces` raises ReaderError (or NotUtf8Error: read the file whole then) and
    nothing else; `title` takes the text's first TITLE_HEAD_CHARS characters.
    """

    pieces: Iterator[str]
    title: Callable[[str], str]


def _text_format(kind: str, convert: _TextReader, title: _Titler | None = None) -> _Format:
    """A format read as bytes, decoded once (the bytes are dropped before parsing)."""

    def read(path: Path, options: _Options) -> Document:
        return convert(path, decode_text(_read_bytes(path, options.max_bytes)))

    return _Format(kind=kind, binary=False, read=read, title=title)


def _plain_title(path: Path, head: str) -> str:
    return path.stem


def _markdown_title(path: Path, head: str) -> str:
    return markdown_title(head) or path.stem


def _read_plain(path: Path, text: str) -> Document:
    return Document(text=text, title=_plain_title(path, text))


def _read_markdown(path: Path, text: str) -> Document:
    return Document(text=text, title=_markdown_title(path, text))


def _read_html(path: Path, options: _Options) -> Document:
    from app.knowledge.pipeline.readers.html import decode_html, html_to_markdown

    text = decode_html(_read_bytes(path, options.max_bytes))
    markdown, title = html_to_markdown(text)
    del text
    return Document(text=markdown, title=title or markdown_title(markdown) or path.stem)


def _read_csv(path: Path, text: str) -> Document:
    return Document(text=delimited_to_markdown(text), title=path.stem)


def _read_tsv(path: Path, text: str) -> Document:
    return Document(text=delimited_to_markdown(text, delimiter="\t"), title=path.stem)


def _read_json(path: Path, text: str) -> Document:
    return Document(text=json_to_text(text), title=path.stem)


def _read_json_lines(path: Path, text: str) -> Document:
    return Document(text=json_to_text(text, lines=True), title=path.stem)


def _read_pdf(path: Path, options: _Options) -> Document:
    from app.knowledge.pipeline.readers.pdf import read_pdf

    return read_pdf(path, recognised=options.recognised)


def _read_image(path: Path, options: _Options) -> Document:
    from app.knowledge.pipeline.readers.image import read_image

    return read_image(path, options.recognised)


def _read_docx(path: Path, options: _Options) -> Document:
    from app.knowledge.pipeline.readers.office import read_docx

    return read_docx(path, options.zip_limits)


def _read_pptx(path: Path, options: _Options) -> Document:
    from app.knowledge.pipeline.readers.office import read_pptx

    return read_pptx(path, options.zip_limits)


def _read_xlsx(path: Path, options: _Options) -> Document:
    from app.knowledge.pipeline.readers.office import read_xlsx

    return read_xlsx(path, options.zip_limits)


def _read_epub(path: Path, options: _Options) -> Document:
    from app.knowledge.pipeline.readers.epub import read_epub

    return read_epub(path, options.zip_limits)


def _formats() -> dict[str, _Format]:
    table: dict[str, _Format] = {}

    def add(extensions: frozenset[str], fmt: _Format) -> None:
        for extension in extensions:
            table[extension] = fmt

    add(CODE_EXTENSIONS, _text_format("source file", _read_plain, _plain_title))
    add(TEXT_EXTENSIONS, _text_format("text file", _read_plain, _plain_title))
    add(MARKDOWN_EXTENSIONS, _text_format("Markdown file", _read_markdown, _markdown_title))
    add(CSV_EXTENSIONS, _text_format("CSV file", _read_csv))
    add(TSV_EXTENSIONS, _text_format("TSV file", _read_tsv))
    add(JSON_EXTENSIONS, _text_format("JSON file", _read_json))
    add(JSON_LINES_EXTENSIONS, _text_format("JSON Lines file", _read_json_lines))
    add(HTML_EXTENSIONS, _Format("HTML page", False, _read_html))
    add(PDF_EXTENSIONS, _Format("PDF", True, _read_pdf))
    add(DOCX_EXTENSIONS, _Format("Word document", True, _read_docx))
    add(PPTX_EXTENSIONS, _Format("PowerPoint presentation", True, _read_pptx))
    add(XLSX_EXTENSIONS, _Format("Excel workbook", True, _read_xlsx))
    add(EPUB_EXTENSIONS, _Format("EPUB book", True, _read_epub))
    add(IMAGE_EXTENSIONS, _Format("image", True, _read_image))
    return table


_FORMATS = _formats()
SUPPORTED_EXTENSIONS = frozenset(_FORMATS)


def is_supported(path: Path) -> bool:
    return path.suffix.lower() in SUPPORTED_EXTENSIONS


def read_document(
    path: Path,
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
    zip_limits: ZipLimits = DEFAULT_ZIP_LIMITS,
    recognised: Mapping[int, str] | None = None,
) -> Document:
    """Read a file into a Document; raises ReaderError and nothing else.

    UNSUPPORTED_FILE_TYPE for an unknown extension, SOURCE_MISSING when the file is gone,
    FILE_TOO_LARGE when it is bigger than `max_bytes` (checked before anything is read),
    READ_FAILED when it is damaged, encrypted, binary or a zip bomb. An empty file gives an
    empty text, which the caller reports as EMPTY_INDEXABLE_TEXT.
    """
    fmt = _format_of(path)
    if _checked_size(path, max_bytes) == 0:
        return Document(text="", title=path.stem)
    with _reader_errors(path, fmt):
        return fmt.read(path, _Options(max_bytes, zip_limits, recognised))


def read_document_stream(
    path: Path,
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
    zip_limits: ZipLimits = DEFAULT_ZIP_LIMITS,
    recognised: Mapping[int, str] | None = None,
) -> Document | TextStream:
    """Like read_document, but a plain text or Markdown file comes as a TextStream.

    Such a file's text is never whole in memory: a file of hundreds of megabytes is read
    in megabyte blocks. Other formats are read whole, as their parsers need.
    """
    fmt = _format_of(path)
    if fmt.title is None:
        return read_document(
            path, max_bytes=max_bytes, zip_limits=zip_limits, recognised=recognised
        )
    if _checked_size(path, max_bytes) == 0:
        return Document(text="", title=path.stem)
    titler = fmt.title
    return TextStream(
        pieces=_guarded(path, fmt, decode_stream(_byte_blocks(path, max_bytes))),
        title=lambda head: titler(path, head),
    )


def _format_of(path: Path) -> _Format:
    suffix = path.suffix.lower()
    fmt = _FORMATS.get(suffix)
    if fmt is None:
        raise ReaderError(
            ErrorCode.UNSUPPORTED_FILE_TYPE,
            f"files of type {suffix or '(none)'!r} are not supported",
        )
    return fmt


def _guarded(path: Path, fmt: _Format, pieces: Iterator[str]) -> Iterator[str]:
    with _reader_errors(path, fmt):
        yield from pieces


@contextmanager
def _reader_errors(path: Path, fmt: _Format) -> Iterator[None]:
    """Whatever a parser raises leaves as a ReaderError (NotUtf8Error is the caller's)."""
    try:
        yield
    except (ReaderError, NotUtf8Error):
        raise
    except (FileNotFoundError, NotADirectoryError) as exc:
        raise _missing(path) from exc
    except PermissionError as exc:
        raise ReaderError(
            ErrorCode.READ_FAILED, "the file could not be read: permission denied"
        ) from exc
    except OSError as exc:
        detail = exc.strerror or describe(exc)
        raise ReaderError(ErrorCode.READ_FAILED, f"the file could not be read: {detail}") from exc
    except RecursionError as exc:
        raise ReaderError(
            ErrorCode.READ_FAILED, f"the {fmt.kind} is nested too deeply to read"
        ) from exc
    except MemoryError as exc:
        raise ReaderError(
            ErrorCode.READ_FAILED, f"the {fmt.kind} is too large to read in memory"
        ) from exc
    except Exception as exc:
        state = "is damaged" if fmt.binary else "could not be read"
        raise ReaderError(
            ErrorCode.READ_FAILED, f"the {fmt.kind} {state}: {describe(exc)}"
        ) from exc


def _checked_size(path: Path, max_bytes: int) -> int:
    """The file's size from stat; refuses missing, non-regular and too-large files."""
    try:
        info = path.stat()
    except (FileNotFoundError, NotADirectoryError) as exc:
        raise _missing(path) from exc
    except OSError as exc:
        detail = exc.strerror or describe(exc)
        raise ReaderError(ErrorCode.READ_FAILED, f"the file could not be read: {detail}") from exc
    if stat.S_ISDIR(info.st_mode):
        raise ReaderError(ErrorCode.READ_FAILED, f"{path.name} is a folder, not a file")
    if not stat.S_ISREG(info.st_mode):
        raise ReaderError(ErrorCode.READ_FAILED, f"{path.name} is not a regular file")
    if info.st_size > max_bytes:
        raise _too_large(info.st_size, max_bytes)
    return info.st_size


def _read_bytes(path: Path, max_bytes: int) -> bytes:
    with path.open("rb") as handle:
        data = handle.read(max_bytes + 1)
    if len(data) > max_bytes:  # it grew after the size check
        raise _too_large(len(data), max_bytes)
    return data


def _byte_blocks(path: Path, max_bytes: int) -> Iterator[bytes]:
    read = 0
    with path.open("rb") as handle:
        while block := handle.read(_STREAM_BLOCK_BYTES):
            read += len(block)
            if read > max_bytes:  # it grew after the size check
                raise _too_large(read, max_bytes)
            yield block


def _too_large(size: int, max_bytes: int) -> ReaderError:
    return ReaderError(
        ErrorCode.FILE_TOO_LARGE,
        f"the file is {human_size(size)}; the limit is {human_size(max_bytes)}",
    )


def _missing(path: Path) -> ReaderError:
    return ReaderError(ErrorCode.SOURCE_MISSING, f"the file {path} no longer exists")
