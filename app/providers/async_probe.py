"""The window's provider probes, fetching the model list and testing the connection, as
coroutines over httpx.AsyncClient.

They send the same requests, parse the same answers and raise the same ProviderError codes as
the sync clients (they reuse openai_compat's request builders and parsers and http.py's error,
retry and key-hygiene functions). The window awaits them on its qasync event loop, so a slow
server never freezes it and closing a dialog cancels the request in flight.

A probe works on settings that may not be saved yet (the form's values). Without a typed key
it uses the key stored for `provider_id`, read off the event loop since a keychain may block.

Each probe, its retry included, ends within `timeouts.total` of wall-clock time (asyncio's
own timeout: a server that sends a byte a second never trips httpx's per-read timeouts).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable
from typing import Any, TypeVar

import httpx

from app.providers import secrets
from app.providers.factory import EMBEDDING_KINDS, PROVIDER_KINDS
from app.providers.http import (
    PROBE_TIMEOUTS,
    AuthHint,
    Retry,
    RetryPolicy,
    Timeouts,
    auth_headers,
    check_response,
    host_label,
    out_of_time,
    transport_failure,
    wait_before_retry,
)
from app.providers.interfaces import (
    EMBEDDING_FAILED,
    INVALID_ARGUMENT,
    MODEL_NOT_AVAILABLE,
    NO_MODELS,
    TIMED_OUT,
    ConnectionOk,
    FloatMatrix,
    ProviderError,
)
from app.providers.local_model import LOCAL_DIMS, LOCAL_MODEL_NAME, LocalEmbedder
from app.providers.openai_compat import (
    EMBEDDINGS_PATH,
    MODELS_PATH,
    OLLAMA_EMBED_PATH,
    OLLAMA_TAGS_PATH,
    PROBE_ATTEMPTS,
    PROBE_TEXT,
    RERANK_PATH,
    RERANK_PROBE_DOCUMENTS,
    embeddings_ok,
    ollama_embed_payload,
    ollama_root,
    openai_api_root,
    openai_embeddings_payload,
    parse_ollama_embeddings,
    parse_ollama_tags,
    parse_openai_embeddings,
    parse_openai_models,
    parse_rerank,
    require_ollama_model,
    rerank_ok,
    rerank_payload,
)

# Someone is waiting on the answer: one retry, and a Retry-After is honoured only briefly.
PROBE_RETRY = RetryPolicy(max_attempts=PROBE_ATTEMPTS, max_retry_after=5.0)
T = TypeVar("T")


class _AsyncHttp:
    """ProviderHttp's request policy (errors, retries, key scrubbing) over an AsyncClient."""

    def __init__(
        self,
        client: httpx.AsyncClient,
        root: str,
        *,
        name: str,
        key: str | None,
        auth_hint: AuthHint,
        retry: RetryPolicy,
    ) -> None:
        self._client = client
        self._root = root
        self.name = name
        self._key = key
        self._auth_hint = auth_hint
        self._retry = retry

    async def get_json(self, path: str) -> Any:
        return await self._request_json("GET", path)

    async def post_json(self, path: str, payload: Any) -> Any:
        return await self._request_json("POST", path, payload)

    async def _request_json(self, method: str, path: str, payload: Any = None) -> Any:
        url = self._root + path
        headers = {"Accept": "application/json", **auth_headers(self._key)}
        total = self._retry.max_attempts
        for attempt in range(1, total + 1):
            outcome = await self._send(method, url, payload, headers)
            if not isinstance(outcome, Retry):
                outcome = check_response(
                    outcome,
                    path,
                    name=self.name,
                    key=self._key,
                    failure_code=EMBEDDING_FAILED,
                    auth_hint=self._auth_hint,
                )
                if not isinstance(outcome, Retry):
                    return outcome
            delay = wait_before_retry(
                self._retry, outcome, attempt, total, name=self.name, failure_code=EMBEDDING_FAILED
            )
            await asyncio.sleep(delay)
        raise AssertionError("unreachable")  # the loop returns or raises on its last attempt

    async def _send(
        self, method: str, url: str, payload: Any, headers: dict[str, str]
    ) -> httpx.Response | Retry:
        failure: ProviderError | Retry
        try:
            return await self._client.request(method, url, json=payload, headers=headers)
        except (httpx.TransportError, httpx.InvalidURL) as exc:
            failure = transport_failure(exc, url, self._key)
        # Raised outside the except block: the httpx error holds the Authorization header.
        if isinstance(failure, ProviderError):
            raise failure
        return failure


@contextlib.asynccontextmanager
async def _session(
    client: httpx.AsyncClient | None, timeouts: Timeouts
) -> AsyncIterator[httpx.AsyncClient]:
    if client is not None:
        yield client
        return
    async with httpx.AsyncClient(
        timeout=timeouts.to_httpx(),
        follow_redirects=False,
        trust_env=False,  # a provider URL is exact; a system proxy must not see the key
    ) as own:
        yield own


async def _within(work: Awaitable[T], timeouts: Timeouts, name: str) -> T:
    """`work`, or the passing failure of a probe that ran out of its time."""
    try:
        async with asyncio.timeout(timeouts.total):
            return await work
    except TimeoutError:
        late = out_of_time(timeouts.total)
    raise ProviderError(
        EMBEDDING_FAILED,
        f"{name}: {late.reason}",
        retryable=True,
        reason=TIMED_OUT,
        params={"provider": name},
    )


