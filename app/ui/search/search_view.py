"""The search view: a query box searching this base or every base, ranked results with
highlighted snippets (each naming its base when several were searched), a cue when they
are only loosely related, the timings of each search stage, and a viewer that opens a hit
inside its whole document."""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from functools import partial

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, Qt, QTimer, Signal, Slot
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListView,
    QProgressBar,
    QPushButton,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from app.knowledge.types import Base, LowRelevance, MultiSearchResponse, SearchResponse
from app.ui import theme
from app.ui.context import UiContext
from app.ui.errors import describe, explain
from app.ui.search.chunk_viewer import ChunkViewer
from app.ui.search.debug_strip import DebugStrip
from app.ui.search.open_original import OriginalOpener
from app.ui.search.result_delegate import ResultDelegate
from app.ui.search.results_model import SearchResultsModel
from app.ui.search.room import make_room

# Searches faster than this never show the busy bar, so typing does not make it flicker.
BUSY_DELAY_MS = 150
SCOPE_SETTING = "search/scope"


class Scope(StrEnum):
    BASE = "base"  # the selected base
    ALL = "all"  # every base


class ViewState(StrEnum):
    NO_BASE = "no_base"
    HINT = "hint"
    RESULTS = "results"
    EMPTY = "empty"
    ERROR = "error"


