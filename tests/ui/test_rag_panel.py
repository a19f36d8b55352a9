"""The RAG settings panel and the new-base dialog, driven offscreen against a real service whose
models are fakes: configured providers named "fake" produce ids "fake:<model>" that FakeModels
serves; other providers' ids are listed but fail when used."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDoubleSpinBox,
    QLabel,
    QLineEdit,
    QMessageBox,
    QSlider,
    QWidget,
)
from pytestqt.qtbot import QtBot
from shiboken6 import isValid

from app.knowledge.types import Base, ItemStatus
from app.providers import factory
from app.ui.context import UiContext
from app.ui.settings import model_picker
from app.ui.settings.model_picker import (
    ModelListModel,
    ModelPicker,
    Purpose,
    RowKind,
    model_rows,
)
from app.ui.settings.new_base_dialog import NewBaseDialog
from app.ui.settings.rag_panel import RagSettingsPanel
from tests.fakes import FakeModels

LOCAL_ID = "local:all-MiniLM-L6-v2"
SIGNAL_MS = 5000


# -- helpers ------------------------------------------------------------------------------


@pytest.fixture
def providers(ui_ctx: UiContext) -> UiContext:
    """An OpenAI-compatible "fake" (embeds and reranks), an Ollama server (embeds), a rerank
    service and a disabled one. No key is given, so no keychain is touched."""
    svc = ui_ctx.service
    url = "http://127.0.0.1:9/v1"
    svc.save_provider("fake", "openai", base_url=url, display_name="Fake AI",
                      models=["bow", "rerank"])  # fmt: skip
    svc.save_provider("ollama1", "ollama", base_url=url, models=["nomic"])
    svc.save_provider("rr", "rerank", base_url=url, models=["jina-reranker"])
    svc.save_provider("off", "openai", base_url=url, models=["m1"], enabled=False)
    return ui_ctx


def make_panel(qtbot: QtBot, ctx: UiContext) -> RagSettingsPanel:
    with qtbot.waitSignal(ctx.tasks.idle, timeout=SIGNAL_MS):
        panel = RagSettingsPanel(ctx)
    qtbot.addWidget(panel)
    panel.show()
    return panel


def ids(picker: ModelPicker) -> list[str | None]:
    """Each row as the picker's model id role: "" for None, None for headers."""
    m = picker.list_model
    return [m.data(m.index(r), ModelListModel.MODEL_ID_ROLE) for r in range(m.rowCount())]


def texts(picker: ModelPicker) -> list[str]:
    return [picker.itemText(r) for r in range(picker.count())]


def choose(picker: ModelPicker, model: str | None) -> None:
    """Pick a row the way a person does: the combo's own index, announcing `activated`."""
    row = picker.list_model.row_of(model)
    assert row >= 0, f"{model} is not listed"
    assert picker.list_model.flags(picker.list_model.index(row)) & Qt.ItemFlag.ItemIsEnabled
    picker.setCurrentIndex(row)
    picker.activated.emit(row)


def apply_and_wait(qtbot: QtBot, panel: RagSettingsPanel) -> Base:
    assert panel.apply_button.isEnabled()
    with qtbot.waitSignal(panel.baseUpdated, timeout=SIGNAL_MS) as blocker:
        QTest.mouseClick(panel.apply_button, Qt.MouseButton.LeftButton)
    base = blocker.args[0]
    assert isinstance(base, Base)
    return base


class Questions:
    """Stands in for QMessageBox.exec: records each question and answers it."""

    def __init__(self, accept: bool) -> None:
        self.accept = accept
        self.asked: list[tuple[str, str]] = []

    def __call__(self, box: QMessageBox) -> int:
        self.asked.append((box.windowTitle(), box.text()))
        role = (
            QMessageBox.ButtonRole.AcceptRole if self.accept else QMessageBox.ButtonRole.RejectRole
        )
        button = next(b for b in box.buttons() if box.buttonRole(b) == role)
        button.click()
        return 0


