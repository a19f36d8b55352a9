"""The Models dialog (Settings > Models…): every model that runs on this computer, with
Download (progress, rate and Cancel, which keeps the part for a resume), Remove, Import
folder… and the download mirror.

Every engine call runs off the GUI thread (ctx.tasks); downloads run in ModelDownloads, so
closing the dialog leaves a download running: the status bar goes on showing it.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import (
    QCoreApplication,
    QModelIndex,
    QPersistentModelIndex,
    Qt,
    Signal,
    Slot,
)
from PySide6.QtGui import QPainter
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionProgressBar,
    QStyleOptionViewItem,
    QTreeView,
    QVBoxLayout,
    QWidget,
)
from shiboken6 import isValid

from app.knowledge.service import (
    HubEndpoint,
    ModelDownload,
    ModelImport,
    ModelKind,
    ModelListing,
    ModelState,
)
from app.ui import theme
from app.ui.context import UiContext
from app.ui.errors import describe
from app.ui.models import texts
from app.ui.models.alive import while_alive
from app.ui.models.downloads import DownloadPhase, DownloadProgress
from app.ui.models.languages import ModelLanguagesRow
from app.ui.models.models_model import Column, LocalModelsModel, download_status_text
from app.ui.questions import ask_to_delete

ModelIndex = QModelIndex | QPersistentModelIndex
ENV_ORIGIN = "env:"
# The widest a download's status usually gets: it sizes the Status column.
STATUS_SAMPLE = DownloadProgress("", DownloadPhase.RUNNING, 888_800_000, 888_800_000, 88_800_000)


class _StatusDelegate(QStyledItemDelegate):
    """Draws a running download's progress bar, with its figures, in the Status column."""

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: ModelIndex) -> None:
        fraction = index.data(LocalModelsModel.FRACTION_ROLE)
        if not isinstance(fraction, float):
            super().paint(painter, option, index)
            return
        bar = QStyleOptionProgressBar()
        bar.rect = option.rect.adjusted(2, 2, -2, -2)
        bar.minimum = 0
        bar.maximum = 1000
        bar.progress = round(fraction * 1000)
        bar.text = str(index.data(Qt.ItemDataRole.DisplayRole) or "")
        bar.textVisible = True
        bar.state = option.state
        style = option.widget.style() if option.widget else QApplication.style()
        style.drawControl(QStyle.ControlElement.CE_ProgressBar, bar, painter)


