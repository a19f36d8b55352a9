"""A base's settings show which languages its embedding model covers and where Trove knows
it from (the model's manifest, Trove's table, the person's word, or nothing), and
"This model covers: …" sets or clears the override the engine's fusion reads."""

from __future__ import annotations

from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from app.knowledge.types import LanguageSource
from app.ui import i18n
from app.ui.context import UiContext
from app.ui.models.languages import ModelLanguagesRow
from app.ui.settings.rag_panel import RagSettingsPanel
from tests.ui import test_models_dialog as shared
from tests.ui.test_i18n import english_words
from tests.ui.test_models_dialog import open_dialog

# The dialog's fixtures: a loopback hub serving the test catalog, and a real engine.
hub = shared.hub
models_ctx = shared.models_ctx
MODEL = "local:tiny-embed"


def settings_panel(qtbot: QtBot, ctx: UiContext, model: str | None) -> RagSettingsPanel:
    base = ctx.service.create_base("Garden", embedding_model=model)
    panel = RagSettingsPanel(ctx)
    qtbot.addWidget(panel)
    with qtbot.waitSignal(panel.modelsLoaded, timeout=10_000):
        panel.show()
    panel.set_base(base)
    return panel


def shown(qtbot: QtBot, row: ModelLanguagesRow) -> str:
    qtbot.waitUntil(lambda: row.current is not None, timeout=10_000)
    return row.summary.text()


def choose(qtbot: QtBot, row: ModelLanguagesRow, label: str) -> None:
    index = row.choice.findText(label)
    assert index >= 0, label
    with qtbot.waitSignal(row.languagesShown, timeout=10_000):
        row.choice.setCurrentIndex(index)
        row.choice.activated.emit(index)


def test_the_settings_show_the_models_languages_and_their_source(
    qtbot: QtBot, models_ctx: UiContext
) -> None:
    models_ctx.service.download_model("tiny-embed")
    panel = settings_panel(qtbot, models_ctx, MODEL)
    row = panel.form.languages
    assert row is not None and row.isVisible()
    assert shown(qtbot, row) == "English (from the model's manifest)"
    assert row.choice.currentText() == "Not set: use what Trove knows"
    assert row.hint.text() == (
        "Chinese, Japanese and Korean searches use this model's vectors only if it covers "
        "those languages."
    )
    # Without an embedding model there is nothing to say.
    panel.form.embedding_picker.set_current_model(None)
    assert not row.isVisible()


def test_the_source_follows_what_trove_knows_of_any_model(
    qtbot: QtBot, models_ctx: UiContext
) -> None:
    row = ModelLanguagesRow(models_ctx)
    qtbot.addWidget(row)
    row.set_model("siliconflow:BAAI/bge-m3")
    assert shown(qtbot, row) == "Many languages (from Trove's table of known models)"
    row.set_model("openai:our-own-embedder")
    assert shown(qtbot, row) == "Not known (from nothing Trove knows)"
    assert row.current is not None and row.current.source is LanguageSource.UNKNOWN


def test_an_override_changes_what_the_engine_uses_and_clearing_it_goes_back(
    qtbot: QtBot, models_ctx: UiContext
) -> None:
    service = models_ctx.service
    service.download_model("tiny-embed")
    panel = settings_panel(qtbot, models_ctx, MODEL)
    row = panel.form.languages
    assert row is not None
    shown(qtbot, row)
    dirty_before = panel.is_dirty()

    choose(qtbot, row, "Chinese and English")
    declared = service.model_languages(MODEL)
    assert declared.languages == ("zh", "en") and declared.source is LanguageSource.OVERRIDE
    assert row.summary.text() == "Chinese, English (from your setting)"
    assert panel.is_dirty() == dirty_before  # a model's languages are not the base's settings

    choose(qtbot, row, "Many languages (multilingual)")
    assert service.model_languages(MODEL).languages == ("multilingual",)

    choose(qtbot, row, "Not set: use what Trove knows")
    declared = service.model_languages(MODEL)
    assert declared.languages == ("en",) and declared.source is LanguageSource.INSTALLED


def test_an_override_of_other_languages_is_listed_as_it_is(
    qtbot: QtBot, models_ctx: UiContext
) -> None:
    models_ctx.service.set_model_languages("ollama:nomic-embed-text", ["ja", "en"])
    row = ModelLanguagesRow(models_ctx)
    qtbot.addWidget(row)
    row.set_model("ollama:nomic-embed-text")
    assert shown(qtbot, row) == "Japanese, English (from your setting)"
    assert row.choice.currentText() == "Japanese, English"
    choose(qtbot, row, "English only")
    assert models_ctx.service.model_languages("ollama:nomic-embed-text").languages == ("en",)
    assert row.choice.findText("Japanese, English") < 0  # not the override any more


def test_the_models_dialog_sets_languages_for_the_model_selected(
    qtbot: QtBot, models_ctx: UiContext
) -> None:
    models_ctx.service.download_model("tiny-embed")
    dialog = open_dialog(qtbot, models_ctx)
    dialog.select("tiny-embed")
    row = dialog.languages
    assert shown(qtbot, row) == "English (from the model's manifest)"
    choose(qtbot, row, "Chinese and English")
    assert models_ctx.service.model_languages(MODEL).languages == ("zh", "en")


def test_the_languages_read_in_chinese(
    qapp: QApplication, qtbot: QtBot, models_ctx: UiContext
) -> None:
    translators = i18n.install_translators(qapp, "zh_CN")
    try:
        models_ctx.service.download_model("tiny-embed")
        panel = settings_panel(qtbot, models_ctx, MODEL)
        row = panel.form.languages
        assert row is not None
        texts = [shown(qtbot, row), row.covers_label.text(), row.hint.text()]
        texts += [row.choice.itemText(i) for i in range(row.choice.count())]
        assert [text for text in texts if english_words(text)] == []
        assert "英语" in texts[0]
    finally:
        i18n.remove_translators(qapp, translators)
