"""The images text recognition reads: PDF pages rendered with pypdfium2, pictures as they are
(a multi-page TIFF frame by frame)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from app.knowledge.ocr.recognizer import PAGE_LONG_SIDE_PX
from app.knowledge.pipeline.readers.errors import ReaderError
from app.knowledge.pipeline.readers.image import IMAGE_EXTENSIONS, open_frame, open_image
from app.knowledge.types import ErrorCode

# Small pages are not blown up past 200 dpi: more pixels would not show more of the text.
MAX_SCALE = 200 / 72


class PageImages:
    """Opens a document once; `page(i)` gives page i (0-based) as a Pillow image."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._pdf: Any = None
        self._picture: Any = None  # opened on the first page, kept for the next frames
        if path.suffix.lower() not in IMAGE_EXTENSIONS:
            import pypdfium2

            try:
                self._pdf = pypdfium2.PdfDocument(str(path))
            except pypdfium2.PdfiumError as exc:
                raise ReaderError(
                    ErrorCode.READ_FAILED, f"the PDF's pages cannot be drawn: {exc}"
                ) from exc

    def page(self, index: int) -> Any:
        if self._pdf is None:
            if self._picture is None:
                self._picture = open_image(self._path)
            return open_frame(self._picture, index)
        page = self._pdf[index]
        try:
            width, height = page.get_size()
            scale = min(MAX_SCALE, PAGE_LONG_SIDE_PX / max(1.0, width, height))
            # The page's own /Rotate applies: a page scanned sideways and turned upright in
            # the PDF is read upright.
            bitmap = page.render(scale=scale)
            return bitmap.to_pil()
        finally:
            page.close()

    def close(self) -> None:
        if self._pdf is not None:
            self._pdf.close()
            self._pdf = None
        if self._picture is not None:
            self._picture.close()
            self._picture = None


@contextmanager
def page_images(path: Path) -> Iterator[PageImages]:
    images = PageImages(path)
    try:
        yield images
    finally:
        images.close()
