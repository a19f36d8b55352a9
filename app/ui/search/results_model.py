"""A thin list model over the ranked results of one search."""

from __future__ import annotations

from enum import IntEnum
from pathlib import PurePosixPath, PureWindowsPath
from typing import Any

from PySide6.QtCore import (
    QAbstractListModel,
    QLocale,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
)

from app.knowledge.types import ScoreKind, SearchResult
from app.ui.search.snippet import Snippet, Terms, make_snippet, query_terms

AnyIndex = QModelIndex | QPersistentModelIndex
_TOOLTIP_SOURCE_CHARS = 300


class ResultRole(IntEnum):
    RESULT = Qt.ItemDataRole.UserRole + 1  # the SearchResult
    RANK = Qt.ItemDataRole.UserRole + 2
    SCORE = Qt.ItemDataRole.UserRole + 3  # float
    SCORE_TEXT = Qt.ItemDataRole.UserRole + 4  # three decimals, in the person's locale
    SCORE_KIND = Qt.ItemDataRole.UserRole + 5  # "relevance" | "ranking"
    SCORE_KIND_TEXT = Qt.ItemDataRole.UserRole + 6  # translated
    TITLE = Qt.ItemDataRole.UserRole + 7
    ORIGIN = Qt.ItemDataRole.UserRole + 8  # file path or URL; "" for notes
    PAGE = Qt.ItemDataRole.UserRole + 9  # int or None
    CONCEPT_ID = Qt.ItemDataRole.UserRole + 10
    SNIPPET_HTML = Qt.ItemDataRole.UserRole + 11
    SNIPPET_TEXT = Qt.ItemDataRole.UserRole + 12
    HIT_SPANS = Qt.ItemDataRole.UserRole + 13  # list of (start, end) in SNIPPET_TEXT


def origin_of(source: str) -> str:
    """The place a result came from worth showing: a path or URL. A note's source is its
    whole text, which would only repeat the snippet, so it shows nothing."""
    if "\n" in source or len(source) > 2000:
        return ""
    if source.startswith(("http://", "https://")):
        return source
    if PurePosixPath(source).is_absolute() or PureWindowsPath(source).is_absolute():
        return source
    return ""


class SearchResultsModel(QAbstractListModel):
    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._results: list[SearchResult] = []
        self._terms = Terms((), ())
        # Snippets are built on first paint; a search shows at most a hundred rows.
        self._snippets: dict[int, Snippet] = {}

    # -- data --------------------------------------------------------------------------

    def set_results(self, results: list[SearchResult], query: str) -> None:
        self.beginResetModel()
        self._results = list(results)
        self._terms = query_terms(query)
        self._snippets.clear()
        self.endResetModel()

    def clear(self) -> None:
        self.set_results([], "")

    def results(self) -> list[SearchResult]:
        return list(self._results)

    def result(self, row: int) -> SearchResult:
        return self._results[row]

    # -- Qt model ----------------------------------------------------------------------

    def rowCount(self, parent: AnyIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self._results)

    def flags(self, index: AnyIndex) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return (
            Qt.ItemFlag.ItemIsEnabled
            | Qt.ItemFlag.ItemIsSelectable
            | Qt.ItemFlag.ItemNeverHasChildren
        )

    def data(self, index: AnyIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._results):
            return None
        result = self._results[index.row()]
        if role == Qt.ItemDataRole.DisplayRole or role == ResultRole.TITLE:
            return result.title
        if role == Qt.ItemDataRole.ToolTipRole:
            return result.source[:_TOOLTIP_SOURCE_CHARS]
        if role == Qt.ItemDataRole.AccessibleTextRole:
            return self._snippet(index.row()).text
        return self._custom(index.row(), result, role)

    def _custom(self, row: int, result: SearchResult, role: int) -> Any:
        if role == ResultRole.RESULT:
            return result
        if role == ResultRole.RANK:
            return result.rank
        if role == ResultRole.SCORE:
            return result.score
        if role == ResultRole.SCORE_TEXT:
            return QLocale().toString(result.score, "f", 3)
        if role == ResultRole.SCORE_KIND:
            return str(result.score_kind)
        if role == ResultRole.SCORE_KIND_TEXT:
            return self.score_kind_text(result.score_kind)
        if role == ResultRole.ORIGIN:
            return origin_of(result.source)
        if role == ResultRole.PAGE:
            return result.page
        if role == ResultRole.CONCEPT_ID:
            return result.concept_id
        if role == ResultRole.SNIPPET_HTML:
            return self._snippet(row).html
        if role == ResultRole.SNIPPET_TEXT:
            return self._snippet(row).text
        if role == ResultRole.HIT_SPANS:
            return list(self._snippet(row).spans)
        return None

    # -- helpers -----------------------------------------------------------------------

    def score_kind_text(self, kind: ScoreKind) -> str:
        if kind is ScoreKind.RELEVANCE:
            return self.tr("relevance")
        return self.tr("ranking")

    def _snippet(self, row: int) -> Snippet:
        snippet = self._snippets.get(row)
        if snippet is None:
            snippet = make_snippet(self._results[row].text, self._terms)
            self._snippets[row] = snippet
        return snippet
