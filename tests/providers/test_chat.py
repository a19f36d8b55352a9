"""Chat clients against a loopback chat server (tests/providers/fake_chat.py): SSE and NDJSON
streaming in order, slow tokens, a stream cut mid-way, 429 with Retry-After, an over-long
prompt, and the async client the window uses."""

from __future__ import annotations

import asyncio
import time

import pytest

from app.providers.chat import (
    ANSWER_INTERRUPTED,
    CHAT_CONTEXT_OVERFLOW,
    CHAT_FAILED,
    CHAT_RATE_LIMITED,
    AsyncChatClient,
    ChatClient,
    parse_ndjson_line,
    parse_sse_line,
)
from app.providers.http import Timeouts
from app.providers.interfaces import PROVIDER_AUTH_FAILED, ProviderError
from tests.httpserver import LoopbackServer, Response
from tests.providers.fake_chat import OLLAMA_CHAT, OPENAI_CHAT, FakeChat, Fault, words

REPLY = "Basil wants six hours of sun [1] and moist soil [2]."
MESSAGES = [{"role": "user", "content": "What does basil need?"}]


def _collect(client: ChatClient) -> tuple[list[str], list[float]]:
    pieces: list[str] = []
    times: list[float] = []
    for piece in client.stream(MESSAGES):
        pieces.append(piece)
        times.append(time.monotonic())
    return pieces, times


@pytest.mark.parametrize("kind", ["openai", "ollama"])
def test_a_stream_arrives_in_order_piece_by_piece(kind: str) -> None:
    with FakeChat(reply=REPLY) as chat:
        client = ChatClient(kind, chat.base_url, "qwen")
        pieces, _ = _collect(client)
        client.close()
        path = OLLAMA_CHAT if kind == "ollama" else OPENAI_CHAT
        body = chat.bodies(path)[0]
    assert pieces == words(REPLY)
    assert "".join(pieces) == REPLY
    assert body["stream"] is True and body["model"] == "qwen"
    assert body["messages"] == MESSAGES


def test_slow_tokens_are_yielded_as_they_come_not_at_the_end() -> None:
    with FakeChat(reply=REPLY, delay=0.05) as chat:
        client = ChatClient("openai", chat.base_url, "m")
        pieces, times = _collect(client)
        client.close()
    assert len(pieces) == len(words(REPLY))
    # Spread over the stream, not delivered in one burst at the end.
    assert times[-1] - times[0] >= 0.05 * (len(pieces) - 2)


@pytest.mark.parametrize("fault", [Fault.cut(3), Fault.reset(3)], ids=["clean-end", "reset"])
@pytest.mark.parametrize("kind", ["openai", "ollama"])
def test_a_stream_cut_mid_way_keeps_what_arrived_then_says_interrupted(
    kind: str, fault: Fault
) -> None:
    with FakeChat(reply=REPLY) as chat:
        chat.fail(fault)
        client = ChatClient(kind, chat.base_url, "m")
        got: list[str] = []
        with pytest.raises(ProviderError) as failure:
            for piece in client.stream(MESSAGES):
                got.append(piece)
        client.close()
        path = OLLAMA_CHAT if kind == "ollama" else OPENAI_CHAT
        assert len(chat.requests(path)) == 1  # never retried: the text would repeat
    assert got == words(REPLY)[:3]
    assert failure.value.code == ANSWER_INTERRUPTED


def test_a_429_with_a_short_retry_after_is_retried_once_after_that_wait() -> None:
    waits: list[float] = []
    with FakeChat(reply=REPLY) as chat:
        chat.fail(Fault.rate_limited("2"))
        client = ChatClient("openai", chat.base_url, "m", sleep=waits.append)
        pieces, _ = _collect(client)
        client.close()
        assert len(chat.requests()) == 2
    assert waits == [2.0]
    assert "".join(pieces) == REPLY


def test_a_429_asking_for_a_long_wait_fails_at_once_naming_the_wait() -> None:
    waits: list[float] = []
    with FakeChat(reply=REPLY) as chat:
        chat.fail(Fault.rate_limited("120"))
        client = ChatClient("openai", chat.base_url, "m", sleep=waits.append)
        with pytest.raises(ProviderError) as failure:
            list(client.stream(MESSAGES))
        client.close()
        assert len(chat.requests()) == 1
    assert waits == []
    assert failure.value.code == CHAT_RATE_LIMITED
    assert failure.value.retry_after == 120.0
    assert "120 s" in failure.value.message


def test_two_429s_in_a_row_say_rate_limited() -> None:
    with FakeChat(reply=REPLY) as chat:
        chat.fail(Fault.rate_limited("1"), Fault.rate_limited("1"))
        client = ChatClient("openai", chat.base_url, "m", sleep=lambda _s: None)
        with pytest.raises(ProviderError) as failure:
            list(client.stream(MESSAGES))
        client.close()
    assert failure.value.code == CHAT_RATE_LIMITED


