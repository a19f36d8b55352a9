"""One wall-clock deadline per fetch, enforced on every socket operation, and a cancel flag.

httpx's timeouts apply to each socket operation on its own: a server that sends one byte
of its headers every two seconds never trips a 30 s read timeout, and the request can run
for ever. `DeadlineBackend` wraps httpcore's synchronous network backend so that every
connect, TLS handshake, write and read waits at most until the deadline of the fetch that
runs on the calling thread, and raises httpcore's own timeout once nothing is left. The
deadline lives in a context variable set by `fetch_scope`, so a pooled connection kept
alive across fetches always obeys the fetch that is using it now.

Reads, the only operation that waits on the server for long, wait in slices of at most
`CANCEL_POLL_S`, so a cancel check (Ctrl-C, the job's own time limit) is seen promptly and
ends the fetch with `FetchCancelled`. A timed-out `recv` has consumed nothing (and OpenSSL
keeps a partly received TLS record), so a read is retried safely; a write or connect may
have made progress and is not, it is only bounded by the deadline.

A scope may also carry a `ConnectGuard`, asked for every new connection: it returns the
addresses to connect to for a host (or raises to refuse it), so the caller's check of an
address and the connection to it are one step (the address policy, address_policy.py).
Through a proxy the connection is to the proxy, so the guard is asked about the request's
target instead, and its answer only decides whether the request goes out.
"""

from __future__ import annotations

import time
import typing
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

import httpcore
import httpx

CancelCheck = Callable[[], bool]
# (host, port) -> the addresses to connect to; raises to refuse the host, OSError when it
# cannot tell (a failed name lookup: a connect error like any other).
ConnectGuard = Callable[[str, int], Sequence[str]]
# How long a read may block before the cancel check is asked again.
CANCEL_POLL_S = 0.1


class FetchCancelled(Exception):
    """The fetch was stopped because its cancel check said so."""


def _never() -> bool:
    return False


@dataclass(frozen=True, slots=True)
class _Scope:
    deadline: float  # time.monotonic()
    cancelled: CancelCheck
    guard: ConnectGuard | None = None


_scope: ContextVar[_Scope | None] = ContextVar("trove_fetch_scope", default=None)


@contextmanager
def fetch_scope(
    deadline: float, cancelled: CancelCheck | None = None, guard: ConnectGuard | None = None
) -> Iterator[None]:
    """Run the block with every socket operation on a `DeadlineBackend` bounded by
    `deadline` (a time.monotonic() value) and stopped when `cancelled()` turns true; every
    new connection goes where `guard` says."""
    token = _scope.set(_Scope(deadline, cancelled or _never, guard))
    try:
        yield
    finally:
        _scope.reset(token)


def _wait_for(
    timeout: float | None,
    expired: type[httpcore.TimeoutException],
    *,
    started: float | None = None,
    cap: float | None = None,
) -> float | None:
    """The timeout to give one socket call: the operation's own (counted from `started`),
    cut to what is left of the fetch's deadline and to `cap`. Raises `expired` when nothing
    is left, and FetchCancelled when the fetch was cancelled; never returns 0, which would
    turn the socket non-blocking."""
    scope = _scope.get()
    if scope is None:
        return timeout
    if scope.cancelled():
        raise FetchCancelled("the fetch was cancelled")
    now = time.monotonic()
    limit = scope.deadline
    if timeout is not None:
        limit = min(limit, (now if started is None else started) + timeout)
    left = limit - now
    if left <= 0:
        raise expired("timed out")
    return left if cap is None else min(left, cap)