@pytest.fixture
def questions(monkeypatch: pytest.MonkeyPatch) -> Callable[[bool], Questions]:
    def install(accept: bool) -> Questions:
        answer = Questions(accept)
        monkeypatch.setattr(QMessageBox, "exec", lambda box: answer(box))
        return answer

    return install


def base_with_note(qtbot: QtBot, ctx: UiContext, model: str | None) -> Base:
    base = ctx.service.create_base("Notes", embedding_model=model)
    ctx.service.add_note(base.id, "Tea", "green tea grows on hills in the rain")
    drain(qtbot, ctx)
    items = ctx.service.list_items(base.id)
    assert [i.status for i in items] == [ItemStatus.COMPLETED]
    return ctx.service.get_base(base.id)


def spy(monkeypatch: pytest.MonkeyPatch, obj: object, name: str) -> list[tuple[Any, ...]]:
    """Records the arguments of each call to obj.name and lets it run."""
    calls: list[tuple[Any, ...]] = []
    original = getattr(obj, name)

    def wrapper(*args: Any) -> Any:
        calls.append(args)
        return original(*args)

    monkeypatch.setattr(obj, name, wrapper)
    return calls


def label(widget: QWidget, name: str) -> QLabel:
    found = widget.findChild(QLabel, name)
    assert found is not None, name
    return found


def drain(qtbot: QtBot, ctx: UiContext) -> None:
    with qtbot.waitSignal(ctx.executor.drained, timeout=SIGNAL_MS):
        ctx.executor.schedule()


def completed(ctx: UiContext, base_id: str) -> bool:
    return all(i.status is ItemStatus.COMPLETED for i in ctx.service.list_items(base_id))


# -- model rows -----------------------------------------------------------------------------


def test_provider_kinds_match_the_engine() -> None:
    # Widgets may not import app.providers, so the picker keeps its own copy of these sets.
    assert model_picker.EMBEDDING_KINDS == factory.EMBEDDING_KINDS
    assert model_picker.RERANK_KINDS == factory.RERANK_KINDS
    assert factory.builtin_local_settings().kind == model_picker.BUILTIN_KIND


def test_rows_group_models_by_provider_and_purpose() -> None:
    settings = [
        factory.ProviderSettings("a", "openai", models=["e1", "e2", "e1"]),
        factory.ProviderSettings("b", "ollama", models=[]),
        factory.ProviderSettings("c", "rerank", models=["r1"]),
        factory.builtin_local_settings(),
    ]
    embedding = [(r.kind, r.model_id) for r in model_rows(settings, Purpose.EMBEDDING)]
    assert embedding == [
        (RowKind.NONE, ""),
        (RowKind.HEADER, ""),
        (RowKind.MODEL, "a:e1"),
        (RowKind.MODEL, "a:e2"),
        (RowKind.HEADER, ""),
        (RowKind.EMPTY, ""),
        (RowKind.HEADER, ""),
        (RowKind.MODEL, LOCAL_ID),
    ]
    rerank = [(r.kind, r.model_id) for r in model_rows(settings, Purpose.RERANK)]
    assert rerank == [
        (RowKind.NONE, ""),
        (RowKind.HEADER, ""),
        (RowKind.MODEL, "a:e1"),
        (RowKind.MODEL, "a:e2"),
        (RowKind.HEADER, ""),
        (RowKind.MODEL, "c:r1"),
    ]


def test_list_model_passes_the_model_tester(qtmodeltester: Any, providers: UiContext) -> None:
    model = ModelListModel(Purpose.EMBEDDING)
    qtmodeltester.check(model)
    model.set_rows(model_rows(providers.service.list_providers(), Purpose.EMBEDDING))
    qtmodeltester.check(model)
    assert model.rowCount() > 5


# -- pickers in the panel -------------------------------------------------------------------


