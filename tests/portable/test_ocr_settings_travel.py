"""A base's text recognition settings travel in its export file; files made before OCR
existed import with the defaults."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from app.knowledge.jobs.reader_pool import InlineExtraction
from app.knowledge.portable.archive import BASE_MEMBER
from app.knowledge.portable.importer import _ocr_settings
from app.knowledge.service import KnowledgeService
from app.knowledge.types import OcrSettings, TroveError


def test_ocr_settings_survive_export_and_import(tmp_path: Path) -> None:
    svc = KnowledgeService(tmp_path / "home", extraction=InlineExtraction())
    try:
        base = svc.create_base("Scans", ocr_enabled=False, ocr_languages=("en",), ocr_max_pages=7)
        svc.add_note(base.id, "Note", "Some words to keep the base from being empty.")
        svc.run_pending_jobs(base.id)
        out = tmp_path / "scans.trovebase"
        svc.export_base(base.id, out)
        with zipfile.ZipFile(out) as zf:
            carried = json.loads(zf.read(BASE_MEMBER))["ocr"]
        assert carried == {"enabled": False, "languages": ["en"], "maxPages": 7}

        imported = svc.import_base(out, name="Scans again").base
        assert svc.get_base(imported.id).ocr == OcrSettings(False, ("en",), 7)
    finally:
        svc.close()


def test_an_export_from_before_ocr_imports_with_the_defaults() -> None:
    assert _ocr_settings(None) == OcrSettings()


@pytest.mark.parametrize(
    "raw",
    [{"enabled": "yes"}, {"languages": ["fr"]}, {"maxPages": 0}, ["en"], {"languages": "en"}],
)
def test_unusable_ocr_settings_in_a_file_are_refused(raw: object) -> None:
    with pytest.raises((ValueError, TroveError)):  # the importer reports both as damaged
        _ocr_settings(raw)
