"""A thin list model over the ranked results of one search (one base or several)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
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

from app.knowledge.types import BaseHit, ScoreKind, SearchResult
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
    BASE_ID = Qt.ItemDataRole.UserRole + 14  # the base the result belongs to
    BASE_NAME = Qt.ItemDataRole.UserRole + 15  # its name in a search of several bases, else ""
    OCR = Qt.ItemDataRole.UserRole + 16  # bool: the text was recognised from a page image


@dataclass(frozen=True, slots=True)
class _Row:
    rank: int  # in the list shown (a search of several bases merges their ranks)
    result: SearchResult
    base_id: str
    base_name: str  # shown only when the list holds several bases' results


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
        self._rows: list[_Row] = []
        self._terms = Terms((), ())
        # Snippets are built on first paint; a search shows at most a hundred rows.
        self._snippets: dict[int, Snippet] = {}

    # -- data --------------------------------------------------------------------------

    def set_results(self, results: list[SearchResult], query: str, base_id: str = "") -> None:
        """The results of a search of one base (`base_id`)."""
        self._reset([_Row(r.rank, r, base_id, "") for r in results], query)

    def set_hits(self, hits: Sequence[BaseHit], query: str) -> None:
        """The merged results of a search of several bases, each naming its base."""
        self._reset([_Row(h.rank, h.result, h.base.id, h.base.name) for h in hits], query)

    def _reset(self, rows: list[_Row], query: str) -> None:
        self.beginResetModel()
        self._rows = rows
        self._terms = query_terms(query)
        self._snippets.clear()
        self.endResetModel()

    def clear(self) -> None:
        self.set_results([], "")

    def results(self) -> list[SearchResult]:
        return [row.result for row in self._rows]

    def result(self, row: int) -> SearchResult:
        return self._rows[row].result

    def base_id(self, row: int) -> str:
        return self._rows[row].base_id

    # -- Qt model ----------------------------------------------------------------------

    def rowCount(self, parent: AnyIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self._rows)

    def flags(self, index: AnyIndex) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return (
            Qt.ItemFlag.ItemIsEnabled
            | Qt.ItemFlag.ItemIsSelectable
            | Qt.ItemFlag.ItemNeverHasChildren
        )

    def data(self, index: AnyIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._rows):
            return None
        row = self._rows[index.row()]
        result = row.result
        if role == Qt.ItemDataRole.DisplayRole or role == ResultRole.TITLE:
            return result.title
        if role == Qt.ItemDataRole.ToolTipRole:
            return result.source[:_TOOLTIP_SOURCE_CHARS]
        if role == Qt.ItemDataRole.AccessibleTextRole:
            return self._snippet(index.row()).text
        if role == ResultRole.BASE_ID:
            return row.base_id
        if role == ResultRole.BASE_NAME:
            return row.base_name
        if role == ResultRole.RANK:
            return row.rank
        return self._custom(index.row(), result, role)

    def _custom(self, row: int, result: SearchResult, role: int) -> Any:
        if role == ResultRole.RESULT:
            return result
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
        if role == ResultRole.OCR:
            return result.ocr
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
            snippet = make_snippet(self._rows[row].result.text, self._terms)
            self._snippets[row] = snippet
        return snippet
