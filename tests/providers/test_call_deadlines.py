"""Every provider call ends within its one wall-clock deadline, however the server misbehaves.

The servers are tests/trickle.py's: headers or body sent one byte at a time (gaps far below
the read timeout, so only a wall-clock deadline can end the call), a server that accepts and
says nothing, connects never answered (a full accept queue), and a port that refuses. Each
keeps going for 20 s (SERVER_LIFETIME), so a call that ignores its deadline fails the bound
here instead of ending early by luck; the bound itself is generous (a shared, loaded
machine), the code and reason of the error say that the deadline ended the call.
"""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from app.providers import async_probe
from app.providers.chat import AsyncChatClient, ChatClient
from app.providers.http import RetryPolicy, Timeouts
from app.providers.interfaces import (
    CONNECTION_REFUSED,
    EMBEDDING_FAILED,
    TIMED_OUT,
    ProviderError,
)
from app.providers.openai_compat import OpenAICompatibleEmbedder, RerankClient
from tests.trickle import SERVER_LIFETIME, SLOW_HEADERS, serving, unanswered_connects

DEADLINE = 1.0
# Per-operation timeouts above BOUND, and far above every gap: only the deadline can
# end a trickle. Two attempts, as searches and connection tests make.
TIMEOUTS = Timeouts(connect=30.0, read=30.0, total=DEADLINE)
RETRY = RetryPolicy(max_attempts=2, base_delay=0.05)
# Far above DEADLINE (a loaded machine) and far below SERVER_LIFETIME (a call that waits for
# the server to give up).
BOUND = 15.0
assert SERVER_LIFETIME > BOUND

JSON_HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 10000\r\n\r\n"
CHAT_CODE = "CHAT_FAILED"


def refused_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


@pytest.fixture(params=["header-trickle", "body-trickle", "silent", "unanswered", "refused"])
def misbehaving(request: pytest.FixtureRequest) -> Iterator[tuple[str, str]]:
    """(kind, base URL) of a server that never gives a whole answer."""
    kind = request.param
    if kind == "refused":
        yield kind, refused_url()
    elif kind == "unanswered":
        with unanswered_connects() as url:
            yield kind, url.rstrip("/")
    else:
        head, trickle, gap = {
            "header-trickle": (b"", SLOW_HEADERS, 0.05),
            # A head, then a body that never completes (nor, for a chat, a line).
            "body-trickle": (JSON_HEAD, b" " * 10000, 0.05),
            "silent": (b"", b"", 0.0),
        }[kind]
        with serving(head, trickle, gap) as server:
            yield kind, server.url("").rstrip("/")


def _embed(url: str) -> Any:
    with OpenAICompatibleEmbedder(url, "m", timeouts=TIMEOUTS, retry=RETRY) as client:
        return client.embed(["tomatoes need sun"])


def _rerank(url: str) -> Any:
    with RerankClient(url, "m", timeouts=TIMEOUTS, retry=RETRY) as client:
        return client.rerank("sun", ["tomatoes need sun", "ferns need shade"], 2)


def _probe(url: str) -> Any:
    with OpenAICompatibleEmbedder(url, "m", timeouts=TIMEOUTS) as client:
        return client.test_connection()


def _chat(url: str) -> Any:
    client = ChatClient("openai", url, "m", timeouts=TIMEOUTS)
    try:
        return "".join(client.stream([{"role": "user", "content": "hi"}]))
    finally:
        client.close()


def _async_chat(url: str) -> Any:
    async def main() -> str:
        client = AsyncChatClient("openai", url, "m", timeouts=TIMEOUTS)
        return "".join([p async for p in client.stream([{"role": "user", "content": "hi"}])])

    return asyncio.run(main())


def _async_probe(url: str) -> Any:
    return asyncio.run(async_probe.test_connection("openai", url, model="m", timeouts=TIMEOUTS))


def _async_models(url: str) -> Any:
    return asyncio.run(async_probe.list_models("openai", url, timeouts=TIMEOUTS))


CALLS: dict[str, tuple[Callable[[str], Any], str]] = {
    "embed": (_embed, EMBEDDING_FAILED),
    "rerank": (_rerank, EMBEDDING_FAILED),
    "probe": (_probe, EMBEDDING_FAILED),
    "chat": (_chat, CHAT_CODE),
    "async-chat": (_async_chat, CHAT_CODE),
    "async-probe": (_async_probe, EMBEDDING_FAILED),
    "async-models": (_async_models, EMBEDDING_FAILED),
}


@pytest.mark.parametrize("call", sorted(CALLS))
def test_every_provider_call_ends_within_its_deadline(
    misbehaving: tuple[str, str], call: str
) -> None:
    kind, url = misbehaving
    run, code = CALLS[call]
    started = time.monotonic()
    with pytest.raises(ProviderError) as info:
        run(url)
    elapsed = time.monotonic() - started
    error = info.value
    assert elapsed < BOUND, f"{call} against a {kind} server took {elapsed:.1f} s"
    assert error.code == code, error
    assert error.retryable, error
    if kind == "refused":
        assert error.reason == CONNECTION_REFUSED, error
    else:
        assert error.reason == TIMED_OUT, error
        assert f"within {DEADLINE:g} s" in error.message, error.message