def test_pickers_list_configured_models_grouped_by_provider(
    qtbot: QtBot, providers: UiContext
) -> None:
    panel = make_panel(qtbot, providers)
    embedding = panel.form.embedding_picker
    assert embedding.objectName() == "embeddingModel"
    assert panel.findChild(ModelPicker, "embeddingModel") is embedding
    # Enabled providers, the local models (the built-in one, then the catalog's to
    # download), then disabled providers (listed, not choosable).
    assert ids(embedding) == [
        "",
        None, "fake:bow", "fake:rerank",
        None, "ollama1:nomic",
        None, LOCAL_ID, "local:multilingual-e5-small", "local:bge-m3",
        "local:bge-small-zh-v1.5",
        None, "off:m1",
    ]  # fmt: skip
    assert texts(embedding) == [
        "None (full-text search only)",
        "Fake AI", "bow", "rerank",
        "ollama1", "nomic",
        "On this computer (offline)", "all-MiniLM-L6-v2",
        "multilingual-e5-small — download 135 MB", "bge-m3 — download 586 MB",
        "bge-small-zh-v1.5 — download 25 MB",
        "off (disabled)", "m1",
    ]  # fmt: skip
    m = embedding.list_model
    enabled = [bool(m.flags(m.index(r)) & Qt.ItemFlag.ItemIsEnabled) for r in range(m.rowCount())]
    assert enabled == [
        True, False, True, True, False, True, False, True, True, True, True, False, False
    ]  # fmt: skip
    assert embedding.available_models() == ["fake:bow", "fake:rerank", "ollama1:nomic", LOCAL_ID]

    rerank = panel.form.rerank_picker
    assert rerank.objectName() == "rerankModel"
    # Only providers that rerank, and the local rerank models (the built-in model only
    # embeds).
    assert ids(rerank) == [
        "",
        None,
        "fake:bow",
        "fake:rerank",
        None,
        "rr:jina-reranker",
        None,
        "local:bge-reranker-v2-m3",
        "local:jina-reranker-v2-base-multilingual",
        None,
        "off:m1",
    ]
    assert texts(rerank)[0] == "None"


def test_keyboard_skips_group_headers(qtbot: QtBot, providers: UiContext) -> None:
    panel = make_panel(qtbot, providers)
    panel.set_base(providers.service.create_base("Plain"))
    picker = panel.form.embedding_picker
    picker.setFocus()
    QTest.keyClick(picker, Qt.Key.Key_Down)
    assert picker.current_model() == "fake:bow"  # the "Fake AI" header was stepped over
    assert picker.chosen_text() == "bow — Fake AI"


def test_reload_models_shows_new_providers_and_keeps_the_choice(
    qtbot: QtBot, providers: UiContext
) -> None:
    panel = make_panel(qtbot, providers)
    panel.set_base(providers.service.create_base("Kb", embedding_model="fake:bow"))
    providers.service.save_provider(
        "fake2", "ollama", base_url="http://127.0.0.1:9", models=["more"]
    )
    assert "fake2:more" not in ids(panel.form.embedding_picker)
    with qtbot.waitSignal(panel.modelsLoaded, timeout=SIGNAL_MS):
        panel.reload_models()
    assert "fake2:more" in ids(panel.form.embedding_picker)
    assert panel.form.embedding_picker.current_model() == "fake:bow"
    assert not panel.is_dirty()


def test_a_model_no_provider_lists_is_shown_apart(qtbot: QtBot, ui_ctx: UiContext) -> None:
    panel = make_panel(qtbot, ui_ctx)  # no providers configured
    panel.set_base(ui_ctx.service.create_base("Kb", embedding_model="fake:bow"))
    picker = panel.form.embedding_picker
    assert picker.current_model() == "fake:bow"
    assert texts(picker)[-2:] == ["Not configured", "fake:bow"]
    assert not panel.is_dirty()
    assert not panel.apply_button.isEnabled()


# -- the panel --------------------------------------------------------------------------------


