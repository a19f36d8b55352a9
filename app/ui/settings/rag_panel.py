"""The RAG settings panel of the selected knowledge base.

Retrieval settings save with `update_base`. The embedding model is different: vectors of one
model cannot be searched with another, so changing it rebuilds the base from its own copies
(`restore_base`), or, for a full-text-only base gaining its first model, computes the missing
vectors (`enable_embedding`). Both ask first when the base has items.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any

from PySide6.QtCore import QCoreApplication, Signal, Slot
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QMessageBox,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.knowledge.service import KnowledgeService
from app.knowledge.types import Base, RebuildReport
from app.ui import theme
from app.ui.context import UiContext
from app.ui.errors import describe
from app.ui.notifications import Level
from app.ui.settings.model_picker import ModelChoices, ProviderLoader, while_alive
from app.ui.settings.rag_form import RagSettings, RagSettingsForm


class ModelStep(Enum):
    RESTORE = "restore"  # rebuild every item with the new model (or with none)
    BACKFILL = "backfill"  # a full-text-only base gains vectors


@dataclass(frozen=True, slots=True)
class ModelChange:
    step: ModelStep
    model: str | None

    def run(self, service: KnowledgeService, base_id: str) -> RebuildReport:
        if self.step is ModelStep.BACKFILL:
            assert self.model is not None
            return service.enable_embedding(base_id, self.model)
        # restore_base reads None as "keep the current model"; "" removes it.
        return service.restore_base(base_id, self.model or "")


@dataclass(frozen=True, slots=True)
class SaveOutcome:
    base: Base
    report: RebuildReport | None = None
    # The settings were saved but the model change failed.
    model_error: BaseException | None = None


def save_settings(
    service: KnowledgeService,
    base_id: str,
    changes: dict[str, Any],
    model_change: ModelChange | None,
) -> SaveOutcome:
    """Runs off the GUI thread. Settings first, so a rebuild already uses new chunk sizes."""
    base = service.update_base(base_id, **changes) if changes else service.get_base(base_id)
    if model_change is None:
        return SaveOutcome(base)
    try:
        report = model_change.run(service, base_id)
    except Exception as exc:  # shown in the panel next to the settings that did save
        return SaveOutcome(base, model_error=exc)
    return SaveOutcome(service.get_base(base_id), report)


# The notice names this many of the gone sources.
_NAMED = 5


def _named(sources: list[str]) -> str:
    """ " Gone: a, b (and 3 more)." for a notice; empty when there are none."""
    if not sources:
        return ""
    shown = ", ".join(Path(s).name or s for s in sources[:_NAMED])
    more = len(sources) - _NAMED
    if more > 0:
        shown = QCoreApplication.translate("RagSettingsPanel", "{0} and {1} more").format(
            shown, more
        )
    return " " + QCoreApplication.translate("RagSettingsPanel", "Gone: {0}.").format(shown)


class RagSettingsPanel(QWidget):
    """Edits one base's retrieval settings; Apply saves them off the GUI thread."""

    # the Base as saved
    baseUpdated = Signal(object)
    # the provider list arrived and the pickers show it
    modelsLoaded = Signal()
    busyChanged = Signal(bool)

    def __init__(self, ctx: UiContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("ragSettings")
        self._ctx = ctx
        self._base: Base | None = None
        self._busy = False
        self.form = RagSettingsForm(self, ctx=ctx)
        self._baseline = self.form.settings()
        self._loader = ProviderLoader(ctx, self)
        self.error_label = QLabel(self)
        self.error_label.setObjectName("errorLabel")
        self.error_label.setWordWrap(True)
        self.error_label.setStyleSheet(theme.message_style("error"))
        self.error_label.hide()
        self.busy_label = QLabel(self)
        self.busy_label.setObjectName("busyLabel")
        self.busy_label.hide()
        self.revert_button = QPushButton(self.tr("Revert"), self)
        self.revert_button.setObjectName("revertButton")
        self.apply_button = QPushButton(self.tr("Apply"), self)
        self.apply_button.setObjectName("applyButton")
        self._build_layout()
        self._connect_signals()
        self._load(None)
        self.reload_models()

    def _build_layout(self) -> None:
        buttons = QHBoxLayout()
        buttons.addWidget(self.busy_label)
        buttons.addStretch(1)
        buttons.addWidget(self.revert_button)
        buttons.addWidget(self.apply_button)
        layout = QVBoxLayout(self)
        layout.addWidget(self.form)
        layout.addWidget(self.error_label)
        layout.addStretch(1)
        layout.addLayout(buttons)

    def _connect_signals(self) -> None:
        self.form.changed.connect(self._on_form_changed)
        self.apply_button.clicked.connect(self.apply)
        self.revert_button.clicked.connect(self.revert)
        self._loader.loaded.connect(self._on_providers_loaded)
        self._loader.failed.connect(self._on_providers_failed)
        # A model downloaded, imported or removed (here, in the Models dialog, anywhere).
        self._ctx.downloads.modelsChanged.connect(self.reload_models)

    # -- public ---------------------------------------------------------------------------

    def base(self) -> Base | None:
        return self._base

    def set_base(self, base: Base | None) -> None:
        """Show a base's settings (None: nothing selected). Unsaved edits are dropped unless
        the base is the one shown, unchanged (a list reload selecting it again)."""
        if base == self._base:
            return
        self._load(base)

    def _load(self, base: Base | None) -> None:
        self._base = base
        self._clear_error()
        self.form.set_settings(RagSettings.of(base) if base is not None else RagSettings())
        # Compared against what the controls hold, so rounding never reads as an edit.
        self._baseline = self.form.settings()
        self._update_controls()

    def is_dirty(self) -> bool:
        return self._base is not None and self.form.settings() != self._baseline

    def is_busy(self) -> bool:
        return self._busy

    @Slot()
    def reload_models(self) -> None:
        """Read the configured providers again (after the provider settings changed)."""
        self._loader.load()

    @Slot()
    def revert(self) -> None:
        self._load(self._base)

    @Slot()
    def apply(self) -> None:
        base = self._base
        if base is None or self._busy or not self.is_dirty() or not self.form.is_valid():
            return
        self._clear_error()
        wanted = self.form.settings()
        changes = wanted.update_arguments(self._baseline)
        if wanted.embedding_model == self._baseline.embedding_model:
            self._save(base, changes, None)
            return
        # Whether to ask depends on the base having items, which is a catalog read.
        self._set_busy(True, self.tr("Checking the knowledge base…"))
        service = self._ctx.service
        self._ctx.tasks.run(
            lambda: len(service.list_items(base.id)),
            while_alive(self, lambda count: self._on_items_counted(base, wanted, changes, count)),
            while_alive(self, self._on_save_failed),
            owner=self,
        )

    # -- saving ---------------------------------------------------------------------------

    def _on_items_counted(
        self, base: Base, wanted: RagSettings, changes: dict[str, Any], count: int
    ) -> None:
        self._set_busy(False)
        change = self._ask_model_change(base, wanted.embedding_model, count)
        if change is not None:
            self._save(base, changes, change)

    def _ask_model_change(self, base: Base, model: str | None, count: int) -> ModelChange | None:
        """The step a model change needs, or None when the person declines it."""
        if count == 0:
            return ModelChange(ModelStep.RESTORE, model)  # nothing to re-index: just switch
        picker = self.form.embedding_picker
        old, new = picker.label_of(base.embedding_model), picker.label_of(model)
        if base.embedding_model is None and model is not None:
            backfill = self._confirm(
                self.tr("Add an embedding model"),
                self.tr(
                    "“{0}” has %n item(s) indexed for full-text search only. Compute their "
                    "vectors with {1}? Searches become hybrid as the items finish.",
                    "",
                    count,
                ).format(base.name, new),
                self.tr("Compute vectors"),
            )
            return ModelChange(ModelStep.BACKFILL, model) if backfill else None
        if model is None:
            title = self.tr("Remove the embedding model")
            text = self.tr(
                "Removing {1} rebuilds “{0}”: its %n item(s) are indexed again from the "
                "base's own copies for full-text search only, and the vectors are deleted.",
                "",
                count,
            ).format(base.name, old)
            accept = self.tr("Remove and rebuild")
        else:
            title = self.tr("Change the embedding model")
            text = self.tr(
                "Changing the embedding model from {1} to {2} rebuilds “{0}”: its %n item(s) "
                "are indexed again from the base's own copies. Searches miss items until they "
                "finish.",
                "",
                count,
            ).format(base.name, old, new)
            accept = self.tr("Change and rebuild")
        rebuild = self._confirm(title, text, accept)
        return ModelChange(ModelStep.RESTORE, model) if rebuild else None

    def _confirm(self, title: str, text: str, accept_text: str) -> bool:
        box = QMessageBox(
            QMessageBox.Icon.Question, title, text, QMessageBox.StandardButton.NoButton, self
        )
        box.setObjectName("modelChangeQuestion")
        accept = box.addButton(accept_text, QMessageBox.ButtonRole.AcceptRole)
        cancel = box.addButton(QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(cancel)
        box.exec()
        return box.clickedButton() is accept

    def _save(self, base: Base, changes: dict[str, Any], change: ModelChange | None) -> None:
        if change is None:
            self._set_busy(True, self.tr("Saving…"))
        else:
            self._set_busy(True, self.tr("Saving and rebuilding…"))
        service = self._ctx.service
        executor = self._ctx.executor
        show = while_alive(self, self._on_saved)

        def done(outcome: SaveOutcome) -> None:
            if outcome.report is not None:
                executor.schedule()  # the rebuilt items wait in the job queue, panel or not
            show(outcome)

        self._ctx.tasks.run(
            lambda: save_settings(service, base.id, changes, change),
            done,
            while_alive(self, self._on_save_failed),
            owner=self,
        )

    def _on_saved(self, outcome: SaveOutcome) -> None:
        self._set_busy(False)
        if outcome.report is not None:
            self._report_rebuild(outcome.base, outcome.report)
        chosen_model = self.form.settings().embedding_model
        if self._base is not None and self._base.id == outcome.base.id:
            self._load(outcome.base)
            if outcome.model_error is not None:
                # Keep the choice, so Apply tries the model change again.
                self.form.embedding_picker.set_current_model(chosen_model)
                self._show_error(outcome.model_error)
        elif outcome.model_error is not None:
            self._ctx.notifier.error(*describe(outcome.model_error))
        self.baseUpdated.emit(outcome.base)

    def _on_save_failed(self, exc: BaseException) -> None:
        self._set_busy(False)
        self._show_error(exc)

    def _report_rebuild(self, base: Base, report: RebuildReport) -> None:
        self._ctx.notifier.notify(
            self.tr("Rebuilding “{0}”").format(base.name),
            self.tr("%n item(s) are being indexed again.", "", report.restored),
        )
        missing = report.skipped_missing_source_count
        if missing:
            self._ctx.notifier.notify(
                self.tr("Some items of “{0}” could not be rebuilt").format(base.name),
                self.tr(
                    "The original or the base's own copy of %n item(s) is missing; add them again.",
                    "",
                    missing,
                )
                + _named(report.missing_sources),
                Level.WARNING,
            )

    # -- state ----------------------------------------------------------------------------

    @Slot(object)
    def _on_providers_loaded(self, choices: ModelChoices) -> None:
        try:
            self.form.set_choices(choices)
            self._update_controls()
        except RuntimeError as exc:
            # The window closed while the lists were on their way: its teardown can delete
            # the form's C++ side before the wrappers say so.
            if "already deleted" not in str(exc):
                raise
            return
        self.modelsLoaded.emit()

    @Slot(object)
    def _on_providers_failed(self, exc: BaseException) -> None:
        self._show_error(exc)

    @Slot()
    def _on_form_changed(self) -> None:
        self._update_controls()

    def _set_busy(self, busy: bool, text: str = "") -> None:
        self._busy = busy
        self.busy_label.setText(text)
        self.busy_label.setVisible(busy)
        self._update_controls()
        self.busyChanged.emit(busy)

    def _update_controls(self) -> None:
        has_base = self._base is not None
        dirty = self.is_dirty()
        self.form.setEnabled(has_base and not self._busy)
        self.apply_button.setEnabled(dirty and self.form.is_valid() and not self._busy)
        self.revert_button.setEnabled(dirty and not self._busy)

    def _show_error(self, exc: BaseException) -> None:
        headline, detail = describe(exc)
        detail_html = html.escape(detail).replace("\n", "<br>")
        self.error_label.setText(f"<b>{html.escape(headline)}</b><br>{detail_html}")
        self.error_label.show()

    def _clear_error(self) -> None:
        self.error_label.clear()
        self.error_label.hide()