def test_a_prompt_over_the_context_is_a_context_overflow() -> None:
    with FakeChat(reply=REPLY) as chat:
        chat.fail(Fault.http(400, "This model's maximum context length is 4096 tokens"))
        client = ChatClient("openai", chat.base_url, "m")
        with pytest.raises(ProviderError) as failure:
            list(client.stream(MESSAGES))
        client.close()
    assert failure.value.code == CHAT_CONTEXT_OVERFLOW


def test_a_provider_that_is_down_fails_clearly_after_one_retry() -> None:
    server = LoopbackServer().start()
    url = server.base_url
    server.close()  # nothing listens there any more
    waits: list[float] = []
    client = ChatClient(
        "openai", url, "m", sleep=waits.append, timeouts=Timeouts(connect=2, read=2)
    )
    with pytest.raises(ProviderError) as failure:
        list(client.stream(MESSAGES))
    client.close()
    assert failure.value.code == CHAT_FAILED
    assert failure.value.reason == "connection_refused"
    assert len(waits) == 1


def test_a_rejected_key_is_an_auth_failure_without_the_key() -> None:
    with FakeChat(reply=REPLY) as chat:
        chat.fail(Fault.http(401, "bad key sk-secret-123"))
        client = ChatClient("openai", chat.base_url, "m", "sk-secret-123")
        with pytest.raises(ProviderError) as failure:
            list(client.stream(MESSAGES))
        client.close()
        sent = chat.requests()[0].headers["authorization"]
    assert sent == "Bearer sk-secret-123"
    assert failure.value.code == PROVIDER_AUTH_FAILED
    assert "sk-secret-123" not in failure.value.message


def test_a_consumer_that_stops_closes_the_stream() -> None:
    with FakeChat(reply=" ".join(["word"] * 200), delay=0.02) as chat:
        client = ChatClient("openai", chat.base_url, "m")
        stream = client.stream(MESSAGES)
        first = next(stream)
        stream.close()  # what a cancelled ask does
        exchange = chat.server.wait_for(OPENAI_CHAT)[0]
        client.close()
    assert first == "word "
    assert exchange.client_disconnected


def test_an_error_event_inside_the_stream_is_a_chat_failure() -> None:
    body = b'data: {"error": {"message": "model overloaded"}}\n\n'
    with LoopbackServer() as server:
        server.route(OPENAI_CHAT, Response(body=body, content_type="text/event-stream"))
        client = ChatClient("openai", server.base_url, "m")
        with pytest.raises(ProviderError) as failure:
            list(client.stream(MESSAGES))
        client.close()
    assert failure.value.code == CHAT_FAILED
    assert "model overloaded" in failure.value.message


def test_line_parsers_skip_comments_and_read_the_final_markers() -> None:
    assert parse_sse_line(": keep-alive", "x") is None
    assert parse_sse_line("", "x") is None
    assert parse_sse_line("data: [DONE]", "x").done  # type: ignore[union-attr]
    role_only = parse_sse_line('data: {"choices":[{"delta":{"role":"assistant"}}]}', "x")
    assert role_only is not None and role_only.text == "" and not role_only.done
    last = parse_ndjson_line('{"message":{"content":"!"},"done":true}', "x")
    assert last is not None and last.text == "!" and last.done


@pytest.mark.parametrize("kind", ["openai", "ollama"])
def test_the_async_client_streams_the_same_pieces(kind: str) -> None:
    async def collect(url: str) -> list[str]:
        client = AsyncChatClient(kind, url, "m")
        return [piece async for piece in client.stream(MESSAGES)]

    with FakeChat(reply=REPLY) as chat:
        pieces = asyncio.run(collect(chat.base_url))
    assert pieces == words(REPLY)


def test_the_async_client_keeps_the_pieces_before_a_cut() -> None:
    async def collect(url: str, got: list[str]) -> None:
        client = AsyncChatClient("openai", url, "m")
        async for piece in client.stream(MESSAGES):
            got.append(piece)

    got: list[str] = []
    with FakeChat(reply=REPLY) as chat:
        chat.fail(Fault.reset(2))
        with pytest.raises(ProviderError) as failure:
            asyncio.run(collect(chat.base_url, got))
    assert got == words(REPLY)[:2]
    assert failure.value.code == ANSWER_INTERRUPTED


def test_the_async_client_retries_a_short_429() -> None:
    async def collect(url: str) -> list[str]:
        client = AsyncChatClient("openai", url, "m")
        return [piece async for piece in client.stream(MESSAGES)]

    with FakeChat(reply=REPLY) as chat:
        chat.fail(Fault.rate_limited("0.1"))
        pieces = asyncio.run(collect(chat.base_url))
        assert len(chat.requests()) == 2
    assert "".join(pieces) == REPLY
