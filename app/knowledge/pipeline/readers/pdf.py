"""PDF -> text, page by page (pypdf), with the offset where each page starts."""

from __future__ import annotations

import re
from pathlib import Path
from typing import BinaryIO

from pypdf import PasswordType, PdfReader
from pypdf.errors import DependencyError, FileNotDecryptedError, PdfReadError, PdfStreamError

from app.knowledge.pipeline.readers.document import (
    Document,
    clean_title,
    describe,
    first_line_title,
)
from app.knowledge.pipeline.readers.errors import ReaderError
from app.knowledge.types import ErrorCode

PAGE_SEPARATOR = "\n\n"
_SURROGATE = re.compile("[\ud800-\udfff]")


def read_pdf(source: Path | BinaryIO, *, fallback_title: str = "") -> Document:
    """Text of every page joined by blank lines; `page_starts` marks where each page begins.

    The file is read lazily through its handle, never loaded whole. A PDF "encrypted" with
    an empty user password opens as usual; one that needs a password raises READ_FAILED.
    An image-only PDF gives an empty text (the caller reports EMPTY_INDEXABLE_TEXT).
    """
    if isinstance(source, Path):
        with source.open("rb") as handle:
            return _read(handle, fallback_title or source.stem)
    return _read(source, fallback_title)


def _read(handle: BinaryIO, fallback_title: str) -> Document:
    try:
        reader = PdfReader(handle, strict=False)
        _unlock(reader)
        pages = reader.pages
        count = len(pages)
    except ReaderError:
        raise
    except (FileNotDecryptedError, DependencyError) as exc:
        raise _protected(exc) from exc
    except (PdfReadError, PdfStreamError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise _damaged(exc) from exc
    texts: list[str] = []
    failures: list[Exception] = []
    for index in range(count):
        try:
            text = pages[index].extract_text()
        except FileNotDecryptedError as exc:
            raise _protected(exc) from exc
        except (OSError, MemoryError):
            raise
        except Exception as exc:
            failures.append(exc)
            text = ""
        texts.append(_clean(text))
    if count and len(failures) == count:
        raise _damaged(failures[0]) from failures[0]
    if not any(text.strip() for text in texts):
        return Document(text="", title=_metadata_title(reader) or fallback_title)
    starts: list[int] = []
    offset = 0
    for text in texts:
        starts.append(offset)
        offset += len(text) + len(PAGE_SEPARATOR)
    body = PAGE_SEPARATOR.join(texts)
    title = _metadata_title(reader) or first_line_title(body) or fallback_title
    return Document(text=body, title=title, page_starts=tuple(starts))


def _unlock(reader: PdfReader) -> None:
    if not reader.is_encrypted:
        return
    # Many PDFs are "encrypted" with an empty user password (only printing or copying is
    # restricted); they open without asking anyone for anything.
    if reader.decrypt("") == PasswordType.NOT_DECRYPTED:
        raise ReaderError(
            ErrorCode.READ_FAILED,
            "the PDF is password-protected; remove the password and add it again",
        )


def _clean(text: str) -> str:
    # Text extraction can produce NULs and stray surrogates; neither belongs in a material.
    text = text.replace("\x00", "")
    if _SURROGATE.search(text):
        text = text.encode("utf-8", errors="replace").decode("utf-8")
    return text.strip()


def _metadata_title(reader: PdfReader) -> str | None:
    try:
        metadata = reader.metadata
        return clean_title(metadata.title) if metadata is not None else None
    except Exception:
        return None


def _protected(exc: Exception) -> ReaderError:
    if isinstance(exc, DependencyError):
        return ReaderError(
            ErrorCode.READ_FAILED,
            f"the PDF is encrypted with a method Trove cannot open here ({exc})",
        )
    return ReaderError(
        ErrorCode.READ_FAILED, "the PDF is password-protected; remove the password and add it again"
    )


def _damaged(exc: BaseException) -> ReaderError:
    return ReaderError(ErrorCode.READ_FAILED, f"the PDF is damaged: {describe(exc)}")
