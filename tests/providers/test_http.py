"""The shared retry layer, driven through a real loopback server with injected faults."""

from __future__ import annotations

import email.utils
from typing import Unpack

import pytest

from app.providers.http import (
    HttpOptions,
    ProviderHttp,
    RetryPolicy,
    Timeouts,
    parse_retry_after,
    scrub,
)
from app.providers.interfaces import ProviderError
from app.providers.openai_compat import OpenAICompatibleEmbedder
from tests.providers.conftest import FAST_TIMEOUTS, KEY, Sleeps
from tests.providers.fake_api import EMBEDDINGS, FakeApi, Fault

# The in-call retry loop, as searches and connection tests use it; four attempts show its
# schedule. Indexing's clients make one attempt (the job runner retries).
IN_CALL = RetryPolicy(max_attempts=4)


def embedder(api: FakeApi, sleeps: Sleeps, **kw: Unpack[HttpOptions]) -> OpenAICompatibleEmbedder:
    kw.setdefault("sleep", sleeps)
    kw.setdefault("retry", IN_CALL)
    kw.setdefault("timeouts", FAST_TIMEOUTS)
    return OpenAICompatibleEmbedder(api.base_url, "embed-small", KEY, **kw)


@pytest.mark.parametrize(
    ("fault", "retry_after"),
    [(Fault.rate_limited("7"), 7.0), (Fault.rate_limited("86400"), 60.0), (Fault.http(503), None)],
)
def test_by_default_one_attempt_hands_the_wait_to_the_caller(
    api: FakeApi, sleeps: Sleeps, fault: Fault, retry_after: float | None
) -> None:
    # Indexing's clients: no sleeping in the call; the job runner waits with the job queued.
    api.fail(EMBEDDINGS, fault)
    with (
        embedder(api, sleeps, retry=RetryPolicy()) as client,
        pytest.raises(ProviderError) as info,
    ):
        client.embed(["hello"])
    assert info.value.retryable is True
    assert info.value.retry_after == retry_after
    assert api.hits(EMBEDDINGS) == 1
    assert sleeps.calls == []


def test_two_server_errors_then_success(api: FakeApi, sleeps: Sleeps) -> None:
    api.fail(EMBEDDINGS, Fault.http(500), Fault.http(503))
    with embedder(api, sleeps) as client:
        matrix = client.embed(["hello"])
    assert matrix.shape == (1, 8)
    assert api.hits(EMBEDDINGS) == 3
    assert sleeps.calls == [0.5, 1.0]


def test_backoff_doubles_and_gives_up_retryable(api: FakeApi, sleeps: Sleeps) -> None:
    api.fail(EMBEDDINGS, *[Fault.http(502)] * 4)
    with embedder(api, sleeps) as client, pytest.raises(ProviderError) as info:
        client.embed(["hello"])
    assert info.value.code == "EMBEDDING_FAILED"
    assert info.value.retryable is True
    assert "502" in info.value.message and "4 attempts" in info.value.message
    assert api.hits(EMBEDDINGS) == 4
    assert sleeps.calls == [0.5, 1.0, 2.0]


def test_max_attempts_is_configurable(api: FakeApi, sleeps: Sleeps) -> None:
    api.fail(EMBEDDINGS, *[Fault.http(500)] * 6)
    with (
        embedder(api, sleeps, retry=RetryPolicy(max_attempts=6, max_delay=3.0)) as client,
        pytest.raises(ProviderError) as info,
    ):
        client.embed(["x"])
    assert info.value.retryable
    assert api.hits(EMBEDDINGS) == 6
    assert sleeps.calls == [0.5, 1.0, 2.0, 3.0, 3.0]


@pytest.mark.parametrize("status", [401, 403])
def test_auth_failure_is_not_retried(api: FakeApi, sleeps: Sleeps, status: int) -> None:
    api.fail(EMBEDDINGS, Fault.http(status))
    with embedder(api, sleeps) as client, pytest.raises(ProviderError) as info:
        client.embed(["hello"])
    assert info.value.code == "PROVIDER_AUTH_FAILED"
    assert info.value.retryable is False
    assert str(status) in info.value.message
    assert api.hits(EMBEDDINGS) == 1
    assert sleeps.calls == []


