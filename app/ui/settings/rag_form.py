"""The controls of a knowledge base's retrieval settings, shared by the settings panel and the
new-base dialog. The search mode is derived from the embedding model (no model: full-text only;
a model: hybrid), so there is no mode selector and no fusion weight.

Given the window's context, the form also shows which languages the embedding model covers
(and lets the person say so), and downloads a local model picked before it is installed:
the picker keeps its previous model meanwhile, a strip under it shows the progress with
Cancel, and the model is chosen once installed."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
from typing import Any

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtWidgets import (
    QCheckBox,
    QDoubleSpinBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QMessageBox,
    QSpinBox,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.knowledge.service import ModelListing
from app.knowledge.types import (
    DEFAULT_CHUNK_OVERLAP,
    DEFAULT_CHUNK_SIZE,
    DEFAULT_DOCUMENT_COUNT,
    DEFAULT_OCR_MAX_PAGES,
    OCR_LANGUAGES,
    Base,
)
from app.ui import theme
from app.ui.context import UiContext
from app.ui.errors import describe
from app.ui.models import texts
from app.ui.models.download_strip import DownloadStrip
from app.ui.models.downloads import bare_id
from app.ui.models.languages import ModelLanguagesRow
from app.ui.settings.model_picker import ModelChoices, ModelPicker, ProviderInfo, Purpose

MAX_DOCUMENT_COUNT = 200  # the engine's limit (admin._check_settings)
MAX_CHUNK_SIZE = 100_000
MAX_OCR_PAGES = 10_000  # the engine's limit (ocr.settings)
DEFAULT_THRESHOLD = 0.5


@dataclass(frozen=True, slots=True)
class RagSettings:
    """The values the form edits, in the engine's terms."""

    embedding_model: str | None = None
    rerank_model: str | None = None
    document_count: int = DEFAULT_DOCUMENT_COUNT
    threshold: float | None = None
    chunk_size: int = DEFAULT_CHUNK_SIZE
    chunk_overlap: int = DEFAULT_CHUNK_OVERLAP
    # Text recognition of scans and pictures; None: on when the OCR extra is installed.
    ocr_enabled: bool | None = None
    ocr_languages: tuple[str, ...] = OCR_LANGUAGES
    ocr_max_pages: int = DEFAULT_OCR_MAX_PAGES

    @classmethod
    def of(cls, base: Base) -> RagSettings:
        return cls(
            embedding_model=base.embedding_model,
            rerank_model=base.rerank_model,
            document_count=base.document_count,
            threshold=base.threshold,
            chunk_size=base.chunk_size,
            chunk_overlap=base.chunk_overlap,
            ocr_enabled=base.ocr.enabled,
            ocr_languages=base.ocr.languages,
            ocr_max_pages=base.ocr.max_pages,
        )

    @property
    def chunks_valid(self) -> bool:
        return 0 <= self.chunk_overlap < self.chunk_size

    def create_arguments(self) -> dict[str, Any]:
        """`create_base` arguments."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def update_arguments(self, baseline: RagSettings) -> dict[str, Any]:
        """`update_base` arguments for what differs from `baseline`; the embedding model is
        left out (it changes through a restore or a backfill)."""
        return {
            f.name: getattr(self, f.name)
            for f in fields(self)
            if f.name != "embedding_model" and getattr(self, f.name) != getattr(baseline, f.name)
        }


class CollapsibleSection(QWidget):
    """A titled section whose body folds away behind an arrow button."""

    toggled = Signal(bool)

    def __init__(self, title: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.toggle = QToolButton(self)
        self.toggle.setObjectName("sectionToggle")
        self.toggle.setText(title)
        self.toggle.setCheckable(True)
        self.toggle.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.toggle.setAutoRaise(True)
        self.body = QWidget(self)
        self.body.setObjectName("sectionBody")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.toggle)
        layout.addWidget(self.body)
        self.set_expanded(False)
        self._connect_signals()

    def _connect_signals(self) -> None:
        self.toggle.toggled.connect(self._on_toggled)

    def is_expanded(self) -> bool:
        return self.toggle.isChecked()

    def set_expanded(self, expanded: bool) -> None:
        self.toggle.setChecked(expanded)
        self._on_toggled(expanded)

    @Slot(bool)
    def _on_toggled(self, expanded: bool) -> None:
        self.toggle.setArrowType(Qt.ArrowType.DownArrow if expanded else Qt.ArrowType.RightArrow)
        self.body.setVisible(expanded)
        self.toggled.emit(expanded)


class RagSettingsForm(QWidget):
    """Embedding and rerank pickers, document count, threshold and (folded) chunking; with
    `ctx`, the embedding model's languages and downloads of local models picked."""

    changed = Signal()
    # a model picked before it was installed is installed now: the owner lists the models
    # again, and the form chooses it once it is listed
    modelInstalled = Signal(str)

    def __init__(self, parent: QWidget | None = None, *, ctx: UiContext | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("ragForm")
        self._ctx = ctx
        self._loading = False
        # Tests answer the download question without a modal box.
        self.confirm_download: Callable[[ModelListing], bool] = self._confirm_download
        # picker -> the model (bare id) downloading for it / installed, to choose when listed
        self._downloading: dict[Purpose, str] = {}
        self._choose_when_listed: dict[Purpose, str] = {}
        self.embedding_picker = ModelPicker(Purpose.EMBEDDING, self)
        self.embedding_picker.setObjectName("embeddingModel")
        self.search_mode = QLabel(self)
        self.search_mode.setObjectName("searchMode")
        self.search_mode.setWordWrap(True)
        self.rerank_picker = ModelPicker(Purpose.RERANK, self)
        self.rerank_picker.setObjectName("rerankModel")
        self.languages: ModelLanguagesRow | None = None
        self.strips: dict[Purpose, DownloadStrip] = {}
        if ctx is not None:
            self.languages = ModelLanguagesRow(ctx, self)
            for purpose in Purpose:
                strip = DownloadStrip(ctx.downloads, self)
                strip.setObjectName(f"{purpose.value}DownloadStrip")
                self.strips[purpose] = strip
        self.document_count = QSpinBox(self)
        self.document_count.setObjectName("documentCount")
        self.document_count.setRange(1, MAX_DOCUMENT_COUNT)
        self.threshold_label = QLabel(self.tr("Relevance threshold:"), self)
        self.threshold_enabled = QCheckBox(self.tr("Drop results scoring below"), self)
        self.threshold_enabled.setObjectName("thresholdEnabled")
        self.threshold = QDoubleSpinBox(self)
        self.threshold.setObjectName("threshold")
        self.threshold.setRange(0.0, 1.0)
        self.threshold.setSingleStep(0.05)
        self.threshold.setDecimals(2)
        self.threshold.setValue(DEFAULT_THRESHOLD)
        self.threshold_hint = QLabel(
            self.tr(
                "Applies to reranked relevance scores only; ranking scores are never filtered."
            ),
            self,
        )
        self.threshold_hint.setWordWrap(True)
        self.advanced = CollapsibleSection(self.tr("Advanced"), self)
        self.advanced.setObjectName("advanced")
        self.chunk_size = QSpinBox(self.advanced.body)
        self.chunk_size.setObjectName("chunkSize")
        self.chunk_size.setRange(1, MAX_CHUNK_SIZE)
        self.chunk_size.setSingleStep(64)
        self.chunk_overlap = QSpinBox(self.advanced.body)
        self.chunk_overlap.setObjectName("chunkOverlap")
        self.chunk_overlap.setRange(0, MAX_CHUNK_SIZE)
        self.chunk_overlap.setSingleStep(16)
        self.chunk_error = QLabel(self.tr("The overlap must be smaller than the chunk size."))
        self.chunk_error.setObjectName("chunkError")
        self.chunk_error.setWordWrap(True)
        self.chunk_error.setStyleSheet(theme.message_style("error"))
        self.chunk_note = QLabel(
            self.tr(
                "Full-text search ranks passages of this many tokens. With an embedding "
                "model, passages are also cut into chunks the model reads whole. Changes "
                "apply to content added or reindexed after saving."
            )
        )
        self.chunk_note.setObjectName("chunkNote")
        self.chunk_note.setWordWrap(True)
        self._ocr_available = ctx.service.ocr_available() if ctx is not None else True
        self._ocr_loaded: bool | None = None
        self.ocr_enabled = QCheckBox(
            self.tr("Recognise text in scanned PDF pages and pictures (OCR)"), self.advanced.body
        )
        self.ocr_enabled.setObjectName("ocrEnabled")
        self.ocr_languages = {
            "ch": QCheckBox(self.tr("Chinese"), self.advanced.body),
            "en": QCheckBox(self.tr("English"), self.advanced.body),
        }
        for code, box in self.ocr_languages.items():
            box.setObjectName(f"ocrLanguage_{code}")
        self.ocr_max_pages = QSpinBox(self.advanced.body)
        self.ocr_max_pages.setObjectName("ocrMaxPages")
        self.ocr_max_pages.setRange(1, MAX_OCR_PAGES)
        self.ocr_note = QLabel(self.advanced.body)
        self.ocr_note.setObjectName("ocrNote")
        self.ocr_note.setWordWrap(True)
        self._build_layout()
        self.set_settings(RagSettings())
        self._connect_signals()

    def _build_layout(self) -> None:
        for spin in (self.chunk_size, self.chunk_overlap):
            spin.setSuffix(self.tr(" tokens"))
        self.document_count.setToolTip(self.tr("How many results a search returns."))
        threshold_row = QHBoxLayout()
        threshold_row.addWidget(self.threshold_enabled)
        threshold_row.addWidget(self.threshold)
        threshold_row.addStretch(1)
        form = QFormLayout()
        self.fields = form
        form.addRow(self.tr("Embedding model:"), self.embedding_picker)
        if Purpose.EMBEDDING in self.strips:
            form.addRow("", self.strips[Purpose.EMBEDDING])
        form.addRow("", self.search_mode)
        if self.languages is not None:
            form.addRow(self.tr("Languages:"), self.languages)
        form.addRow(self.tr("Rerank model:"), self.rerank_picker)
        if Purpose.RERANK in self.strips:
            form.addRow("", self.strips[Purpose.RERANK])
        form.addRow(self.tr("Document count:"), self.document_count)
        form.addRow(self.threshold_label, threshold_row)
        form.addRow("", self.threshold_hint)
        sizes = QFormLayout()
        sizes.addRow(self.tr("Chunk size:"), self.chunk_size)
        sizes.addRow(self.tr("Chunk overlap:"), self.chunk_overlap)
        # The wrapped notes sit in a box layout, not in spanning form rows: a form layout
        # shares the height of such rows out evenly instead of by what each one needs, and
        # the note lost its last line when the error appeared above it.
        self.ocr_max_pages.setSuffix(self.tr(" pages"))
        self.ocr_max_pages.setToolTip(
            self.tr("Most pages of one document whose text is recognised.")
        )
        languages = QHBoxLayout()
        for box in self.ocr_languages.values():
            languages.addWidget(box)
        languages.addStretch(1)
        ocr = QFormLayout()
        ocr.addRow(self.tr("Recognise:"), languages)
        ocr.addRow(self.tr("At most:"), self.ocr_max_pages)
        self.ocr_note.setText(
            self.tr(
                "Pages without a usable text layer and pictures are read by the OCR models "
                "installed with Trove, a page at a time, in a background process."
            )
            if self._ocr_available
            else self.tr(
                "Text recognition is not installed: scans and pictures cannot be read. "
                "Install Trove with its OCR component to turn it on."
            )
        )
        advanced = QVBoxLayout(self.advanced.body)
        advanced.addLayout(sizes)
        advanced.addWidget(self.chunk_error)
        advanced.addWidget(self.chunk_note)
        advanced.addWidget(self.ocr_enabled)
        advanced.addLayout(ocr)
        advanced.addWidget(self.ocr_note)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(form)
        layout.addWidget(self.advanced)

    def _connect_signals(self) -> None:
        self.embedding_picker.modelChanged.connect(self._on_changed)
        self.rerank_picker.modelChanged.connect(self._on_changed)
        self.document_count.valueChanged.connect(self._on_changed)
        self.threshold_enabled.toggled.connect(self._on_changed)
        self.threshold.valueChanged.connect(self._on_changed)
        self.chunk_size.valueChanged.connect(self._on_changed)
        self.chunk_overlap.valueChanged.connect(self._on_changed)
        self.ocr_enabled.toggled.connect(self._on_changed)
        for box in self.ocr_languages.values():
            box.toggled.connect(self._on_changed)
        self.ocr_max_pages.valueChanged.connect(self._on_changed)
        if self._ctx is not None:
            self.embedding_picker.downloadRequested.connect(self._on_embedding_download)
            self.rerank_picker.downloadRequested.connect(self._on_rerank_download)
            # Another model chosen meanwhile (or another base shown): the download goes on,
            # but choosing its model when it ends would undo the person's choice.
            self.embedding_picker.modelChanged.connect(self._on_embedding_chosen)
            self.rerank_picker.modelChanged.connect(self._on_rerank_chosen)
            downloads = self._ctx.downloads
            downloads.finished.connect(self._on_download_finished)
            downloads.cancelled.connect(self._on_download_ended)
            downloads.failed.connect(self._on_download_failed)

    # -- values ---------------------------------------------------------------------------

    def settings(self) -> RagSettings:
        threshold = round(self.threshold.value(), 2) if self.threshold_enabled.isChecked() else None
        return RagSettings(
            embedding_model=self.embedding_picker.current_model(),
            rerank_model=self.rerank_picker.current_model(),
            document_count=self.document_count.value(),
            threshold=threshold,
            chunk_size=self.chunk_size.value(),
            chunk_overlap=self.chunk_overlap.value(),
            ocr_enabled=self._ocr_choice(),
            ocr_languages=tuple(c for c, box in self.ocr_languages.items() if box.isChecked()),
            ocr_max_pages=self.ocr_max_pages.value(),
        )

    def _ocr_choice(self) -> bool | None:
        """The box's state, or None (the default) while it shows the default untouched."""
        checked = self.ocr_enabled.isChecked()
        if self._ocr_loaded is None and checked == self._ocr_available:
            return None
        return checked

    def set_settings(self, settings: RagSettings) -> None:
        self._loading = True
        try:
            self.embedding_picker.set_current_model(settings.embedding_model)
            self.rerank_picker.set_current_model(settings.rerank_model)
            self.document_count.setValue(settings.document_count)
            self.threshold_enabled.setChecked(settings.threshold is not None)
            if settings.threshold is not None:
                self.threshold.setValue(settings.threshold)
            self.chunk_size.setValue(settings.chunk_size)
            self.chunk_overlap.setValue(settings.chunk_overlap)
            self._ocr_loaded = settings.ocr_enabled
            on = self._ocr_available if settings.ocr_enabled is None else settings.ocr_enabled
            self.ocr_enabled.setChecked(on)
            for code, box in self.ocr_languages.items():
                box.setChecked(code in settings.ocr_languages)
            self.ocr_max_pages.setValue(settings.ocr_max_pages)
        finally:
            self._loading = False
        self._refresh()
        self.changed.emit()

    def set_providers(self, providers: Sequence[ProviderInfo]) -> None:
        self.embedding_picker.set_providers(providers)
        self.rerank_picker.set_providers(providers)

    def set_choices(self, choices: ModelChoices) -> None:
        """List the providers' and the local models; a model downloaded for a picker is
        chosen as soon as it is listed installed."""
        self.embedding_picker.set_choices(choices)
        self.rerank_picker.set_choices(choices)
        for purpose, model in list(self._choose_when_listed.items()):
            picker = self.picker(purpose)
            wanted = f"local:{model}"
            if picker.is_installed(wanted):
                picker.set_current_model(wanted)  # (which forgets it)
                self._choose_when_listed.pop(purpose, None)

    def picker(self, purpose: Purpose) -> ModelPicker:
        return self.embedding_picker if purpose is Purpose.EMBEDDING else self.rerank_picker

    def is_valid(self) -> bool:
        settings = self.settings()
        return settings.chunks_valid and bool(settings.ocr_languages)

    # -- reactions ------------------------------------------------------------------------

    @Slot()
    def _on_changed(self) -> None:
        if self._loading:
            return
        self._refresh()
        self.changed.emit()

    # -- downloads of picked models --------------------------------------------------------

    @Slot(str)
    def _on_embedding_download(self, model: str) -> None:
        self._offer_download(Purpose.EMBEDDING, model)

    @Slot(str)
    def _on_rerank_download(self, model: str) -> None:
        self._offer_download(Purpose.RERANK, model)

    @Slot(object)
    def _on_embedding_chosen(self, _model: str | None) -> None:
        self._forget_download(Purpose.EMBEDDING)

    @Slot(object)
    def _on_rerank_chosen(self, _model: str | None) -> None:
        self._forget_download(Purpose.RERANK)

    def _forget_download(self, purpose: Purpose) -> None:
        self._downloading.pop(purpose, None)
        self._choose_when_listed.pop(purpose, None)

    def _offer_download(self, purpose: Purpose, model: str) -> None:
        assert self._ctx is not None
        listing = self.picker(purpose).local_listing(model)
        if listing is None or not self.confirm_download(listing):
            return
        bare = bare_id(model)
        self._downloading[purpose] = bare
        self._choose_when_listed.pop(purpose, None)
        self.strips[purpose].follow(bare)
        self._ctx.downloads.start(bare)

    def _confirm_download(self, listing: ModelListing) -> bool:
        box = QMessageBox(
            QMessageBox.Icon.Question,
            self.tr("Download a model"),
            self.tr(
                "Download {0}? It is about {1}. It is chosen here once it is installed; "
                "you can go on meanwhile."
            ).format(listing.id, texts.size_text(texts.download_left(listing))),
            QMessageBox.StandardButton.NoButton,
            self,
        )
        box.setInformativeText(
            "\n".join(
                line for line in (texts.summary_text(listing), texts.licence_text(listing)) if line
            )
        )
        download = box.addButton(self.tr("Download"), QMessageBox.ButtonRole.AcceptRole)
        box.addButton(QMessageBox.StandardButton.Cancel)
        box.exec()
        return box.clickedButton() is download

    def _purposes_of(self, model: str) -> list[Purpose]:
        return [p for p, m in self._downloading.items() if m == model]

    @Slot(str, object)
    def _on_download_finished(self, model: str, _result: object) -> None:
        for purpose in self._purposes_of(model):
            del self._downloading[purpose]
            self._choose_when_listed[purpose] = model
            self.modelInstalled.emit(model)

    @Slot(str, int)
    def _on_download_ended(self, model: str, _kept: int) -> None:
        for purpose in self._purposes_of(model):
            del self._downloading[purpose]  # the picker kept its previous model

    @Slot(str, object)
    def _on_download_failed(self, model: str, exc: BaseException) -> None:
        if self._purposes_of(model) and self._ctx is not None:
            title = self.tr("The download of {0} failed").format(model)
            self._ctx.notifier.error(title, describe(exc)[1])
        self._on_download_ended(model, 0)

    def _refresh(self) -> None:
        reranked = self.rerank_picker.current_model() is not None
        # Without a reranker every score is a ranking score, which a threshold never filters.
        for widget in (
            self.threshold_label,
            self.threshold_enabled,
            self.threshold,
            self.threshold_hint,
        ):
            widget.setVisible(reranked)
        self.threshold.setEnabled(self.threshold_enabled.isChecked())
        valid = self.is_valid()
        self.chunk_error.setVisible(not valid)
        if not valid:
            self.advanced.set_expanded(True)  # an error never hides behind the fold
        reading = self.ocr_enabled.isChecked()
        for box in self.ocr_languages.values():
            box.setEnabled(reading)
        self.ocr_max_pages.setEnabled(reading)
        embedding = self.embedding_picker.current_model()
        if self.languages is not None:
            self.languages.set_model(embedding)
            self.fields.setRowVisible(self.languages, embedding is not None)
        if embedding is None:
            self.search_mode.setText(self.tr("Searches use full-text matching (BM25) only."))
        else:
            self.search_mode.setText(
                self.tr("Searches combine full-text matching with this model's vectors (hybrid).")
            )
