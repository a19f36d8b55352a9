"""A fake chat model on 127.0.0.1 that streams the real wire formats.

    with FakeChat(reply="Basil needs sun [1].") as chat:
        chat.fail(Fault.rate_limited("1"))          # the next request gets a 429
        client = ChatClient("openai", chat.base_url, "m")
        "".join(client.stream([...]))

Speaks OpenAI's /v1/chat/completions as server-sent events (`data: {...}` ... `data: [DONE]`)
and Ollama's /api/chat as one JSON object per line (the last with `"done": true`). A reply is
a fixed text or a function of the request's messages; it goes out one word per event, one
every `delay` seconds. Faults are queued and consumed one per request: an HTTP
status (with a Retry-After), a stream cut after N words, either cleanly (no final
marker) or mid-chunk (a broken chunked body), a stream that never ends (a token every
`gap` seconds for ENDLESS_LIFETIME), or one token of `size` characters after N words.
"""

from __future__ import annotations

import collections
import json
import re
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from types import TracebackType
from typing import Any

from tests.httpserver import LoopbackServer, Request, Response

OPENAI_CHAT = "/v1/chat/completions"
OLLAMA_CHAT = "/api/chat"
_WORD = re.compile(r"\S+\s*|\s+")
# How long an "endless" stream goes on: far past any answer deadline of the tests.
ENDLESS_LIFETIME = 30.0

Reply = str | Callable[[list[dict[str, str]]], str]


def words(text: str) -> list[str]:
    """The pieces the server sends: each word with the space after it."""
    return _WORD.findall(text)


@dataclass(frozen=True)
class Fault:
    kind: str  # "status" | "cut" | "reset" | "endless" | "huge"
    status: int = 500
    retry_after: str | None = None
    body: str = ""
    after: int = 0  # words sent before a cut or a huge token
    gap: float = 0.0  # seconds between the tokens of an endless stream
    size: int = 0  # characters of a huge token

    @classmethod
    def http(cls, status: int, body: str = "") -> Fault:
        return cls("status", status=status, body=body)

    @classmethod
    def rate_limited(cls, retry_after: str | None) -> Fault:
        return cls("status", status=429, retry_after=retry_after)

    @classmethod
    def cut(cls, after: int) -> Fault:
        """End the stream after `after` words without the API's final marker."""
        return cls("cut", after=after)

    @classmethod
    def reset(cls, after: int) -> Fault:
        """Break the chunked body after `after` words (the connection drops mid-stream)."""
        return cls("reset", after=after)

    @classmethod
    def endless(cls, gap: float) -> Fault:
        """A token every `gap` seconds, never the final marker (for ENDLESS_LIFETIME)."""
        return cls("endless", gap=gap)

    @classmethod
    def huge(cls, after: int, size: int) -> Fault:
        """`after` words of the reply, then one token of `size` characters, then the end."""
        return cls("huge", after=after, size=size)


class FakeChat:
    def __init__(
        self, *, reply: Reply = "This is not in the documents.", delay: float = 0.0
    ) -> None:
        self.reply = reply
        self.delay = delay
        self._faults: collections.deque[Fault] = collections.deque()
        self._lock = threading.Lock()
        self.server = LoopbackServer()
        self.server.route(OPENAI_CHAT, self._openai)
        self.server.route(OLLAMA_CHAT, self._ollama)

    def __enter__(self) -> FakeChat:
        self.server.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.server.close()

    @property
    def base_url(self) -> str:
        return self.server.base_url

    def fail(self, *faults: Fault) -> None:
        with self._lock:
            self._faults.extend(faults)

    def requests(self, path: str = OPENAI_CHAT) -> list[Request]:
        return self.server.requests(path)

    def bodies(self, path: str = OPENAI_CHAT) -> list[dict[str, Any]]:
        return [r.json() for r in self.requests(path)]

    def _next_fault(self) -> Fault | None:
        with self._lock:
            return self._faults.popleft() if self._faults else None

    def _text(self, request: Request) -> str:
        messages = request.json()["messages"]
        return self.reply(messages) if callable(self.reply) else self.reply

    def _answer(self, request: Request, event: Callable[[str], bytes], end: bytes) -> Response:
        fault = self._next_fault()
        if fault is not None and fault.kind == "status":
            headers = [("Retry-After", fault.retry_after)] if fault.retry_after else []
            return Response.json(
                {"error": {"message": fault.body or f"fault {fault.status}"}},
                status=fault.status,
                headers=headers,
            )
        pieces = words(self._text(request))
        limit = fault.after if fault is not None else len(pieces)

        def body() -> Iterator[bytes]:
            start = time.monotonic()
            if fault is not None and fault.kind == "endless":
                yield from _endless(event, fault.gap)
                return
            for index, piece in enumerate(pieces[:limit]):
                # Paced against the start, so the rate holds however long a write takes.
                wait = start + index * self.delay - time.monotonic()
                if wait > 0:
                    time.sleep(wait)
                yield event(piece)
            if fault is not None and fault.kind == "huge":
                yield event("x" * fault.size)
            if fault is None or fault.kind == "huge":
                yield end
            elif fault.kind == "reset":
                raise ConnectionResetError("the fake cuts the stream")

        return Response(
            body=body,
            content_type="text/event-stream",
            chunked=fault is None or fault.kind in ("reset", "endless", "huge"),
        )

    def _openai(self, request: Request) -> Response:
        def event(piece: str) -> bytes:
            chunk = {"choices": [{"index": 0, "delta": {"content": piece}}]}
            return f"data: {json.dumps(chunk)}\n\n".encode()

        return self._answer(request, event, b"data: [DONE]\n\n")

    def _ollama(self, request: Request) -> Response:
        model = request.json().get("model", "")

        def event(piece: str) -> bytes:
            line = {"model": model, "message": {"role": "assistant", "content": piece}}
            return (json.dumps(line) + "\n").encode()

        done = {"model": model, "message": {"role": "assistant", "content": ""}, "done": True}
        return self._answer(request, event, (json.dumps(done) + "\n").encode())


def _endless(event: Callable[[str], bytes], gap: float) -> Iterator[bytes]:
    """Numbered tokens paced `gap` apart until ENDLESS_LIFETIME is up (or the client hangs
    up: the write then fails and the server drops the exchange)."""
    start = time.monotonic()
    index = 0
    while time.monotonic() - start < ENDLESS_LIFETIME:
        wait = start + index * gap - time.monotonic()
        if wait > 0:
            time.sleep(wait)
        yield event(f"t{index} ")
        index += 1
