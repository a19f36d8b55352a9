"""The model pickers list local models: installed ones beside the built-in one and the
providers' models, catalog models not installed yet with their size; picking one of those
offers the download (progress and cancel under the picker) and chooses it once installed,
and cancelling leaves the previous choice. The engine side: the local provider lists and
tests installed models like other models."""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from app.knowledge.service import ModelListing
from app.ui import i18n
from app.ui.context import UiContext
from app.ui.settings.model_picker import ModelListModel, ModelPicker, Purpose, model_rows
from app.ui.settings.new_base_dialog import NewBaseDialog
from app.ui.settings.rag_panel import RagSettingsPanel
from tests.ui import test_models_dialog as shared
from tests.ui.test_models_dialog import BIG, MODEL_PATH, Hub, chinese_leftovers, end_stall

# The dialog's fixtures: a loopback hub serving the test catalog, and a real engine.
hub = shared.hub
models_ctx = shared.models_ctx

BUILTIN = "local:all-MiniLM-L6-v2"


def ids(picker: ModelPicker) -> list[str | None]:
    m = picker.list_model
    return [m.data(m.index(r), ModelListModel.MODEL_ID_ROLE) for r in range(m.rowCount())]


def texts(picker: ModelPicker) -> list[str]:
    return [picker.itemText(r) for r in range(picker.count())]


def choose(picker: ModelPicker, model: str) -> None:
    """Pick a row the way a person does: the combo's own index, announcing `activated`."""
    row = picker.list_model.row_of(model)
    assert row >= 0, f"{model} is not listed"
    picker.setCurrentIndex(row)
    picker.activated.emit(row)


def new_base_dialog(qtbot: QtBot, ctx: UiContext) -> NewBaseDialog:
    dialog = NewBaseDialog(ctx)
    qtbot.addWidget(dialog)
    with qtbot.waitSignal(dialog.modelsLoaded, timeout=10_000):
        dialog.show()
    return dialog


# -- listing --------------------------------------------------------------------------------------


def test_installed_models_and_downloads_are_listed_by_purpose(
    qtbot: QtBot, models_ctx: UiContext, qtmodeltester: Any
) -> None:
    service = models_ctx.service
    service.download_model("tiny-embed")
    service.download_model("tiny-rerank")
    dialog = new_base_dialog(qtbot, models_ctx)
    embedding = dialog.form.embedding_picker
    assert ids(embedding) == ["", None, BUILTIN, "local:tiny-embed", f"local:{BIG}"]
    assert texts(embedding) == [
        "None (full-text search only)",
        "On this computer (offline)",
        "all-MiniLM-L6-v2",
        "tiny-embed",
        "big-embed — download 3 MB",
    ]
    # A model to download is never a default.
    assert embedding.available_models() == [BUILTIN, "local:tiny-embed"]
    assert embedding.label_of("local:tiny-embed") == "tiny-embed (on this computer)"
    assert embedding.label_of(BUILTIN) == "Built-in offline model"
    tooltip = embedding.list_model.index(4).data(Qt.ItemDataRole.ToolTipRole)
    assert tooltip == "Not on this computer yet: choosing it offers to download it."

    rerank = dialog.form.rerank_picker
    assert ids(rerank) == ["", None, "local:tiny-rerank"]
    assert rerank.available_models() == ["local:tiny-rerank"]
    qtmodeltester.check(rerank.list_model)
    qtmodeltester.check(embedding.list_model)


def test_rows_without_local_listings_keep_the_providers_shape(models_ctx: UiContext) -> None:
    providers = models_ctx.service.list_providers()
    listings: list[ModelListing] = models_ctx.service.list_models()
    plain = [r.model_id for r in model_rows(providers, Purpose.EMBEDDING)]
    assert plain == ["", "", BUILTIN]
    local = [r.model_id for r in model_rows(providers, Purpose.EMBEDDING, listings)]
    assert local == ["", "", BUILTIN, "local:tiny-embed", f"local:{BIG}"]
    assert [r.model_id for r in model_rows(providers, Purpose.RERANK, listings)] == [
        "",
        "",
        "local:tiny-rerank",
    ]


# -- picking a model to download -----------------------------------------------------------------


def test_picking_a_catalog_model_downloads_it_and_chooses_it(
    qtbot: QtBot, models_ctx: UiContext
) -> None:
    dialog = new_base_dialog(qtbot, models_ctx)
    picker = dialog.form.embedding_picker
    before = picker.current_model()
    asked: list[str] = []
    dialog.form.confirm_download = lambda listing: asked.append(listing.id) or True
    with qtbot.waitSignal(models_ctx.downloads.finished, timeout=30_000):
        choose(picker, "local:tiny-embed")
        assert picker.current_model() == before  # nothing chosen until it is installed
        assert dialog.form.strips[Purpose.EMBEDDING].model() == "tiny-embed"
    assert asked == ["tiny-embed"]
    qtbot.waitUntil(lambda: picker.current_model() == "local:tiny-embed", timeout=10_000)
    assert texts(picker)[3] == "tiny-embed"
    assert not dialog.form.strips[Purpose.EMBEDDING].isVisible()

    # The base is created with it, as with any model.
    dialog.name_edit.setText("Garden")
    with qtbot.waitSignal(dialog.baseCreated, timeout=30_000) as created:
        QTest.mouseClick(dialog.create_button, Qt.MouseButton.LeftButton)
    assert created.args[0].embedding_model == "local:tiny-embed"


