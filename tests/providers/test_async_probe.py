"""The window's async probes against the loopback fake provider: same requests, answers and
errors as the sync clients, keys never in messages, cancellable."""

from __future__ import annotations

import asyncio
import logging
import socket
from collections.abc import Awaitable
from typing import Any, TypeVar

import httpx
import pytest
from keyring.backends import fail

from app.providers import async_probe, factory
from app.providers.factory import ProviderSettings
from app.providers.http import RetryPolicy, Timeouts
from app.providers.interfaces import ProviderError
from app.providers.local_model import LOCAL_MODEL_NAME
from tests.providers.conftest import KEY, MemoryKeyring, UseKeyring
from tests.providers.fake_api import (
    EMBEDDINGS,
    MODELS,
    OLLAMA_EMBED,
    OLLAMA_TAGS,
    RERANK,
    FakeApi,
    Fault,
)

T = TypeVar("T")
FAST_RETRY = RetryPolicy(max_attempts=2, base_delay=0.01)
SHORT = Timeouts(connect=2.0, read=0.3)


def run(work: Awaitable[T]) -> T:
    async def main() -> T:
        return await work

    return asyncio.run(main())


def error_of(work: Awaitable[Any]) -> ProviderError:
    with pytest.raises(ProviderError) as info:
        run(work)
    return info.value


def recorded(api: FakeApi, paths: tuple[str, ...]) -> list[tuple[str, str, Any, str | None]]:
    """Every request the server saw on these paths, in order: method, path, body, auth."""
    requests = [r for r in api.server.requests() if r.path in paths]
    return [
        (r.method, r.path, r.json() if r.body else None, r.headers.get("authorization"))
        for r in requests
    ]


# the same requests and answers as the sync clients

ALL_PATHS = (EMBEDDINGS, MODELS, RERANK, OLLAMA_EMBED, OLLAMA_TAGS)


@pytest.mark.parametrize(
    ("kind", "model"),
    [
        ("openai", "embed-small"),
        ("openai", None),
        ("ollama", "all-minilm"),
        ("ollama", None),
        ("rerank", "rerank-1"),
    ],
)
def test_test_connection_mirrors_the_sync_check(kind: str, model: str | None) -> None:
    settings = ProviderSettings("vendor", kind, "Vendor", "")

    def lookup(provider_id: str) -> str | None:
        return KEY

    with FakeApi(api_key=KEY) as sync_api, FakeApi(api_key=KEY) as async_api:
        settings.base_url = sync_api.base_url
        chosen = model or factory.list_models(settings, lookup)[0]
        sync_requests_before = len(recorded(sync_api, ALL_PATHS))
        expected = factory.check_connection(settings, chosen, lookup)
        message = run(
            async_probe.test_connection(kind, async_api.base_url, KEY, model, name="Vendor")
        )
        sync_calls = recorded(sync_api, ALL_PATHS)[sync_requests_before:]
        async_calls = recorded(async_api, ALL_PATHS)
    if model is None:  # the probe first asks for the list, as check_provider does
        assert async_calls[0][1] in (MODELS, OLLAMA_TAGS)
        async_calls = async_calls[1:]
    assert message.message == expected
    assert async_calls == sync_calls
    assert async_calls[-1][3] == f"Bearer {KEY}"


@pytest.mark.parametrize("kind", ["openai", "ollama", "rerank"])
def test_list_models_mirrors_the_sync_list(api: FakeApi, kind: str) -> None:
    settings = ProviderSettings("vendor", kind, "", api.base_url)
    expected = factory.list_models(settings, lambda _id: KEY)
    assert run(async_probe.list_models(kind, api.base_url, KEY)) == expected
    assert expected  # the fake serves a non-empty list for every kind
    sync_call, async_call = recorded(api, ALL_PATHS)
    assert async_call == sync_call


def test_list_models_accepts_a_v1_base_url(api: FakeApi) -> None:
    models = run(async_probe.list_models("openai", api.base_url + "/v1/", KEY))
    assert models == ["embed-large", "embed-small"]
    assert api.hits(MODELS) == 1


def test_builtin_model_needs_no_network() -> None:
    assert run(async_probe.list_models("local", "", None)) == [LOCAL_MODEL_NAME]


def test_missing_ollama_model_is_model_not_available(api: FakeApi) -> None:
    error = error_of(async_probe.test_connection("ollama", api.base_url, KEY, "no-such-model"))
    assert error.code == "MODEL_NOT_AVAILABLE"
    assert "ollama pull no-such-model" in error.message
    assert api.hits(OLLAMA_EMBED) == 0


def test_provider_without_models_cannot_be_tested() -> None:
    with FakeApi(models=()) as api:
        error = error_of(async_probe.test_connection("openai", api.base_url))
    assert error.code == "MODEL_NOT_AVAILABLE"


# errors map to the same codes, without the key


def test_wrong_key_is_an_auth_failure_without_the_key() -> None:
    with FakeApi(api_key="right-key") as api:
        error = error_of(async_probe.list_models("openai", api.base_url, KEY))
        hits = api.hits(MODELS)
    assert error.code == "PROVIDER_AUTH_FAILED"
    assert "rejected the API key" in error.message
    assert KEY not in error.message  # the fake echoes the key it was sent
    assert error.__context__ is None and error.__cause__ is None
    assert hits == 1  # a bad key is not retried


