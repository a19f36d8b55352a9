"""Pictures (png, jpg, webp, tiff, bmp): checked here, their text recognised later (OCR).

A picture has no text of its own: the reader checks that it is a picture Trove can decode
(not damaged, not an image bomb) and asks for its pages to be recognised; once the
recognition worker has read them, the recognised text is the material. A picture is one
page, except a multi-page TIFF (what scanners and fax software write): each of its frames
is a page, recognised up to the base's OCR page limit as a PDF's pages are, and the
material is paged like a PDF's.
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
# is decoded (a few hundred bytes of PNG can claim gigapixels). Each frame of a TIFF alike.
MAX_IMAGE_PIXELS = 80_000_000
# The frames of a TIFF counted at most: the most pages a base may recognise per document.
MAX_FRAMES = 10_000
# Between the pages of a paged picture's material, as between a PDF's pages.
PAGE_SEPARATOR = "\n\n"


def read_image(path: Path, recognised: Mapping[int, str] | None = None) -> Document:
    """The picture's recognised text, or an empty text asking for its pages (frames) to be
    recognised."""
    if recognised:
        return _recognised_text(path, recognised)
    frames = check_image(path)
    return Document(text="", title=path.stem, needs_ocr=tuple(range(frames)))


def _recognised_text(path: Path, recognised: Mapping[int, str]) -> Document:
    """The recognised pages as the material: one page unpaged, as a picture's always was;
    several joined and paged as a PDF's (a page not recognised, past the limit, is left
    out at the end)."""
    if set(recognised) == {0} and frame_count(path) == 1:
        text = recognised[0].strip()
        return Document(text=text, title=path.stem, ocr_spans=((0, len(text)),) if text else ())
    texts = [recognised.get(index, "").strip() for index in range(max(recognised) + 1)]
    if not any(texts):
        return Document(text="", title=path.stem)
    starts: list[int] = []
    spans: list[tuple[int, int]] = []
    offset = 0
    for text in texts:
        starts.append(offset)
        if text:
            spans.append((offset, offset + len(text)))
        offset += len(text) + len(PAGE_SEPARATOR)
    return Document(
        text=PAGE_SEPARATOR.join(texts),
        title=path.stem,
        page_starts=tuple(starts),
        ocr_spans=tuple(spans),
    )


def check_image(path: Path) -> int:
    """Decode the picture's first frame to prove it whole, and check every frame's size;
    returns how many frames (pages) it has. ReaderError otherwise."""
    with open_image(path) as image:
        try:
            image.load()
            return _frames(image)
        except (OSError, SyntaxError, ValueError, EOFError) as exc:
            raise damaged(exc) from exc


def frame_count(path: Path) -> int:
    """How many pages the picture has: a TIFF's frames, else 1."""
    with open_image(path) as image:
        try:
            return _frames(image)
        except (OSError, SyntaxError, ValueError, EOFError) as exc:
            raise damaged(exc) from exc


def _frames(image: Any) -> int:
    """The frames of an open TIFF (each checked against the pixel cap), else 1; the image
    is left on its first frame. Other formats' frames (an animated WebP or PNG) are an
    animation's, not pages."""
    if image.format != "TIFF":
        return 1
    count = 0
    for index in range(MAX_FRAMES):
        try:
            image.seek(index)
        except EOFError:
            break
        check_size(image)
        count += 1
    image.seek(0)
    return max(1, count)


def open_frame(image: Any, index: int) -> Any:
    """Frame `index` of an open picture, decoded, as RGB."""
    try:
        image.seek(index)
        check_size(image)
        image.load()
        return image.convert("RGB")
    except (OSError, SyntaxError, ValueError, EOFError) as exc:
        raise damaged(exc) from exc


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
    try:
        check_size(image)
    except ReaderError:
        image.close()
        raise
    return image


def check_size(image: Any) -> None:
    """ReaderError when the picture's current frame has no pixels or is an image bomb."""
    width, height = image.size
    if width <= 0 or height <= 0:
        raise damaged(ValueError("it has no pixels"))
    if width * height > MAX_IMAGE_PIXELS:
        raise ReaderError(
            ErrorCode.IMAGE_TOO_LARGE,
            f"the image is {width} x {height} pixels; Trove reads pictures of at most "
            f"{MAX_IMAGE_PIXELS // 1_000_000} megapixels",
        )


OCR_MISSING_MESSAGE = (
    "reading text from scans and pictures needs Trove's OCR component, which is not "
    "installed (pip install 'trove[ocr]')"
)


def damaged(exc: BaseException) -> ReaderError:
    return ReaderError(ErrorCode.READ_FAILED, f"the image is damaged: {describe(exc)}")