def test_no_base_disables_the_panel(qtbot: QtBot, ui_ctx: UiContext) -> None:
    panel = make_panel(qtbot, ui_ctx)
    assert panel.objectName() == "ragSettings"
    assert not panel.form.isEnabled()
    assert not panel.apply_button.isEnabled()
    assert not panel.revert_button.isEnabled()
    panel.set_base(ui_ctx.service.create_base("Kb"))
    assert panel.form.isEnabled()
    assert not panel.apply_button.isEnabled()  # nothing changed yet


def test_threshold_shows_only_while_a_rerank_model_is_chosen(
    qtbot: QtBot, providers: UiContext
) -> None:
    panel = make_panel(qtbot, providers)
    panel.set_base(providers.service.create_base("Kb"))
    threshold = panel.findChild(QDoubleSpinBox, "threshold")
    assert threshold is not None and threshold is panel.form.threshold
    assert threshold.isHidden() and not threshold.isVisible()
    assert panel.form.threshold_enabled.isHidden()

    rerank = panel.form.rerank_picker
    rerank.setFocus()
    QTest.keyClick(rerank, Qt.Key.Key_Down)
    assert rerank.current_model() == "fake:bow"
    assert threshold.isVisible() and panel.form.threshold_enabled.isVisible()

    QTest.keyClick(rerank, Qt.Key.Key_Up)
    assert rerank.current_model() is None
    assert threshold.isHidden()

    # A base that already reranks shows it straight away.
    panel.set_base(providers.service.create_base("R", rerank_model="fake:rerank", threshold=0.4))
    assert threshold.isVisible()
    assert panel.form.threshold_enabled.isChecked()
    assert threshold.value() == pytest.approx(0.4)


def test_no_search_mode_selector_and_no_alpha(qtbot: QtBot, ui_ctx: UiContext) -> None:
    panel = make_panel(qtbot, ui_ctx)
    # The mode follows from the embedding model; fusion has no weight to set.
    combos = {c.objectName() for c in panel.findChildren(QComboBox)}
    # (and the embedding model's languages, a setting of the model, not of the search)
    assert combos == {"embeddingModel", "rerankModel", "languageOverride"}
    assert panel.findChildren(QSlider) == []
    hint = label(panel, "searchMode")
    assert "full-text" in hint.text()


def test_apply_saves_the_settings(qtbot: QtBot, providers: UiContext) -> None:
    svc = providers.service
    panel = make_panel(qtbot, providers)
    base = svc.create_base("Kb", embedding_model="fake:bow")
    panel.set_base(base)
    assert not panel.apply_button.isEnabled()

    form = panel.form
    form.document_count.setValue(25)
    assert panel.apply_button.isEnabled() and panel.revert_button.isEnabled()
    choose(form.rerank_picker, "fake:rerank")
    form.threshold_enabled.setChecked(True)
    form.threshold.setValue(0.7)
    form.advanced.set_expanded(True)
    form.chunk_size.setValue(256)
    form.chunk_overlap.setValue(32)

    saved = apply_and_wait(qtbot, panel)

    stored = svc.get_base(base.id)
    assert saved == stored
    assert (stored.document_count, stored.rerank_model, stored.threshold) == (
        25,
        "fake:rerank",
        0.7,
    )
    assert (stored.chunk_size, stored.chunk_overlap) == (256, 32)
    assert stored.embedding_model == "fake:bow"
    assert not panel.apply_button.isEnabled()  # saved: nothing left to apply
    assert not panel.error_label.isVisible()

    # Switching the threshold off stores None.
    form.threshold_enabled.setChecked(False)
    apply_and_wait(qtbot, panel)
    assert svc.get_base(base.id).threshold is None


def test_selecting_the_same_base_again_keeps_edits(qtbot: QtBot, ui_ctx: UiContext) -> None:
    panel = make_panel(qtbot, ui_ctx)
    base = ui_ctx.service.create_base("Kb")
    panel.set_base(base)
    panel.form.document_count.setValue(50)
    panel.set_base(ui_ctx.service.get_base(base.id))  # e.g. the base list reloaded
    assert panel.form.document_count.value() == 50 and panel.is_dirty()
    other = ui_ctx.service.create_base("Other")
    panel.set_base(other)
    assert panel.form.document_count.value() == other.document_count
    assert not panel.is_dirty()


