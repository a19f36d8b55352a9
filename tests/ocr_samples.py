"""Pictures and scanned PDFs the OCR tests and the OCR benchmark make: text drawn with Pillow
(Latin with DejaVu, Chinese with a CJK system font), scans saved as image-only PDF pages,
born-digital pages written by hand (tests/unit/make_files.py), mixed with pypdf."""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from tests.unit.make_files import pdf_bytes

LATIN_FONTS = ("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",)
CJK_FONTS = (
    "/usr/share/fonts/truetype/wqy/wqy-microhei.ttc",
    "/usr/share/fonts/truetype/wqy/wqy-zenhei.ttc",
    "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc",
    "/System/Library/Fonts/PingFang.ttc",
    "C:/Windows/Fonts/msyh.ttc",
)


def require_ocr() -> None:
    """Skip the calling test when the `ocr` extra is not installed."""
    for name in ("rapidocr", "pypdfium2", "PIL"):
        pytest.importorskip(name, reason="the `ocr` extra is not installed (pip install .[ocr])")


@cache
def cjk_font() -> str | None:
    found = [p for p in CJK_FONTS if Path(p).is_file()]
    return found[0] if found else None


def require_cjk_font() -> str:
    font = cjk_font()
    if font is None:
        pytest.skip("no CJK font on this machine (Debian: apt-get install fonts-wqy-microhei)")
    return font


@dataclass(frozen=True, slots=True)
class Line:
    text: str
    cjk: bool = False


def page_image(
    lines: Sequence[Line], *, size: tuple[int, int] = (1240, 1754), font_px: int = 36
) -> Any:
    """A white page (A4 at 150 dpi by default) with the lines drawn in black (36 px: 17-point
    type at 150 dpi)."""
    from PIL import Image, ImageDraw, ImageFont

    image = Image.new("L", size, 255)
    draw = ImageDraw.Draw(image)
    y = 120
    for line in lines:
        font_path = cjk_font() if line.cjk else LATIN_FONTS[0]
        font = ImageFont.truetype(font_path or LATIN_FONTS[0], font_px)
        draw.text((100, y), line.text, font=font, fill=0)
        y += font_px * 2
    return image


def save_image(image: Any, path: Path, fmt: str | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    image.convert("RGB").save(path, fmt)
    return path


def scanned_pdf_bytes(images: Sequence[Any], *, rotate: Sequence[int] = ()) -> bytes:
    """Image-only PDF pages at 150 dpi; `rotate[i]` sets page i's /Rotate."""
    buffer = io.BytesIO()
    first, *rest = [im.convert("RGB") for im in images]
    first.save(buffer, "PDF", save_all=True, append_images=rest, resolution=150.0)
    if not any(rotate):
        return buffer.getvalue()
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter()
    for index, page in enumerate(PdfReader(io.BytesIO(buffer.getvalue())).pages):
        if index < len(rotate) and rotate[index]:
            page.rotate(rotate[index])
        writer.add_page(page)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def mixed_pdf(path: Path, parts: Sequence[str | Any]) -> Path:
    """A PDF whose pages are born-digital text (a str) or scans (an image), in order."""
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter()
    for part in parts:
        data = pdf_bytes([part]) if isinstance(part, str) else scanned_pdf_bytes([part])
        writer.add_page(PdfReader(io.BytesIO(data)).pages[0])
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as handle:
        writer.write(handle)
    return path
