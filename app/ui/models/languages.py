"""Which languages an embedding model covers, and where Trove knows it from, with the
person's word on it: "This model covers: …" sets or clears the override
(`KnowledgeService.set_model_languages`), which hybrid search reads to decide whether a
query in another language trusts the model's vectors."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Signal, Slot
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from app.knowledge.types import MULTILINGUAL, LanguageSource, ModelLanguages
from app.ui import theme
from app.ui.context import UiContext
from app.ui.errors import describe
from app.ui.models import texts
from app.ui.models.alive import while_alive

Codes = tuple[str, ...]
# What the choices set, after "not set" (None: the override is cleared).
PRESETS: tuple[Codes, ...] = (("en",), ("zh", "en"), (MULTILINGUAL,))


class ModelLanguagesRow(QWidget):
    """Shows one model's languages and their source; its combo box sets the override."""

    # the model's languages as Trove now knows them (ModelLanguages), after a load or a change
    languagesShown = Signal(object)

    def __init__(self, ctx: UiContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("modelLanguagesRow")
        self._ctx = ctx
        self._model: str | None = None
        self._generation = 0
        self._choices: list[Codes | None] = []
        self.current: ModelLanguages | None = None
        self.summary = QLabel(self)
        self.summary.setObjectName("modelLanguages")
        self.summary.setWordWrap(True)
        self.covers_label = QLabel(self.tr("This model covers:"), self)
        self.choice = QComboBox(self)
        self.choice.setObjectName("languageOverride")
        self.choice.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.hint = QLabel(
            self.tr(
                "Chinese, Japanese and Korean searches use this model's vectors only if it "
                "covers those languages."
            ),
            self,
        )
        self.hint.setObjectName("languageHint")
        self.hint.setWordWrap(True)
        self.error = QLabel(self)
        self.error.setObjectName("languageError")
        self.error.setWordWrap(True)
        self.error.setStyleSheet(theme.message_style("error"))
        self.error.hide()
        self._build_layout()
        self._connect_signals()
        self.setVisible(False)

    def _build_layout(self) -> None:
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.covers_label)
        row.addWidget(self.choice)
        row.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.summary)
        layout.addLayout(row)
        layout.addWidget(self.hint)
        layout.addWidget(self.error)

    def _connect_signals(self) -> None:
        self.choice.activated.connect(self._on_choice_activated)

    # -- public -----------------------------------------------------------------------------

    def model(self) -> str | None:
        return self._model

    def set_model(self, model_id: str | None) -> None:
        """Show an embedding model's languages (None: hide the row)."""
        if model_id == self._model and self.current is not None:
            return
        self._model = model_id
        self.current = None
        self.error.hide()
        self.setVisible(model_id is not None)
        if model_id is None:
            return
        self.summary.setText(self.tr("Looking…"))
        service = self._ctx.service
        self._run(lambda: service.model_languages(model_id))

    def choose(self, languages: Codes | None) -> None:
        """Set the override (None: clear it), as the combo box does."""
        model = self._model
        if model is None:
            return
        self.error.hide()
        service = self._ctx.service
        self._run(lambda: service.set_model_languages(model, list(languages or ())))

    # -- loading ----------------------------------------------------------------------------

    def _run(self, fn: Callable[[], ModelLanguages]) -> None:
        self._generation += 1
        generation = self._generation
        self._ctx.tasks.run(
            fn,
            while_alive(self, lambda found: self._on_loaded(generation, found)),
            while_alive(self, lambda exc: self._on_failed(generation, exc)),
            owner=self,
        )

    def _on_loaded(self, generation: int, found: ModelLanguages) -> None:
        if generation != self._generation:
            return
        self.current = found
        self._show(found)
        self.languagesShown.emit(found)

    def _on_failed(self, generation: int, exc: BaseException) -> None:
        if generation != self._generation:
            return
        headline, detail = describe(exc)
        self.error.setText(f"{headline}\n{detail}")
        self.error.show()
        if self.current is not None:
            self._show(self.current)  # the combo box goes back to what is stored

    def _show(self, found: ModelLanguages) -> None:
        self.summary.setText(
            self.tr("{0} (from {1})").format(
                texts.languages_text(found.languages), texts.language_source_text(found.source)
            )
        )
        override = found.languages if found.source is LanguageSource.OVERRIDE else None
        self._choices = [None, *PRESETS]
        labels = [
            self.tr("Not set: use what Trove knows"),
            self.tr("English only"),
            self.tr("Chinese and English"),
            self.tr("Many languages (multilingual)"),
        ]
        if override is not None and tuple(override) not in PRESETS:
            self._choices.append(tuple(override))
            labels.append(texts.languages_text(override))
        self.choice.blockSignals(True)
        try:
            self.choice.clear()
            self.choice.addItems(labels)
            chosen = tuple(override) if override is not None else None
            self.choice.setCurrentIndex(self._choices.index(chosen))
        finally:
            self.choice.blockSignals(False)

    @Slot(int)
    def _on_choice_activated(self, index: int) -> None:
        if 0 <= index < len(self._choices):
            self.choose(self._choices[index])
