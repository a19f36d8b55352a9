"""`trove mcp` answers lines that are not JSON-RPC messages with a JSON-RPC error instead of
dropping them (issue 30), so a client waiting on the id hears back, and it keeps serving.

Raw lines over the pipes of a real `trove mcp` process: invalid JSON, a batch array, an id
without a method, NUL bytes, nesting past the parser's depth limit, a bare string; each gets
-32700 (parse error, id null) or -32600 (invalid request, with the id when it can be read),
and a valid request after them is answered as usual. Before, none got any reply.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
START_TIMEOUT = 60.0  # starting Python and the SDK on a loaded machine
REPLY_TIMEOUT = 15.0
PARSE_ERROR, INVALID_REQUEST = -32700, -32600


class RawServer:
    """`trove mcp` driven over its pipes a line at a time."""

    def __init__(self, home: Path) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "app", "--home", str(home), "mcp"],
            cwd=REPO,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={k: v for k, v in os.environ.items() if k != "TROVE_HOME"},
        )
        self._buffer = b""

    def send(self, line: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + b"\n")
        self.proc.stdin.flush()

    def receive(self, timeout: float = REPLY_TIMEOUT) -> dict[str, Any]:
        """The next message on stdout; fails when none comes within `timeout`."""
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        deadline = time.monotonic() + timeout
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([fd], [], [], max(0.0, left))
            if not ready:
                raise AssertionError(f"no reply within {timeout:g} s")
            chunk = os.read(fd, 65536)
            assert chunk, "the server closed stdout"
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        message: dict[str, Any] = json.loads(line)
        assert message["jsonrpc"] == "2.0"
        return message

    def close(self) -> int:
        if self.proc.stdin is not None and not self.proc.stdin.closed:
            self.proc.stdin.close()
        try:
            return self.proc.wait(timeout=30)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
            for stream in (self.proc.stdout, self.proc.stderr):
                if stream is not None:
                    stream.close()


def _request(request_id: int, method: str, params: dict[str, Any] | None = None) -> bytes:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return json.dumps(message).encode()


@pytest.fixture
def server(tmp_path: Path) -> Iterator[RawServer]:
    raw = RawServer(tmp_path / "home")
    try:
        raw.send(
            _request(
                1,
                "initialize",
                {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "raw-test", "version": "0"},
                },
            )
        )
        assert raw.receive(START_TIMEOUT)["result"]["serverInfo"]["name"] == "trove"
        raw.send(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}')
        yield raw
    finally:
        raw.close()


MALFORMED = {
    "invalid JSON": (b'{"jsonrpc": "2.0", "id": 5, "method": "ping"', PARSE_ERROR, None),
    "a batch array": (b'[{"jsonrpc": "2.0", "id": 6, "method": "ping"}]', INVALID_REQUEST, 6),
    "an id without a method": (b'{"jsonrpc": "2.0", "id": 7}', INVALID_REQUEST, 7),
    "a string id without a method": (b'{"jsonrpc": "2.0", "id": "q-8"}', INVALID_REQUEST, "q-8"),
    "NUL bytes": (b'{"jsonrpc": "2.0", "id": 9, "method": "p\x00ng"}', PARSE_ERROR, None),
    "only NUL bytes": (b"\x00\x00\x00", PARSE_ERROR, None),
    "deep nesting": (b"[" * 100_000 + b"]" * 100_000, PARSE_ERROR, None),
    "a bare string": (b'"hello"', INVALID_REQUEST, None),
    "params that are no object": (
        b'{"jsonrpc": "2.0", "id": 10, "method": "ping", "params": 5}',
        INVALID_REQUEST,
        10,
    ),
}


def test_every_malformed_line_gets_its_error_and_the_server_keeps_serving(
    server: RawServer,
) -> None:
    for name, (line, code, request_id) in MALFORMED.items():
        server.send(line)
        reply = server.receive()
        assert reply.get("id", "missing") == request_id, (name, reply)
        assert reply["error"]["code"] == code, (name, reply)
        assert "result" not in reply, name
    server.send(_request(20, "tools/list"))
    listed = server.receive()
    assert listed["id"] == 20
    assert {tool["name"] for tool in listed["result"]["tools"]} >= {"kb_search", "kb_read"}
    server.send(_request(21, "ping"))
    assert server.receive() == {"jsonrpc": "2.0", "id": 21, "result": {}}
    assert server.close() == 0


def test_a_batch_gets_an_error_for_each_id_it_holds(server: RawServer) -> None:
    server.send(
        b'[{"jsonrpc": "2.0", "id": 31, "method": "ping"},'
        b' {"jsonrpc": "2.0", "method": "notifications/initialized"},'
        b' {"jsonrpc": "2.0", "id": "b", "method": "ping"}]'
    )
    replies = [server.receive(), server.receive()]
    assert [(r["id"], r["error"]["code"]) for r in replies] == [
        (31, INVALID_REQUEST),
        ("b", INVALID_REQUEST),
    ]
    assert "batches are not supported" in replies[0]["error"]["data"]
    server.send(b"[]")
    empty = server.receive()
    assert (empty["id"], empty["error"]["code"]) == (None, INVALID_REQUEST)
    server.send(_request(32, "ping"))
    assert server.receive()["id"] == 32
