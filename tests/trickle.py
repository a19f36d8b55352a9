"""Misbehaving HTTP servers on 127.0.0.1 for deadline tests (URL fetches, provider calls).

`TrickleServer` answers each connection with some bytes at once and then one byte at a time
with gaps shorter than any read timeout (a slow loris, which no per-read timeout can catch),
or nothing at all (a silent server); `unanswered_connects` is a listener whose accept queue
is full, so connects are never answered. Each runs for a bounded time and stops by itself.
"""

from __future__ import annotations

import contextlib
import socket
import sys
import threading
import time
from collections.abc import Iterator

import pytest

# How long a misbehaving server keeps going: far past any deadline here, so a call that
# ignores the deadline fails the timing assertion instead of ending early by luck.
SERVER_LIFETIME = 20.0
SLOW_HEADERS = b"HTTP/1.1 200 OK\r\n" + b"".join(b"X-Pad-%d: x\r\n" % i for i in range(2000))


class TrickleServer:
    """Answers each connection with `head` at once, then `trickle` one byte per `gap`
    seconds, then holds the connection open silently; all within `lifetime` seconds."""

    def __init__(
        self, head: bytes, trickle: bytes, gap: float, lifetime: float = SERVER_LIFETIME
    ) -> None:
        self.head, self.trickle, self.gap = head, trickle, gap
        self.requested = threading.Event()  # a full request arrived: the fetch is under way
        self._stop = threading.Event()
        self._end = time.monotonic() + lifetime
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(0.05)
        self.port: int = self._listener.getsockname()[1]
        self._threads = [threading.Thread(target=self._accept_loop, daemon=True)]
        self._threads[0].start()

    def url(self, path: str = "/") -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def _left(self) -> float:
        return self._end - time.monotonic()

    def _accept_loop(self) -> None:
        while not self._stop.is_set() and self._left() > 0:
            try:
                conn, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            worker = threading.Thread(target=self._serve, args=(conn,), daemon=True)
            self._threads.append(worker)
            worker.start()

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            try:
                self._read_request(conn)
                self.requested.set()
                conn.sendall(self.head)
                for byte in self.trickle:
                    if self._stop.wait(self.gap) or self._left() <= 0:
                        return
                    conn.sendall(bytes([byte]))
                self._stop.wait(max(0.0, self._left()))
            except OSError:
                return  # the client gave up and hung up: that is the point

    def _read_request(self, conn: socket.socket) -> None:
        conn.settimeout(max(0.1, self._left()))
        received = b""
        while b"\r\n\r\n" not in received and len(received) < 65536:
            chunk = conn.recv(4096)
            if not chunk:
                raise ConnectionResetError("client left before sending a request")
            received += chunk

    def close(self) -> None:
        self._stop.set()
        self._listener.close()
        for thread in self._threads:
            thread.join(timeout=2)


@contextlib.contextmanager
def serving(
    head: bytes, trickle: bytes, gap: float, lifetime: float = SERVER_LIFETIME
) -> Iterator[TrickleServer]:
    server = TrickleServer(head, trickle, gap, lifetime)
    try:
        yield server
    finally:
        server.close()


@contextlib.contextmanager
def unanswered_connects() -> Iterator[str]:
    """A URL whose connects are never answered: the listener's accept queue is full, so
    Linux drops the SYNs (the client retries them for far longer than any deadline)."""
    if not sys.platform.startswith("linux"):
        pytest.skip("an unanswered SYN on a full accept queue is Linux behaviour")
    listener = socket.socket()
    fillers: list[socket.socket] = []
    try:
        listener.bind(("127.0.0.1", 0))
        listener.listen(0)
        address = listener.getsockname()
        for _ in range(8):
            filler = socket.socket()
            filler.settimeout(0.3)
            fillers.append(filler)
            try:
                filler.connect(address)
            except TimeoutError:
                break  # this one was not answered: the queue is full
        else:
            pytest.skip("the accept queue never filled up")
        yield f"http://127.0.0.1:{address[1]}/"
    finally:
        for filler in fillers:
            filler.close()
        listener.close()
