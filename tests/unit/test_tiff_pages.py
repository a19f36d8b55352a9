"""A multi-page TIFF (what scanners and fax software write) is one page per frame: every frame
is asked for, each is checked against the image-bomb cap before anything is decoded, its
recognised pages are joined with exact page offsets, and the OCR worker reads frame by
frame. Only a TIFF's frames are pages. No OCR runs here (tests/integration/test_ocr_tiff.py
recognises them)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from app.knowledge.pipeline.readers.document import page_at
from app.knowledge.pipeline.readers.errors import ReaderError
from app.knowledge.pipeline.readers.image import MAX_IMAGE_PIXELS, PAGE_SEPARATOR, read_image
from app.knowledge.types import ErrorCode

Image = pytest.importorskip("PIL.Image", reason="the `ocr` extra is not installed")


def _tiff(path: Path, frames: list[Any], compression: str = "tiff_lzw") -> Path:
    first, *rest = frames
    first.save(path, "TIFF", save_all=True, append_images=rest, compression=compression)
    return path


def _frames(count: int) -> list[Any]:
    # Frame i is 10 + i pixels wide, so a page read can be told by its size.
    return [Image.new("L", (10 + i, 8), 255) for i in range(count)]


def test_every_frame_of_a_300_page_tiff_is_asked_for_and_only_a_tiffs(tmp_path: Path) -> None:
    doc = read_image(_tiff(tmp_path / "fax.tif", _frames(300)))
    assert doc.text == "" and doc.needs_ocr == tuple(range(300))
    # One frame: a picture, one unpaged page as before.
    one = _tiff(tmp_path / "one.tiff", _frames(1))
    assert read_image(one).needs_ocr == (0,)
    doc = read_image(one, {0: "  Heron count  "})
    assert (doc.text, doc.page_starts, doc.ocr_spans) == ("Heron count", (), ((0, 11),))
    # An animation's frames are not pages.
    animated = tmp_path / "anim.webp"
    first, *rest = [Image.new("RGB", (16, 16), (shade, shade, shade)) for shade in (0, 128, 255)]
    first.save(animated, "WEBP", save_all=True, append_images=rest)
    with Image.open(animated) as opened:
        assert opened.n_frames == 3
    assert read_image(animated).needs_ocr == (0,)


def test_recognised_frames_are_joined_with_exact_page_offsets(tmp_path: Path) -> None:
    path = _tiff(tmp_path / "scan.tif", _frames(4))
    # Pages 0-2 recognised (the base's limit was 3), page 1 found no text.
    doc = read_image(path, {0: "Heron count", 1: "  ", 2: "Egret nests"})
    assert doc.text == PAGE_SEPARATOR.join(["Heron count", "", "Egret nests"])
    assert doc.page_starts == (0, 13, 15)
    assert doc.ocr_spans == ((0, 11), (15, 26))
    assert page_at(doc, doc.text.index("Egret")) == 3
    assert page_at(doc, doc.text.index("Heron")) == 1


def test_a_bomb_in_a_later_frame_is_refused_before_decoding(tmp_path: Path) -> None:
    side = int(MAX_IMAGE_PIXELS**0.5) + 1_000
    bomb = Image.new("1", (side, side), 1)  # one bit a pixel, all white: a tiny file
    path = _tiff(tmp_path / "bomb.tif", [Image.new("1", (10, 10), 1), bomb], "group4")
    assert path.stat().st_size < 100_000
    with pytest.raises(ReaderError) as info:
        read_image(path)
    assert info.value.code is ErrorCode.IMAGE_TOO_LARGE


def test_the_ocr_worker_reads_frame_by_frame(tmp_path: Path) -> None:
    pytest.importorskip("pypdfium2", reason="the `ocr` extra is not installed")
    from app.knowledge.ocr.page_images import page_images

    path = _tiff(tmp_path / "scan.tif", _frames(3))
    with page_images(path) as images:
        sizes = [images.page(index).size for index in (0, 2, 1)]
    assert sizes == [(10, 8), (12, 8), (11, 8)]