class ModelsDialog(QDialog):
    # a list of the models arrived and the table shows it
    modelsLoaded = Signal()
    # an action (remove, import, mirror) finished, well or not
    actionFinished = Signal()

    def __init__(self, ctx: UiContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("modelsDialog")
        self.setWindowTitle(self.tr("Models"))
        self._ctx = ctx
        self._downloads = ctx.downloads
        self._generation = 0
        self._mirror: HubEndpoint | None = None
        # Tests answer these without a modal box.
        self.confirm_remove: Callable[[ModelListing], bool] = self._confirm_remove
        self.choose_folder: Callable[[], str] = self._choose_folder
        self.model = LocalModelsModel(self)
        self.intro = QLabel(
            self.tr(
                "Models that run on this computer, offline. A knowledge base uses them as its "
                "embedding or rerank model (“On this computer” in its settings)."
            ),
            self,
        )
        self.intro.setWordWrap(True)
        self.view = QTreeView(self)
        self.view.setObjectName("modelsView")
        self.view.setModel(self.model)
        self.view.setRootIsDecorated(False)
        self.view.setUniformRowHeights(True)
        self.view.setAllColumnsShowFocus(True)
        self.view.setAlternatingRowColors(True)
        self.view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.view.setItemDelegateForColumn(Column.STATUS, _StatusDelegate(self.view))
        header = self.view.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(Column.NAME, QHeaderView.ResizeMode.Stretch)
        # Wide enough for a running download's figures, so the columns never jump.
        header.setSectionResizeMode(Column.STATUS, QHeaderView.ResizeMode.Fixed)
        sample = download_status_text(STATUS_SAMPLE)
        header.resizeSection(Column.STATUS, self.fontMetrics().horizontalAdvance(sample) + 24)
        self.details = QLabel(self)
        self.details.setObjectName("modelDetails")
        self.details.setWordWrap(True)
        self.details.setTextFormat(Qt.TextFormat.PlainText)
        self.languages = ModelLanguagesRow(ctx, self)
        self.languages_label = QLabel(self.tr("Languages:"), self)
        self.download_button = QPushButton(self.tr("Download"), self)
        self.download_button.setObjectName("downloadButton")
        self.cancel_button = QPushButton(self.tr("Cancel download"), self)
        self.cancel_button.setObjectName("cancelDownloadButton")
        self.remove_button = QPushButton(self.tr("Remove…"), self)
        self.remove_button.setObjectName("removeButton")
        self.import_button = QPushButton(self.tr("Import folder…"), self)
        self.import_button.setObjectName("importButton")
        self.import_button.setToolTip(
            self.tr(
                "Install a model folder copied from another computer (it holds a "
                "trove-model.json and the files it names)."
            )
        )
        self.message = QLabel(self)
        self.message.setObjectName("modelsMessage")
        self.message.setWordWrap(True)
        self.message.hide()
        self.mirror_group = QGroupBox(self.tr("Download mirror"), self)
        self.mirror_group.setObjectName("mirrorGroup")
        self.mirror_edit = QLineEdit(self.mirror_group)
        self.mirror_edit.setObjectName("mirrorEdit")
        self.mirror_edit.setPlaceholderText(self.tr("For example: https://hf-mirror.com"))
        self.mirror_save = QPushButton(self.tr("Save"), self.mirror_group)
        self.mirror_save.setObjectName("mirrorSaveButton")
        self.mirror_clear = QPushButton(self.tr("Clear"), self.mirror_group)
        self.mirror_clear.setObjectName("mirrorClearButton")
        self.mirror_origin = QLabel(self.mirror_group)
        self.mirror_origin.setObjectName("mirrorOrigin")
        self.mirror_origin.setWordWrap(True)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        # Enter in the mirror field saves it; it must never press Download or Close too.
        for button in self.findChildren(QPushButton):
            button.setAutoDefault(False)
            button.setDefault(False)
        self._build_layout()
        self._connect_signals()
        for progress in self._downloads.downloads():
            self.model.set_download(progress.model_id, progress)
        self._update_controls()
        self.resize(1040, 600)
        self.reload()

    def _build_layout(self) -> None:
        actions = QHBoxLayout()
        actions.addWidget(self.download_button)
        actions.addWidget(self.cancel_button)
        actions.addWidget(self.remove_button)
        actions.addStretch(1)
        actions.addWidget(self.import_button)
        mirror_row = QHBoxLayout()
        mirror_row.addWidget(self.mirror_edit, 1)
        mirror_row.addWidget(self.mirror_save)
        mirror_row.addWidget(self.mirror_clear)
        mirror = QVBoxLayout(self.mirror_group)
        mirror.addLayout(mirror_row)
        mirror.addWidget(self.mirror_origin)
        layout = QVBoxLayout(self)
        layout.addWidget(self.intro)
        layout.addWidget(self.view, 1)
        layout.addWidget(self.details)
        languages = QFormLayout()
        languages.setContentsMargins(0, 0, 0, 0)
        languages.addRow(self.languages_label, self.languages)
        layout.addLayout(languages)
        layout.addLayout(actions)
        layout.addWidget(self.message)
        layout.addWidget(self.mirror_group)
        layout.addWidget(self.buttons)

    def _connect_signals(self) -> None:
        self.buttons.rejected.connect(self.reject)
        self.view.selectionModel().currentRowChanged.connect(self._on_current_changed)
        self.model.modelReset.connect(self._on_current_changed)
        self.model.dataChanged.connect(self._on_data_changed)
        self.download_button.clicked.connect(self._on_download)
        self.cancel_button.clicked.connect(self._on_cancel)
        self.remove_button.clicked.connect(self._on_remove)
        self.import_button.clicked.connect(self._on_import)
        self.mirror_save.clicked.connect(self._on_mirror_save)
        self.mirror_clear.clicked.connect(self._on_mirror_clear)
        self.mirror_edit.returnPressed.connect(self._on_mirror_save)
        self._downloads.changed.connect(self._on_download_changed)
        self._downloads.finished.connect(self._on_download_finished)
        self._downloads.failed.connect(self._on_download_failed)
        self._downloads.modelsChanged.connect(self.reload)

    # -- public -----------------------------------------------------------------------------

    @Slot()
    def reload(self) -> None:
        """Read the models and the mirror again (off the GUI thread)."""
        self._generation += 1
        generation = self._generation
        service = self._ctx.service
        self._ctx.tasks.run(
            lambda: (service.list_models(), service.model_mirror()),
            while_alive(self, lambda found: self._on_loaded(generation, *found)),
            while_alive(self, self._show_failure),
            owner=self,
        )

    def current_listing(self) -> ModelListing | None:
        index = self.view.currentIndex()
        return self.model.listing(index.row()) if index.isValid() else None

    def select(self, model_id: str) -> None:
        """Make a model (bare id) the current row."""
        row = self.model.row_of(model_id)
        if row >= 0:
            self.view.setCurrentIndex(self.model.index(row, 0))

    # -- loading ----------------------------------------------------------------------------

    def _on_loaded(
        self, generation: int, listings: list[ModelListing], mirror: HubEndpoint
    ) -> None:
        if generation != self._generation:
            return
        current = self.current_listing()
        self.model.set_listings(listings)
        if current is not None and self.current_listing() is None:
            self.select(current.id)  # a reset (a model imported) keeps the selection
        self._show_mirror(mirror)
        self._update_controls()
        self.modelsLoaded.emit()

    # -- downloads --------------------------------------------------------------------------

    @Slot()
    def _on_download(self) -> None:
        listing = self.current_listing()
        if listing is not None:
            self._clear_message()
            self._downloads.start(listing.id)

    @Slot()
    def _on_cancel(self) -> None:
        listing = self.current_listing()
        if listing is not None:
            self._downloads.cancel(listing.id)

    @Slot(str)
    def _on_download_changed(self, model_id: str) -> None:
        self.model.set_download(model_id, self._downloads.progress(model_id))
        self._update_controls()

    @Slot(str, object)
    def _on_download_finished(self, model_id: str, done: ModelDownload) -> None:
        self._show_info(self.tr("{0} is installed.").format(texts.display_name(done.model)))

    @Slot(str, object)
    def _on_download_failed(self, model_id: str, exc: BaseException) -> None:
        self._show_failure(exc, self.tr("The download of {0} failed").format(model_id))

    # -- removing and importing -------------------------------------------------------------

    @Slot()
    def _on_remove(self) -> None:
        listing = self.current_listing()
        if listing is None or not self.confirm_remove(listing):
            return
        self._clear_message()
        service, downloads = self._ctx.service, self._downloads
        name = texts.display_name(listing)

        def removed(_result: object) -> None:
            downloads.models_changed()
            if isValid(self):
                self._show_info(self.tr("{0} was removed.").format(name))
                self.actionFinished.emit()

        self._ctx.tasks.run(
            lambda: service.remove_model(listing.id),
            removed,
            while_alive(
                self,
                lambda exc: self._on_action_failed(
                    exc, self.tr("{0} could not be removed").format(name)
                ),
            ),
            owner=self,
        )

    def _confirm_remove(self, listing: ModelListing) -> bool:
        size = listing.size_on_disk or listing.partial_bytes
        return ask_to_delete(
            self,
            self.tr("Remove a model"),
            self.tr(
                "Remove {0}?\n\nIts files ({1}) are deleted from this computer. It can be "
                "downloaded or imported again later."
            ).format(texts.display_name(listing), texts.size_text(size)),
        )

    @Slot()
    def _on_import(self) -> None:
        folder = self.choose_folder()
        if not folder:
            return
        self._clear_message()
        service, downloads = self._ctx.service, self._downloads

        def imported(result: ModelImport) -> None:
            downloads.models_changed()
            if isValid(self):
                name = texts.display_name(result.model)
                if result.replaced:
                    text = self.tr("{0} was imported; it replaces the copy installed before.")
                else:
                    text = self.tr("{0} was imported.")
                self._show_info(text.format(name))
                self.actionFinished.emit()

        self._ctx.tasks.run(
            lambda: service.import_model(Path(folder)),
            imported,
            while_alive(
                self,
                lambda exc: self._on_action_failed(
                    exc, self.tr("The folder could not be imported")
                ),
            ),
            owner=self,
        )

    def _choose_folder(self) -> str:
        return QFileDialog.getExistingDirectory(
            self, self.tr("Choose the folder of a model (it holds trove-model.json)")
        )

    def _on_action_failed(self, exc: BaseException, headline: str) -> None:
        self._show_failure(exc, headline)
        self.actionFinished.emit()

    # -- the mirror -------------------------------------------------------------------------

    @Slot()
    def _on_mirror_save(self) -> None:
        self._store_mirror(self.mirror_edit.text().strip() or None)

    @Slot()
    def _on_mirror_clear(self) -> None:
        self.mirror_edit.clear()
        self._store_mirror(None)

    def _store_mirror(self, url: str | None) -> None:
        self._clear_message()
        service = self._ctx.service

        def stored(endpoint: HubEndpoint) -> None:
            self._show_mirror(endpoint)
            self.actionFinished.emit()

        self._ctx.tasks.run(
            lambda: service.set_model_mirror(url),
            while_alive(self, stored),
            while_alive(
                self,
                lambda exc: self._on_action_failed(exc, self.tr("The mirror was not saved")),
            ),
            owner=self,
        )

    def _show_mirror(self, endpoint: HubEndpoint) -> None:
        self._mirror = endpoint
        if not self.mirror_edit.hasFocus() or not self.mirror_edit.isModified():
            self.mirror_edit.setText(endpoint.stored or "")
            self.mirror_edit.setModified(False)
        self.mirror_origin.setText(mirror_origin_text(endpoint))

    # -- state ------------------------------------------------------------------------------

    @Slot()
    def _on_current_changed(self) -> None:
        self._update_controls()

    @Slot(QModelIndex, QModelIndex)
    def _on_data_changed(self, top_left: QModelIndex, _bottom_right: QModelIndex) -> None:
        if top_left.row() == self.view.currentIndex().row():
            self._update_controls()

    def _update_controls(self) -> None:
        listing = self.current_listing()
        progress = self._downloads.progress(listing.id) if listing is not None else None
        downloadable = (
            listing is not None
            and listing.in_catalog
            and (listing.state in (ModelState.AVAILABLE, ModelState.DAMAGED))
        )
        self.download_button.setEnabled(downloadable and progress is None)
        resume = listing is not None and listing.partial_bytes > 0
        self.download_button.setText(self.tr("Resume download") if resume else self.tr("Download"))
        self.cancel_button.setEnabled(
            progress is not None and progress.phase is not DownloadPhase.STOPPING
        )
        removable = listing is not None and (
            listing.state in (ModelState.INSTALLED, ModelState.DAMAGED) or listing.partial_bytes > 0
        )
        self.remove_button.setEnabled(removable and progress is None)
        self._show_details(listing)

    def _show_details(self, listing: ModelListing | None) -> None:
        if listing is None:
            self.details.clear()
            self.details.hide()
            self.languages.set_model(None)
            self.languages_label.hide()
            return
        lines = [
            texts.summary_text(listing),
            texts.runs_on_text(listing),
            texts.used_by_text(listing),
            texts.problem_text(listing),
        ]
        self.details.setText("\n".join(line for line in lines if line))
        self.details.setVisible(bool(self.details.text()))
        embeds = listing.kind == ModelKind.EMBEDDING
        self.languages.set_model(listing.model_id if embeds else None)
        self.languages_label.setVisible(embeds)

    def _show_info(self, text: str) -> None:
        self.message.setStyleSheet("")
        self.message.setText(html.escape(text))
        self.message.show()

    def _show_failure(self, exc: BaseException, headline: str | None = None) -> None:
        title, detail = describe(exc)
        detail_html = html.escape(detail).replace("\n", "<br>")
        self.message.setStyleSheet(theme.message_style("error"))
        self.message.setText(f"<b>{html.escape(headline or title)}</b><br>{detail_html}")
        self.message.show()

    def _clear_message(self) -> None:
        self.message.clear()
        self.message.hide()

    @Slot()
    def reject(self) -> None:
        self._say_downloads_go_on()
        super().reject()

    def _say_downloads_go_on(self) -> None:
        """Closing leaves downloads running; say where they can be followed."""
        if self._downloads.is_active() and self.isVisible():
            self._ctx.notifier.notify(
                self.tr("The download goes on"),
                self.tr("The status bar shows it; open Models to cancel it."),
            )


def mirror_origin_text(endpoint: HubEndpoint) -> str:
    """Where downloads go now, and who chose it."""

    if endpoint.origin.startswith(ENV_ORIGIN):
        return QCoreApplication.translate(
            "ModelsDialog",
            "Downloads come from {0}, set by the environment variable {1}; it overrides the "
            "setting here while it is set.",
        ).format(endpoint.url, endpoint.origin.removeprefix(ENV_ORIGIN))
    if endpoint.stored and endpoint.origin == "setting":
        return QCoreApplication.translate(
            "ModelsDialog", "Downloads come from {0}, your setting."
        ).format(endpoint.url)
    return QCoreApplication.translate(
        "ModelsDialog", "Downloads come from {0}, the default."
    ).format(endpoint.url)
