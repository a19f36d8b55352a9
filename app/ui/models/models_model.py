"""The Models dialog's table: one row per local model (the built-in one, the catalog's,
imported ones), with a running download's figures in its Status column.

Listings come from `KnowledgeService.list_models()`; download figures from ModelDownloads.
A reload of the same models changes only the rows whose data changed, so the selection and
the scroll position stay where the person left them.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import IntEnum
from typing import Any

from PySide6.QtCore import (
    QAbstractTableModel,
    QCoreApplication,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
)

from app.knowledge.service import ModelListing
from app.ui.models import texts
from app.ui.models.downloads import DownloadPhase, DownloadProgress

ModelIndex = QModelIndex | QPersistentModelIndex


class Column(IntEnum):
    NAME = 0
    KIND = 1
    LANGUAGES = 2
    DIMENSIONS = 3
    SIZE = 4
    LICENCE = 5
    STATUS = 6


def header_label(column: Column) -> str:
    labels = {
        Column.NAME: QCoreApplication.translate("LocalModelsModel", "Model"),
        Column.KIND: QCoreApplication.translate("LocalModelsModel", "Kind"),
        Column.LANGUAGES: QCoreApplication.translate("LocalModelsModel", "Languages"),
        Column.DIMENSIONS: QCoreApplication.translate("LocalModelsModel", "Dimensions"),
        Column.SIZE: QCoreApplication.translate("LocalModelsModel", "Size"),
        Column.LICENCE: QCoreApplication.translate("LocalModelsModel", "Licence"),
        Column.STATUS: QCoreApplication.translate("LocalModelsModel", "Status"),
    }
    return labels[column]


def download_status_text(progress: DownloadProgress) -> str:
    """ "Waiting…", "12 MB of 135 MB · 2.1 MB/s", "Stopping…"."""
    if progress.phase is DownloadPhase.WAITING:
        return QCoreApplication.translate("LocalModelsModel", "Waiting to download…")
    if progress.phase is DownloadPhase.STOPPING:
        if progress.resume:
            return QCoreApplication.translate("LocalModelsModel", "Stopping, then resuming…")
        return QCoreApplication.translate("LocalModelsModel", "Stopping…")
    if not progress.total:
        return QCoreApplication.translate("LocalModelsModel", "Starting the download…")
    text = QCoreApplication.translate("LocalModelsModel", "{0} of {1}").format(
        texts.size_text(progress.done), texts.size_text(progress.total)
    )
    if progress.rate:
        text = QCoreApplication.translate("LocalModelsModel", "{0} · {1}").format(
            text, texts.rate_text(progress.rate)
        )
    return text


class LocalModelsModel(QAbstractTableModel):
    LISTING_ROLE = Qt.ItemDataRole.UserRole
    # the row's download (DownloadProgress), or None
    DOWNLOAD_ROLE = Qt.ItemDataRole.UserRole + 1
    # 0..1 while a download with a known size runs, else None (the delegate draws a bar)
    FRACTION_ROLE = Qt.ItemDataRole.UserRole + 2

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._rows: list[ModelListing] = []
        self._downloads: dict[str, DownloadProgress] = {}

    # -- content ----------------------------------------------------------------------------

    def listings(self) -> list[ModelListing]:
        return list(self._rows)

    def listing(self, row: int) -> ModelListing | None:
        return self._rows[row] if 0 <= row < len(self._rows) else None

    def row_of(self, model_id: str) -> int:
        """The row of a bare model id, -1 when it is not listed."""
        return next((row for row, m in enumerate(self._rows) if m.id == model_id), -1)

    def set_listings(self, listings: Sequence[ModelListing]) -> None:
        new = list(listings)
        if [m.id for m in new] != [m.id for m in self._rows]:
            self.beginResetModel()
            self._rows = new
            self.endResetModel()
            return
        for row, (old, fresh) in enumerate(zip(self._rows, new, strict=True)):
            if old != fresh:
                self._rows[row] = fresh
                self._row_changed(row)

    def set_download(self, model_id: str, progress: DownloadProgress | None) -> None:
        """Show (or, with None, stop showing) a download's figures in its row."""
        if progress is None:
            if self._downloads.pop(model_id, None) is None:
                return
        else:
            self._downloads[model_id] = progress
        row = self.row_of(model_id)
        if row >= 0:
            self._row_changed(row)

    def download(self, model_id: str) -> DownloadProgress | None:
        return self._downloads.get(model_id)

    def _row_changed(self, row: int) -> None:
        self.dataChanged.emit(self.index(row, 0), self.index(row, len(Column) - 1))

    # -- QAbstractTableModel ----------------------------------------------------------------

    def rowCount(self, parent: ModelIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: ModelIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(Column)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if (
            orientation == Qt.Orientation.Horizontal
            and role == Qt.ItemDataRole.DisplayRole
            and 0 <= section < len(Column)
        ):
            return header_label(Column(section))
        return None

    def flags(self, index: ModelIndex) -> Qt.ItemFlag:
        if not self._valid(index):
            return Qt.ItemFlag.NoItemFlags
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable

    def data(self, index: ModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not self._valid(index):
            return None
        listing = self._rows[index.row()]
        column = Column(index.column())
        if role == Qt.ItemDataRole.DisplayRole:
            return self._text(listing, column)
        if role == Qt.ItemDataRole.ToolTipRole:
            return self._tooltip(listing, column)
        if role == Qt.ItemDataRole.TextAlignmentRole and column in (
            Column.DIMENSIONS,
            Column.SIZE,
        ):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == self.LISTING_ROLE:
            return listing
        if role == self.DOWNLOAD_ROLE:
            return self._downloads.get(listing.id)
        if role == self.FRACTION_ROLE and column is Column.STATUS:
            progress = self._downloads.get(listing.id)
            if progress is not None and progress.phase is DownloadPhase.RUNNING:
                return progress.fraction
        return None

    def _valid(self, index: ModelIndex) -> bool:
        return (
            index.isValid()
            and not index.parent().isValid()
            and 0 <= index.row() < len(self._rows)
            and 0 <= index.column() < len(Column)
        )

    def _text(self, listing: ModelListing, column: Column) -> str:
        if column is Column.NAME:
            return texts.display_name(listing)
        if column is Column.KIND:
            return texts.kind_text(listing.kind)
        if column is Column.LANGUAGES:
            return texts.languages_text(listing.languages)
        if column is Column.DIMENSIONS:
            return str(listing.dimensions) if listing.dimensions else "—"
        if column is Column.SIZE:
            return texts.size_of(listing)
        if column is Column.LICENCE:
            return texts.licence_text(listing)
        return self.status_text(listing)

    def status_text(self, listing: ModelListing) -> str:
        progress = self._downloads.get(listing.id)
        if progress is not None:
            return download_status_text(progress)
        return texts.state_text(listing)

    def _tooltip(self, listing: ModelListing, column: Column) -> str | None:
        if column is Column.NAME:
            lines = [
                f"local:{listing.id}",
                texts.summary_text(listing),
                texts.quality_text(listing),
            ]
            return "\n".join(line for line in lines if line)
        if column is Column.STATUS:
            lines = [texts.used_by_text(listing), texts.problem_text(listing)]
            return "\n".join(line for line in lines if line) or None
        return None
