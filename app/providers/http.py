"""Shared HTTP plumbing for provider clients: retries, backoff, error codes, key hygiene.

Every provider call goes through `ProviderHttp.request_json` (the window's async probes in
app/providers/async_probe.py apply the same module functions over an httpx.AsyncClient), which

- fails at once with PROVIDER_AUTH_FAILED on 401/403 (retrying cannot fix a bad key);
- bounds the whole call, retries and their waits included, by one wall-clock deadline
  (`Timeouts.total`): every connect, write and read waits at most what is left of it
  (deadline.py's network backend), since httpx's own timeouts apply to each socket read
  and a server sending a byte every second never trips them;
- treats 408/429/5xx, timeouts and connection errors as passing: by default (one attempt)
  it raises a ProviderError with `retryable=True` and the server's Retry-After (seconds or
  an HTTP date, capped), and the job runner waits that long (or its own backoff) with the
  job queued, no thread asleep, before the job runs again. Only calls a person waits on
  and no job can carry — searches (SEARCH_RETRY) and connection tests — ask for more
  attempts, retried here with exponential backoff that honours Retry-After;
- fails at once, without retry, on a body that is not JSON (a server that answers garbage
  usually answers the same garbage again);
- raises `InputTooLong` for a 400/413/422 whose message says the input exceeds the model's
  context, so embedders can shrink their inputs and try again;
- never lets the API key reach a message, a log record or an exception chain: server text is
  scrubbed of the key (servers do echo it back) and exceptions are raised outside `except`
  blocks, so no httpx exception holding the request headers hangs off `__context__`.
"""

from __future__ import annotations

import email.utils
import json
import logging
import re
import socket
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC
from typing import Any, TypedDict
from urllib.parse import urlsplit

import httpx

from app.providers.deadline import DeadlineClient, fetch_scope
from app.providers.interfaces import (
    BAD_URL,
    CONNECTION_FAILED,
    CONNECTION_REFUSED,
    EMBEDDING_FAILED,
    HOST_NOT_FOUND,
    HTTP_STATUS,
    INVALID_ARGUMENT,
    KEY_MISSING,
    KEY_REJECTED,
    MALFORMED,
    MODEL_NOT_AVAILABLE,
    NOT_FOUND,
    NOT_JSON,
    PROVIDER_AUTH_FAILED,
    TIMED_OUT,
    ErrorParams,
    ProviderError,
)

log = logging.getLogger(__name__)

# A key given as a callable is looked up per request, so a key changed in the settings takes
# effect without rebuilding clients.
KeySource = str | Callable[[], str | None] | None
# Appended to an auth failure when no key was sent, e.g. "no keychain: set TROVE_KEY_X".
AuthHint = str | Callable[[], str | None] | None
Sleep = Callable[[float], None]
Clock = Callable[[], float]

RETRYABLE_STATUSES = frozenset({408, 425, 429, 500, 502, 503, 504}) | frozenset(range(505, 600))
# Ollama has answered an over-long input with a 500; the message tells it apart from an outage.
TOO_LONG_STATUSES = frozenset({400, 413, 422, 500})
_TOO_LONG = re.compile(
    r"too long|too large|too many tokens|maximum context|context length|context window"
    r"|max(imum)?[ _-]?(input[ _-]?)?(length|tokens)|exceeds?( the)? (max|limit|model)"
    r"|input length|token limit|reduce (the )?(length|input)",
    re.IGNORECASE,
)
_BEARER = re.compile(r"(?i)(bearer\s+)[^\s\"',;}]+")
_EXCERPT_CHARS = 300
REDACTED = "[redacted]"


@dataclass(frozen=True)
class Timeouts:
    connect: float = 10.0
    read: float = 60.0
    # The call's wall-clock deadline: connects, writes, reads however slowly the bytes come,
    # retries and the waits between them. Three times the read timeout, so an answer that
    # comes as a server sends it is never cut; one that trickles is.
    total: float = 180.0

    def __post_init__(self) -> None:
        if not self.total > 0:
            raise ValueError("a call's total time must be positive")

    def to_httpx(self) -> httpx.Timeout:
        # A write stalls like a read does; the pool wait is local and bounded like a connect.
        return httpx.Timeout(
            connect=self.connect, read=self.read, write=self.read, pool=self.connect
        )


