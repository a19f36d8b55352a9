"""JSON-RPC error replies for messages that are not JSON-RPC at all, which the MCP SDK's
stdio transport drops without a word (a client waiting on the id then waits until its own
timeout).

The transport hands the server an exception instead of a message for each such line: the
validation error of parsing it. `AnsweringReadStream` sits between the transport and the
server, answers those on the write stream and passes every real message on:

- a line that is not JSON (cut off, NUL bytes, nested past the parser's depth limit):
  -32700 Parse error, id null;
- JSON that is not a message (an object without a method, a string): -32600 Invalid
  Request, with its id when it has one that is a string or a number, else null;
- a batch (an array; MCP has no batches since 2025-06-18): -32600 for each element, with
  the element's id when it has one, else once with id null.

The MCP SDK is imported by the server only when it is built, and so is this module.
"""

from __future__ import annotations

import contextlib
import logging
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self

import anyio
from mcp.shared.message import SessionMessage
from mcp_types import INVALID_REQUEST, PARSE_ERROR, ErrorData, JSONRPCError
from pydantic import ValidationError

if TYPE_CHECKING:
    from mcp.shared._stream_protocols import ReadStream, WriteStream

log = logging.getLogger(__name__)

DETAIL_CHARS = 200
NO_BATCHES = "batches are not supported; send each message on a line of its own"

Item = SessionMessage | Exception


def _reply(request_id: str | int | None, code: int, message: str, detail: str) -> JSONRPCError:
    data = detail if len(detail) <= DETAIL_CHARS else detail[: DETAIL_CHARS - 1] + "…"
    return JSONRPCError(
        jsonrpc="2.0", id=request_id, error=ErrorData(code=code, message=message, data=data)
    )


def _id_of(value: object) -> str | int | None:
    """The message's id, when it has one a reply can carry (JSON-RPC: a string or a number;
    a bool is not one, a fraction would not be matched)."""
    if not isinstance(value, dict):
        return None
    found = value.get("id")
    if isinstance(found, str) or (isinstance(found, int) and not isinstance(found, bool)):
        return found
    return None


def _parsed(exc: ValidationError) -> object:
    """What the line held, as far as the errors show it: the object or array that failed
    to be a message (a missing field's error carries the whole object)."""
    inputs = [error.get("input") for error in exc.errors(include_url=False)]
    for value in inputs:
        if isinstance(value, list | dict):
            return value
    return inputs[0] if inputs else None


def _detail(exc: ValidationError) -> str:
    # Each branch of the message union reports its own errors; the same one is said once.
    parts: dict[str, None] = {}
    for error in exc.errors(include_url=False):
        where = ".".join(str(part) for part in error.get("loc", ())[1:])
        parts[f"{where}: {error.get('msg')}" if where else str(error.get("msg"))] = None
    return "; ".join(list(parts)[:3])


def error_replies(exc: Exception) -> list[JSONRPCError]:
    """The replies a line that could not be read as a message deserves."""
    if not isinstance(exc, ValidationError):
        return [_reply(None, PARSE_ERROR, "Parse error", type(exc).__name__)]
    if any(error.get("type") == "json_invalid" for error in exc.errors(include_url=False)):
        return [_reply(None, PARSE_ERROR, "Parse error", _detail(exc))]
    parsed = _parsed(exc)
    if isinstance(parsed, list):
        ids = [_id_of(element) for element in parsed]
        replies = [
            _reply(i, INVALID_REQUEST, "Invalid Request", NO_BATCHES) for i in ids if i is not None
        ]
        return replies or [_reply(None, INVALID_REQUEST, "Invalid Request", NO_BATCHES)]
    return [_reply(_id_of(parsed), INVALID_REQUEST, "Invalid Request", _detail(exc))]


class AnsweringReadStream:
    """A transport's read stream that answers the lines it could not read as messages on
    `write_stream` and yields only messages."""

    def __init__(self, inner: ReadStream[Item], write_stream: WriteStream[SessionMessage]) -> None:
        self._inner = inner
        self._write = write_stream

    @property
    def last_context(self) -> Any:
        # The SDK restores the sender's context of each message from its context streams.
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> Item:
        while True:
            item = await self._inner.receive()
            if not isinstance(item, Exception):
                return item
            await self._answer(item)

    async def _answer(self, exc: Exception) -> None:
        for reply in error_replies(exc):
            log.info(
                "answered a malformed message with JSON-RPC error %d (id %r)",
                reply.error.code,
                reply.id,
            )
            with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
                await self._write.send(SessionMessage(reply))

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> Item:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> bool | None:
        await self.aclose()
        return None