async def _resolve_key(key: str | None, provider_id: str | None) -> tuple[str | None, str | None]:
    """(key to send, hint for an auth failure): the typed key, else the stored one."""
    if key and key.strip():
        return key.strip(), None
    if not provider_id:
        return None, None
    try:
        return await asyncio.to_thread(secrets.get_key, provider_id), None
    except secrets.SecretStoreUnavailable as exc:
        # As for the sync clients: a keyless server still works; one that wants a key answers
        # 401, and the message then says where the key can go instead.
        return None, exc.message


def _root(kind: str, base_url: str) -> str:
    if kind == "ollama":
        return ollama_root(base_url)
    if kind in ("openai", "rerank"):
        return openai_api_root(base_url)
    raise ProviderError(INVALID_ARGUMENT, f"unknown provider kind {kind!r}")


async def _http(
    client: httpx.AsyncClient,
    kind: str,
    base_url: str,
    key: str | None,
    *,
    provider_id: str | None,
    name: str | None,
    retry: RetryPolicy,
) -> _AsyncHttp:
    root = _root(kind, base_url)
    sent_key, hint = await _resolve_key(key, provider_id)
    return _AsyncHttp(
        client,
        root,
        name=name or host_label(root),
        key=sent_key,
        auth_hint=hint,
        retry=retry,
    )


async def _models(http: _AsyncHttp, kind: str) -> list[str]:
    if kind == "ollama":
        return parse_ollama_tags(await http.get_json(OLLAMA_TAGS_PATH), http.name)
    return parse_openai_models(await http.get_json(MODELS_PATH), http.name)


async def list_models(
    kind: str,
    base_url: str,
    key: str | None = None,
    *,
    provider_id: str | None = None,
    name: str | None = None,
    client: httpx.AsyncClient | None = None,
    timeouts: Timeouts = PROBE_TIMEOUTS,
    retry: RetryPolicy = PROBE_RETRY,
) -> list[str]:
    """The model names a provider offers (sorted), as factory.list_models answers them."""
    if kind == "local":
        return [LOCAL_MODEL_NAME]

    async def listed() -> list[str]:
        async with _session(client, timeouts) as session:
            http = await _http(
                session, kind, base_url, key, provider_id=provider_id, name=name, retry=retry
            )
            return await _models(http, kind)

    return await _within(listed(), timeouts, name or host_label(base_url))


async def test_connection(
    kind: str,
    base_url: str,
    key: str | None = None,
    model: str | None = None,
    *,
    provider_id: str | None = None,
    name: str | None = None,
    client: httpx.AsyncClient | None = None,
    timeouts: Timeouts = PROBE_TIMEOUTS,
    retry: RetryPolicy = PROBE_RETRY,
) -> ConnectionOk:
    """One real call with `model` (default: the first model the provider lists), as the sync
    clients' test_connection makes it; what answered, or ProviderError."""
    if kind not in PROVIDER_KINDS:
        raise ProviderError(INVALID_ARGUMENT, f"unknown provider kind {kind!r}")
    if kind == "local":
        # The built-in model loads from disk: a worker thread, not the event loop.
        message = await asyncio.to_thread(LocalEmbedder().test_connection)
        return ConnectionOk("local", LOCAL_MODEL_NAME, LOCAL_DIMS, message, local=True)

    async def tested() -> ConnectionOk:
        async with _session(client, timeouts) as session:
            http = await _http(
                session, kind, base_url, key, provider_id=provider_id, name=name, retry=retry
            )
            return await _test(http, kind, model.strip() if model else "")

    return await _within(tested(), timeouts, name or host_label(base_url))


async def _test(http: _AsyncHttp, kind: str, chosen: str) -> ConnectionOk:
    """The probe's one real call with `chosen` (none: the first model the provider lists)."""
    if not chosen:
        offered = await _models(http, kind)
        if not offered:
            raise ProviderError(
                MODEL_NOT_AVAILABLE,
                f"{http.name} offers no models",
                reason=NO_MODELS,
                params={"provider": http.name},
            )
        chosen = offered[0]
    if kind == "ollama":
        return await _test_ollama(http, chosen)
    if kind in EMBEDDING_KINDS:
        return await _test_openai(http, chosen)
    return await _test_rerank(http, chosen)


async def _test_openai(http: _AsyncHttp, model: str) -> ConnectionOk:
    # Embedding one text checks the address, the key, the model and the vector size at once.
    payload = openai_embeddings_payload(model, [PROBE_TEXT], "float", None)
    body = await http.post_json(EMBEDDINGS_PATH, payload)
    return _embedded(http, model, parse_openai_embeddings(body, 1, http.name))


async def _test_ollama(http: _AsyncHttp, model: str) -> ConnectionOk:
    require_ollama_model(await _models(http, "ollama"), model, http.name)
    body = await http.post_json(OLLAMA_EMBED_PATH, ollama_embed_payload(model, [PROBE_TEXT], None))
    return _embedded(http, model, parse_ollama_embeddings(body, 1, http.name))


def _embedded(http: _AsyncHttp, model: str, matrix: FloatMatrix) -> ConnectionOk:
    message = embeddings_ok(http.name, model, matrix)
    return ConnectionOk(http.name, model, int(matrix.shape[1]), message)


async def _test_rerank(http: _AsyncHttp, model: str) -> ConnectionOk:
    documents = list(RERANK_PROBE_DOCUMENTS)
    payload = rerank_payload(model, PROBE_TEXT, documents, len(documents))
    body = await http.post_json(RERANK_PATH, payload)
    ranked = parse_rerank(body, len(documents), len(documents), http.name)
    return ConnectionOk(http.name, model, None, rerank_ok(http.name, model, ranked))
