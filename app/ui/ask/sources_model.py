"""The sources of the answer on screen: the numbered passages the chat model was given."""

from __future__ import annotations

from enum import IntEnum
from typing import Any

from PySide6.QtCore import (
    QAbstractListModel,
    QLocale,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
)

from app.knowledge.types import AskSource

Index = QModelIndex | QPersistentModelIndex


class SourceRole(IntEnum):
    SOURCE = Qt.ItemDataRole.UserRole + 1  # the AskSource
    NUMBER = Qt.ItemDataRole.UserRole + 2
    CITED = Qt.ItemDataRole.UserRole + 3  # whether the answer cites it


class AskSourcesModel(QAbstractListModel):
    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._sources: list[AskSource] = []
        self._cited: frozenset[int] = frozenset()

    def set_sources(self, sources: list[AskSource], cited: frozenset[int] = frozenset()) -> None:
        self.beginResetModel()
        self._sources = list(sources)
        self._cited = cited
        self.endResetModel()

    def set_cited(self, cited: frozenset[int]) -> None:
        """Mark the cited sources (the answer finished); only their rows change."""
        self._cited = cited
        if self._sources:
            self.dataChanged.emit(
                self.index(0, 0), self.index(len(self._sources) - 1, 0), [SourceRole.CITED]
            )

    def clear(self) -> None:
        self.set_sources([])

    def source(self, row: int) -> AskSource:
        return self._sources[row]

    def rowCount(self, parent: Index = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self._sources)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._sources):
            return None
        source = self._sources[index.row()]
        result = source.result
        if role == Qt.ItemDataRole.DisplayRole:
            score = QLocale().toString(result.score, "f", 3)
            if result.page is not None:
                return self.tr("[{0}] {1}, page {2} · {3}").format(
                    source.number, result.title, result.page, score
                )
            return self.tr("[{0}] {1} · {2}").format(source.number, result.title, score)
        if role == Qt.ItemDataRole.ToolTipRole:
            return " ".join(result.text.split())[:600]
        if role == Qt.ItemDataRole.FontRole:
            return None
        if role == SourceRole.SOURCE:
            return source
        if role == SourceRole.NUMBER:
            return source.number
        if role == SourceRole.CITED:
            return source.number in self._cited
        return None
