"""A multi-page TIFF is read page by page up to the base's OCR page limit (issue 30): each
frame's words are found on their own page, recognised, with exact offsets; the frames past
the limit are not read. Before, only the first frame was (a 300-page TIFF gave one chunk).
Skips without the `ocr` extra."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from app.knowledge.jobs.reader_pool import InlineExtraction
from app.knowledge.service import KnowledgeService
from app.knowledge.types import ItemStatus
from tests.fakes import FakeModels
from tests.ocr_samples import Line, page_image, require_ocr

SMALL = (900, 260)  # a strip of a page: recognised in about a second
PAGES = ["Heron colony census", "Egret nests counted", "Cormorant roost survey"]
LIMIT = 2


@pytest.fixture
def svc(tmp_path: Path) -> Iterator[KnowledgeService]:
    service = KnowledgeService(
        tmp_path / "home", models=FakeModels(), extraction=InlineExtraction()
    )
    yield service
    service.close()


def test_every_frame_up_to_the_page_limit_is_read(svc: KnowledgeService, tmp_path: Path) -> None:
    require_ocr()
    first, *rest = [page_image([Line(words)], size=SMALL) for words in PAGES]
    fax = tmp_path / "fax.tif"
    first.save(fax, "TIFF", save_all=True, append_images=rest, compression="tiff_lzw")
    base = svc.create_base("faxes", chunk_size=24, chunk_overlap=0, ocr_max_pages=LIMIT)
    svc.add(base.id, [fax])
    svc.run_pending_jobs(base.id)
    [item] = svc.list_items(base.id)
    assert item.status is ItemStatus.COMPLETED, (item.error_code, item.error_message)
    material = ""
    for page, word in ((1, "heron"), (2, "egret")):
        results = svc.search(base.id, word).results
        assert results, f"nothing found for {word!r}"
        top = results[0]
        assert word in top.text.lower(), (word, top.text)
        assert (top.page, top.ocr) == (page, True), word
        material = (svc.layout.raw_dir(base.id) / top.concept_id).read_text(encoding="utf-8")
        assert material[top.char_start : top.char_end] == top.text
    # The third frame is past the base's limit of two pages.
    assert "egret" in material.lower() and "cormorant" not in material.lower()
    assert svc.search(base.id, "cormorant").results == []
    assert svc.doctor(base.id).clean