def test_revert_restores_the_saved_values(qtbot: QtBot, ui_ctx: UiContext) -> None:
    panel = make_panel(qtbot, ui_ctx)
    panel.set_base(ui_ctx.service.create_base("Kb", document_count=7))
    panel.form.document_count.setValue(50)
    assert panel.is_dirty()
    QTest.mouseClick(panel.revert_button, Qt.MouseButton.LeftButton)
    assert panel.form.document_count.value() == 7
    assert not panel.is_dirty() and not panel.apply_button.isEnabled()


def test_overlap_must_be_smaller_than_the_chunk_size(qtbot: QtBot, ui_ctx: UiContext) -> None:
    panel = make_panel(qtbot, ui_ctx)
    panel.set_base(ui_ctx.service.create_base("Kb"))
    form = panel.form
    error = label(panel, "chunkError")
    assert not error.isVisible()
    assert not form.advanced.is_expanded()

    form.chunk_size.setValue(100)
    form.chunk_overlap.setValue(100)

    assert form.advanced.is_expanded()  # the error never hides behind the fold
    assert error.isVisible()
    assert error.text() == "The overlap must be smaller than the chunk size."
    assert not panel.apply_button.isEnabled()
    assert label(panel, "chunkNote").isVisible()

    form.chunk_overlap.setValue(99)
    assert not error.isVisible()
    assert panel.apply_button.isEnabled()


def test_a_refused_setting_is_shown_inline(qtbot: QtBot, providers: UiContext) -> None:
    svc = providers.service
    panel = make_panel(qtbot, providers)
    base = svc.create_base("Kb")
    panel.set_base(base)
    choose(panel.form.rerank_picker, "rr:jina-reranker")  # listed, but FakeModels refuses it
    with qtbot.waitSignal(panel.busyChanged, check_params_cb=lambda busy: not busy):
        QTest.mouseClick(panel.apply_button, Qt.MouseButton.LeftButton)

    assert panel.error_label.isVisible()
    assert "The model is not available" in panel.error_label.text()
    assert svc.get_base(base.id).rerank_model is None
    assert panel.apply_button.isEnabled()  # the edit is kept for another try