class SearchView(QWidget):
    # SearchResponse (this base) or MultiSearchResponse (all bases), after it is displayed
    searchFinished = Signal(object)
    searchFailed = Signal(object)  # the exception, after it is displayed

    def __init__(self, ctx: UiContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("searchView")
        self._ctx = ctx
        self._base: Base | None = None
        # Bumped by every search and base change; a reply carrying an older number is stale.
        self._generation = 0
        self._running = False
        self._state = ViewState.NO_BASE
        self._shown_query = ""
        self._viewer: ChunkViewer | None = None
        # Items left out of the results (deletions that can still be undone); the window sets it.
        self.hidden_items: Callable[[], frozenset[str]] = frozenset
        self.opener = OriginalOpener(ctx, self)

        self._scope = QComboBox(self)
        self._scope.setObjectName("searchScope")
        self._scope.addItem(self.tr("This base"), Scope.BASE.value)
        self._scope.addItem(self.tr("All bases"), Scope.ALL.value)
        self._scope.setToolTip(self.tr("Search the selected knowledge base or all of them"))
        saved = self._scope.findData(str(ctx.settings.value(SCOPE_SETTING, Scope.BASE.value)))
        self._scope.setCurrentIndex(max(0, saved))
        self._query = QLineEdit(self)
        self._query.setObjectName("searchQuery")
        self._query.setClearButtonEnabled(True)
        self._button = QPushButton(self.tr("Search"), self)
        self._button.setObjectName("searchButton")
        self._busy = QProgressBar(self)
        self._busy.setObjectName("searchBusy")
        self._busy.setRange(0, 0)
        self._busy.setTextVisible(False)
        self._busy.setFixedHeight(4)
        self._busy.hide()
        self._busy_timer = QTimer(self)
        self._busy_timer.setSingleShot(True)
        self._busy_timer.setInterval(BUSY_DELAY_MS)

        self._strip = DebugStrip(self)
        self._summary = QLabel(self)
        self._summary.setObjectName("searchSummary")
        self._cue = QLabel(self)
        self._cue.setObjectName("searchLowRelevance")
        self._cue.setWordWrap(True)
        self._cue.setTextFormat(Qt.TextFormat.PlainText)
        self._cue.setStyleSheet(theme.message_box_style("info", "QLabel"))
        self._cue.hide()

        self._model = SearchResultsModel(self)
        self._list = QListView(self)
        self._list.setObjectName("searchResults")
        self._list.setModel(self._model)
        self._list.setItemDelegate(ResultDelegate(self._list))
        self._list.setResizeMode(QListView.ResizeMode.Adjust)
        self._list.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self._list.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self._list.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self._list.setAlternatingRowColors(True)
        self._list.setContextMenuPolicy(Qt.ContextMenuPolicy.ActionsContextMenu)
        self._show_action = QAction(self.tr("Show passage"), self._list)
        self._show_action.setObjectName("searchShowPassageAction")
        self._open_action = QAction(self.tr("Open original"), self._list)
        self._open_action.setObjectName("searchOpenOriginalAction")
        self._open_action.setShortcut(QKeySequence(Qt.Modifier.CTRL | Qt.Key.Key_Return))
        self._open_action.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
        self._list.addAction(self._show_action)
        self._list.addAction(self._open_action)

        self._message = QLabel(self)
        self._message.setObjectName("searchMessage")
        self._message.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self._message.setWordWrap(True)
        self._message.setTextFormat(Qt.TextFormat.PlainText)
        font = self._message.font()
        font.setPointSizeF(font.pointSizeF() * 1.2)
        self._message.setFont(font)
        self._detail = QLabel(self)
        self._detail.setObjectName("searchMessageDetail")
        self._detail.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self._detail.setWordWrap(True)
        self._detail.setTextFormat(Qt.TextFormat.PlainText)
        self._detail.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        self._stack = QStackedWidget(self)
        self._stack.setObjectName("searchStack")
        message_page = QWidget(self._stack)
        message_layout = QVBoxLayout(message_page)
        message_layout.addStretch(1)
        message_layout.addWidget(self._message)
        message_layout.addWidget(self._detail)
        message_layout.addStretch(2)
        self._stack.addWidget(message_page)
        self._stack.addWidget(self._list)

        self._build_layout()
        self._connect_signals()
        self._update_placeholder()
        self.set_base(None)

    def _build_layout(self) -> None:
        query_row = QHBoxLayout()
        query_row.addWidget(self._scope)
        query_row.addWidget(self._query, 1)
        query_row.addWidget(self._button)
        info_row = QHBoxLayout()
        info_row.addWidget(self._summary)
        info_row.addWidget(self._strip, 1)
        layout = QVBoxLayout(self)
        layout.addLayout(query_row)
        layout.addWidget(self._busy)
        layout.addLayout(info_row)
        layout.addWidget(self._cue)
        layout.addWidget(self._stack, 1)

    def _connect_signals(self) -> None:
        self._query.returnPressed.connect(self._on_search_requested)
        self._button.clicked.connect(self._on_search_requested)
        self._busy_timer.timeout.connect(self._on_busy_timeout)
        self._list.activated.connect(self._on_result_activated)
        self._scope.currentIndexChanged.connect(self._on_scope_changed)
        self._show_action.triggered.connect(self._on_show_passage)
        self._open_action.triggered.connect(self._on_open_original)

    # -- public ------------------------------------------------------------------------

    def set_base(self, base: Base | None) -> None:
        """Search this base from now on (None: nothing selected, the view is disabled)."""
        same = base is not None and self._base is not None and base.id == self._base.id
        keep = base is not None and self._base is not None and self.scope() is Scope.ALL
        self._base = base
        if same or keep:
            # Settings changed, or another base was chosen while all bases are searched:
            # the results on screen still answer the query.
            return
        self._generation += 1
        self._stop_busy()
        self._clear_results()
        self._query.setEnabled(base is not None)
        self._button.setEnabled(base is not None)
        if base is None:
            self._show_message(
                ViewState.NO_BASE,
                self.tr("No knowledge base selected"),
                self.tr("Choose a knowledge base on the left to search it."),
            )
        else:
            self._show_hint()

    def base(self) -> Base | None:
        return self._base

    def focus_query(self) -> None:
        self._query.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self._query.selectAll()

    def scope(self) -> Scope:
        return Scope(self._scope.currentData())

    def set_scope(self, scope: Scope) -> None:
        self._scope.setCurrentIndex(self._scope.findData(scope.value))

    def search(self, text: str | None = None) -> None:
        """Search for `text` (default: the query box); a newer search supersedes this one."""
        if self._base is None:
            return
        if text is not None:
            self._query.setText(text)
        query = self._query.text().strip()
        self._generation += 1
        if not query:
            self._stop_busy()
            self._clear_results()
            self._show_hint()
            return
        generation = self._generation
        service = self._ctx.service
        hidden = self.hidden_items()
        self._running = True
        self._busy_timer.start()
        if self.scope() is Scope.ALL:
            self._ctx.tasks.run(
                lambda: service.search_many(None, query),
                partial(self._on_many_done, generation),
                partial(self._on_search_failed, generation),
                owner=self,
            )
            return
        base_id = self._base.id
        self._ctx.tasks.run(
            lambda: service.search(base_id, query, exclude=hidden),
            partial(self._on_search_done, generation, base_id),
            partial(self._on_search_failed, generation),
            owner=self,
        )

    def open_result(self, row: int) -> ChunkViewer:
        """Show the result at `row` inside its document (in whichever base holds it)."""
        if self._viewer is None:
            self._viewer = ChunkViewer(self._ctx, self.opener, self)
        self._viewer.show_result(
            self._model.base_id(row), self._model.result(row), self._shown_query
        )
        return self._viewer

    def open_original(self, row: int) -> None:
        """Open the original of the result at `row` in the system's viewer, at its page."""
        self.opener.open(self._model.base_id(row), self._model.result(row))

    def low_relevance_cue(self) -> QLabel:
        return self._cue

    def state(self) -> ViewState:
        return self._state

    def is_busy(self) -> bool:
        return self._running

    def model(self) -> SearchResultsModel:
        return self._model

    def results_view(self) -> QListView:
        return self._list

    def debug_strip(self) -> DebugStrip:
        return self._strip

    def chunk_viewer(self) -> ChunkViewer | None:
        return self._viewer

    # -- slots -------------------------------------------------------------------------

    @Slot()
    def _on_search_requested(self) -> None:
        self.search()

    @Slot()
    def _on_busy_timeout(self) -> None:
        if self._running:
            self._busy.show()

    @Slot(QModelIndex)
    def _on_result_activated(self, index: QModelIndex | QPersistentModelIndex) -> None:
        if index.isValid():
            self.open_result(index.row())

    @Slot()
    def _on_show_passage(self) -> None:
        index = self._list.currentIndex()
        if index.isValid():
            self.open_result(index.row())

    @Slot()
    def _on_open_original(self) -> None:
        index = self._list.currentIndex()
        if index.isValid():
            self.open_original(index.row())

    @Slot(int)
    def _on_scope_changed(self, _index: int) -> None:
        self._ctx.settings.setValue(SCOPE_SETTING, self.scope().value)
        self._update_placeholder()
        if self._base is None:
            return
        asked = self._running or self._state in (ViewState.RESULTS, ViewState.EMPTY)
        if asked and self._query.text().strip():
            self.search()  # the same words, asked of the new scope (a running search is dropped)
        else:
            self._generation += 1
            self._stop_busy()
            self._clear_results()
            self._show_hint()

    def _on_search_done(self, generation: int, base_id: str, response: SearchResponse) -> None:
        if generation != self._generation:
            return  # a newer search or another base took over
        self._model.set_results(response.results, response.query, base_id)
        self._strip.show_response(response)
        self._summary.setText(self.tr("%n result(s)", "", len(response.results)))
        self._summary.setToolTip("")
        self._show_found(response.query, response.low_relevance)
        self.searchFinished.emit(response)

    def _on_many_done(self, generation: int, response: MultiSearchResponse) -> None:
        if generation != self._generation:
            return
        self._model.set_hits(response.hits, response.query)
        self._strip.show_many(response)
        summary = self.tr("%n result(s)", "", len(response.hits))
        if response.failures:
            summary += " \u00b7 " + self.tr(
                "%n knowledge base(s) could not be searched", "", len(response.failures)
            )
        self._summary.setText(summary)
        self._summary.setToolTip(
            "\n".join(f"{f.base.name}: {explain(f.code, f.message)}" for f in response.failures)
        )
        self._show_found(response.query, response.low_relevance)
        self.searchFinished.emit(response)

    def _show_found(self, query: str, low: LowRelevance | None) -> None:
        """Show what the model now holds: the list, or the empty message."""
        self._stop_busy()
        self._shown_query = query
        self._summary.show()
        if not self._model.rowCount():
            self._show_cue(None)
            self._show_message(
                ViewState.EMPTY,
                self.tr("No results"),
                self.tr("Nothing in this knowledge base matches the query. Try other words.")
                if self.scope() is Scope.BASE
                else self.tr("Nothing in any knowledge base matches the query. Try other words."),
            )
            return
        self._show_cue(low)
        self._state = ViewState.RESULTS
        self._stack.setCurrentWidget(self._list)
        self._list.setCurrentIndex(self._model.index(0, 0))
        self._list.scrollToTop()
        # After the layout took the cue and the rows in: then their heights are known.
        QTimer.singleShot(0, self, self._make_room)

    @Slot()
    def _make_room(self) -> None:
        if self._state is ViewState.RESULTS:
            make_room(self, self._list)

    def _show_cue(self, low: LowRelevance | None) -> None:
        if low is LowRelevance.WEAK_MATCH:
            self._cue.setText(
                self.tr("No result contains your words; these are only loosely related.")
            )
        elif low is LowRelevance.NO_WORD_MATCH:
            self._cue.setText(
                self.tr(
                    "No result contains your words; these were found by similar meaning and "
                    "may not be related."
                )
            )
        self._cue.setVisible(low is not None)

    def _on_search_failed(self, generation: int, error: BaseException) -> None:
        if generation != self._generation:
            return
        self._stop_busy()
        self._clear_results()
        headline, detail = describe(error)
        self._show_message(ViewState.ERROR, headline, detail, error=True)
        self.searchFailed.emit(error)

    # -- helpers -----------------------------------------------------------------------

    def _stop_busy(self) -> None:
        self._running = False
        self._busy_timer.stop()
        self._busy.hide()

    def _clear_results(self) -> None:
        self._model.clear()
        self._strip.clear()
        self._summary.clear()
        self._summary.hide()
        self._cue.hide()
        self._shown_query = ""

    def _update_placeholder(self) -> None:
        if self.scope() is Scope.ALL:
            self._query.setPlaceholderText(self.tr("Search all knowledge bases"))
        else:
            self._query.setPlaceholderText(self.tr("Search this knowledge base"))

    def _show_hint(self) -> None:
        self._show_message(
            ViewState.HINT,
            self.tr("Type a query and press Enter"),
            self.tr("Words or a question; the most relevant passages are listed first."),
        )

    def _show_message(
        self, state: ViewState, headline: str, detail: str, *, error: bool = False
    ) -> None:
        self._state = state
        self._message.setText(headline)
        self._message.setStyleSheet(theme.message_style("error") if error else "")
        self._detail.setText(detail)
        self._detail.setVisible(bool(detail))
        self._stack.setCurrentIndex(0)