@dataclass(frozen=True)
class RetryPolicy:
    # One attempt: indexing's retries are the job runner's, which keeps the batches already
    # embedded and sleeps no thread; a retry here as well would multiply the two layers.
    max_attempts: int = 1
    base_delay: float = 0.5
    max_delay: float = 30.0
    max_retry_after: float = 60.0

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")

    def backoff(self, failures: int) -> float:
        """The wait after the `failures`-th failed attempt: 0.5, 1, 2, 4 ... capped."""
        return float(min(self.max_delay, self.base_delay * 2 ** (failures - 1)))


# A search is waited on by a person, degrades when a provider fails and cannot be queued
# like a job, so it is the one caller that retries inside the call: once, after a short
# backoff, within the call's deadline (indexing's clients never retry themselves). The
# deadlines keep a degraded search within 5 s: embedding one query gets 1.5 s, reranking
# up to 200 passages 3 s, and after an embedder that did not answer the reranker is not
# asked at all (query.py). A local server still loading its model on the first query
# answers that one search with full-text results.
SEARCH_EMBED_TIMEOUTS = Timeouts(connect=1.5, read=1.5, total=1.5)
SEARCH_RERANK_TIMEOUTS = Timeouts(connect=1.5, read=3.0, total=3.0)
SEARCH_RETRY = RetryPolicy(max_attempts=2, base_delay=0.25)
# A connection test or a model list someone waits on: 30 s in all, one retry included.
PROBE_TIMEOUTS = Timeouts(connect=10.0, read=30.0, total=30.0)


class InputTooLong(ProviderError):
    """The server said an input exceeds the model's context; the caller may shrink and retry."""

    def __init__(self, message: str, params: ErrorParams | None = None) -> None:
        super().__init__(
            EMBEDDING_FAILED, message, retryable=False, reason=HTTP_STATUS, params=params
        )


def scrub(text: str, secrets: Iterable[str | None]) -> str:
    """Remove every secret, and any bearer token at all, from text meant for people or logs."""
    for secret in secrets:
        if not secret:
            continue
        # A JSON body escapes some characters, so the echoed key may not be byte-identical.
        escaped = json.dumps(secret)[1:-1]
        for variant in {secret, escaped}:
            text = text.replace(variant, REDACTED)
    return _BEARER.sub(lambda m: m.group(1) + REDACTED, text)


def parse_retry_after(value: str | None, now: float) -> float | None:
    """Seconds to wait from a Retry-After header (delta-seconds or HTTP date), or None."""
    if value is None:
        return None
    value = value.strip()
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:  # "-0000" parses naive; RFC 9110 dates are GMT anyway
            when = when.replace(tzinfo=UTC)
        return max(0.0, when.timestamp() - now)
    if seconds != seconds or seconds < 0:  # NaN or negative: ignore rather than trust
        return None
    return seconds


def server_message(response: httpx.Response) -> str:
    """The error text a server put in its body, in the common JSON shapes, else a raw excerpt."""
    text = response.text
    try:
        body = json.loads(text)
    except ValueError:
        body = None
    found: Any = None
    if isinstance(body, dict):
        error = body.get("error")
        if isinstance(error, dict):
            found = error.get("message") or error.get("detail")
        elif error:
            found = error
        found = found or body.get("detail") or body.get("message")
    message = found if isinstance(found, str) else (json.dumps(found) if found else text)
    message = " ".join(message.split())
    if len(message) > _EXCERPT_CHARS:
        message = message[:_EXCERPT_CHARS] + "…"
    return message


def host_label(base_url: str) -> str:
    parts = urlsplit(base_url)
    return parts.netloc or base_url


class HttpOptions(TypedDict, total=False):
    """Keyword options every client forwards to its ProviderHttp."""

    name: str
    auth_hint: AuthHint
    headers: Mapping[str, str]
    timeouts: Timeouts
    retry: RetryPolicy
    sleep: Sleep
    clock: Clock
    transport: httpx.BaseTransport


@dataclass
class Retry:
    """A failed attempt that is worth repeating; `cause` and `params` say why without words
    (ProviderError's `reason` and `params` when the last attempt fails too)."""

    reason: str
    retry_after: float | None = None
    cause: str = CONNECTION_FAILED
    params: ErrorParams | None = None


