"""The facade's ask calls: the engine's steps wired to the catalog, the search pipeline and
the configured chat providers (KnowledgeService delegates here)."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import AsyncGenerator, Callable, Sequence

from app.knowledge import providers_config
from app.knowledge.ask import engine, turns
from app.knowledge.ask.context import Budget
from app.knowledge.ask.engine import AnswerLimits, AskPlan, AskRequest
from app.knowledge.catalog import Catalog
from app.knowledge.provider_errors import provider_failure
from app.knowledge.types import (
    AskAnswer,
    ErrorCode,
    MultiSearchResponse,
    SearchResponse,
    SearchResult,
    TroveError,
)
from app.providers import secrets
from app.providers.chat import AsyncChatClient, ChatOptions, Message
from app.providers.interfaces import ProviderError

SearchOne = Callable[[str, str], SearchResponse]
SearchMany = Callable[[Sequence[str], str], MultiSearchResponse]
# The question rewrite is a short completion; it gets at most this much of the answer's time.
REWRITE_SECONDS = 60.0


def failure(exc: Exception) -> TroveError:
    """A chat failure as the engine's error; anything else is a bug and propagates."""
    if isinstance(exc, TroveError):
        return exc
    if isinstance(exc, ProviderError):
        return provider_failure(exc, ErrorCode.CHAT_FAILED)
    raise exc


def chat_model(catalog: Catalog, given: str | None) -> str:
    """The chat model asked for, else the one last chosen (in the window or by --model)."""
    chosen = given or catalog.get_setting(providers_config.CHAT_MODEL_SETTING)
    if not chosen:
        raise TroveError(
            ErrorCode.INVALID_ARGUMENT,
            "no chat model chosen: give --model PROVIDER:MODEL (an openai or ollama provider)",
        )
    return chosen


def searcher(
    base_ids: Sequence[str], search_one: SearchOne, search_many: SearchMany
) -> engine.Search:
    def search(query: str) -> list[tuple[str, SearchResult]]:
        if len(base_ids) == 1:
            return [(base_ids[0], r) for r in search_one(base_ids[0], query).results]
        return [(h.base.id, h.result) for h in search_many(base_ids, query).hits]

    return search


def prepare(
    catalog: Catalog,
    base_ids: Sequence[str],
    question: str,
    model_id: str,
    search: engine.Search,
    *,
    budget: Budget,
    history: bool,
    options: ChatOptions,
    answer_seconds: float | None = None,
) -> AskPlan:
    """Check the model, read the conversation and the base's rewrite option, then rewrite
    (when on), retrieve and assemble. Blocking: a worker thread or the CLI.
    `answer_seconds`: the answer's time limit (default engine.ANSWER_SECONDS)."""
    question = question.strip()
    if not question:
        raise TroveError(ErrorCode.INVALID_ARGUMENT, "the question is empty")
    if not base_ids:
        raise TroveError(ErrorCode.INVALID_ARGUMENT, "no knowledge base to ask")
    for base_id in base_ids:
        catalog.require_base(base_id)
    providers_config.chat_settings(catalog, model_id)  # a bad id fails before any search
    base_id = base_ids[0]
    request = AskRequest(
        base_id=base_id,
        question=question,
        chat_model=model_id,
        history=turns.load(catalog, base_id, limit=5) if history else (),
        rewrite=catalog.ask_rewrite(base_id),
        budget=budget,
        limits=AnswerLimits(seconds=answer_seconds or engine.ANSWER_SECONDS),
    )
    rewrite_seconds = min(REWRITE_SECONDS, request.limits.seconds)

    def complete(messages: list[Message]) -> str:
        client = providers_config.chat_client(catalog, model_id, **options)
        try:
            return client.complete(messages, max_tokens=200, seconds=rewrite_seconds)
        except ProviderError as exc:
            raise provider_failure(exc, ErrorCode.CHAT_FAILED) from None
        finally:
            client.close()

    return engine.prepare(request, search, complete)


def answer(
    catalog: Catalog,
    plan: AskPlan,
    *,
    on_token: Callable[[str], None] | None,
    cancel: threading.Event | None,
    options: ChatOptions,
) -> AskAnswer:
    """Stream the answer in this thread (the CLI), within the request's limits."""
    client = providers_config.chat_client(catalog, plan.request.chat_model, **options)
    limits = plan.request.limits
    try:
        return engine.run(
            plan,
            lambda messages: client.stream(
                messages,
                max_tokens=plan.budget.answer_tokens,
                max_chars=limits.chars,
                seconds=limits.seconds,
            ),
            on_token=on_token,
            cancelled=cancel.is_set if cancel is not None else lambda: False,
            failure=failure,
        )
    finally:
        client.close()


async def stream(catalog: Catalog, plan: AskPlan) -> AsyncGenerator[str, None]:
    """The answer's pieces over httpx.AsyncClient, on the caller's event loop (the window),
    within the request's limits. The key is read off the loop, since a keychain may block."""
    settings, model = providers_config.chat_settings(catalog, plan.request.chat_model)
    try:
        key = await asyncio.to_thread(secrets.get_key, settings.id)
        hint = None
    except secrets.SecretStoreUnavailable as exc:
        key, hint = None, exc.message
    try:
        client = AsyncChatClient(
            settings.kind,
            settings.base_url,
            model,
            key,
            name=settings.label,
            auth_hint=hint,
        )
        limits = plan.request.limits
        pieces = client.stream(
            plan.messages,
            max_tokens=plan.budget.answer_tokens,
            max_chars=limits.chars,
            seconds=limits.seconds,
        )
        async with contextlib.aclosing(pieces) as stream:
            async for piece in stream:
                engine.first_token(plan)
                yield piece
    except ProviderError as exc:
        raise provider_failure(exc, ErrorCode.CHAT_FAILED) from None