def test_wrong_key_is_auth_failure(api: FakeApi, sleeps: Sleeps) -> None:
    with (
        OpenAICompatibleEmbedder(api.base_url, "m", "sk-wrong-key-123456", sleep=sleeps) as client,
        pytest.raises(ProviderError) as info,
    ):
        client.embed(["hello"])
    assert info.value.code == "PROVIDER_AUTH_FAILED"
    assert "sk-wrong-key-123456" not in info.value.message
    assert api.hits(EMBEDDINGS) == 1


def test_missing_key_says_none_is_set(api: FakeApi, sleeps: Sleeps) -> None:
    with (
        OpenAICompatibleEmbedder(
            api.base_url, "m", None, sleep=sleeps, auth_hint="set TROVE_KEY_X"
        ) as client,
        pytest.raises(ProviderError) as info,
    ):
        client.embed(["hello"])
    assert info.value.code == "PROVIDER_AUTH_FAILED"
    assert "none is set" in info.value.message
    assert "TROVE_KEY_X" in info.value.message


def test_retry_after_seconds_is_honoured(api: FakeApi, sleeps: Sleeps) -> None:
    api.fail(EMBEDDINGS, Fault.rate_limited("3"))
    with embedder(api, sleeps) as client:
        client.embed(["hello"])
    assert sleeps.calls == [3.0]
    assert api.hits(EMBEDDINGS) == 2


def test_retry_after_http_date_uses_the_clock(api: FakeApi, sleeps: Sleeps) -> None:
    now = 1_700_000_000.0
    api.fail(EMBEDDINGS, Fault.rate_limited(email.utils.formatdate(now + 7, usegmt=True)))
    with embedder(api, sleeps, clock=lambda: now) as client:
        client.embed(["hello"])
    assert sleeps.calls == [7.0]


def test_retry_after_is_capped(api: FakeApi, sleeps: Sleeps) -> None:
    api.fail(EMBEDDINGS, Fault.rate_limited("86400"))
    with embedder(api, sleeps) as client:
        client.embed(["hello"])
    assert sleeps.calls == [60.0]


def test_429_without_retry_after_backs_off(api: FakeApi, sleeps: Sleeps) -> None:
    api.fail(EMBEDDINGS, Fault.rate_limited(None), Fault.rate_limited("garbage"))
    with embedder(api, sleeps) as client:
        client.embed(["hello"])
    assert sleeps.calls == [0.5, 1.0]
    assert api.hits(EMBEDDINGS) == 3


def test_timeouts_are_retried_then_retryable_error(api: FakeApi, sleeps: Sleeps) -> None:
    api.fail(EMBEDDINGS, Fault.slow(), Fault.slow(), Fault.slow())
    policy = RetryPolicy(max_attempts=3)
    with (
        embedder(api, sleeps, retry=policy, timeouts=Timeouts(connect=2.0, read=0.2)) as client,
        pytest.raises(ProviderError) as info,
    ):
        client.embed(["hello"])
    assert info.value.retryable is True
    assert "timed out" in info.value.message
    assert api.hits(EMBEDDINGS) == 3
    assert sleeps.calls == [0.5, 1.0]


def test_a_timeout_then_success(api: FakeApi, sleeps: Sleeps) -> None:
    api.fail(EMBEDDINGS, Fault.slow())
    with embedder(api, sleeps, timeouts=Timeouts(connect=2.0, read=0.2)) as client:
        assert client.embed(["hello"]).shape == (1, 8)
    assert api.hits(EMBEDDINGS) == 2


def test_connection_refused_is_retried_then_retryable(sleeps: Sleeps) -> None:
    with FakeApi() as api:
        url = api.base_url
    # The server is closed: nothing listens on the port any more.
    with (
        OpenAICompatibleEmbedder(url, "m", sleep=sleeps, retry=RetryPolicy(max_attempts=2)) as c,
        pytest.raises(ProviderError) as info,
    ):
        c.embed(["hello"])
    assert info.value.retryable is True
    assert "connection failed" in info.value.message
    assert sleeps.calls == [0.5]