def test_a_rerank_model_picked_in_the_settings_panel_downloads_and_is_chosen(
    qtbot: QtBot, models_ctx: UiContext
) -> None:
    base = models_ctx.service.create_base("Plain")
    panel = RagSettingsPanel(models_ctx)
    qtbot.addWidget(panel)
    with qtbot.waitSignal(panel.modelsLoaded, timeout=10_000):
        panel.show()
    panel.set_base(base)
    panel.form.confirm_download = lambda listing: True
    picker = panel.form.rerank_picker
    with qtbot.waitSignal(models_ctx.downloads.finished, timeout=30_000):
        choose(picker, "local:tiny-rerank")
    qtbot.waitUntil(lambda: picker.current_model() == "local:tiny-rerank", timeout=10_000)
    assert panel.is_dirty() and panel.apply_button.isEnabled()


def test_a_model_chosen_meanwhile_is_not_undone_when_the_download_ends(
    qtbot: QtBot, models_ctx: UiContext
) -> None:
    dialog = new_base_dialog(qtbot, models_ctx)
    picker = dialog.form.embedding_picker
    dialog.form.confirm_download = lambda listing: True
    with qtbot.waitSignal(models_ctx.downloads.finished, timeout=30_000):
        choose(picker, "local:tiny-embed")
        choose(picker, "")  # the person settles on full-text search before it ends
    qtbot.waitUntil(lambda: models_ctx.tasks.pending == 0, timeout=10_000)
    assert picker.is_installed("local:tiny-embed")
    assert picker.current_model() is None


def test_declining_or_cancelling_the_download_keeps_the_previous_choice(
    qtbot: QtBot, models_ctx: UiContext, hub: Hub
) -> None:
    dialog = new_base_dialog(qtbot, models_ctx)
    picker = dialog.form.embedding_picker
    picker.set_current_model(BUILTIN)
    changes: list[object] = []
    picker.modelChanged.connect(changes.append)

    dialog.form.confirm_download = lambda listing: False
    choose(picker, f"local:{BIG}")
    assert picker.current_model() == BUILTIN and not models_ctx.downloads.is_active()

    dialog.form.confirm_download = lambda listing: True
    hub.server.stall(hub.repo(BIG), MODEL_PATH, after=400_000)
    choose(picker, f"local:{BIG}")
    strip = dialog.form.strips[Purpose.EMBEDDING]
    qtbot.waitUntil(lambda: "400 KB of 3 MB" in strip.label.text(), timeout=10_000)
    assert strip.isVisible() and strip.bar.value() > 0
    QTest.mouseClick(strip.cancel_button, Qt.MouseButton.LeftButton)
    with qtbot.waitSignal(models_ctx.downloads.cancelled, timeout=30_000):
        end_stall(hub).__exit__(None, None, None)
    qtbot.waitUntil(lambda: not strip.isVisible())
    assert picker.current_model() == BUILTIN and changes == []
    qtbot.waitUntil(lambda: models_ctx.tasks.pending == 0)
    assert picker.current_model() == BUILTIN  # the reload after the cancel chose nothing


def test_picker_entries_read_in_chinese(
    qapp: QApplication, qtbot: QtBot, models_ctx: UiContext
) -> None:
    translators = i18n.install_translators(qapp, "zh_CN")
    try:
        models_ctx.service.download_model("tiny-rerank")
        dialog = new_base_dialog(qtbot, models_ctx)
        names = [m.id for m in models_ctx.service.list_models()]
        shown = [
            text
            for picker in (dialog.form.embedding_picker, dialog.form.rerank_picker)
            for row in range(picker.count())
            for text in (
                picker.itemText(row),
                str(picker.list_model.index(row).data(Qt.ItemDataRole.ToolTipRole) or ""),
            )
        ]
        assert "big-embed — 下载 3 MB" in shown
        assert chinese_leftovers(shown, [*names, "local:"]) == []
    finally:
        i18n.remove_translators(qapp, translators)


# -- the engine: the local provider lists and tests installed models ------------------------------


def test_the_local_provider_lists_and_tests_installed_models(models_ctx: UiContext) -> None:
    service = models_ctx.service
    assert service.provider_models("local") == ["all-MiniLM-L6-v2"]
    service.download_model("tiny-embed")
    service.download_model("tiny-rerank")
    assert service.provider_models("local") == ["all-MiniLM-L6-v2", "tiny-embed", "tiny-rerank"]
    assert "works offline" in service.check_provider("local", "tiny-embed")
    assert "reranker" in service.check_provider("local", "tiny-rerank")
    with pytest.raises(Exception, match="no model 'nothing-here' is installed"):
        service.check_provider("local", "nothing-here")
