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

Limits, whatever the server does: one wall-clock deadline for the whole answer (`seconds`,
by default the client's `Timeouts.total`; the sync client through deadline.py's network
backend, the async one through asyncio's timeout around each read), at most `max_chars` of
answer, and no line of the stream longer than MAX_LINE_BYTES held in memory. An answer cut
by one of them ends as ANSWER_INTERRUPTED (reason ANSWER_TIME_LIMIT / ANSWER_SIZE_LIMIT)
after the part that fits; a deadline passed before the first token is CHAT_FAILED,
TIMED_OUT.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import math
import ssl
import time
from collections.abc import AsyncGenerator, AsyncIterator, Generator, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, TypedDict

import httpx

from app.providers.deadline import DeadlineClient, fetch_scope
from app.providers.http import (
    PROBE_TIMEOUTS,
    AuthHint,
    InputTooLong,
    KeySource,
    Retry,
    Sleep,
    Timeouts,
    auth_headers,
    check_response,
    host_label,
    out_of_time,
    transport_failure,
)
from app.providers.interfaces import (
    ANSWER_SIZE_LIMIT,
    ANSWER_TIME_LIMIT,
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
# A chat model may think for a while before its first token; a stalled stream still ends,
# and a whole answer, however its tokens come, within five minutes.
CHAT_TIMEOUTS = Timeouts(connect=10.0, read=120.0, total=300.0)
# Seven times what the ask engine's largest answer budget (1,024 tokens) takes in English.
MAX_ANSWER_CHARS = 32_768
# One event or line of a stream; a longer one (a 30 MB "token") ends the answer unread.
MAX_LINE_BYTES = 1 << 20
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


def _interrupted(
    name: str, why: str, reason: str = "stream_cut", params: dict[str, str | int] | None = None
) -> ProviderError:
    return ProviderError(
        ANSWER_INTERRUPTED,
        f"{name}: the answer stream broke off ({why})",
        reason=reason,
        params={"provider": name, **(params or {})},
    )


class _OutOfTime(Exception):
    """The answer's deadline passed between two reads."""


class _LineTooLong(Exception):
    """A line of the stream grew past MAX_LINE_BYTES."""


@dataclass(slots=True)
class _Answer:
    """One answer's limits, and how much of it was passed on so far."""

    name: str
    seconds: float
    max_chars: int
    deadline: float  # time.monotonic()
    said: int = 0

    @classmethod
    def start(cls, name: str, seconds: float, max_chars: int) -> _Answer:
        if not seconds > 0 or max_chars < 1:
            raise ValueError("an answer's time and size limits must be positive")
        return cls(name, seconds, max_chars, time.monotonic() + seconds)

    def left(self) -> float:
        return self.deadline - time.monotonic()

    def take(self, text: str) -> str:
        """The part of `text` within the size limit, counted as said."""
        kept = text[: max(0, self.max_chars - self.said)]
        self.said += len(kept)
        return kept

    def too_long(self) -> ProviderError:
        return _interrupted(
            self.name,
            f"it grew past {self.max_chars:,} characters, the answer's size limit",
            ANSWER_SIZE_LIMIT,
            {"chars": self.max_chars},
        )

    def out_of_time(self) -> ProviderError | Retry:
        """The deadline passed: an answer cut off, or (nothing said yet) no answer in time."""
        if not self.said:
            return out_of_time(self.seconds)
        return _interrupted(
            self.name,
            f"it took longer than {self.seconds:g} s, the answer's time limit",
            ANSWER_TIME_LIMIT,
            {"seconds": math.ceil(self.seconds)},
        )


class _Lines:
    """A byte stream cut into text lines as they complete, none held past MAX_LINE_BYTES
    (httpx's iter_lines keeps a line of any length whole)."""

    def __init__(self, limit: int = MAX_LINE_BYTES) -> None:
        self._limit = limit
        self._rest = b""

    def feed(self, chunk: bytes) -> list[str]:
        *lines, self._rest = (self._rest + chunk).split(b"\n")
        if len(self._rest) > self._limit or any(len(line) > self._limit for line in lines):
            raise _LineTooLong
        return [_text(line) for line in lines]

    def close(self) -> list[str]:
        rest, self._rest = self._rest, b""
        return [_text(rest)] if rest else []


def _text(line: bytes) -> str:
    return line.rstrip(b"\r").decode("utf-8", errors="replace")


def _lines_of(reply: httpx.Response, answer: _Answer) -> Iterator[str]:
    """The reply's lines, every read bounded by the answer's deadline."""
    lines = _Lines()
    chunks = reply.iter_bytes()
    while True:
        with fetch_scope(answer.deadline):
            chunk = next(chunks, None)
        for line in lines.feed(chunk) if chunk is not None else lines.close():
            if answer.left() <= 0:
                raise _OutOfTime  # the lines came quickly, but for too long
            yield line
        if chunk is None:
            return


async def _alines_of(reply: httpx.Response, answer: _Answer) -> AsyncGenerator[str, None]:
    """The same over an async reply, each read within what is left of the deadline (no
    yield inside the timeout: it would cancel the consumer instead). Close it in the task
    that reads it (contextlib.aclosing)."""
    lines = _Lines()
    chunks = reply.aiter_bytes()
    try:
        while True:
            try:
                async with asyncio.timeout(answer.left()):
                    chunk = await anext(chunks, None)
            except TimeoutError:
                raise _OutOfTime from None
            for line in lines.feed(chunk) if chunk is not None else lines.close():
                if answer.left() <= 0:
                    raise _OutOfTime
                yield line
            if chunk is None:
                return
    finally:
        await _unwind(chunks)


async def _unwind(chunks: AsyncIterator[bytes]) -> None:
    """End httpx's nested body generators here, in this task, when the body is left unread
    (a limit hit, a line too long, the reader stopped): one more read, cancelled where it
    waits for the socket, unwinds every one of them. Closing only the outer one would leave
    the inner ones to the garbage collector, which finalizes them in another task, where
    httpcore cannot release its connection ("async generator ignored GeneratorExit")."""
    with contextlib.suppress(TimeoutError, httpx.HTTPError):
        async with asyncio.timeout(0):
            while await anext(chunks, None) is not None:
                pass


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

    def delay(self, retry: Retry, attempt: int, status: int | None, left: float) -> float:
        """Seconds before the second attempt; raises after it, when the wait is too long,
        or when it would not end before the answer's deadline (`left` seconds away)."""
        too_long = retry.retry_after is not None and retry.retry_after > self.max_retry_after
        wait = retry.retry_after if retry.retry_after is not None else RETRY_DELAY
        if attempt < 2 and not too_long and wait < left:
            return wait
        if status == 429:
            said = (
                f"; the server asks to wait {wait:.0f} s" if retry.retry_after is not None else ""
            )
            raise ProviderError(
                CHAT_RATE_LIMITED,
                f"{self.name}: too many requests (HTTP 429){said}",
                retryable=True,
                retry_after=retry.retry_after,
                params={"provider": self.name, "seconds": round(retry.retry_after or 0)},
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


def _headers(key: str | None) -> dict[str, str]:
    # Uncompressed: a gzip member a few kB long can inflate to gigabytes in one read.
    return {
        "Accept": "text/event-stream, application/x-ndjson",
        "Accept-Encoding": "identity",
        **auth_headers(key),
    }


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
        self._timeouts = timeouts
        self._client = DeadlineClient(
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
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int | None = None,
        max_chars: int = MAX_ANSWER_CHARS,
        seconds: float | None = None,
    ) -> Iterator[str]:
        """The answer's pieces, at most `max_chars` in all, within `seconds` (default: the
        client's total timeout) of wall-clock time."""
        key = self._key()
        payload = self.target.payload(messages, max_tokens)
        answer = _Answer.start(self.name, seconds or self._timeouts.total, max_chars)
        for attempt in (1, 2):
            outcome = yield from self._attempt(payload, _headers(key), key, answer)
            if outcome is None:
                return
            self._sleep(self._policy.delay(outcome, attempt, _status_of(outcome), answer.left()))

    def _attempt(
        self, payload: dict[str, Any], headers: dict[str, str], key: str | None, answer: _Answer
    ) -> Generator[str, None, Retry | None]:
        """Yields the answer's pieces; returns None when done, a Retry before any token."""
        target = self.target
        failure: ProviderError | Retry | None = None
        try:
            with contextlib.ExitStack() as stack:
                with fetch_scope(answer.deadline):
                    reply = stack.enter_context(
                        self._client.stream("POST", target.url, json=payload, headers=headers)
                    )
                    if reply.status_code >= 300:
                        reply.read()
                        return self._policy.failure(reply, target.path, key, self._auth_hint)
                for line in _lines_of(reply, answer):
                    piece = target.parse(line, self.name)
                    if piece is None:
                        continue
                    if piece.text:
                        kept = answer.take(piece.text)
                        if kept:
                            yield kept
                        if len(kept) < len(piece.text):
                            failure = answer.too_long()
                            break
                    if piece.done:
                        return None
        except (httpx.TransportError, httpx.InvalidURL) as exc:
            failure = transport_failure(exc, target.url, key)
            if isinstance(exc, httpx.TimeoutException) and answer.left() <= 0:
                failure = answer.out_of_time()
        except _OutOfTime:
            failure = answer.out_of_time()
        except _LineTooLong:
            failure = answer.too_long()
        return self._outcome(failure, answer)

    def _outcome(self, failure: ProviderError | Retry | None, answer: _Answer) -> Retry:
        """The Retry an attempt that did not finish is worth; raises what cannot be retried."""
        if failure is None:
            failure = _interrupted(self.name, "it ended before its last message")
        if answer.said:
            raise _after_tokens(failure, self.name)
        if isinstance(failure, ProviderError):
            raise failure
        return failure

    def complete(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int | None = None,
        seconds: float | None = None,
    ) -> str:
        """The whole answer as one string (the question rewrite)."""
        return "".join(self.stream(messages, max_tokens=max_tokens, seconds=seconds))

    def test_connection(self) -> str:
        reply = self.complete(list(PROBE_MESSAGES), max_tokens=8, seconds=PROBE_TIMEOUTS.total)
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
    """The same requests, policy and limits over httpx.AsyncClient, for the window's event
    loop."""

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
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int | None = None,
        max_chars: int = MAX_ANSWER_CHARS,
        seconds: float | None = None,
    ) -> AsyncGenerator[str, None]:
        payload = self.target.payload(messages, max_tokens)
        answer = _Answer.start(self.name, seconds or self._timeouts.total, max_chars)
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
                    self._attempt(client, payload, _headers(self._key), box, answer)
                ) as pieces:
                    async for text in pieces:
                        yield text
                if not box:
                    return
                delay = self._policy.delay(box[0], attempt, _status_of(box[0]), answer.left())
                await asyncio.sleep(delay)

    async def _attempt(
        self,
        client: httpx.AsyncClient,
        payload: dict[str, Any],
        headers: dict[str, str],
        box: list[Retry],
        answer: _Answer,
    ) -> AsyncGenerator[str, None]:
        """Yields the pieces; on a retryable failure before any token, puts it in `box`."""
        target = self.target
        failure: ProviderError | Retry | None = None
        done = False
        try:
            async with contextlib.AsyncExitStack() as stack:
                async with asyncio.timeout(answer.left()):
                    reply = await stack.enter_async_context(
                        client.stream("POST", target.url, json=payload, headers=headers)
                    )
                    if reply.status_code >= 300:
                        await reply.aread()
                        box.append(
                            self._policy.failure(reply, target.path, self._key, self._auth_hint)
                        )
                        return
                # Read to the end of the body even after the final marker (the server ends
                # it there): left half-read, httpx's nested generators would be finalized
                # later by the garbage collector, in another task than this one.
                async with contextlib.aclosing(_alines_of(reply, answer)) as lines:
                    async for line in lines:
                        piece = None if done else target.parse(line, self.name)
                        if piece is None:
                            continue
                        if piece.text:
                            kept = answer.take(piece.text)
                            if kept:
                                yield kept
                            if len(kept) < len(piece.text):
                                failure = answer.too_long()
                                break
                        done = piece.done
                if done:
                    return
        except (httpx.TransportError, httpx.InvalidURL) as exc:
            failure = transport_failure(exc, target.url, self._key)
        except (_OutOfTime, TimeoutError):
            if done:
                return  # the answer was complete; only the rest of the body was late
            failure = answer.out_of_time()
        except _LineTooLong:
            failure = answer.too_long()
        if failure is None:
            failure = _interrupted(self.name, "it ended before its last message")
        if answer.said:
            raise _after_tokens(failure, self.name)
        if isinstance(failure, ProviderError):
            raise failure
        box.append(failure)

    async def test_connection(self) -> str:
        messages = list(PROBE_MESSAGES)
        pieces = [
            text async for text in self.stream(messages, max_tokens=8, seconds=PROBE_TIMEOUTS.total)
        ]
        return chat_ok(self.name, self.target.model, "".join(pieces))


__all__ = [
    "ANSWER_INTERRUPTED",
    "CHAT_CONTEXT_OVERFLOW",
    "CHAT_FAILED",
    "CHAT_KINDS",
    "CHAT_RATE_LIMITED",
    "MAX_ANSWER_CHARS",
    "AsyncChatClient",
    "ChatClient",
    "Message",
    "Piece",
    "chat_target",
    "parse_ndjson_line",
    "parse_sse_line",
]