def test_changing_the_model_of_a_base_with_items_asks_and_restores(
    qtbot: QtBot,
    providers: UiContext,
    questions: Callable[[bool], Questions],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    svc = providers.service
    base = base_with_note(qtbot, providers, "fake:bow")
    panel = make_panel(qtbot, providers)
    panel.set_base(base)
    calls = spy(monkeypatch, svc, "restore_base")

    # Declined: nothing is saved and the choice stays for another try.
    declined = questions(False)
    choose(panel.form.embedding_picker, "fake:rerank")
    QTest.mouseClick(panel.apply_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: len(declined.asked) == 1 and not panel.is_busy())
    assert calls == []
    assert svc.get_base(base.id).embedding_model == "fake:bow"
    assert panel.apply_button.isEnabled()

    accepted = questions(True)
    with qtbot.waitSignal(providers.executor.drained, timeout=SIGNAL_MS):
        saved = apply_and_wait(qtbot, panel)
    title, text = accepted.asked[0]
    assert title == "Change the embedding model"
    assert "1 item" in text and "rerank — Fake AI" in text
    assert calls == [(base.id, "fake:rerank")]
    assert saved.embedding_model == "fake:rerank" and saved.dimensions == 16
    assert completed(providers, base.id)  # re-indexed through the runtime
    assert not panel.is_dirty()


def test_removing_the_model_restores_for_full_text_only(
    qtbot: QtBot, providers: UiContext, questions: Callable[[bool], Questions]
) -> None:
    svc = providers.service
    base = base_with_note(qtbot, providers, "fake:bow")
    panel = make_panel(qtbot, providers)
    panel.set_base(base)
    answer = questions(True)
    choose(panel.form.embedding_picker, None)
    with qtbot.waitSignal(providers.executor.drained, timeout=SIGNAL_MS):
        saved = apply_and_wait(qtbot, panel)
    assert "full-text search only" in answer.asked[0][1]
    assert saved.embedding_model is None and saved.dimensions is None
    assert completed(providers, base.id)
    assert svc.search(base.id, "tea").mode == "bm25"


def test_a_full_text_base_is_offered_a_backfill(
    qtbot: QtBot,
    providers: UiContext,
    questions: Callable[[bool], Questions],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    svc = providers.service
    base = base_with_note(qtbot, providers, None)
    panel = make_panel(qtbot, providers)
    panel.set_base(base)
    calls = spy(monkeypatch, svc, "enable_embedding")
    answer = questions(True)
    choose(panel.form.embedding_picker, "fake:bow")
    with qtbot.waitSignal(providers.executor.drained, timeout=SIGNAL_MS):
        saved = apply_and_wait(qtbot, panel)
    assert answer.asked[0][0] == "Add an embedding model"
    assert calls == [(base.id, "fake:bow")]
    assert saved.embedding_model == "fake:bow" and saved.has_vectors
    assert completed(providers, base.id)
    assert svc.search(base.id, "tea").mode == "hybrid"
    assert [n.title for n in providers.notifier.history] == ["Rebuilding “Notes”"]


def test_an_empty_base_switches_model_without_asking(
    qtbot: QtBot, providers: UiContext, questions: Callable[[bool], Questions]
) -> None:
    svc = providers.service
    panel = make_panel(qtbot, providers)
    base = svc.create_base("Empty")
    panel.set_base(base)
    answer = questions(False)
    choose(panel.form.embedding_picker, "fake:bow")
    saved = apply_and_wait(qtbot, panel)
    assert answer.asked == []
    assert saved.embedding_model == "fake:bow" and saved.dimensions == 16


def test_a_failed_model_change_keeps_the_saved_settings_and_the_choice(
    qtbot: QtBot, providers: UiContext
) -> None:
    svc = providers.service
    panel = make_panel(qtbot, providers)
    base = svc.create_base("Empty")
    panel.set_base(base)
    panel.form.document_count.setValue(33)
    choose(panel.form.embedding_picker, "ollama1:nomic")  # FakeModels refuses it
    saved = apply_and_wait(qtbot, panel)
    assert saved.document_count == 33 and saved.embedding_model is None
    assert panel.error_label.isVisible()
    assert "The model is not available" in panel.error_label.text()
    assert panel.form.embedding_picker.current_model() == "ollama1:nomic"
    assert panel.form.document_count.value() == 33
    assert panel.apply_button.isEnabled()


# -- the new-base dialog ------------------------------------------------------------------------


@pytest.fixture
def dialog(qtbot: QtBot, providers: UiContext) -> Iterator[NewBaseDialog]:
    with qtbot.waitSignal(providers.tasks.idle, timeout=SIGNAL_MS):
        dlg = NewBaseDialog(providers)
    qtbot.addWidget(dlg)
    dlg.show()
    yield dlg


def test_new_base_dialog_creates_a_base(
    qtbot: QtBot, providers: UiContext, dialog: NewBaseDialog
) -> None:
    assert dialog.objectName() == "newBaseDialog"
    assert not dialog.create_button.isEnabled()  # no name yet
    # The first configured embedding model is preselected.
    assert dialog.form.embedding_picker.current_model() == "fake:bow"
    name = dialog.findChild(QLineEdit, "baseName")
    assert name is not None
    QTest.keyClicks(name, "Papers")
    choose(dialog.form.rerank_picker, "fake:rerank")
    dialog.form.document_count.setValue(12)

    # Hold the probe so the busy state can be seen.
    models = providers.service.parts.models
    assert isinstance(models, FakeModels)
    release = threading.Event()

    def hold(_texts: Sequence[str]) -> None:
        release.wait(SIGNAL_MS / 1000)

    models.embedder_instance.before_embed = hold
    QTest.mouseClick(dialog.create_button, Qt.MouseButton.LeftButton)
    assert dialog.is_busy()
    assert dialog.progress.isVisible() and not dialog.create_button.isEnabled()
    assert not dialog.form.isEnabled()
    with qtbot.waitSignal(dialog.baseCreated, timeout=SIGNAL_MS) as blocker:
        release.set()

    base = blocker.args[0]
    assert dialog.created_base == base
    assert dialog.result() == QDialog.DialogCode.Accepted and not dialog.isVisible()
    stored = providers.service.get_base(base.id)
    assert (stored.name, stored.embedding_model, stored.dimensions) == ("Papers", "fake:bow", 16)
    assert (stored.rerank_model, stored.document_count) == ("fake:rerank", 12)


def test_new_base_dialog_keeps_open_with_the_error(
    qtbot: QtBot, providers: UiContext, dialog: NewBaseDialog
) -> None:
    dialog.name_edit.setText("Papers")
    choose(dialog.form.embedding_picker, "ollama1:nomic")  # FakeModels refuses it
    with qtbot.waitSignal(dialog.busyChanged, check_params_cb=lambda busy: not busy):
        QTest.mouseClick(dialog.create_button, Qt.MouseButton.LeftButton)
    assert dialog.isVisible() and dialog.created_base is None
    assert dialog.error_label.isVisible()
    assert "The model is not available" in dialog.error_label.text()
    assert providers.service.list_bases() == []
    assert dialog.form.isEnabled() and dialog.create_button.isEnabled()

    choose(dialog.form.embedding_picker, None)
    with qtbot.waitSignal(dialog.baseCreated, timeout=SIGNAL_MS):
        QTest.mouseClick(dialog.create_button, Qt.MouseButton.LeftButton)
    assert dialog.created_base is not None and dialog.created_base.embedding_model is None


def test_new_base_dialog_validates_chunking(qtbot: QtBot, dialog: NewBaseDialog) -> None:
    dialog.name_edit.setText("Papers")
    assert dialog.create_button.isEnabled()
    dialog.form.chunk_overlap.setValue(dialog.form.chunk_size.value())
    assert not dialog.create_button.isEnabled()
    assert dialog.form.chunk_error.isVisible()


def test_new_base_dialog_remembers_the_last_model(
    qtbot: QtBot, providers: UiContext, dialog: NewBaseDialog
) -> None:
    dialog.name_edit.setText("First")
    choose(dialog.form.embedding_picker, "fake:rerank")
    with qtbot.waitSignal(dialog.baseCreated, timeout=SIGNAL_MS):
        dialog.accept()
    with qtbot.waitSignal(providers.tasks.idle, timeout=SIGNAL_MS):
        second = NewBaseDialog(providers)
    qtbot.addWidget(second)
    assert second.form.embedding_picker.current_model() == "fake:rerank"


def test_closing_the_dialog_while_creating_still_reports_the_base(
    qtbot: QtBot, providers: UiContext
) -> None:
    with qtbot.waitSignal(providers.tasks.idle, timeout=SIGNAL_MS):
        dlg = NewBaseDialog(providers)
    dlg.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)  # as the main window opens it
    dlg.show()
    dlg.name_edit.setText("Later")
    models = providers.service.parts.models
    assert isinstance(models, FakeModels)
    release = threading.Event()

    def hold(_texts: Sequence[str]) -> None:
        release.wait(SIGNAL_MS / 1000)

    models.embedder_instance.before_embed = hold
    dlg.accept()
    assert dlg.is_busy()
    dlg.reject()
    assert not dlg.isVisible() and isValid(dlg)  # kept until the creation returns
    with qtbot.waitSignal(dlg.baseCreated, timeout=SIGNAL_MS):
        release.set()
    assert [n.title for n in providers.notifier.history] == ["Knowledge base “Later” created"]
    qtbot.waitUntil(lambda: not isValid(dlg))
    assert [b.name for b in providers.service.list_bases()] == ["Later"]
