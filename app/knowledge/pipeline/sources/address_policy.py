"""Which network addresses a fetch may reach: the defence against server-side request forgery.

A URL that an agent adds (kb_manage) or that arrives in an imported base is someone else's
choice, fetched with this computer's network position: left unchecked it reads the person's
router, a local admin page, another program's loopback API or a cloud metadata service, and
the page lands in the base for the agent to read back. An `AddressPolicy` that does not
allow private addresses refuses, for every connection of a fetch (each redirect hop too):

- loopback, private, link-local, unspecified (0.0.0.0, ::), shared (100.64/10), reserved,
  documentation and multicast addresses, also when spelled another way (0x7f000001,
  2130706433, 0177.0.0.1, 127.1, [::1], ::ffff:127.0.0.1, NAT64 and 6to4 forms);
- names that are local by definition (localhost, *.local, *.internal, metadata.goog,
  metadata.google.internal, a name without a dot), refused before any lookup;
- a name that resolves to any such address. The resolution is done once, here, and the
  connection goes to the address that was checked (`guard` returns it): a DNS answer that
  changes between the check and the connect (rebinding) is never asked for.

Through an HTTP proxy the connection goes to the proxy (the person's own setting), so the
target's name is resolved and checked here before the request is handed to the proxy.

`check_literal` is the same check without a lookup, for refusing a URL at the moment it is
admitted (a literal address, a local name) with a clear message instead of a failed item.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable
from dataclasses import dataclass

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
# (host, port) -> the addresses the host resolves to, as text.
Resolver = Callable[[str, int], list[str]]

_LOCAL_NAMES = frozenset(
    {"localhost", "localhost.localdomain", "metadata.goog", "metadata.google.internal"}
)
# Suffixes that no public site can have (RFC 6761, RFC 6762, RFC 8375, ICANN's .internal).
_LOCAL_SUFFIXES = (".localhost", ".local", ".internal", ".home.arpa", ".localdomain", ".lan")
_NAT64 = (ipaddress.IPv6Network("64:ff9b::/96"), ipaddress.IPv6Network("64:ff9b:1::/48"))
_IPV4_COMPATIBLE = ipaddress.IPv6Network("::/96")


class AddressRefused(Exception):
    """A fetch was stopped before connecting: the host is not a public internet address."""

    def __init__(self, host: str, reason: str) -> None:
        super().__init__(f"{host} is {reason}")
        self.host = host
        self.reason = reason


def system_resolver(host: str, port: int) -> list[str]:
    """The host's addresses as the operating system resolves them (numeric forms included:
    getaddrinfo reads 0x7f000001 as 127.0.0.1, as a later connect would). A failed lookup
    raises OSError, as a connect would (it may work on a later attempt)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except UnicodeError as exc:
        raise AddressRefused(host, f"not a valid host name ({exc})") from exc
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


def _embedded_ipv4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 one stands for (mapped, 6to4, NAT64, IPv4-compatible)."""
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip.sixtofour is not None:
        return ip.sixtofour
    if any(ip in net for net in _NAT64) or (ip in _IPV4_COMPATIBLE and int(ip) > 1):
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None


def refusal(ip: IPAddress) -> str | None:
    """Why the address is not one a restricted fetch may reach, or None when it is public."""
    if isinstance(ip, ipaddress.IPv6Address):
        inner = _embedded_ipv4(ip)
        if inner is not None:
            why = refusal(inner)
            return f"{why} ({inner} written as IPv6)" if why else None
    if ip.is_loopback:
        return "a loopback address (this computer)"
    if ip.is_unspecified:
        return "the unspecified address (this computer)"
    if ip.is_link_local:
        return "a link-local address (where cloud metadata services answer)"
    if ip.is_multicast:
        return "a multicast address"
    if ip.is_private:
        return "a private-network address"
    if not ip.is_global:
        return "not a public internet address"
    return None


def parse_literal(host: str) -> IPAddress | None:
    """The address a host written as a number stands for, in every form the OS connects to
    (dotted, hex, octal, decimal, shortened; IPv6 with or without brackets), or None."""
    bare = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    try:
        return ipaddress.ip_address(bare.split("%", 1)[0])
    except ValueError:
        pass
    try:
        return ipaddress.IPv4Address(socket.inet_aton(bare))
    except (OSError, UnicodeError, ValueError):
        return None


def local_name(host: str) -> bool:
    name = host.rstrip(".").lower()
    return name in _LOCAL_NAMES or name.endswith(_LOCAL_SUFFIXES) or "." not in name


def check_literal(host: str) -> None:
    """Refuse a host that is a non-public address or a local name, without any lookup."""
    ip = parse_literal(host)
    if ip is not None:
        why = refusal(ip)
        if why is not None:
            raise AddressRefused(host, why if str(ip) == host else f"{ip}, {why}")
        return
    if local_name(host):
        raise AddressRefused(host, "a name on this computer or its local network")


@dataclass(frozen=True, slots=True)
class AddressPolicy:
    """What one fetch may connect to. `allow_private` lets it reach everything (a person's
    own URL: an intranet wiki, a local server); `resolve` is injectable for tests."""

    allow_private: bool = True
    resolve: Resolver = system_resolver

    def guard(self, host: str, port: int) -> list[str]:
        """The addresses to connect to for host:port: each one checked, resolved once.
        Raises AddressRefused when the host is not allowed, OSError when its name could
        not be resolved."""
        if self.allow_private:
            return [host]
        check_literal(host)
        literal = parse_literal(host)
        if literal is not None:
            return [str(literal)]
        addresses = self.resolve(host, port)
        if not addresses:
            raise AddressRefused(host, "a name that resolves to no address")
        for address in addresses:
            ip = parse_literal(address)
            why = refusal(ip) if ip is not None else "not an address"
            if why is not None:
                raise AddressRefused(host, f"resolving to {address}, {why}")
        return addresses


ANY_ADDRESS = AddressPolicy(allow_private=True)
PUBLIC_ONLY = AddressPolicy(allow_private=False)
