"""Which PDF pages need text recognition (the text-layer rule), how recognised pages join a
PDF's own text with exact page offsets, and which pictures are read at all. No OCR runs here."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from app.knowledge.pipeline.readers.errors import ReaderError
from app.knowledge.pipeline.readers.pdf import (
    MIN_LETTERS_PER_SQUARE_INCH,
    PAGE_SEPARATOR,
    letters_per_square_inch,
    read_pdf,
    text_layer_unusable,
)
from app.knowledge.pipeline.readers.registry import is_supported, read_document
from app.knowledge.types import ErrorCode
from tests.unit.make_files import pdf_bytes

PROSE = "\n".join(
    f"Line {n} of a born-digital report on the harbour's winter traffic and its costs."
    for n in range(40)
)
LETTER = (612.0, 792.0)


def test_the_rule_tells_prose_from_scans_and_junk() -> None:
    prose = letters_per_square_inch(PROSE, *LETTER)
    assert prose > 20 * MIN_LETTERS_PER_SQUARE_INCH  # a page of prose: far above the line
    assert not text_layer_unusable(PROSE, *LETTER)
    assert text_layer_unusable("", *LETTER)  # a scan: no layer at all
    assert text_layer_unusable("3", *LETTER)  # a scan with its page number as text
    # Glyph ids of a font without a Unicode map come out as symbols and control characters.
    assert text_layer_unusable("\x01\x02\x03 ©®¶ ### @@@ ^^^ ~~~ " * 30, *LETTER)
    # A half-page title on a small card is still text, not a scan.
    assert not text_layer_unusable("Harbour traffic, winter 2026", 288.0, 216.0)


def test_scanned_pages_are_listed_and_their_recognised_text_keeps_page_offsets() -> None:
    data = pdf_bytes(["First page text about herons.", "", "Third page about gulls."])
    doc = read_pdf(io.BytesIO(data))
    assert doc.needs_ocr == (0, 1, 2)  # one short line per Letter page is below the line
    doc = read_pdf(io.BytesIO(pdf_bytes([PROSE, "", PROSE])))
    assert doc.needs_ocr == (1,)
    recognised = read_pdf(
        io.BytesIO(pdf_bytes([PROSE, "", PROSE])), recognised={1: "Scanned egret"}
    )
    assert recognised.needs_ocr == ()
    start = recognised.page_starts[1]
    assert recognised.text[start : start + len("Scanned egret")] == "Scanned egret"
    assert recognised.page_starts == (0, len(PROSE) + len(PAGE_SEPARATOR), start + 13 + 2)
    assert recognised.ocr_spans == ((start, start + 13),)


def test_a_sparse_layer_is_kept_when_recognition_reads_less() -> None:
    doc = read_pdf(io.BytesIO(pdf_bytes(["Annual report"])), recognised={0: "Annual"})
    assert (doc.text, doc.ocr_spans) == ("Annual report", ())


def test_pictures_are_items_and_checked_before_recognition(tmp_path: Path) -> None:
    pil = pytest.importorskip("PIL.Image", reason="the `ocr` extra is not installed")
    for ext in ("png", "jpg", "jpeg", "webp", "tiff", "tif", "bmp"):
        path = tmp_path / f"picture.{ext}"
        assert is_supported(path), ext
        pil.new("RGB", (40, 20), "white").save(path)
        doc = read_document(path)
        assert (doc.text, doc.needs_ocr) == ("", (0,)), ext
    recognised = read_document(tmp_path / "picture.png", recognised={0: " Heron \n"})
    assert (recognised.text, recognised.ocr_spans) == ("Heron", ((0, 5),))
    bad = tmp_path / "bad.png"
    bad.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00" * 40)
    with pytest.raises(ReaderError) as caught:
        read_document(bad)
    assert caught.value.code == ErrorCode.READ_FAILED


def test_agent_hits_say_when_their_text_was_recognised() -> None:
    from app.agent.views import hit_json
    from app.knowledge.types import Base, BaseStatus, ItemType, ScoreKind, SearchResult

    base = Base("b", "Scans", None, None, None, 10, None, 512, 64, BaseStatus.COMPLETED, None, 0, 0)
    scanned = SearchResult(1, 1.0, ScoreKind.RANKING, "i", "/s.pdf", "S", "s.pdf.md", 0, 5, "heron",
                           page=2, ocr=True)  # fmt: skip
    assert hit_json(1, base, scanned, ItemType.FILE)["ocr"] is True
    digital = SearchResult(1, 1.0, ScoreKind.RANKING, "i", "/d.pdf", "D", "d.pdf.md", 0, 5, "heron")
    assert "ocr" not in hit_json(1, base, digital, ItemType.FILE)
