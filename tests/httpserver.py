"""A programmable HTTP server on 127.0.0.1 for tests that need a real socket.

    with LoopbackServer() as server:
        server.route("/page", Response.text("<h1>hi</h1>", content_type="text/html"))
        server.redirect("/old", "/page")
        fetch(server.url("/old"))
        assert server.hits("/page") == 1

Routes map a path (query string ignored) to a fixed `Response` or to a handler called with the
`Request`. A response may stream its body from a factory of byte chunks, wait on a
`threading.Event` before answering (`gate`; every gate is released when the server closes),
and every exchange is recorded with the bytes sent and whether the client hung up early.
Each response closes its connection, so `close()` never waits on an idle keep-alive socket.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any
from urllib.parse import parse_qs, urlsplit

# Long enough for any test, short enough that a wedged test fails rather than hangs CI.
GATE_TIMEOUT = 30.0
SOCKET_TIMEOUT = 30.0

Body = bytes | Callable[[], Iterable[bytes]]
HeaderItems = Mapping[str, str] | Sequence[tuple[str, str]]


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]  # keys lowercased
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass(frozen=True)
class Response:
    """What a route answers.

    body: bytes, or a zero-argument callable returning an iterable of chunks (called once per
    request, so a generator function streams a fresh body each time without building it in
    memory). Streamed bodies go out chunked when `chunked`, otherwise delimited by closing
    the connection. `content_length=False` leaves the header off a bytes body; a
    Content-Length given in `headers` is sent as is (it may lie, on purpose).
    """

    status: int = 200
    body: Body = b""
    content_type: str | None = None
    headers: HeaderItems = ()
    content_length: bool = True
    chunked: bool = False
    gate: threading.Event | None = None

    @classmethod
    def text(
        cls, text: str, *, status: int = 200, content_type: str = "text/plain", **kw: Any
    ) -> Response:
        return cls(
            status=status,
            body=text.encode("utf-8"),
            content_type=f"{content_type}; charset=utf-8",
            **kw,
        )

    @classmethod
    def json(cls, payload: Any, *, status: int = 200, **kw: Any) -> Response:
        return cls(
            status=status,
            body=json.dumps(payload).encode("utf-8"),
            content_type="application/json",
            **kw,
        )


Handler = Callable[[Request], Response]


@dataclass
class Exchange:
    """One request as the server saw it."""

    request: Request
    arrived: float = field(default_factory=time.monotonic)  # when the request was read
    status: int | None = None
    bytes_sent: int = 0  # body bytes written to the socket
    client_disconnected: bool = False  # the client closed before the whole body was written
    error: BaseException | None = None  # an exception raised by the route's handler
    finished: threading.Event = field(default_factory=threading.Event)


class _Server(ThreadingHTTPServer):
    daemon_threads = False  # joined on close, so no handler outlives the test
    block_on_close = True

    def __init__(self, owner: LoopbackServer) -> None:
        self.owner = owner
        super().__init__(("127.0.0.1", 0), _RequestHandler)

    def process_request(self, request: Any, client_address: Any) -> None:
        self.owner._track(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        self.owner._untrack(request)
        super().shutdown_request(request)


class _RequestHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server
    timeout = SOCKET_TIMEOUT

    def log_message(self, format: str, *args: Any) -> None:
        pass  # keeps pytest output readable; exchanges are recorded instead

    def do_GET(self) -> None:
        self._handle()

    do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = do_GET

    def _handle(self) -> None:
        self.close_connection = True
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length > 0 else b""
        parts = urlsplit(self.path)
        request = Request(
            method=self.command,
            path=parts.path,
            query=parse_qs(parts.query, keep_blank_values=True),
            headers={k.lower(): v for k, v in self.headers.items()},
            body=body,
        )
        owner = self.server.owner
        exchange = owner._begin(request)
        try:
            response = owner._respond(request)
            if response.gate is not None:
                owner._hold(response.gate)
                response.gate.wait(GATE_TIMEOUT)
            exchange.status = response.status
            self._write(response, exchange)
        except (BrokenPipeError, ConnectionResetError, ConnectionAbortedError, TimeoutError):
            exchange.client_disconnected = True
        except Exception as exc:  # a broken route should fail its test, not kill the thread
            exchange.error = exc
            try:
                self.send_error(HTTPStatus.INTERNAL_SERVER_ERROR, f"route raised {exc!r}")
            except OSError:
                exchange.client_disconnected = True
        finally:
            exchange.finished.set()

    def _write(self, response: Response, exchange: Exchange) -> None:
        self.send_response(response.status)
        items = list(
            response.headers.items() if isinstance(response.headers, Mapping) else response.headers
        )
        names = {name.lower() for name, _ in items}
        if response.content_type is not None and "content-type" not in names:
            self.send_header("Content-Type", response.content_type)
        for name, value in items:
            self.send_header(name, value)
        no_body = self.command == "HEAD" or response.status in (204, 304)
        streamed = not isinstance(response.body, bytes)
        if streamed and response.chunked:
            self.send_header("Transfer-Encoding", "chunked")
        elif (
            not streamed
            and response.content_length
            and "content-length" not in names
            and response.status not in (204, 304)
        ):
            assert isinstance(response.body, bytes)
            self.send_header("Content-Length", str(len(response.body)))
        self.send_header("Connection", "close")
        self.end_headers()
        if no_body:
            self.wfile.flush()
            return
        if isinstance(response.body, bytes):
            self._send_bytes(response.body, exchange)
        else:
            for chunk in response.body():
                if not chunk:
                    continue
                if response.chunked:
                    self.wfile.write(f"{len(chunk):x}\r\n".encode("ascii"))
                    self._send_bytes(chunk, exchange)
                    self.wfile.write(b"\r\n")
                else:
                    self._send_bytes(chunk, exchange)
            if response.chunked:
                self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _send_bytes(self, data: bytes, exchange: Exchange) -> None:
        self.wfile.write(data)
        exchange.bytes_sent += len(data)


def _fixed(response: Response) -> Handler:
    def handler(_request: Request) -> Response:
        return response

    return handler


class LoopbackServer:
    """Serves programmable routes on 127.0.0.1:<free port>; thread-safe; use as a context."""

    def __init__(self) -> None:
        self._lock = threading.Condition()
        self._routes: dict[str, Handler] = {}
        self._exchanges: list[Exchange] = []
        self._gates: list[threading.Event] = []
        self._sockets: set[socket.socket] = set()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._closed = False

    # lifecycle

    def start(self) -> LoopbackServer:
        if self._server is not None:
            return self
        self._server = _Server(self)
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.01},
            name="loopback-http",
            daemon=True,
        )
        self._thread.start()
        return self

    def close(self) -> None:
        """Stops accepting, releases gated handlers, cuts live connections, joins threads."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            gates = list(self._gates)
            sockets = list(self._sockets)
        server = self._server
        if server is None:
            return
        server.shutdown()
        for gate in gates:
            gate.set()
        for sock in sockets:
            with contextlib.suppress(OSError):  # already closed by its handler
                sock.shutdown(socket.SHUT_RDWR)
        server.server_close()  # joins the handler threads
        if self._thread is not None:
            self._thread.join(timeout=SOCKET_TIMEOUT)

    def __enter__(self) -> LoopbackServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # addresses

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("server not started")
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def url(self, path: str = "/") -> str:
        return self.base_url + (path if path.startswith("/") else "/" + path)

    # routes

    def route(self, path: str, response: Response | Handler) -> None:
        """Answer requests for path (any method) with a fixed response or a handler's."""
        handler = _fixed(response) if isinstance(response, Response) else response
        with self._lock:
            self._routes[path] = handler

    def redirect(self, path: str, location: str, status: int = 302) -> None:
        """Redirect path to location (sent verbatim: relative, absolute or another scheme)."""
        self.route(path, Response(status=status, headers=[("Location", location)]))

    # observations

    def hits(self, path: str) -> int:
        with self._lock:
            return sum(1 for e in self._exchanges if e.request.path == path)

    def exchanges(self, path: str | None = None) -> list[Exchange]:
        with self._lock:
            return [e for e in self._exchanges if path is None or e.request.path == path]

    def requests(self, path: str | None = None) -> list[Request]:
        return [e.request for e in self.exchanges(path)]

    def wait_for(self, path: str, count: int = 1, timeout: float = 10.0) -> list[Exchange]:
        """The first `count` exchanges for path once they have finished (the server side)."""
        with self._lock:
            if not self._lock.wait_for(
                lambda: sum(1 for e in self._exchanges if e.request.path == path) >= count,
                timeout,
            ):
                raise TimeoutError(f"{path} was requested fewer than {count} times")
        selected = self.exchanges(path)[:count]
        for exchange in selected:
            if not exchange.finished.wait(timeout):
                raise TimeoutError(f"a request for {path} did not finish in {timeout} s")
        return selected

    # called from handler threads

    def _track(self, sock: socket.socket) -> None:
        with self._lock:
            self._sockets.add(sock)

    def _untrack(self, sock: socket.socket) -> None:
        with self._lock:
            self._sockets.discard(sock)

    def _hold(self, gate: threading.Event) -> None:
        with self._lock:
            closed = self._closed
            self._gates.append(gate)
        if closed:
            gate.set()

    def _begin(self, request: Request) -> Exchange:
        exchange = Exchange(request)
        with self._lock:
            self._exchanges.append(exchange)
            self._lock.notify_all()
        return exchange

    def _respond(self, request: Request) -> Response:
        with self._lock:
            handler = self._routes.get(request.path)
        if handler is None:
            return Response.text("not found", status=404)
        return handler(request)
