"""One ask, in steps a caller can run where it wants them: `prepare` (rewrite, retrieval,
context; blocking, so a worker thread), the streamed answer (the CLI's sync iterator in
`run`, or the window's async stream), and `finish` (citations; pure and cheap).

The steps take their collaborators as functions (search, complete) so the engine stays free
of how bases are searched and how a chat model is reached.

An answer has limits, whatever the chat server does (AnswerLimits: five minutes and 32,768
characters by default); the chat clients enforce them, and an answer that hits one is kept
as far as it came, in the state INTERRUPTED ("the answer broke off").
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace

from app.knowledge.ask import citations, context, prompt
from app.knowledge.ask.context import Budget
from app.knowledge.types import (
    AnswerState,
    AskAnswer,
    AskMetrics,
    AskSource,
    AskTurn,
    ErrorCode,
    SearchResult,
    TroveError,
)
from app.providers.chat import CHAT_TIMEOUTS, MAX_ANSWER_CHARS, Message

log = logging.getLogger(__name__)

Search = Callable[[str], list[tuple[str, SearchResult]]]
Complete = Callable[[list[Message]], str]
Stream = Callable[[list[Message]], Iterator[str]]
# A rewrite longer than this is an answer, not a query: the question is searched instead.
MAX_REWRITE_CHARS = 500
# How long an answer may stream, its first token included (read when an ask is prepared).
ANSWER_SECONDS = CHAT_TIMEOUTS.total


@dataclass(frozen=True, slots=True)
class AnswerLimits:
    """The wall-clock time an answer may take and the characters it may hold."""

    seconds: float = ANSWER_SECONDS
    chars: int = MAX_ANSWER_CHARS

    def __post_init__(self) -> None:
        if not self.seconds > 0 or self.chars < 1:
            raise TroveError(
                ErrorCode.INVALID_ARGUMENT, "an answer's time and size limits must be positive"
            )


@dataclass(frozen=True, slots=True)
class AskRequest:
    base_id: str  # the base whose conversation the turn joins
    question: str
    chat_model: str
    history: Sequence[AskTurn] = ()
    rewrite: bool = False
    budget: Budget = field(default_factory=Budget)
    limits: AnswerLimits = field(default_factory=AnswerLimits)


@dataclass(slots=True)
class AskPlan:
    """Everything decided before the chat model is asked to answer."""

    request: AskRequest
    query: str
    candidates: list[tuple[str, SearchResult]]
    sources: list[AskSource]
    messages: list[Message]
    metrics: AskMetrics
    budget: Budget
    started: float  # time.perf_counter() at the start of the ask


def _ms(since: float) -> float:
    return (time.perf_counter() - since) * 1000


def rewrite(request: AskRequest, complete: Complete) -> str:
    """The chat model's standalone version of the question; the question if it gives none."""
    answer = complete(prompt.rewrite_messages(request.question, request.history))
    query = " ".join(answer.split()).strip("\"'“”「」 ")
    if not query or len(query) > MAX_REWRITE_CHARS:
        return request.question
    return query


def prepare(request: AskRequest, search: Search, complete: Complete) -> AskPlan:
    """Rewrite (when asked), retrieve and assemble the context."""
    started = time.perf_counter()
    metrics = AskMetrics()
    query = request.question
    if request.rewrite:
        begin = time.perf_counter()
        try:
            query = rewrite(request, complete)
        except TroveError as exc:
            # A rewrite only sharpens the search; without it the question is searched, and
            # a chat model that is really gone says so when it is asked to answer.
            log.warning("question rewrite failed, searching the question itself: %s", exc)
        metrics.rewrite_ms = _ms(begin)
    begin = time.perf_counter()
    candidates = search(query)
    metrics.retrieval_ms = _ms(begin)
    return _fit(request, query, candidates, metrics, request.budget, started)


def _fit(
    request: AskRequest,
    query: str,
    candidates: list[tuple[str, SearchResult]],
    metrics: AskMetrics,
    budget: Budget,
    started: float,
) -> AskPlan:
    built = context.assemble(candidates, request.question, request.history, budget)
    if candidates and not built.sources:
        raise TroveError(
            ErrorCode.CHAT_CONTEXT_OVERFLOW,
            f"no passage fits a context of {budget.context_tokens} tokens",
            {"tokens": budget.context_tokens},
        )
    metrics.passages = len(built.sources)
    metrics.context_tokens = built.tokens
    return AskPlan(
        request, query, candidates, built.sources, built.messages, metrics, budget, started
    )


def shrink(plan: AskPlan) -> AskPlan:
    """The plan for a chat model that said the prompt is too long: half the budget."""
    metrics = replace(plan.metrics)
    return _fit(
        plan.request, plan.query, plan.candidates, metrics, plan.budget.halved(), plan.started
    )


def finish(
    plan: AskPlan, text: str, state: AnswerState, error: TroveError | None = None
) -> AskAnswer:
    """Resolve the answer's citations; markers citing no passage are dropped and counted."""
    valid = {s.number for s in plan.sources}
    cleaned, dropped = citations.clean(text, valid)
    plan.metrics.dropped_markers = dropped
    plan.metrics.total_ms = _ms(plan.started)
    turn = AskTurn(
        base_id=plan.request.base_id,
        question=plan.request.question,
        query=plan.query,
        answer=cleaned,
        sources=plan.sources,
        chat_model=plan.request.chat_model,
        state=state,
    )
    return AskAnswer(turn, citations.resolve(cleaned, plan.sources), plan.metrics, error)


def first_token(plan: AskPlan) -> None:
    if plan.metrics.first_token_ms is None:
        plan.metrics.first_token_ms = _ms(plan.started)


def run(
    plan: AskPlan,
    stream: Stream,
    *,
    on_token: Callable[[str], None] | None = None,
    cancelled: Callable[[], bool] = lambda: False,
    failure: Callable[[Exception], TroveError],
) -> AskAnswer:
    """Stream the answer in the calling thread (the CLI); a prompt the model finds too long
    is sent once more with half the budget, if nothing was said yet."""
    pieces: list[str] = []
    for attempt in (1, 2):
        try:
            for piece in stream(plan.messages):
                first_token(plan)
                pieces.append(piece)
                if on_token is not None:
                    on_token(piece)
                if cancelled():
                    return finish(plan, "".join(pieces), AnswerState.CANCELLED)
            return finish(plan, "".join(pieces), AnswerState.COMPLETE)
        except Exception as exc:  # a provider failure, said as the engine's error
            error = failure(exc)
        if error.code is ErrorCode.CHAT_CONTEXT_OVERFLOW and not pieces and attempt == 1:
            plan = shrink(plan)
            continue
        if pieces:
            return finish(plan, "".join(pieces), AnswerState.INTERRUPTED, error)
        raise error
    raise AssertionError("unreachable")
