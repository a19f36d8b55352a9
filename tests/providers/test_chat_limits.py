"""A chat answer ends within its time and size limits, whatever the server streams: a token
every 10 ms for ever, one 30 MB token, more text than the answer may hold. The part that
fits is kept and the answer ends as ANSWER_INTERRUPTED with the limit it hit."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator

import pytest

from app.providers.chat import ANSWER_INTERRUPTED, MAX_LINE_BYTES, AsyncChatClient, ChatClient
from app.providers.interfaces import ANSWER_SIZE_LIMIT, ANSWER_TIME_LIMIT, ProviderError
from tests.providers.fake_chat import ENDLESS_LIFETIME, FakeChat, Fault, words

REPLY = "Tomatoes need full sun [1]."
MESSAGES = [{"role": "user", "content": "how much sun do tomatoes need?"}]
SECONDS = 1.0
# Far above SECONDS (a loaded machine), far below how long the endless stream goes on.
BOUND = 15.0
assert ENDLESS_LIFETIME > BOUND
HUGE = 30 * 1024 * 1024


@pytest.fixture
def chat() -> Iterator[FakeChat]:
    with FakeChat(reply=REPLY) as server:
        yield server


def answer(
    chat: FakeChat, front: str, *, max_chars: int = 32_768
) -> tuple[str, ProviderError | None, float]:
    """(text received, the error that ended it, seconds taken) through one front end."""
    pieces: list[str] = []
    error: ProviderError | None = None
    started = time.monotonic()
    try:
        if front == "sync":
            client = ChatClient("openai", chat.base_url, "m")
            try:
                for piece in client.stream(MESSAGES, max_chars=max_chars, seconds=SECONDS):
                    pieces.append(piece)
            finally:
                client.close()
        else:

            async def main() -> None:
                client = AsyncChatClient("openai", chat.base_url, "m")
                async for piece in client.stream(MESSAGES, max_chars=max_chars, seconds=SECONDS):
                    pieces.append(piece)

            asyncio.run(main())
    except ProviderError as exc:
        error = exc
    return "".join(pieces), error, time.monotonic() - started


FRONTS = ["sync", "async"]


@pytest.mark.parametrize("front", FRONTS)
def test_an_endless_stream_ends_at_the_answers_time_limit(chat: FakeChat, front: str) -> None:
    chat.fail(Fault.endless(gap=0.01))
    text, error, elapsed = answer(chat, front)
    assert elapsed < BOUND, f"the answer took {elapsed:.1f} s"
    assert error is not None and error.code == ANSWER_INTERRUPTED, error
    assert error.reason == ANSWER_TIME_LIMIT and error.params["seconds"] == 1
    assert f"longer than {SECONDS:g} s" in error.message
    assert text.startswith("t0 t1 t2 ")  # what came in time is kept


@pytest.mark.parametrize("front", FRONTS)
def test_a_30_mb_token_is_never_taken_into_the_answer(chat: FakeChat, front: str) -> None:
    assert HUGE > MAX_LINE_BYTES
    chat.fail(Fault.huge(after=3, size=HUGE))
    text, error, elapsed = answer(chat, front)
    assert elapsed < BOUND
    assert error is not None and error.code == ANSWER_INTERRUPTED, error
    assert error.reason == ANSWER_SIZE_LIMIT
    assert text == "".join(words(REPLY)[:3])


@pytest.mark.parametrize("front", FRONTS)
def test_an_answer_is_cut_at_its_size_limit(chat: FakeChat, front: str) -> None:
    chat.fail(Fault.endless(gap=0.0))
    text, error, _ = answer(chat, front, max_chars=1000)
    assert len(text) == 1000
    assert error is not None and error.reason == ANSWER_SIZE_LIMIT
    assert error.params["chars"] == 1000 and "1,000 characters" in error.message


@pytest.mark.parametrize("front", FRONTS)
def test_a_token_larger_than_the_rest_of_the_answer_is_cut_to_fit(
    chat: FakeChat, front: str
) -> None:
    chat.fail(Fault.huge(after=3, size=100_000))
    text, error, _ = answer(chat, front, max_chars=5000)
    head = "".join(words(REPLY)[:3])
    assert text == head + "x" * (5000 - len(head))
    assert error is not None and error.reason == ANSWER_SIZE_LIMIT


@pytest.mark.parametrize("front", FRONTS)
def test_an_answer_within_its_limits_is_whole(chat: FakeChat, front: str) -> None:
    text, error, _ = answer(chat, front, max_chars=len(REPLY))
    assert (text, error) == (REPLY, None)
