"""PDF -> text, page by page (pypdf), with the offset where each page starts."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, BinaryIO

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

# A page is scanned (its text is recognised from its image, when the base reads scans)
# when its text layer holds fewer letters and digits than this per square inch of page,
# or when fewer than half of its visible characters are letters or digits (a junk layer:
# glyph ids of a font without a Unicode map). Measured on the PDFs the tests make
# (docs/guide.md, "Scanned PDFs and pictures"): born-digital pages of prose 20-40 per square
# inch, a title page 1.5, scanned pages 0.
MIN_LETTERS_PER_SQUARE_INCH = 1.0
MIN_LETTER_SHARE = 0.5
_POINTS_PER_INCH = 72.0


def read_pdf(
    source: Path | BinaryIO,
    *,
    fallback_title: str = "",
    recognised: Mapping[int, str] | None = None,
) -> Document:
    """Text of every page joined by blank lines; `page_starts` marks where each page begins.

    The file is read lazily through its handle, never loaded whole. A PDF "encrypted" with
    an empty user password opens as usual; one that needs a password raises READ_FAILED.
    An image-only PDF gives an empty text (the caller reports EMPTY_INDEXABLE_TEXT).

    Pages whose text layer is empty or junk are listed in `needs_ocr`; `recognised` holds
    the text recognised from such pages' images (0-based page -> text), used in place of
    the layer's text when it has more letters.
    """
    if isinstance(source, Path):
        with source.open("rb") as handle:
            return _read(handle, fallback_title or source.stem, recognised or {})
    return _read(source, fallback_title, recognised or {})


def letter_count(text: str) -> int:
    return sum(1 for ch in text if ch.isalnum())


def letters_per_square_inch(text: str, width_pt: float, height_pt: float) -> float:
    square_inches = max(1.0, abs(width_pt * height_pt)) / _POINTS_PER_INCH**2
    return letter_count(text) / square_inches


def text_layer_unusable(text: str, width_pt: float, height_pt: float) -> bool:
    """True when a page's text layer is too sparse or too garbled to stand for the page."""
    visible = sum(1 for ch in text if not ch.isspace())
    if visible and letter_count(text) < MIN_LETTER_SHARE * visible:
        return True
    return letters_per_square_inch(text, width_pt, height_pt) < MIN_LETTERS_PER_SQUARE_INCH


def _page_size(page: Any) -> tuple[float, float]:
    try:
        box = page.mediabox
        return float(box.width), float(box.height)
    except Exception:
        return 612.0, 792.0  # US Letter: a page without a readable box is ordinary-sized


def _read(handle: BinaryIO, fallback_title: str, recognised: Mapping[int, str]) -> Document:
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
    scanned: list[int] = []
    for index in range(count):
        try:
            page = pages[index]
            text = page.extract_text()
        except FileNotDecryptedError as exc:
            raise _protected(exc) from exc
        except (OSError, MemoryError):
            raise
        except Exception as exc:
            failures.append(exc)
            text = ""
            page = None
        text = _clean(text)
        if text_layer_unusable(text, *_page_size(page)):
            scanned.append(index)
        texts.append(text)
    if count and len(failures) == count:
        raise _damaged(failures[0]) from failures[0]
    from_image = _use_recognised(texts, recognised)
    needs_ocr = tuple(i for i in scanned if i not in recognised)
    if not any(text.strip() for text in texts):
        title = _metadata_title(reader) or fallback_title
        return Document(text="", title=title, needs_ocr=needs_ocr)
    starts: list[int] = []
    spans: list[tuple[int, int]] = []
    offset = 0
    for index, text in enumerate(texts):
        starts.append(offset)
        if index in from_image and text:
            spans.append((offset, offset + len(text)))
        offset += len(text) + len(PAGE_SEPARATOR)
    body = PAGE_SEPARATOR.join(texts)
    title = _metadata_title(reader) or first_line_title(body) or fallback_title
    return Document(
        text=body,
        title=title,
        page_starts=tuple(starts),
        needs_ocr=needs_ocr,
        ocr_spans=tuple(spans),
    )


def _use_recognised(texts: list[str], recognised: Mapping[int, str]) -> set[int]:
    """Put recognised texts in place of their pages' layers; returns the pages replaced.

    A page keeps its own layer when recognition found fewer letters (a sparse but real
    layer, such as a title page, is exact where recognition may misread)."""
    replaced: set[int] = set()
    for index, text in recognised.items():
        if not 0 <= index < len(texts):
            continue
        cleaned = _clean(text)
        if letter_count(cleaned) > letter_count(texts[index]):
            texts[index] = cleaned
            replaced.add(index)
    return replaced


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
