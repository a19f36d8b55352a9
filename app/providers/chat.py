"""Chat clients that stream an answer: OpenAI-compatible `/v1/chat/completions` (server-sent
events) and Ollama `/api/chat` (one JSON object per line).

Two front ends share one request builder, one line parser and one failure policy:
`ChatClient.stream` (a sync iterator, for the CLI and worker threads) and `AsyncChatClient`
(httpx.AsyncClient, awaited on the window's qasync loop so the GUI thread never waits on
the network).

Failure policy, on top of http.py's status mapping (401/403 -> PROVIDER_AUTH_FAILED, 404 ->
MODEL_NOT_AVAILABLE, key scrubbing):
- 429, 5xx and connection failures before the first token: one retry, after the server's
  Retry-After when it is short (<= `max_retry_after`, default 5 s), else at once a clear
  CHAT_RATE_LIMITED / CHAT_FAILED naming the wait the server asked for;
- a 400/413/422 saying the input exceeds the context: CHAT_CONTEXT_OVERFLOW (the ask engine
  shrinks its context and tries again);
- a stream that breaks after tokens arrived (a reset, or an end without the API's final
  marker): ANSWER_INTERRUPTED, raised after the tokens already yielded, so callers keep the
  partial answer. It is never retried: the text would repeat.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import ssl
import time
from collections.abc import AsyncGenerator, Generator, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, TypedDict

import httpx

from app.providers.http import (
    AuthHint,
    InputTooLong,
    KeySource,
    Retry,
    Sleep,
    Timeouts,
    auth_headers,
    check_response,
    host_label,
    transport_failure,
)
from app.providers.interfaces import (
    HTTP_STATUS,
    INVALID_ARGUMENT,
    MALFORMED,
    ProviderError,
)
from app.providers.openai_compat import ollama_root, openai_api_root

log = logging.getLogger(__name__)

# The engine's codes for chat failures (strings, as in interfaces.py).
CHAT_FAILED = "CHAT_FAILED"
CHAT_RATE_LIMITED = "CHAT_RATE_LIMITED"
CHAT_CONTEXT_OVERFLOW = "CHAT_CONTEXT_OVERFLOW"
ANSWER_INTERRUPTED = "ANSWER_INTERRUPTED"

CHAT_KINDS = frozenset({"openai", "ollama"})
OPENAI_CHAT_PATH = "/chat/completions"
OLLAMA_CHAT_PATH = "/api/chat"
# A chat model may think for a while before its first token; a stalled stream still ends.
CHAT_TIMEOUTS = Timeouts(connect=10.0, read=120.0)
# A person is waiting: a Retry-After longer than this is reported rather than waited out.
MAX_RETRY_AFTER = 5.0
RETRY_DELAY = 0.5
PROBE_MESSAGES: tuple[dict[str, str], ...] = (
    {"role": "user", "content": "Reply with the single word: ready"},
)

Message = dict[str, str]


class ChatOptions(TypedDict, total=False):
    """Keyword options a ChatClient takes beyond its target (tests shorten the waits)."""

    timeouts: Timeouts
    max_retry_after: float
    sleep: Sleep
    transport: httpx.BaseTransport


@dataclass(frozen=True, slots=True)
class Piece:
    """What one line of a stream says: text to append, and whether the answer is complete."""

    text: str = ""
    done: bool = False


@dataclass(frozen=True, slots=True)
class ChatTarget:
    """Where and how to ask: the API root, the path, the body and the line format."""

    kind: str
    root: str
    model: str

    @property
    def path(self) -> str:
        return OLLAMA_CHAT_PATH if self.kind == "ollama" else OPENAI_CHAT_PATH

    @property
    def url(self) -> str:
        return self.root + self.path

    def payload(self, messages: Sequence[Message], max_tokens: int | None) -> dict[str, Any]:
        if self.kind == "ollama":
            body: dict[str, Any] = {"model": self.model, "messages": list(messages), "stream": True}
            if max_tokens:
                body["options"] = {"num_predict": max_tokens}
            return body
        body = {"model": self.model, "messages": list(messages), "stream": True}
        if max_tokens:
            body["max_tokens"] = max_tokens
        return body

    def parse(self, line: str, name: str) -> Piece | None:
        return (
            parse_ndjson_line(line, name) if self.kind == "ollama" else parse_sse_line(line, name)
        )


def chat_target(kind: str, base_url: str, model: str) -> ChatTarget:
    if kind not in CHAT_KINDS:
        raise ProviderError(INVALID_ARGUMENT, f"a {kind!r} provider serves no chat models")
    if not model.strip():
        raise ProviderError(INVALID_ARGUMENT, "a chat model name is required")
    root = ollama_root(base_url) if kind == "ollama" else openai_api_root(base_url)
    return ChatTarget(kind, root, model.strip())


def _stream_error(body: dict[str, Any], name: str) -> ProviderError:
    error = body.get("error")
    text = error.get("message") if isinstance(error, dict) else error
    return ProviderError(
        CHAT_FAILED,
        f"{name}: the stream reported an error: {text}",
        reason=HTTP_STATUS,
        params={"provider": name, "server": str(text)[:300]},
    )


def _malformed(name: str, what: str) -> ProviderError:
    return ProviderError(
        CHAT_FAILED,
        f"{name}: unexpected stream: {what}",
        reason=MALFORMED,
        params={"provider": name},
    )


def parse_sse_line(line: str, name: str) -> Piece | None:
    """One line of an OpenAI server-sent event stream; None for blank lines and comments."""
    if not line.startswith("data:"):
        return None  # blank separators, ": keep-alive" comments, "event:" lines
    data = line[5:].strip()
    if data == "[DONE]":
        return Piece(done=True)
    try:
        body = json.loads(data)
    except ValueError:
        raise _malformed(name, "an event is not JSON") from None
    if not isinstance(body, dict):
        raise _malformed(name, "an event is not an object")
    if "error" in body:
        raise _stream_error(body, name)
    choices = body.get("choices")
    if not isinstance(choices, list) or not choices:
        return Piece()  # usage-only events and role announcements carry no text
    choice = choices[0] if isinstance(choices[0], dict) else {}
    delta = choice.get("delta") or choice.get("message") or {}
    content = delta.get("content") if isinstance(delta, dict) else None
    return Piece(text=content if isinstance(content, str) else "")


def parse_ndjson_line(line: str, name: str) -> Piece | None:
    """One line of an Ollama /api/chat stream."""
    if not line.strip():
        return None
    try:
        body = json.loads(line)
    except ValueError:
        raise _malformed(name, "a line is not JSON") from None
    if not isinstance(body, dict):
        raise _malformed(name, "a line is not an object")
    if "error" in body:
        raise _stream_error(body, name)
    message = body.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    return Piece(text=content if isinstance(content, str) else "", done=body.get("done") is True)


def _interrupted(name: str, why: str) -> ProviderError:
    return ProviderError(
        ANSWER_INTERRUPTED,
        f"{name}: the answer stream broke off ({why})",
        reason="stream_cut",
        params={"provider": name},
    )


class _Policy:
    """What to do with a failed attempt: wait and retry once, or raise what it means."""

    def __init__(self, name: str, max_retry_after: float) -> None:
        self.name = name
        self.max_retry_after = max_retry_after

    def failure(
        self, response: httpx.Response, path: str, key: str | None, hint: AuthHint
    ) -> Retry:
        """The Retry a non-2xx answer means; raises when it cannot be retried."""
        failure: ProviderError | Retry
        try:
            failure = check_response(
                response, path, name=self.name, key=key, failure_code=CHAT_FAILED, auth_hint=hint
            )
        except InputTooLong as exc:
            failure = ProviderError(
                CHAT_CONTEXT_OVERFLOW,
                f"{exc.message} (the passages and question exceed the chat model's context)",
                params={"provider": self.name},
            )
        if isinstance(failure, ProviderError):
            raise failure
        if not isinstance(failure, Retry):  # a 2xx never reaches here
            raise _malformed(self.name, "unexpected answer")
        return failure

    def delay(self, retry: Retry, attempt: int, status: int | None) -> float:
        """Seconds before the second attempt; raises after it, or when the wait is too long."""
        too_long = retry.retry_after is not None and retry.retry_after > self.max_retry_after
        if attempt < 2 and not too_long:
            return retry.retry_after if retry.retry_after is not None else RETRY_DELAY
        if status == 429:
            wait = retry.retry_after
            said = f"; the server asks to wait {wait:.0f} s" if wait is not None else ""
            raise ProviderError(
                CHAT_RATE_LIMITED,
                f"{self.name}: too many requests (HTTP 429){said}",
                retryable=True,
                retry_after=wait,
                params={"provider": self.name, "seconds": round(wait or 0)},
            )
        raise ProviderError(
            CHAT_FAILED,
            f"{self.name}: {retry.reason}",
            retryable=True,
            retry_after=retry.retry_after,
            reason=retry.cause,
            params={"provider": self.name, **(retry.params or {})},
        )


def _status_of(retry: Retry) -> int | None:
    status = (retry.params or {}).get("status")
    return status if isinstance(status, int) else None


class ChatClient:
    """The sync streaming client: `stream(messages)` yields text pieces as they arrive."""

    def __init__(
        self,
        kind: str,
        base_url: str,
        model: str,
        api_key: KeySource = None,
        *,
        name: str | None = None,
        auth_hint: AuthHint = None,
        timeouts: Timeouts = CHAT_TIMEOUTS,
        max_retry_after: float = MAX_RETRY_AFTER,
        sleep: Sleep = time.sleep,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.target = chat_target(kind, base_url, model)
        self.model_id = model
        self.name = name or host_label(self.target.root)
        self._api_key = api_key
        self._auth_hint = auth_hint
        self._policy = _Policy(self.name, max_retry_after)
        self._sleep = sleep
        self._client = httpx.Client(
            timeout=timeouts.to_httpx(),
            transport=transport,
            follow_redirects=False,
            trust_env=False,  # a provider URL is exact; a system proxy must not see the key
        )

    def close(self) -> None:
        self._client.close()

    def _key(self) -> str | None:
        key = self._api_key() if callable(self._api_key) else self._api_key
        return key or None

    def stream(
        self, messages: Sequence[Message], *, max_tokens: int | None = None
    ) -> Iterator[str]:
        key = self._key()
        headers = {"Accept": "text/event-stream, application/x-ndjson", **auth_headers(key)}
        payload = self.target.payload(messages, max_tokens)
        for attempt in (1, 2):
            outcome = yield from self._attempt(payload, headers, key)
            if outcome is None:
                return
            self._sleep(self._policy.delay(outcome, attempt, _status_of(outcome)))

    def _attempt(
        self, payload: dict[str, Any], headers: dict[str, str], key: str | None
    ) -> Generator[str, None, Retry | None]:
        """Yields the answer's pieces; returns None when done, a Retry before any token."""
        target = self.target
        failure: ProviderError | Retry | None = None
        sent = False
        try:
            with self._client.stream("POST", target.url, json=payload, headers=headers) as reply:
                if reply.status_code >= 300:
                    reply.read()
                    return self._policy.failure(reply, target.path, key, self._auth_hint)
                for line in reply.iter_lines():
                    piece = target.parse(line, self.name)
                    if piece is None:
                        continue
                    if piece.text:
                        sent = True
                        yield piece.text
                    if piece.done:
                        return None
        except (httpx.TransportError, httpx.InvalidURL) as exc:
            failure = transport_failure(exc, target.url, key)
        if failure is None:
            failure = _interrupted(self.name, "it ended before its last message")
        if sent:
            raise _after_tokens(failure, self.name)
        if isinstance(failure, ProviderError):
            raise failure
        return failure

    def complete(self, messages: Sequence[Message], *, max_tokens: int | None = None) -> str:
        """The whole answer as one string (the question rewrite)."""
        return "".join(self.stream(messages, max_tokens=max_tokens))

    def test_connection(self) -> str:
        reply = self.complete(list(PROBE_MESSAGES), max_tokens=8)
        return chat_ok(self.name, self.target.model, reply)


