"""The Providers dialog: the configured embedding and rerank providers (plus the built-in
offline model, read-only) on the left, the selected one's form on the right.

Every engine call that touches disk (listing, saving, removing) goes through BackgroundTasks;
the form's network probes run as coroutines on the qasync loop and are cancelled when the
dialog closes. `providersChanged` tells the rest of the window (the RAG settings panel's
model pickers) that the configured providers changed.
"""

from __future__ import annotations

import functools

import shiboken6
from PySide6.QtCore import QItemSelection, QModelIndex, Signal, Slot
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QListView,
    QMessageBox,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.ui.context import UiContext
from app.ui.errors import describe
from app.ui.providers.provider_form import ProviderForm
from app.ui.providers.providers_model import ProviderEntry, ProviderRecord, ProvidersModel


class ProvidersDialog(QDialog):
    # a provider was saved or removed
    providersChanged = Signal()
    # the list was (re)loaded from the engine
    refreshed = Signal()

    def __init__(self, ctx: UiContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("providersDialog")
        self.setWindowTitle(self.tr("Model providers"))
        self._ctx = ctx
        self.model = ProvidersModel(self)
        self._build()
        self._connect_signals()
        self.refresh()

    def _build(self) -> None:
        self.list_view = QListView()
        self.list_view.setObjectName("providerList")
        self.list_view.setModel(self.model)
        self.list_view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.add_button = QPushButton(self.tr("Add"))
        self.add_button.setObjectName("addProviderButton")
        self.remove_button = QPushButton(self.tr("Remove"))
        self.remove_button.setObjectName("removeProviderButton")
        self.remove_button.setEnabled(False)
        list_buttons = QHBoxLayout()
        list_buttons.addWidget(self.add_button)
        list_buttons.addWidget(self.remove_button)
        list_buttons.addStretch(1)
        left = QVBoxLayout()
        left.addWidget(self.list_view, 1)
        left.addLayout(list_buttons)

        self.form = ProviderForm(self._ctx)
        body = QHBoxLayout()
        body.addLayout(left, 2)
        body.addWidget(self.form, 3)

        self.button_box = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        # Enter in a form field must not close the dialog or press a button.
        for button in (self.add_button, self.remove_button, *self.button_box.buttons()):
            if isinstance(button, QPushButton):
                button.setAutoDefault(False)
                button.setDefault(False)
        layout = QVBoxLayout(self)
        layout.addLayout(body, 1)
        layout.addWidget(self.button_box)
        self.resize(760, 480)

    def _connect_signals(self) -> None:
        selection = self.list_view.selectionModel()
        selection.selectionChanged.connect(self._on_selection_changed)
        self.add_button.clicked.connect(self.add_provider)
        self.remove_button.clicked.connect(self.remove_selected)
        self.form.saved.connect(self._on_saved)
        self.button_box.rejected.connect(self.reject)

    # -- list ----------------------------------------------------------------------------

    def refresh(self, select_id: str | None = None) -> None:
        """Reload the providers off the GUI thread, then select `select_id` (or keep the
        current selection)."""
        keep = select_id if select_id is not None else self._selected_id()
        self._ctx.tasks.run(
            self._ctx.service.list_providers,
            functools.partial(self._on_loaded, keep),
            self._on_load_failed,
            owner=self,
        )

    def _on_loaded(self, select_id: str | None, records: list[ProviderRecord]) -> None:
        if not shiboken6.isValid(self):
            return
        entries = [ProviderEntry.from_record(r) for r in records]
        # Selecting after a reload must not reset the form (it shows "Saved", a probe...).
        blocker = self.list_view.selectionModel().blockSignals(True)
        try:
            self.model.set_entries(entries)
        finally:
            self.list_view.selectionModel().blockSignals(blocker)
        self.form.set_existing_ids(e.id for e in entries)
        row = self.model.row_of(select_id) if select_id is not None else -1
        if row < 0:  # first start, or the shown provider went away: the first configured one
            row = next((i for i, e in enumerate(entries) if not e.builtin), -1)
        entry = self.model.entry(row)
        if entry is not None:
            self._select_row(row)
            if entry != self.form.entry:
                self.form.load(entry, keep_message=entry.id == select_id)
        elif self.form.entry is not None:
            self.form.load(None)
        self._update_buttons()
        self.refreshed.emit()

    def _on_load_failed(self, exc: BaseException) -> None:
        if not shiboken6.isValid(self):
            return
        headline, detail = describe(exc)
        self._ctx.notifier.error(headline, detail)

    def _select_row(self, row: int) -> None:
        """Select without reloading the form (the caller decides whether it must)."""
        selection = self.list_view.selectionModel()
        blocked = selection.blockSignals(True)
        try:
            self.list_view.setCurrentIndex(self.model.index(row))
        finally:
            selection.blockSignals(blocked)

    def _selected_entry(self) -> ProviderEntry | None:
        rows = self.list_view.selectionModel().selectedRows()
        return self.model.entry(rows[0].row()) if rows else None

    def _selected_id(self) -> str | None:
        entry = self._selected_entry()
        return entry.id if entry is not None else None

    def _update_buttons(self) -> None:
        entry = self._selected_entry()
        self.remove_button.setEnabled(entry is not None and not entry.builtin)

    # -- actions -------------------------------------------------------------------------

    @Slot()
    def add_provider(self) -> None:
        """An empty form for a new provider."""
        self.list_view.clearSelection()
        self.list_view.setCurrentIndex(QModelIndex())
        self.form.load(None)
        self._update_buttons()
        self.form.name_edit.setFocus()

    @Slot()
    def remove_selected(self) -> None:
        entry = self._selected_entry()
        if entry is None or entry.builtin:
            return
        answer = QMessageBox.question(
            self,
            self.tr("Remove provider"),
            self.tr(
                "Remove “{0}” and its stored API key? Knowledge bases that use its models "
                "cannot embed or rerank until another model is chosen."
            ).format(entry.label),
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
            QMessageBox.StandardButton.No,
        )
        if answer != QMessageBox.StandardButton.Yes:
            return
        self.form.cancel_probes()
        self._ctx.tasks.run(
            functools.partial(self._ctx.service.remove_provider, entry.id),
            self._on_removed,
            self._on_remove_failed,
            owner=self,
        )

    def _on_removed(self, _result: object) -> None:
        if not shiboken6.isValid(self):
            return
        self.list_view.clearSelection()
        self.form.load(None)
        self.refresh()
        self.providersChanged.emit()

    def _on_remove_failed(self, exc: BaseException) -> None:
        if not shiboken6.isValid(self):
            return
        headline, detail = describe(exc)
        self._ctx.notifier.error(headline, detail)
        self.refresh()

    # -- slots ---------------------------------------------------------------------------

    @Slot(QItemSelection, QItemSelection)
    def _on_selection_changed(self, _selected: QItemSelection, _deselected: QItemSelection) -> None:
        entry = self._selected_entry()
        if entry is not None:
            self.form.load(entry)
        self._update_buttons()

    @Slot(str)
    def _on_saved(self, provider_id: str) -> None:
        self.refresh(select_id=provider_id)
        self.providersChanged.emit()

    def done(self, result: int) -> None:
        # Closing ends the probes too: nobody is left to read their answers.
        self.form.cancel_probes()
        super().done(result)