def test_missing_key_says_none_was_set(api: FakeApi) -> None:
    error = error_of(async_probe.test_connection("openai", api.base_url, None, "embed-small"))
    assert error.code == "PROVIDER_AUTH_FAILED"
    assert "none is set" in error.message


def test_same_error_as_the_sync_client_for_an_echoed_key(
    api: FakeApi, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    api.fail(EMBEDDINGS, *[Fault.http(500, echo_auth=True)] * 2)
    error = error_of(
        async_probe.test_connection("openai", api.base_url, KEY, "embed-small", retry=FAST_RETRY)
    )
    assert error.code == "EMBEDDING_FAILED"
    assert error.retryable
    assert "gave up after 2 attempts" in error.message
    assert "[redacted]" in error.message
    assert KEY not in error.message
    assert KEY not in caplog.text
    assert api.hits(EMBEDDINGS) == 2


def test_a_passing_failure_is_retried(api: FakeApi) -> None:
    api.fail(MODELS, Fault.http(503))
    models = run(async_probe.list_models("openai", api.base_url, KEY, retry=FAST_RETRY))
    assert models == ["embed-large", "embed-small"]
    assert api.hits(MODELS) == 2


def test_timeout_is_reported(api: FakeApi) -> None:
    api.fail(MODELS, Fault.slow(), Fault.slow())
    error = error_of(
        async_probe.list_models("openai", api.base_url, KEY, timeouts=SHORT, retry=FAST_RETRY)
    )
    assert error.code == "EMBEDDING_FAILED"
    assert "timed out" in error.message


def test_refused_connection_is_reported() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    error = error_of(
        async_probe.list_models("openai", f"http://127.0.0.1:{port}", KEY, retry=FAST_RETRY)
    )
    assert error.code == "EMBEDDING_FAILED"
    assert "connection failed" in error.message


def test_malformed_answer_is_reported(api: FakeApi) -> None:
    api.fail(MODELS, Fault.wrong_shape())
    error = error_of(async_probe.list_models("openai", api.base_url, KEY))
    assert error.code == "EMBEDDING_FAILED"
    assert "unexpected response" in error.message


@pytest.mark.parametrize(
    ("kind", "url"),
    [("openai", "ftp://example.com"), ("openai", "example.com"), ("nope", "http://x")],
)
def test_bad_settings_are_invalid_arguments(kind: str, url: str) -> None:
    assert error_of(async_probe.list_models(kind, url)).code == "INVALID_ARGUMENT"
    assert error_of(async_probe.test_connection(kind, url, None, "m")).code == "INVALID_ARGUMENT"


# stored keys


def test_stored_key_is_used_when_none_is_typed(api: FakeApi, use_keyring: UseKeyring) -> None:
    keychain = MemoryKeyring()
    keychain.set_password("Trove", "vendor", KEY)
    use_keyring(keychain)
    models = run(async_probe.list_models("openai", api.base_url, None, provider_id="vendor"))
    assert models == ["embed-large", "embed-small"]
    assert api.requests(MODELS)[0].headers["authorization"] == f"Bearer {KEY}"


def test_typed_key_wins_over_the_stored_one(api: FakeApi, use_keyring: UseKeyring) -> None:
    keychain = MemoryKeyring()
    keychain.set_password("Trove", "vendor", "old-key")
    use_keyring(keychain)
    run(async_probe.list_models("openai", api.base_url, KEY, provider_id="vendor"))
    assert api.requests(MODELS)[0].headers["authorization"] == f"Bearer {KEY}"


def test_no_keychain_names_the_environment_variable(
    api: FakeApi, use_keyring: UseKeyring, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TROVE_KEY_VENDOR", raising=False)
    use_keyring(fail.Keyring())  # type: ignore[no-untyped-call]
    error = error_of(async_probe.list_models("openai", api.base_url, None, provider_id="vendor"))
    assert error.code == "PROVIDER_AUTH_FAILED"
    assert "TROVE_KEY_VENDOR" in error.message
    monkeypatch.setenv("TROVE_KEY_VENDOR", KEY)
    assert run(async_probe.list_models("openai", api.base_url, None, provider_id="vendor"))


# the client


def test_given_client_is_used_and_left_open(api: FakeApi) -> None:
    async def main() -> tuple[list[str], bool]:
        async with httpx.AsyncClient(trust_env=False) as client:
            models = await async_probe.list_models("openai", api.base_url, KEY, client=client)
            return models, client.is_closed

    models, closed = asyncio.run(main())
    assert models == ["embed-large", "embed-small"]
    assert not closed


def test_cancelling_a_probe_stops_it(api: FakeApi) -> None:
    api.fail(MODELS, Fault.slow())

    async def main() -> None:
        task = asyncio.ensure_future(async_probe.list_models("openai", api.base_url, KEY))
        while api.hits(MODELS) == 0:
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(asyncio.wait_for(main(), timeout=5))