def _after_tokens(failure: ProviderError | Retry, name: str) -> ProviderError:
    """A break after text arrived is an interrupted answer, whatever broke it."""
    if isinstance(failure, ProviderError) and failure.code == ANSWER_INTERRUPTED:
        return failure
    return _interrupted(
        name, failure.message if isinstance(failure, ProviderError) else failure.reason
    )


def chat_ok(name: str, model: str, reply: str) -> str:
    excerpt = " ".join(reply.split())[:40]
    return f"Connected to {name}: chat model {model} answered {excerpt!r}."


_ssl_context: ssl.SSLContext | None = None


async def shared_ssl_context() -> ssl.SSLContext:
    """One TLS context for every answer, made once off the event loop: building it loads the
    CA bundle, 25-50 ms that would otherwise stall the window's thread at each question."""
    global _ssl_context
    if _ssl_context is None:
        _ssl_context = await asyncio.to_thread(httpx.create_ssl_context)
    return _ssl_context


class AsyncChatClient:
    """The same requests and policy over httpx.AsyncClient, for the window's event loop."""

    def __init__(
        self,
        kind: str,
        base_url: str,
        model: str,
        api_key: str | None = None,
        *,
        name: str | None = None,
        auth_hint: AuthHint = None,
        timeouts: Timeouts = CHAT_TIMEOUTS,
        max_retry_after: float = MAX_RETRY_AFTER,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.target = chat_target(kind, base_url, model)
        self.name = name or host_label(self.target.root)
        self._key = api_key or None
        self._auth_hint = auth_hint
        self._policy = _Policy(self.name, max_retry_after)
        self._timeouts = timeouts
        self._transport = transport

    async def stream(
        self, messages: Sequence[Message], *, max_tokens: int | None = None
    ) -> AsyncGenerator[str, None]:
        headers = {"Accept": "text/event-stream, application/x-ndjson", **auth_headers(self._key)}
        payload = self.target.payload(messages, max_tokens)
        async with httpx.AsyncClient(
            timeout=self._timeouts.to_httpx(),
            transport=self._transport,
            verify=await shared_ssl_context(),
            follow_redirects=False,
            trust_env=False,
        ) as client:
            for attempt in (1, 2):
                box: list[Retry] = []
                async with contextlib.aclosing(
                    self._attempt(client, payload, headers, box)
                ) as pieces:
                    async for text in pieces:
                        yield text
                if not box:
                    return
                await asyncio.sleep(self._policy.delay(box[0], attempt, _status_of(box[0])))

    async def _attempt(
        self,
        client: httpx.AsyncClient,
        payload: dict[str, Any],
        headers: dict[str, str],
        box: list[Retry],
    ) -> AsyncGenerator[str, None]:
        """Yields the pieces; on a retryable failure before any token, puts it in `box`."""
        target = self.target
        failure: ProviderError | Retry | None = None
        sent = False
        try:
            async with client.stream("POST", target.url, json=payload, headers=headers) as reply:
                if reply.status_code >= 300:
                    await reply.aread()
                    box.append(self._policy.failure(reply, target.path, self._key, self._auth_hint))
                    return
                # Read to the end of the body even after the final marker (the server ends
                # it there): left half-read, httpx's nested generators would be finalized
                # later by the garbage collector, in another task than this one.
                done = False
                async for line in reply.aiter_lines():
                    piece = None if done else target.parse(line, self.name)
                    if piece is None:
                        continue
                    if piece.text:
                        sent = True
                        yield piece.text
                    done = piece.done
                if done:
                    return
        except (httpx.TransportError, httpx.InvalidURL) as exc:
            failure = transport_failure(exc, target.url, self._key)
        if failure is None:
            failure = _interrupted(self.name, "it ended before its last message")
        if sent:
            raise _after_tokens(failure, self.name)
        if isinstance(failure, ProviderError):
            raise failure
        box.append(failure)

    async def test_connection(self) -> str:
        pieces = [text async for text in self.stream(list(PROBE_MESSAGES), max_tokens=8)]
        return chat_ok(self.name, self.target.model, "".join(pieces))


__all__ = [
    "ANSWER_INTERRUPTED",
    "CHAT_CONTEXT_OVERFLOW",
    "CHAT_FAILED",
    "CHAT_KINDS",
    "CHAT_RATE_LIMITED",
    "AsyncChatClient",
    "ChatClient",
    "Message",
    "Piece",
    "chat_target",
    "parse_ndjson_line",
    "parse_sse_line",
]