def auth_headers(key: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"} if key else {}


def transport_failure(
    exc: httpx.TransportError | httpx.InvalidURL, url: str, key: str | None
) -> ProviderError | Retry:
    """What a request that got no answer means: a bad URL fails at once, the rest is retried.

    Returned, not raised: the caller raises outside its `except` block, so the httpx error
    (which holds the request and its Authorization header) is not chained onto what callers
    see and log.
    """
    if isinstance(exc, httpx.TimeoutException):
        return Retry(scrub(f"request timed out ({type(exc).__name__})", [key]), cause=TIMED_OUT)
    if isinstance(exc, httpx.UnsupportedProtocol | httpx.InvalidURL):
        return ProviderError(
            INVALID_ARGUMENT,
            scrub(f"invalid provider URL {url!r}: {exc}", [key]),
            reason=BAD_URL,
            params={"url": scrub(url, [key])},
        )
    return Retry(
        scrub(f"connection failed ({type(exc).__name__}: {exc})", [key]),
        cause=_connect_cause(exc),
        params={"address": host_label(url)},
    )


def out_of_time(total: float) -> Retry:
    """What a call that ran into its deadline means: a passing failure, said plainly (the
    timeout httpx reports is only the socket operation that was waiting at that moment)."""
    return Retry(f"no complete answer within {total:g} s (the call's time limit)", cause=TIMED_OUT)


def _connect_cause(exc: BaseException) -> str:
    """Refused, unknown host or another connection failure: the OS error under httpx's."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, ConnectionRefusedError):
            return CONNECTION_REFUSED
        if isinstance(current, socket.gaierror):
            return HOST_NOT_FOUND
        current = current.__cause__ or current.__context__
    return CONNECTION_FAILED


def check_response(
    response: httpx.Response,
    path: str,
    *,
    name: str,
    key: str | None,
    failure_code: str,
    auth_hint: AuthHint = None,
    clock: Clock = time.time,
) -> Any:
    """The decoded JSON of a 2xx answer, a `Retry` for a passing failure, else ProviderError."""
    status = response.status_code
    if 200 <= status < 300:
        return decode_json(response, path, name=name, key=key, failure_code=failure_code)
    detail = scrub(server_message(response), [key])
    suffix = f": {detail}" if detail else ""
    params: ErrorParams = {"provider": name, "status": status, "server": detail}
    if status in (401, 403):
        what = "rejected the API key" if key else "requires an API key (none is set)"
        hint_text = auth_hint() if callable(auth_hint) else auth_hint
        hint = f". {hint_text}" if hint_text and not key else ""
        raise ProviderError(
            PROVIDER_AUTH_FAILED,
            f"{name} {what} (HTTP {status}){suffix}{hint}",
            reason=KEY_REJECTED if key else KEY_MISSING,
            params=params,
        )
    if status in TOO_LONG_STATUSES and (status == 413 or _TOO_LONG.search(detail)):
        raise InputTooLong(f"{name}: input too long (HTTP {status}){suffix}", params)
    if status in RETRYABLE_STATUSES:
        return Retry(
            f"HTTP {status} from {path}{suffix}",
            parse_retry_after(response.headers.get("Retry-After"), clock()),
            cause=HTTP_STATUS,
            params=params,
        )
    if status == 404:
        raise ProviderError(
            MODEL_NOT_AVAILABLE,
            f"{name}: {path} answered HTTP 404 (unknown model or wrong base URL){suffix}",
            reason=NOT_FOUND,
            params={**params, "path": path},
        )
    raise ProviderError(
        failure_code,
        f"{name}: HTTP {status} from {path}{suffix}",
        reason=HTTP_STATUS,
        params=params,
    )


def decode_json(
    response: httpx.Response, path: str, *, name: str, key: str | None, failure_code: str
) -> Any:
    problem: str | None = None
    try:
        return json.loads(response.content)
    except ValueError:
        excerpt = " ".join(response.text[:80].split())
        problem = f"{name}: {path} answered with a body that is not JSON ({excerpt!r})"
    raise ProviderError(
        failure_code,
        scrub(problem, [key]),
        reason=NOT_JSON,
        params={"provider": name, "server": scrub(excerpt, [key])},
    )


def wait_before_retry(
    policy: RetryPolicy,
    retry: Retry,
    attempt: int,
    total: int,
    *,
    name: str,
    failure_code: str,
    left: float | None = None,
) -> float:
    """Seconds to wait before attempt `attempt + 1`; after the last attempt, or when the
    wait would not end before the call's deadline (`left` seconds away), raises instead
    (with the server's capped Retry-After, for the job runner to wait)."""
    retry_after = (
        None if retry.retry_after is None else min(retry.retry_after, policy.max_retry_after)
    )
    delay = retry_after if retry_after is not None else policy.backoff(attempt)
    if attempt >= total or (left is not None and delay >= left):
        raise ProviderError(
            failure_code,
            f"{name}: {retry.reason}; gave up after {attempt} attempt{'s' if attempt != 1 else ''}",
            retryable=True,
            retry_after=retry_after,
            reason=retry.cause,
            params={"provider": name, **(retry.params or {})},
        )
    log.warning(
        "%s: %s; attempt %d of %d, retrying in %.1f s", name, retry.reason, attempt, total, delay
    )
    return delay


class ProviderHttp:
    """A JSON-over-HTTP client for one provider with the retry and error policy above.

    `sleep` and `clock` are injectable so tests observe backoff without waiting;
    `transport` lets tests swap the network for an httpx transport (which then does its
    own I/O: the deadline is checked between attempts only).
    """

    def __init__(
        self,
        base_url: str,
        *,
        name: str | None = None,
        api_key: KeySource = None,
        auth_hint: AuthHint = None,
        headers: Mapping[str, str] | None = None,
        timeouts: Timeouts | None = None,
        retry: RetryPolicy | None = None,
        sleep: Sleep = time.sleep,
        clock: Clock = time.time,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.name = name or host_label(self.base_url)
        self.timeouts = timeouts or Timeouts()
        self.retry = retry or RetryPolicy()
        self._api_key = api_key
        self._auth_hint = auth_hint
        self._sleep = sleep
        self._clock = clock
        self._client = DeadlineClient(
            timeout=self.timeouts.to_httpx(),
            headers={"Accept": "application/json", **(headers or {})},
            transport=transport,
            follow_redirects=False,
            trust_env=False,  # a provider URL is exact; a system proxy must not see the key
        )

    def close(self) -> None:
        self._client.close()

    def current_key(self) -> str | None:
        key = self._api_key() if callable(self._api_key) else self._api_key
        return key or None

    def get_json(
        self, path: str, *, failure_code: str = EMBEDDING_FAILED, attempts: int | None = None
    ) -> Any:
        return self.request_json("GET", path, failure_code=failure_code, attempts=attempts)

    def post_json(
        self,
        path: str,
        payload: Any,
        *,
        failure_code: str = EMBEDDING_FAILED,
        attempts: int | None = None,
    ) -> Any:
        return self.request_json(
            "POST", path, payload, failure_code=failure_code, attempts=attempts
        )

    def request_json(
        self,
        method: str,
        path: str,
        payload: Any = None,
        *,
        failure_code: str = EMBEDDING_FAILED,
        attempts: int | None = None,
    ) -> Any:
        """Send, retrying per the policy within the call's deadline, and return the decoded
        JSON body of a 2xx answer."""
        url = self.base_url + path
        key = self.current_key()
        headers = auth_headers(key)
        total = attempts or self.retry.max_attempts
        deadline = time.monotonic() + self.timeouts.total
        for attempt in range(1, total + 1):
            outcome = self._send(method, url, payload, headers, key, deadline)
            if not isinstance(outcome, Retry):
                outcome = check_response(
                    outcome,
                    path,
                    name=self.name,
                    key=key,
                    failure_code=failure_code,
                    auth_hint=self._auth_hint,
                    clock=self._clock,
                )
                if not isinstance(outcome, Retry):
                    return outcome
            delay = wait_before_retry(
                self.retry,
                outcome,
                attempt,
                total,
                name=self.name,
                failure_code=failure_code,
                left=deadline - time.monotonic(),
            )
            self._sleep(delay)
        raise AssertionError("unreachable")  # the loop returns or raises on its last attempt

    def _send(
        self,
        method: str,
        url: str,
        payload: Any,
        headers: dict[str, str],
        key: str | None,
        deadline: float,
    ) -> httpx.Response | Retry:
        failure: ProviderError | Retry
        try:
            with fetch_scope(deadline):
                return self._client.request(method, url, json=payload, headers=headers)
        except (httpx.TransportError, httpx.InvalidURL) as exc:
            failure = transport_failure(exc, url, key)
            if isinstance(exc, httpx.TimeoutException) and time.monotonic() >= deadline:
                failure = out_of_time(self.timeouts.total)
        if isinstance(failure, ProviderError):
            raise failure
        return failure


def malformed(name: str, detail: str) -> ProviderError:
    """A 2xx answer whose JSON does not have the shape the API documents."""
    return ProviderError(
        EMBEDDING_FAILED,
        f"{name}: unexpected response: {detail}",
        reason=MALFORMED,
        params={"provider": name},
    )
