"""The API key never reaches an exception (message, chain, traceback) or a log record."""

from __future__ import annotations

import logging
import traceback

import pytest

from app.providers.http import RetryPolicy, Timeouts
from app.providers.interfaces import ProviderError
from app.providers.openai_compat import OllamaEmbedder, OpenAICompatibleEmbedder, RerankClient
from tests.providers.conftest import KEY, Sleeps
from tests.providers.fake_api import EMBEDDINGS, OLLAMA_EMBED, RERANK, FakeApi, Fault

WRONG_KEY = "sk-live-WRONG-0123456789abcdef"


def _everything_said(exc: BaseException, caplog: pytest.LogCaptureFixture) -> str:
    parts = [str(exc), repr(exc), "".join(traceback.format_exception(exc))]
    if isinstance(exc, ProviderError):
        parts.append(exc.message)
    for record in caplog.records:
        parts.append(record.getMessage())
        if record.exc_info:
            parts.append("".join(traceback.format_exception(*record.exc_info)))
    return "\n".join(parts)


FAULTS = [
    pytest.param(Fault.http(401, echo_auth=True), id="401-echo"),
    pytest.param(Fault.http(403, echo_auth=True), id="403-echo"),
    pytest.param(Fault.http(400, echo_auth=True), id="400-echo"),
    pytest.param(Fault.http(404, echo_auth=True), id="404-echo"),
    pytest.param(Fault.http(413, echo_auth=True), id="413-echo"),
    pytest.param(Fault.http(500, echo_auth=True), id="500-echo"),
    pytest.param(Fault.malformed_json(), id="malformed"),
    pytest.param(Fault.slow(), id="timeout"),
]


@pytest.mark.parametrize("fault", FAULTS)
def test_key_absent_when_server_echoes_it(
    fault: Fault, sleeps: Sleeps, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    with FakeApi(api_key=KEY) as api:
        # Every attempt, shrink retries included, meets the same fault.
        api.fail(EMBEDDINGS, *[fault] * 10)
        with (
            OpenAICompatibleEmbedder(
                api.base_url,
                "m",
                KEY,
                sleep=sleeps,
                retry=RetryPolicy(max_attempts=2),
                timeouts=Timeouts(connect=2.0, read=0.2),
                shrink_retries=1,
            ) as client,
            pytest.raises(ProviderError) as info,
        ):
            client.embed(["x" * 200])
    said = _everything_said(info.value, caplog)
    assert KEY not in said
    assert KEY[:12] not in said
    assert info.value.message  # something useful was still said


def test_wrong_key_echoed_by_the_auth_check_is_scrubbed(
    sleeps: Sleeps, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    with (
        FakeApi(api_key=KEY) as api,
        OpenAICompatibleEmbedder(api.base_url, "m", WRONG_KEY, sleep=sleeps) as client,
        pytest.raises(ProviderError) as info,
    ):
        client.embed(["x"])
    said = _everything_said(info.value, caplog)
    assert WRONG_KEY not in said
    assert "Incorrect API key provided" in info.value.message


def test_retries_log_without_the_key(sleeps: Sleeps, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    with FakeApi(api_key=KEY) as api:
        api.fail(EMBEDDINGS, Fault.http(503, echo_auth=True), Fault.http(429, echo_auth=True))
        with OpenAICompatibleEmbedder(
            api.base_url, "m", KEY, sleep=sleeps, retry=RetryPolicy(max_attempts=3)
        ) as client:
            client.embed(["x"])
    retry_logs = [r for r in caplog.records if "retrying" in r.getMessage()]
    assert len(retry_logs) == 2
    assert "[redacted]" in retry_logs[0].getMessage()
    assert all(KEY not in r.getMessage() for r in caplog.records)


def test_key_absent_from_ollama_and_rerank_errors(
    sleeps: Sleeps, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    with FakeApi() as api:
        api.fail(OLLAMA_EMBED, Fault.http(401, echo_auth=True))
        api.fail(RERANK, *[Fault.http(502, echo_auth=True)] * 2)
        with (
            OllamaEmbedder(api.base_url, "all-minilm", KEY, sleep=sleeps) as ollama,
            pytest.raises(ProviderError) as first,
        ):
            ollama.embed(["x"])
        with (
            RerankClient(
                api.base_url, "r", KEY, sleep=sleeps, retry=RetryPolicy(max_attempts=2)
            ) as rerank,
            pytest.raises(ProviderError) as second,
        ):
            rerank.rerank("q", ["d"], 1)
    assert first.value.code == "PROVIDER_AUTH_FAILED"
    assert second.value.retryable
    for exc in (first.value, second.value):
        assert KEY not in _everything_said(exc, caplog)


def test_key_is_sent_as_bearer(api: FakeApi) -> None:
    with OpenAICompatibleEmbedder(api.base_url, "m", KEY) as client:
        client.embed(["x"])
    assert api.requests(EMBEDDINGS)[0].headers["authorization"] == f"Bearer {KEY}"


def test_key_callable_is_read_per_request(api: FakeApi) -> None:
    current = {"key": "stale"}
    with OpenAICompatibleEmbedder(api.base_url, "m", lambda: current["key"]) as client:
        with pytest.raises(ProviderError):
            client.embed(["x"])
        current["key"] = KEY
        assert client.embed(["x"]).shape == (1, 8)
