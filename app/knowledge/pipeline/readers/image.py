"""Pictures (png, jpg, webp, tiff, bmp): checked here, their text recognised later (OCR).

A picture has no text of its own: the reader checks that it is a picture Trove can decode
(not damaged, not an image bomb) and asks for its one page to be recognised; once the
recognition worker has read it, the recognised text is the material.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from app.knowledge.pipeline.readers.document import Document, describe
from app.knowledge.pipeline.readers.errors import ReaderError
from app.knowledge.types import ErrorCode

IMAGE_EXTENSIONS = frozenset({".png", ".jpg", ".jpeg", ".webp", ".tif", ".tiff", ".bmp"})

# More pixels than a 600 dpi scan of an A3 page: a picture beyond it is refused before it
# is decoded (a few hundred bytes of PNG can claim gigapixels).
MAX_IMAGE_PIXELS = 80_000_000


def read_image(path: Path, recognised: Mapping[int, str] | None = None) -> Document:
    """The picture's recognised text, or an empty text asking for page 0 to be recognised."""
    text = (recognised or {}).get(0)
    if text is not None:
        text = text.strip()
        return Document(text=text, title=path.stem, ocr_spans=((0, len(text)),) if text else ())
    check_image(path)
    return Document(text="", title=path.stem, needs_ocr=(0,))


def check_image(path: Path) -> tuple[int, int]:
    """Decode the picture once to prove it whole; returns its size. ReaderError otherwise."""
    with open_image(path) as image:
        try:
            image.load()
        except (OSError, SyntaxError, ValueError) as exc:
            raise damaged(exc) from exc
        return int(image.width), int(image.height)


def open_image(path: Path) -> Any:
    """The picture opened lazily (header only) after its size is checked."""
    try:
        from PIL import Image, UnidentifiedImageError
    except ImportError as exc:
        raise ReaderError(ErrorCode.OCR_UNAVAILABLE, OCR_MISSING_MESSAGE) from exc
    # Trove's own cap applies (below); Pillow's warning-then-error scheme would decode first.
    Image.MAX_IMAGE_PIXELS = None
    try:
        image = Image.open(path)
    except (UnidentifiedImageError, SyntaxError, ValueError) as exc:
        raise damaged(exc) from exc
    width, height = image.size
    if width <= 0 or height <= 0:
        image.close()
        raise damaged(ValueError("it has no pixels"))
    if width * height > MAX_IMAGE_PIXELS:
        image.close()
        raise ReaderError(
            ErrorCode.IMAGE_TOO_LARGE,
            f"the image is {width} x {height} pixels; Trove reads pictures of at most "
            f"{MAX_IMAGE_PIXELS // 1_000_000} megapixels",
        )
    return image


OCR_MISSING_MESSAGE = (
    "reading text from scans and pictures needs Trove's OCR component, which is not "
    "installed (pip install 'trove[ocr]')"
)


def damaged(exc: BaseException) -> ReaderError:
    return ReaderError(ErrorCode.READ_FAILED, f"the image is damaged: {describe(exc)}")
