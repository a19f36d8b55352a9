"""A running model download in one line: what downloads, a progress bar with its figures,
and Cancel. The model pickers show one under each picker; the status bar shows one that
follows whichever download runs (so a download started in a closed dialog stays in view)."""

from __future__ import annotations

from PySide6.QtCore import Qt, Slot
from PySide6.QtWidgets import QHBoxLayout, QLabel, QProgressBar, QPushButton, QWidget

from app.ui.models.downloads import DownloadPhase, DownloadProgress, ModelDownloads
from app.ui.models.models_model import download_status_text


class DownloadStrip(QWidget):
    """Follows one download (`follow`), or with `auto` the first one of any."""

    def __init__(
        self,
        downloads: ModelDownloads,
        parent: QWidget | None = None,
        *,
        auto: bool = False,
        compact: bool = False,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("downloadStrip")
        self._downloads = downloads
        self._auto = auto
        self._model: str | None = None
        self.label = QLabel(self)
        self.label.setObjectName("downloadLabel")
        self.bar = QProgressBar(self)
        self.bar.setObjectName("downloadProgress")
        self.bar.setTextVisible(False)
        self.bar.setRange(0, 1000)
        self.cancel_button = QPushButton(self.tr("Cancel"), self)
        self.cancel_button.setObjectName("downloadCancelButton")
        self.cancel_button.setToolTip(
            self.tr("Stop the download; what was downloaded is kept for a later resume.")
        )
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.label, 1)
        layout.addWidget(self.bar)
        layout.addWidget(self.cancel_button)
        if compact:
            self.bar.setMaximumWidth(120)
            self.label.setTextInteractionFlags(Qt.TextInteractionFlag.NoTextInteraction)
        self._connect_signals()
        self._refresh()

    def _connect_signals(self) -> None:
        self._downloads.changed.connect(self._on_changed)
        self.cancel_button.clicked.connect(self._on_cancel)

    def model(self) -> str | None:
        return self._model

    def follow(self, model_id: str | None) -> None:
        self._model = model_id
        self._refresh()

    @Slot(str)
    def _on_changed(self, _model_id: str) -> None:
        self._refresh()

    @Slot()
    def _on_cancel(self) -> None:
        progress = self._progress()
        if progress is not None:
            self._downloads.cancel(progress.model_id)

    def _progress(self) -> DownloadProgress | None:
        if self._auto:
            running = self._downloads.downloads()
            return running[0] if running else None
        return self._downloads.progress(self._model) if self._model else None

    def _refresh(self) -> None:
        progress = self._progress()
        self.setVisible(progress is not None)
        if progress is None:
            return
        waiting = len(self._downloads.downloads()) - 1 if self._auto else 0
        text = self.tr("Downloading {0}: {1}").format(
            progress.model_id, download_status_text(progress)
        )
        if waiting > 0:
            text = self.tr("{0} (and {1} more waiting)").format(text, waiting)
        self.label.setText(text)
        fraction = progress.fraction
        if progress.phase is DownloadPhase.RUNNING and fraction is not None:
            self.bar.setRange(0, 1000)
            self.bar.setValue(round(fraction * 1000))
        elif progress.phase is DownloadPhase.RUNNING:
            self.bar.setRange(0, 0)  # busy until the hub has said how much
        self.cancel_button.setEnabled(progress.phase is not DownloadPhase.STOPPING)