class DeadlineStream(httpcore.NetworkStream):
    """A network stream whose every operation obeys the current fetch scope."""

    def __init__(self, stream: httpcore.NetworkStream) -> None:
        self._stream = stream

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        started = time.monotonic()
        while True:
            wait = _wait_for(timeout, httpcore.ReadTimeout, started=started, cap=CANCEL_POLL_S)
            try:
                return self._stream.read(max_bytes, wait)
            except httpcore.ReadTimeout:
                if _scope.get() is None:
                    raise
                # Only a slice ran out; _wait_for decides whether time is really up.

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._stream.write(buffer, _wait_for(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._stream.close()

    def start_tls(
        self,
        ssl_context: typing.Any,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.NetworkStream:
        wait = _wait_for(timeout, httpcore.ConnectTimeout)
        return DeadlineStream(self._stream.start_tls(ssl_context, server_hostname, wait))

    def get_extra_info(self, info: str) -> typing.Any:
        return self._stream.get_extra_info(info)


class DeadlineBackend(httpcore.NetworkBackend):
    """httpcore's network backend with every operation bounded by the current fetch scope
    (outside a scope it behaves exactly like the backend it wraps). `guarded` is false for
    a proxy's backend: its connections go to the proxy, not to the fetch's target."""

    def __init__(
        self, backend: httpcore.NetworkBackend | None = None, *, guarded: bool = True
    ) -> None:
        self._backend = backend or httpcore.SyncBackend()
        self._guarded = guarded

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: typing.Iterable[typing.Any] | None = None,
    ) -> httpcore.NetworkStream:
        scope = _scope.get()
        guard = scope.guard if scope is not None and self._guarded else None
        try:
            addresses = guard(host, port) if guard is not None else [host]
        except OSError as exc:
            raise httpcore.ConnectError(str(exc)) from exc
        failure: httpcore.ConnectError | httpcore.ConnectTimeout | None = None
        for address in addresses:
            wait = _wait_for(timeout, httpcore.ConnectTimeout)
            try:
                stream = self._backend.connect_tcp(
                    address, port, wait, local_address, socket_options
                )
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                failure = exc  # the next checked address of the name may answer
                continue
            return DeadlineStream(stream)
        assert failure is not None
        raise failure

    def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: typing.Iterable[typing.Any] | None = None,
    ) -> httpcore.NetworkStream:
        wait = _wait_for(timeout, httpcore.ConnectTimeout)
        return DeadlineStream(self._backend.connect_unix_socket(path, wait, socket_options))

    def sleep(self, seconds: float) -> None:
        self._backend.sleep(seconds)


def _install(transport: httpx.BaseTransport, *, guarded: bool = True) -> httpx.BaseTransport:
    """Put a DeadlineBackend under an httpx transport's connection pool (direct or proxy)."""
    if not isinstance(transport, httpx.HTTPTransport):
        return transport  # a caller's own transport (a mock in tests) does its own I/O
    pool = getattr(transport, "_pool", None)
    backend = getattr(pool, "_network_backend", None)
    if not isinstance(backend, httpcore.NetworkBackend):
        # Without the backend the deadline would silently not hold; say so loudly instead.
        raise RuntimeError(
            "cannot bound fetches by a deadline: this httpx/httpcore version keeps its "
            "connection pool elsewhere"
        )
    if not isinstance(backend, DeadlineBackend):
        pool._network_backend = DeadlineBackend(backend, guarded=guarded)  # type: ignore[union-attr]
    return transport


class _GuardedProxyTransport(httpx.BaseTransport):
    """A proxy transport that asks the scope's guard about each request's target first."""

    def __init__(self, transport: httpx.BaseTransport) -> None:
        self._transport = transport

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        scope = _scope.get()
        if scope is not None and scope.guard is not None:
            url = request.url
            try:
                scope.guard(url.host, url.port or (443 if url.scheme == "https" else 80))
            except OSError as exc:
                raise httpx.ConnectError(str(exc), request=request) from exc
        return self._transport.handle_request(request)

    def close(self) -> None:
        self._transport.close()


class DeadlineClient(httpx.Client):
    """An httpx.Client whose transports (the direct one and any proxy from the environment)
    use DeadlineBackend. httpx offers no public way to choose the network backend and
    keep its proxy handling, so the two transport factories are wrapped."""

    def _init_transport(self, *args: typing.Any, **kwargs: typing.Any) -> httpx.BaseTransport:
        return _install(super()._init_transport(*args, **kwargs))

    def _init_proxy_transport(self, *args: typing.Any, **kwargs: typing.Any) -> httpx.BaseTransport:
        proxied = _install(super()._init_proxy_transport(*args, **kwargs), guarded=False)
        return _GuardedProxyTransport(proxied)
