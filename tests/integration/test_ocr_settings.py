"""A base's OCR settings: defaults, checks, changes, the catalog migration and the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import apsw
import pytest

from app.knowledge import db
from app.knowledge.catalog import migrations as catalog_migrations
from app.knowledge.ocr.settings import ocr_installed
from app.knowledge.service import KnowledgeService
from app.knowledge.types import ErrorCode, OcrSettings, TroveError
from tests.integration.test_cli import trove


def test_defaults_checks_and_changes(svc: KnowledgeService) -> None:
    base = svc.create_base("defaults")
    assert base.ocr == OcrSettings(None, ("ch", "en"), 100)
    assert svc.ocr_on(base) is ocr_installed()  # on by default when the extra is installed
    base = svc.update_base(base.id, ocr_enabled=False, ocr_languages=("EN",), ocr_max_pages=7)
    assert (base.ocr, svc.ocr_on(base)) == (OcrSettings(False, ("en",), 7), False)
    assert svc.get_base(base.id).ocr == base.ocr  # stored, not only returned
    for bad in ({"ocr_languages": ("fr",)}, {"ocr_languages": ()}, {"ocr_max_pages": 0}):
        with pytest.raises(TroveError) as caught:
            svc.update_base(base.id, **bad)  # type: ignore[arg-type]
        assert caught.value.code == ErrorCode.INVALID_ARGUMENT
    with pytest.raises(TroveError):
        svc.create_base("bad", ocr_languages=("de",))
    assert [b.name for b in svc.list_bases()] == ["defaults"]


def test_bases_of_an_older_catalog_get_the_default_settings(tmp_path: Path) -> None:
    path = tmp_path / "home" / "trove.sqlite"
    path.parent.mkdir(parents=True)
    conn = apsw.Connection(str(path))
    before = catalog_migrations.MIGRATIONS.index(catalog_migrations._v9)
    db.migrate(conn, catalog_migrations.MIGRATIONS[:before], "catalog")
    conn.execute(
        "INSERT INTO bases (id, name, document_count, chunk_size, chunk_overlap, status, "
        "created_at, updated_at) VALUES ('b1', 'old', 10, 512, 64, 'completed', 0, 0)"
    )
    conn.close()
    service = KnowledgeService(tmp_path / "home")
    try:
        assert service.get_base("b1").ocr == OcrSettings()
    finally:
        service.close()


def test_the_cli_sets_and_shows_ocr_settings(tmp_path: Path) -> None:
    home = tmp_path / "home"
    created = trove(
        home, "base", "create", "Scans", "--ocr", "off", "--ocr-languages", "en",
        "--ocr-max-pages", "5", "--json",
    )  # fmt: skip
    assert created.returncode == 0, created.stderr
    assert json.loads(created.stdout)["ocr"] == {
        "enabled": False,
        "languages": ["en"],
        "maxPages": 5,
    }
    changed = trove(home, "base", "set", "Scans", "--ocr", "on", "--ocr-languages", "ch,en")
    assert changed.returncode == 0, changed.stderr
    assert "OCR on" in changed.stderr and "ch,en" in changed.stderr
    listed = json.loads(trove(home, "base", "list", "--json").stdout)
    assert listed[0]["ocr"] == {"enabled": True, "languages": ["ch", "en"], "maxPages": 5}
    refused = trove(home, "base", "set", "Scans", "--ocr-languages", "klingon")
    assert refused.returncode != 0
    assert "INVALID_ARGUMENT" in refused.stderr and "Traceback" not in refused.stderr
