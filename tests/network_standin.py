"""A stand-in for the network, for tests of what a fetch may reach (never leaving 127.0.0.1).

    net = StandInNetwork()
    net.name("public.example", ["93.184.216.34"])             # a test resolver's answer
    net.name("rebind.example", ["93.184.216.34"], ["127.0.0.1"])  # first answer, then later ones
    net.route("93.184.216.34", server)                        # that address is this server
    net.install(monkeypatch)

`net.resolve` is a resolver for `AddressPolicy` / `EngineParts.resolve_host`. Installed, it
replaces `socket.create_connection` (what httpcore connects with) and `socket.getaddrinfo`:
a connection to a routed address goes to its loopback server, one to a loopback address goes
where it says, and anything else (and every real name lookup) is refused and recorded in
`violations`, which the test asserts empty. `connects` records every address a connection
was asked for, so a test can tell which address a fetch really connected to.
"""

from __future__ import annotations

import ipaddress
import socket
from typing import Any

import pytest

from tests.httpserver import LoopbackServer

_REAL_CREATE = socket.create_connection
_REAL_GETADDRINFO = socket.getaddrinfo


def _numeric(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        pass
    try:
        return ipaddress.IPv4Address(socket.inet_aton(host))
    except (OSError, ValueError):
        return None


class StandInNetwork:
    def __init__(self) -> None:
        self._names: dict[str, list[list[str]]] = {}
        self._routes: dict[str, int] = {}
        self.lookups: list[str] = []
        self.connects: list[tuple[str, int]] = []
        self.violations: list[str] = []

    def name(self, host: str, *answers: list[str]) -> None:
        """What the test resolver answers for host: the answers in turn, the last one again."""
        self._names[host] = [list(a) for a in answers]

    def route(self, address: str, server: LoopbackServer) -> None:
        self._routes[address] = server.port

    def resolve(self, host: str, port: int) -> list[str]:
        self.lookups.append(host)
        answers = self._names.get(host)
        if not answers:
            raise OSError(f"stand-in network: no such name {host!r}")
        return answers.pop(0) if len(answers) > 1 else list(answers[0])

    def lookups_of(self, host: str) -> int:
        return self.lookups.count(host)

    def install(self, monkeypatch: pytest.MonkeyPatch) -> None:
        for var in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY"):
            monkeypatch.delenv(var, raising=False)
            monkeypatch.delenv(var.lower(), raising=False)
        monkeypatch.setattr(socket, "create_connection", self._create_connection)
        monkeypatch.setattr(socket, "getaddrinfo", self._getaddrinfo)

    def _create_connection(self, address: Any, *args: Any, **kwargs: Any) -> socket.socket:
        host, port = str(address[0]), int(address[1])
        if _numeric(host) is None:
            # A fetch allowed everywhere connects by name: the test resolver answers.
            try:
                host = self.resolve(host, port)[0]
            except OSError as exc:
                self.violations.append(f"connect to unknown name {host!r}")
                raise ConnectionRefusedError(str(exc)) from None
        self.connects.append((host, port))
        if host in self._routes:
            return _REAL_CREATE(("127.0.0.1", self._routes[host]), *args, **kwargs)
        ip = _numeric(host)
        if ip is not None and ip.is_loopback:
            return _REAL_CREATE((str(ip), port), *args, **kwargs)
        self.violations.append(f"connect to {host}:{port}")
        raise ConnectionRefusedError(f"stand-in network: {host}:{port} is not reachable")

    def _getaddrinfo(self, host: Any, *args: Any, **kwargs: Any) -> Any:
        text = host.decode() if isinstance(host, bytes) else str(host)
        if host is None or _numeric(text) is not None:
            return _REAL_GETADDRINFO(host, *args, **kwargs)
        self.violations.append(f"real lookup of {text!r}")
        raise socket.gaierror(socket.EAI_NONAME, f"stand-in network: no lookup of {text!r}")