def test_malformed_json_fails_without_retry(api: FakeApi, sleeps: Sleeps) -> None:
    api.fail(EMBEDDINGS, Fault.malformed_json())
    with embedder(api, sleeps) as client, pytest.raises(ProviderError) as info:
        client.embed(["hello"])
    assert info.value.code == "EMBEDDING_FAILED"
    assert info.value.retryable is False
    assert "not JSON" in info.value.message
    assert api.hits(EMBEDDINGS) == 1


def test_unexpected_shape_fails_without_retry(api: FakeApi, sleeps: Sleeps) -> None:
    api.fail(EMBEDDINGS, Fault.wrong_shape())
    with embedder(api, sleeps) as client, pytest.raises(ProviderError) as info:
        client.embed(["hello"])
    assert info.value.code == "EMBEDDING_FAILED"
    assert "unexpected response" in info.value.message
    assert api.hits(EMBEDDINGS) == 1


def test_other_client_errors_are_not_retried(api: FakeApi, sleeps: Sleeps) -> None:
    api.fail(EMBEDDINGS, Fault.http(400, body="unknown parameter 'foo'"))
    with embedder(api, sleeps) as client, pytest.raises(ProviderError) as info:
        client.embed(["hello"])
    assert info.value.code == "EMBEDDING_FAILED"
    assert "unknown parameter 'foo'" in info.value.message
    assert api.hits(EMBEDDINGS) == 1


def test_404_means_model_not_available(api: FakeApi, sleeps: Sleeps) -> None:
    api.fail(EMBEDDINGS, Fault.http(404, body="model 'nope' does not exist"))
    with embedder(api, sleeps) as client, pytest.raises(ProviderError) as info:
        client.embed(["hello"])
    assert info.value.code == "MODEL_NOT_AVAILABLE"
    assert "does not exist" in info.value.message


def test_invalid_url_scheme() -> None:
    with pytest.raises(ProviderError) as info:
        OpenAICompatibleEmbedder("ftp://example.invalid", "m")
    assert info.value.code == "INVALID_ARGUMENT"


def test_errors_do_not_chain_httpx_exceptions(api: FakeApi, sleeps: Sleeps) -> None:
    # The httpx exception holds the request, Authorization header included.
    api.fail(EMBEDDINGS, Fault.slow())
    policy = RetryPolicy(max_attempts=1)
    with (
        embedder(api, sleeps, retry=policy, timeouts=Timeouts(connect=2.0, read=0.2)) as client,
        pytest.raises(ProviderError) as info,
    ):
        client.embed(["hello"])
    assert info.value.__cause__ is None
    assert info.value.__context__ is None


# pure helpers


def test_parse_retry_after() -> None:
    now = 1_700_000_000.0
    assert parse_retry_after("3", now) == 3.0
    assert parse_retry_after(" 1.5 ", now) == 1.5
    assert parse_retry_after(email.utils.formatdate(now + 30, usegmt=True), now) == 30.0
    assert parse_retry_after(email.utils.formatdate(now - 30, usegmt=True), now) == 0.0
    assert parse_retry_after(None, now) is None
    assert parse_retry_after("", now) is None
    assert parse_retry_after("soon", now) is None
    assert parse_retry_after("-4", now) is None


def test_backoff_schedule() -> None:
    policy = RetryPolicy()
    assert [policy.backoff(n) for n in range(1, 9)] == [0.5, 1, 2, 4, 8, 16, 30, 30]
    with pytest.raises(ValueError):
        RetryPolicy(max_attempts=0)


def test_scrub_removes_keys_and_bearer_tokens() -> None:
    text = f'key {KEY}, header "Authorization: Bearer other-token-1", json "{KEY}"'
    cleaned = scrub(text, [KEY, None, ""])
    assert KEY not in cleaned
    assert "other-token-1" not in cleaned
    assert "Bearer [redacted]" in cleaned


def test_default_timeouts() -> None:
    http = ProviderHttp("http://127.0.0.1:9")
    try:
        assert http.timeouts == Timeouts(connect=10.0, read=60.0)
        assert http.retry.max_attempts == 1
    finally:
        http.close()
