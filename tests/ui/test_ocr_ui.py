"""OCR in the window: the "OCR" tag on recognised results, "Recognising text n/m pages" on a
document being read, and the OCR settings in the new-base dialog and the settings panel."""

from __future__ import annotations

import dataclasses

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QLineEdit
from pytestqt.modeltest import ModelTester
from pytestqt.qtbot import QtBot

from app.knowledge.types import Base, Item, ItemPhase, ItemStatus, ItemType, ScoreKind, SearchResult
from app.ui.context import UiContext
from app.ui.items.item_model import Column, ItemTreeModel, Role
from app.ui.items.status_delegate import badge_text
from app.ui.search import ResultRole, SearchResultsModel
from app.ui.search.result_delegate import ResultDelegate
from app.ui.settings.new_base_dialog import NewBaseDialog
from app.ui.settings.rag_panel import RagSettingsPanel

SIGNAL_MS = 5000


def _result(rank: int, *, ocr: bool) -> SearchResult:
    return SearchResult(
        rank, 0.5, ScoreKind.RANKING, f"i{rank}", "/scans/a.pdf", "A", "a.pdf.md", 0, 5,
        "heron", page=2, ocr=ocr,
    )  # fmt: skip


def test_recognised_results_carry_an_ocr_tag(qtmodeltester: ModelTester, qtbot: QtBot) -> None:
    model = SearchResultsModel()
    model.set_results([_result(1, ocr=True), _result(2, ocr=False)], "heron")
    qtmodeltester.check(model)
    scanned, digital = model.index(0, 0), model.index(1, 0)
    assert (scanned.data(ResultRole.OCR), digital.data(ResultRole.OCR)) == (True, False)
    delegate = ResultDelegate()
    assert "[OCR]" in delegate.row_html(scanned, "#777777")
    assert "[OCR]" not in delegate.row_html(digital, "#777777")


def _document(**changes: object) -> Item:
    item = Item(
        id="scan", base_id="b", parent_id=None, type=ItemType.FILE, source="/scans/a.pdf",
        title="a", relative_path="a.pdf", status=ItemStatus.PROCESSING,
        phase=ItemPhase.WAITING, progress=25.0, error_code=None, error_message=None,
        chunk_count=0, size=100, content_hash=None, created_at=1.0, updated_at=1.0,
        options={"ocr_pages": 12},
    )  # fmt: skip
    return dataclasses.replace(item, **changes)  # type: ignore[arg-type]


def test_a_document_being_recognised_says_how_many_pages_are_read(
    qtmodeltester: ModelTester,
) -> None:
    model = ItemTreeModel()
    model.apply_items([_document()])
    qtmodeltester.check(model)
    status = model.index_of("scan", Column.STATUS)
    assert model.data(status, Role.OCR_PAGES) == 12
    text = badge_text(ItemStatus.PROCESSING, "waiting", model.data(status, Role.PROGRESS), 12)
    assert text == "Recognising text 3/12 pages"
    model.set_progress("scan", "waiting", 50.0)
    assert badge_text(ItemStatus.PROCESSING, "waiting", 50.0, 12) == "Recognising text 6/12 pages"
    # Done: no page count on a settled item; other waits keep their plain label.
    model.apply_items([_document(status=ItemStatus.COMPLETED, phase=None, progress=None)])
    assert model.data(model.index_of("scan", Column.STATUS), Role.OCR_PAGES) is None
    assert badge_text(ItemStatus.PROCESSING, "waiting", None, None) == "Waiting…"


def test_the_new_base_dialog_sets_ocr(qtbot: QtBot, ui_ctx: UiContext) -> None:
    with qtbot.waitSignal(ui_ctx.tasks.idle, timeout=SIGNAL_MS):
        dialog = NewBaseDialog(ui_ctx)
    qtbot.addWidget(dialog)
    dialog.show()
    form = dialog.form
    form.advanced.set_expanded(True)
    # On by default when the extra is installed; the default is stored as "default".
    assert form.ocr_enabled.isChecked() is ui_ctx.service.ocr_available()
    QTest.keyClicks(dialog.findChild(QLineEdit, "baseName"), "Scans")
    form.ocr_languages["ch"].setChecked(False)
    form.ocr_languages["en"].setChecked(False)
    assert not dialog.create_button.isEnabled()  # a language is needed
    form.ocr_languages["en"].setChecked(True)
    form.ocr_max_pages.setValue(40)
    form.embedding_picker.set_current_model(None)  # full text: no model to probe
    with qtbot.waitSignal(dialog.baseCreated, timeout=SIGNAL_MS) as blocker:
        QTest.mouseClick(dialog.create_button, Qt.MouseButton.LeftButton)
    base = blocker.args[0]
    assert isinstance(base, Base)
    assert (base.ocr.enabled, base.ocr.languages, base.ocr.max_pages) == (None, ("en",), 40)


def test_the_settings_panel_turns_ocr_off_and_leaves_the_default_alone(
    qtbot: QtBot, ui_ctx: UiContext
) -> None:
    svc = ui_ctx.service
    with qtbot.waitSignal(ui_ctx.tasks.idle, timeout=SIGNAL_MS):
        panel = RagSettingsPanel(ui_ctx)
    qtbot.addWidget(panel)
    panel.show()
    base = svc.create_base("Kb")
    panel.set_base(base)
    panel.form.document_count.setValue(20)  # another change: OCR stays "default"
    with qtbot.waitSignal(panel.baseUpdated, timeout=SIGNAL_MS):
        QTest.mouseClick(panel.apply_button, Qt.MouseButton.LeftButton)
    assert svc.get_base(base.id).ocr.enabled is None
    panel.form.advanced.set_expanded(True)
    panel.form.ocr_enabled.setChecked(not svc.ocr_available())
    with qtbot.waitSignal(panel.baseUpdated, timeout=SIGNAL_MS):
        QTest.mouseClick(panel.apply_button, Qt.MouseButton.LeftButton)
    assert svc.get_base(base.id).ocr.enabled is (not svc.ocr_available())
    assert not panel.form.ocr_max_pages.isEnabled() or not svc.get_base(base.id).ocr.enabled


@pytest.mark.parametrize("available", [False])
def test_without_the_extra_the_form_says_it_is_not_installed(
    qtbot: QtBot, ui_ctx: UiContext, monkeypatch: pytest.MonkeyPatch, available: bool
) -> None:
    monkeypatch.setattr(type(ui_ctx.service), "ocr_available", lambda _self: available)
    with qtbot.waitSignal(ui_ctx.tasks.idle, timeout=SIGNAL_MS):
        panel = RagSettingsPanel(ui_ctx)
    qtbot.addWidget(panel)
    panel.set_base(ui_ctx.service.create_base("No OCR"))
    assert not panel.form.ocr_enabled.isChecked()
    assert "not installed" in panel.form.ocr_note.text()
