"""The Ask view: a question answered by a chat model from the passages of this base (or
every base), streamed in, with numbered citations that open the passage viewer at the exact
span, the sources given to the model with their scores, Stop, and the conversation kept per
base.

The GUI thread never waits: rewrite and retrieval run on a worker (`ctx.tasks.run`), the
answer streams over httpx.AsyncClient on the window's qasync loop (ProbeRunner), and a turn
is saved on a worker too. Pieces are appended to the text as they come; the turn is drawn
again with its links once the answer is complete.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from enum import StrEnum
from functools import partial

from PySide6.QtCore import (
    QLocale,
    QModelIndex,
    QPersistentModelIndex,
    Qt,
    QTimer,
    QUrl,
    Signal,
    Slot,
)
from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListView,
    QPushButton,
    QSplitter,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from app.knowledge.service import AskPlan, KnowledgeService
from app.knowledge.types import (
    AnswerState,
    AskAnswer,
    AskSource,
    AskTurn,
    Base,
    ErrorCode,
    TroveError,
)
from app.ui import theme
from app.ui.ask import conversation
from app.ui.ask.sources_model import AskSourcesModel
from app.ui.context import UiContext
from app.ui.errors import describe
from app.ui.providers.probe_runner import ProbeRunner
from app.ui.search.chunk_viewer import ChunkViewer
from app.ui.search.open_original import OriginalOpener

SCOPE_SETTING = "ask/scope"
FLUSH_MS = 40


class AskScope(StrEnum):
    BASE = "base"
    ALL = "all"


class AskState(StrEnum):
    IDLE = "idle"
    PREPARING = "preparing"  # rewrite and retrieval on a worker
    STREAMING = "streaming"


def _ms(value: float) -> str:
    return QLocale().toString(value, "f", 0)


class AskView(QWidget):
    answerFinished = Signal(object)  # AskAnswer, once shown (its turn may still be saving)
    askFailed = Signal(object)  # the exception, once shown
    turnSaved = Signal(object)  # AskTurn, once in the catalog
    conversationLoaded = Signal()

    def __init__(self, ctx: UiContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("askView")
        self._ctx = ctx
        self._base: Base | None = None
        self._generation = 0
        self._state = AskState.IDLE
        self._turns: list[AskTurn] = []
        self._plan: AskPlan | None = None
        self._pieces: list[str] = []
        self._pending_at = 0  # where the streaming turn starts in the conversation document
        self._unshown: list[str] = []  # pieces not drawn yet
        self._flush_timer = QTimer(self)
        self._flush_timer.setSingleShot(True)
        self._flush_timer.setInterval(FLUSH_MS)
        self._viewer: ChunkViewer | None = None
        self._runner = ProbeRunner(self)
        self.opener = OriginalOpener(ctx, self)

        self._scope = QComboBox(self)
        self._scope.setObjectName("askScope")
        self._scope.addItem(self.tr("This base"), AskScope.BASE.value)
        self._scope.addItem(self.tr("All bases"), AskScope.ALL.value)
        self._scope.setToolTip(self.tr("Answer from the selected knowledge base or all of them"))
        saved = self._scope.findData(str(ctx.settings.value(SCOPE_SETTING, AskScope.BASE.value)))
        self._scope.setCurrentIndex(max(0, saved))
        self._model = QComboBox(self)
        self._model.setObjectName("askModel")
        self._model.setEditable(True)
        self._model.setMinimumContentsLength(18)
        self._model.setToolTip(
            self.tr(
                "The chat model that answers: PROVIDER:MODEL of an OpenAI-compatible or Ollama provider"
            )
        )
        line = self._model.lineEdit()
        if line is not None:
            line.setPlaceholderText(self.tr("Chat model"))
        self._rewrite = QCheckBox(self.tr("Rewrite follow-up questions"), self)
        self._rewrite.setObjectName("askRewrite")
        self._rewrite.setToolTip(
            self.tr(
                "Before searching, the chat model turns the question into a standalone query "
                "(a setting of this knowledge base)"
            )
        )
        self._question = QLineEdit(self)
        self._question.setObjectName("askQuestion")
        self._question.setClearButtonEnabled(True)
        self._question.setPlaceholderText(self.tr("Ask a question about your documents"))
        self._ask = QPushButton(self.tr("Ask"), self)
        self._ask.setObjectName("askButton")
        self._stop = QPushButton(self.tr("Stop"), self)
        self._stop.setObjectName("askStop")
        self._stop.setEnabled(False)
        self._clear = QPushButton(self.tr("Clear"), self)
        self._clear.setObjectName("askClear")
        self._clear.setToolTip(self.tr("Forget this knowledge base's conversation"))

        self._debug = QLabel(self)
        self._debug.setObjectName("askDebug")
        self._debug.setTextFormat(Qt.TextFormat.PlainText)
        self._debug.setWordWrap(True)
        self._debug.setStyleSheet(
            "QLabel { background-color: #eceff1; color: #263238; border-radius: 7px; "
            "padding: 1px 7px; }"
        )
        self._debug.hide()
        self._status = QLabel(self)
        self._status.setObjectName("askStatus")
        self._status.setWordWrap(True)
        self._status.setTextFormat(Qt.TextFormat.PlainText)
        self._status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self._status.hide()

        self._conversation = QTextBrowser(self)
        self._conversation.setObjectName("askConversation")
        self._conversation.setOpenLinks(False)
        self._conversation.setOpenExternalLinks(False)
        self._conversation.setPlaceholderText(
            self.tr(
                "Answers cite the passages they come from as [1], [2] …; click a number to "
                "read the passage in its document."
            )
        )
        self._sources_model = AskSourcesModel(self)
        self._sources = QListView(self)
        self._sources.setObjectName("askSources")
        self._sources.setModel(self._sources_model)
        self._sources.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self._sources.setAlternatingRowColors(True)
        self._sources_label = QLabel(self.tr("Sources"), self)
        self._sources_label.setObjectName("askSourcesLabel")

        self._build_layout()
        self._connect_signals()
        self.set_base(None)

    def _build_layout(self) -> None:
        options = QHBoxLayout()
        options.addWidget(self._scope)
        options.addWidget(self._model, 1)
        options.addWidget(self._rewrite)
        question = QHBoxLayout()
        question.addWidget(self._question, 1)
        question.addWidget(self._ask)
        question.addWidget(self._stop)
        question.addWidget(self._clear)
        sources = QWidget(self)
        sources_layout = QVBoxLayout(sources)
        sources_layout.setContentsMargins(0, 0, 0, 0)
        sources_layout.addWidget(self._sources_label)
        sources_layout.addWidget(self._sources, 1)
        self._split = QSplitter(Qt.Orientation.Horizontal, self)
        self._split.setObjectName("askSplitter")
        self._split.addWidget(self._conversation)
        self._split.addWidget(sources)
        self._split.setStretchFactor(0, 3)
        self._split.setStretchFactor(1, 1)
        layout = QVBoxLayout(self)
        layout.addLayout(options)
        layout.addLayout(question)
        layout.addWidget(self._debug)
        layout.addWidget(self._status)
        layout.addWidget(self._split, 1)

    def _connect_signals(self) -> None:
        self._question.returnPressed.connect(self._on_ask_requested)
        self._ask.clicked.connect(self._on_ask_requested)
        self._stop.clicked.connect(self._on_stop)
        self._clear.clicked.connect(self._on_clear)
        self._conversation.anchorClicked.connect(self._on_anchor)
        self._sources.activated.connect(self._on_source_activated)
        self._scope.currentIndexChanged.connect(self._on_scope_changed)
        self._rewrite.toggled.connect(self._on_rewrite_toggled)
        self._flush_timer.timeout.connect(self._on_flush)

    # -- public ------------------------------------------------------------------------

    def set_base(self, base: Base | None) -> None:
        """Answer from this base from now on; its conversation is loaded (off the GUI
        thread). A running answer for another base is stopped."""
        if base is not None and self._base is not None and base.id == self._base.id:
            self._base = base
            return
        self._stop_running()
        self._base = base
        self._generation += 1
        self._turns = []
        self._sources_model.clear()
        self._conversation.clear()
        self._debug.hide()
        self._show_status("")
        for widget in (self._question, self._ask, self._clear, self._rewrite):
            widget.setEnabled(base is not None)
        if base is None:
            return
        generation = self._generation
        service = self._ctx.service
        base_id = base.id
        self._ctx.tasks.run(
            lambda: (service.ask_turns(base_id), service.ask_rewrite(base_id)),
            partial(self._on_conversation_loaded, generation),
            partial(self._on_failed, generation),
            owner=self,
        )

    def reload_models(self) -> None:
        """List the chat models of the configured providers (after the providers changed)."""
        service = self._ctx.service
        self._ctx.tasks.run(
            lambda: (service.chat_models(), service.chosen_chat_model()),
            self._on_models_loaded,
            lambda _error: None,  # the box stays editable: a model can still be typed
            owner=self,
        )

    def ask(self, question: str | None = None) -> None:
        """Ask `question` (default: the question box)."""
        if self._base is None or self._state is not AskState.IDLE:
            return
        if question is not None:
            self._question.setText(question)
        text = self._question.text().strip()
        model = self._model.currentText().strip()
        if not text:
            return
        if not model:
            self._show_status(self.tr("Choose a chat model first."), error=True)
            return
        self._generation += 1
        generation = self._generation
        self._set_state(AskState.PREPARING)
        self._show_status(self.tr("Searching the documents…"))
        self._pieces = []
        self._append_pending(text)
        service = self._ctx.service
        base_id = self._base.id
        everywhere = self.scope() is AskScope.ALL
        self._ctx.tasks.run(
            lambda: _prepare(service, base_id, everywhere, text, model),
            partial(self._on_prepared, generation),
            partial(self._on_failed, generation),
            owner=self,
        )

    def stop(self) -> None:
        """Stop the answer on its way; what arrived is kept (marked stopped)."""
        if self._state is AskState.STREAMING and self._plan is not None:
            self._runner.cancel()
            self._finish(self._plan, AnswerState.CANCELLED, None)
        elif self._state is AskState.PREPARING:
            self._generation += 1
            self._set_state(AskState.IDLE)
            self._show_status("")
            self._render()

    def scope(self) -> AskScope:
        return AskScope(self._scope.currentData())

    def state(self) -> AskState:
        return self._state

    def turns(self) -> list[AskTurn]:
        return list(self._turns)

    def conversation_view(self) -> QTextBrowser:
        return self._conversation

    def sources_model(self) -> AskSourcesModel:
        return self._sources_model

    def sources_view(self) -> QListView:
        return self._sources

    def debug_label(self) -> QLabel:
        return self._debug

    def status_label(self) -> QLabel:
        return self._status

    def question_box(self) -> QLineEdit:
        return self._question

    def model_box(self) -> QComboBox:
        return self._model

    def chunk_viewer(self) -> ChunkViewer | None:
        return self._viewer

    def open_citation(self, turn: int, number: int) -> ChunkViewer | None:
        """Open the passage `[number]` of turn `turn` inside its document."""
        if not 0 <= turn < len(self._turns):
            return None
        found = [s for s in self._turns[turn].sources if s.number == number]
        if not found:
            return None
        return self._open_source(found[0], self._turns[turn].query)

    def show_turns(self, turns: Sequence[AskTurn]) -> None:
        """Show a conversation as it stands (the screenshot demo)."""
        self._turns = list(turns)
        self._render()
        if self._turns:
            self._show_sources(self._turns[-1])

    # -- slots -------------------------------------------------------------------------

    @Slot()
    def _on_ask_requested(self) -> None:
        self.ask()

    @Slot()
    def _on_stop(self) -> None:
        self.stop()

    @Slot()
    def _on_clear(self) -> None:
        if self._base is None:
            return
        self.stop()
        self._generation += 1
        generation = self._generation
        service = self._ctx.service
        base_id = self._base.id
        self._ctx.tasks.run(
            lambda: service.clear_ask_turns(base_id),
            partial(self._on_cleared, generation),
            partial(self._on_failed, generation),
            owner=self,
        )

    @Slot(QUrl)
    def _on_anchor(self, url: QUrl) -> None:
        target = conversation.parse_link(url.toString())
        if target is not None:
            self.open_citation(*target)

    @Slot(QModelIndex)
    def _on_source_activated(self, index: QModelIndex | QPersistentModelIndex) -> None:
        if index.isValid():
            query = self._turns[-1].query if self._turns else ""
            self._open_source(self._sources_model.source(index.row()), query)

    @Slot(int)
    def _on_scope_changed(self, _index: int) -> None:
        self._ctx.settings.setValue(SCOPE_SETTING, self.scope().value)

    @Slot(bool)
    def _on_rewrite_toggled(self, on: bool) -> None:
        if self._base is None:
            return
        service = self._ctx.service
        base_id = self._base.id
        self._ctx.tasks.run(
            lambda: service.set_ask_rewrite(base_id, on),
            None,
            partial(self._on_failed, self._generation),
            owner=self,
        )

    def _on_models_loaded(self, loaded: tuple[list[str], str | None]) -> None:
        models, chosen = loaded
        typed = self._model.currentText()
        self._model.clear()
        self._model.addItems(models)
        current = chosen or typed or (models[0] if models else "")
        self._model.setCurrentText(current)

    def _on_conversation_loaded(self, generation: int, loaded: tuple[list[AskTurn], bool]) -> None:
        if generation != self._generation:
            return
        turns, rewrite = loaded
        self._rewrite.blockSignals(True)
        self._rewrite.setChecked(rewrite)
        self._rewrite.blockSignals(False)
        self.show_turns(turns)
        self.conversationLoaded.emit()

    def _on_prepared(self, generation: int, plan: AskPlan) -> None:
        if generation != self._generation:
            return
        self._plan = plan
        self._sources_model.set_sources(plan.sources)
        self._show_debug(plan.query, plan.request.question, plan.metrics.rewrite_ms, plan)
        self._show_status(self.tr("Waiting for the chat model…"))
        self._set_state(AskState.STREAMING)
        self._start_stream(generation, plan)

    def _start_stream(self, generation: int, plan: AskPlan) -> None:
        self._runner.start(
            self._consume(plan),
            partial(self._on_streamed, generation),
            partial(self._on_stream_failed, generation),
        )

    async def _consume(self, plan: AskPlan) -> AskPlan:
        async with contextlib.aclosing(self._ctx.service.stream_answer(plan)) as pieces:
            async for piece in pieces:
                self._on_piece(piece)
        return plan

    def _on_piece(self, piece: str) -> None:
        if not self._pieces:
            self._show_status("")
        self._pieces.append(piece)
        self._unshown.append(piece)
        if not self._flush_timer.isActive():
            self._flush_timer.start()

    @Slot()
    def _on_flush(self) -> None:
        """Show the pieces that arrived since the last flush: one edit and one layout per
        FLUSH_MS rather than one per token (200 tokens/s would keep the GUI thread busy)."""
        if not self._unshown:
            return
        text = "".join(self._unshown)
        self._unshown.clear()
        bar = self._conversation.verticalScrollBar()
        following = bar.value() >= bar.maximum() - 40
        cursor = QTextCursor(self._conversation.document())
        cursor.movePosition(QTextCursor.MoveOperation.End)
        cursor.insertText(text)
        if following:
            bar.setValue(bar.maximum())

    def _on_streamed(self, generation: int, plan: AskPlan) -> None:
        if generation == self._generation:
            self._finish(plan, AnswerState.COMPLETE, None)

    def _on_stream_failed(self, generation: int, error: BaseException) -> None:
        if generation != self._generation or self._plan is None:
            return
        plan = self._plan
        if (
            isinstance(error, TroveError)
            and error.code is ErrorCode.CHAT_CONTEXT_OVERFLOW
            and not self._pieces
            and plan.budget == plan.request.budget
        ):
            try:
                smaller = self._ctx.service.shrink_ask(plan)
            except TroveError as failure:
                self._on_failed(generation, failure)
                return
            self._plan = smaller
            self._start_stream(generation, smaller)
            return
        if self._pieces and isinstance(error, TroveError):
            self._finish(plan, AnswerState.INTERRUPTED, error)
            return
        self._on_failed(generation, error)

    def _on_cleared(self, generation: int, _removed: int) -> None:
        if generation != self._generation:
            return
        self._turns = []
        self._sources_model.clear()
        self._debug.hide()
        self._show_status("")
        self._render()

    def _on_failed(self, generation: int, error: BaseException) -> None:
        if generation != self._generation:
            return
        self._plan = None
        self._set_state(AskState.IDLE)
        headline, detail = describe(error)
        self._show_status(f"{headline}\n{detail}" if detail else headline, error=True)
        self._render()
        self.askFailed.emit(error)

    def _on_saved(self, turn: AskTurn) -> None:
        self.turnSaved.emit(turn)

    # -- helpers -----------------------------------------------------------------------

    def _finish(self, plan: AskPlan, state: AnswerState, error: TroveError | None) -> None:
        answer = self._ctx.service.finish_ask(plan, "".join(self._pieces), state, error)
        self._plan = None
        self._set_state(AskState.IDLE)
        self._turns.append(answer.turn)
        self._replace_pending(answer.turn, len(self._turns) - 1)
        self._show_sources(answer.turn)
        self._show_debug(answer.turn.query, answer.turn.question, answer.metrics.rewrite_ms, plan)
        self._show_outcome(answer)
        self._question.clear()
        service = self._ctx.service
        turn = answer.turn
        model = turn.chat_model
        self._ctx.tasks.run(
            lambda: _remember(service, turn, model),
            self._on_saved,
            partial(self._on_failed, self._generation),
            owner=self,
        )
        self.answerFinished.emit(answer)

    def _show_outcome(self, answer: AskAnswer) -> None:
        if answer.error is not None:
            headline, detail = describe(answer.error)
            self._show_status(f"{headline}\n{detail}" if detail else headline, error=True)
        elif answer.metrics.dropped_markers:
            self._show_status(
                self.tr(
                    "%n citation(s) pointed to no passage and were removed.",
                    "",
                    answer.metrics.dropped_markers,
                )
            )
        else:
            self._show_status("")

    def _show_debug(self, query: str, question: str, rewrite_ms: float, plan: AskPlan) -> None:
        m = plan.metrics
        parts = []
        if query != question:
            parts.append(self.tr("Rewritten: {0} · {1} ms").format(query, _ms(rewrite_ms)))
        parts.append(self.tr("Retrieval {0} ms").format(_ms(m.retrieval_ms)))
        parts.append(self.tr("%n passage(s)", "", m.passages))
        if m.first_token_ms is not None:
            parts.append(self.tr("First token {0} ms").format(_ms(m.first_token_ms)))
        if m.total_ms:
            parts.append(self.tr("Total {0} ms").format(_ms(m.total_ms)))
        self._debug.setText(" · ".join(parts))
        self._debug.show()

    def _show_sources(self, turn: AskTurn) -> None:
        cited = frozenset(c.number for c in KnowledgeService.turn_citations(turn))
        self._sources_model.set_sources(turn.sources, cited)

    def _open_source(self, source: AskSource, query: str) -> ChunkViewer:
        if self._viewer is None:
            self._viewer = ChunkViewer(self._ctx, self.opener, self)
        self._viewer.show_result(source.base_id, source.result, query)
        return self._viewer

    def _render(self) -> None:
        """Draw the whole conversation (a base's conversation loaded, a failure, a clear)."""
        self._conversation.setHtml(conversation.conversation_html(self._turns))
        self._scroll_to_end()

    def _append_pending(self, question: str) -> None:
        """The question at the end, and an empty paragraph the answer streams into; only
        the new turn is drawn, so a long conversation costs nothing per answer."""
        cursor = QTextCursor(self._conversation.document())
        cursor.movePosition(QTextCursor.MoveOperation.End)
        self._pending_at = cursor.position()
        cursor.insertHtml(conversation.pending_html(question))
        cursor.insertBlock()
        self._scroll_to_end()

    def _replace_pending(self, turn: AskTurn, index: int) -> None:
        """The streamed text replaced by the finished turn, its markers now links."""
        self._flush_timer.stop()
        self._unshown.clear()
        cursor = QTextCursor(self._conversation.document())
        cursor.setPosition(min(self._pending_at, cursor.document().characterCount() - 1))
        cursor.movePosition(QTextCursor.MoveOperation.End, QTextCursor.MoveMode.KeepAnchor)
        cursor.removeSelectedText()
        cursor.insertHtml(conversation.turn_html(turn, index))
        self._scroll_to_end()

    def _scroll_to_end(self) -> None:
        bar = self._conversation.verticalScrollBar()
        bar.setValue(bar.maximum())

    def _set_state(self, state: AskState) -> None:
        self._state = state
        busy = state is not AskState.IDLE
        self._stop.setEnabled(busy)
        self._ask.setEnabled(not busy and self._base is not None)
        self._clear.setEnabled(self._base is not None)

    def _stop_running(self) -> None:
        self._runner.cancel()
        self._plan = None
        self._state = AskState.IDLE
        self._stop.setEnabled(False)

    def _show_status(self, text: str, *, error: bool = False) -> None:
        self._status.setText(text)
        self._status.setStyleSheet(theme.message_style("error") if error else "")
        self._status.setVisible(bool(text))


def _prepare(
    service: KnowledgeService, base_id: str, everywhere: bool, question: str, model: str
) -> AskPlan:
    """Rewrite and retrieval, on a worker; all bases: the selected one first (the turn joins
    its conversation)."""
    base_ids = [base_id]
    if everywhere:
        base_ids += [b.id for b in service.list_bases() if b.id != base_id]
    return service.prepare_ask(base_ids, question, chat_model=model)


def _remember(service: KnowledgeService, turn: AskTurn, model: str) -> AskTurn:
    service.choose_chat_model(model)
    return service.save_ask_turn(turn)
