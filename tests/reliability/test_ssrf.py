"""Server-side request forgery: what a restricted fetch (an agent's URL, an imported base's)
may reach, at the level of the fetch itself. Every "other address" is a stand-in: a test
resolver names it and its connections go to a server on 127.0.0.1 (tests/network_standin.py),
or a loopback proxy answers for it; nothing leaves 127.0.0.1.

The same through the agent tools and `trove mcp`: tests/integration/test_agent_ssrf.py.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterator

import pytest

from app.knowledge.pipeline.sources.address_policy import (
    ANY_ADDRESS,
    AddressPolicy,
    AddressRefused,
    check_literal,
    parse_literal,
    refusal,
)
from app.knowledge.pipeline.sources.sitemap import expand_sitemap
from app.knowledge.pipeline.sources.web import FetchError, fetch_url
from tests.httpserver import LoopbackServer, Response
from tests.network_standin import StandInNetwork

PUBLIC = "93.184.216.34"  # a public address; only ever a label for a loopback stand-in
NS = "http://www.sitemaps.org/schemas/sitemap/0.9"


@pytest.fixture
def net(monkeypatch: pytest.MonkeyPatch) -> Iterator[StandInNetwork]:
    network = StandInNetwork()
    network.install(monkeypatch)
    yield network
    assert network.violations == [], "a fetch tried to reach something off 127.0.0.1"


@pytest.fixture
def server() -> Iterator[LoopbackServer]:
    with LoopbackServer() as srv:
        srv.route("/admin", Response.text("router admin page: secret"))
        srv.route("/page", Response.text("<h1>public page</h1>", content_type="text/html"))
        yield srv


@pytest.fixture
def other() -> Iterator[LoopbackServer]:
    """A second local service on another port (the target of a redirect)."""
    with LoopbackServer() as srv:
        srv.route("/secret", Response.text("another program's local API: secret"))
        yield srv


def restricted(net: StandInNetwork) -> AddressPolicy:
    return AddressPolicy(allow_private=False, resolve=net.resolve)


# -- the policy itself -------------------------------------------------------------------------

REFUSED_HOSTS = [
    "127.0.0.1",
    "127.8.9.10",
    "0x7f000001",  # hex
    "2130706433",  # decimal
    "0177.0.0.1",  # octal
    "017700000001",
    "127.1",  # shortened
    "0.0.0.0",
    "0",
    "::1",
    "[::1]",
    "::ffff:127.0.0.1",  # IPv4-mapped IPv6
    "[::ffff:7f00:1]",
    "::ffff:169.254.169.254",
    "64:ff9b::7f00:1",  # NAT64 of 127.0.0.1
    "2002:7f00:1::",  # 6to4 of 127.0.0.1
    "::",
    "10.0.0.5",
    "172.16.3.4",
    "192.168.1.1",
    "100.100.100.200",  # shared address space (a cloud's metadata service)
    "169.254.169.254",  # link-local: cloud metadata
    "fe80::1",
    "fd00:ec2::254",  # unique local: a cloud's IPv6 metadata
    "224.0.0.1",
    "198.18.0.1",
    "localhost",
    "LOCALHOST.",
    "api.localhost",
    "metadata.google.internal",
    "metadata.goog",
    "printer.local",
    "router.home.arpa",
    "wiki",  # a bare intranet name
]


@pytest.mark.parametrize("host", REFUSED_HOSTS)
def test_local_addresses_and_names_in_every_spelling_are_refused_without_a_lookup(
    host: str, net: StandInNetwork
) -> None:
    with pytest.raises(AddressRefused):
        check_literal(host)
    with pytest.raises(AddressRefused):
        restricted(net).guard(host, 80)
    assert net.lookups == []  # refused before any name was resolved


@pytest.mark.parametrize("host", ["93.184.216.34", "8.8.8.8", "2606:4700::1111", "1.1.1.1"])
def test_public_addresses_pass(host: str, net: StandInNetwork) -> None:
    check_literal(host)
    ip = parse_literal(host)
    assert ip is not None and refusal(ip) is None
    assert restricted(net).guard(host, 80) == [str(ipaddress.ip_address(host))]


def test_a_name_is_checked_by_every_address_it_resolves_to(net: StandInNetwork) -> None:
    net.name("public.example", [PUBLIC])
    net.name("private.example", ["10.1.2.3"])
    net.name("mixed.example", [PUBLIC, "127.0.0.1"])
    net.name("mapped.example", ["::ffff:127.0.0.1"])
    policy = restricted(net)
    assert policy.guard("public.example", 80) == [PUBLIC]
    for host in ("private.example", "mixed.example", "mapped.example"):
        with pytest.raises(AddressRefused, match="resolving to"):
            policy.guard(host, 80)
    with pytest.raises(OSError, match="no such name"):
        policy.guard("nowhere.example", 80)  # a failed lookup, as a connect's would be


def test_a_person_s_policy_checks_nothing(net: StandInNetwork) -> None:
    assert ANY_ADDRESS.guard("127.0.0.1", 80) == ["127.0.0.1"]
    assert ANY_ADDRESS.guard("localhost", 80) == ["localhost"]


# -- fetches -----------------------------------------------------------------------------------


def test_a_restricted_fetch_of_loopback_is_refused_before_connecting(
    net: StandInNetwork, server: LoopbackServer
) -> None:
    port = server.port
    for url in (
        f"http://127.0.0.1:{port}/admin",
        f"http://0x7f000001:{port}/admin",
        f"http://2130706433:{port}/admin",
        f"http://017700000001:{port}/admin",
        f"http://127.1:{port}/admin",
        f"http://[::1]:{port}/admin",
        f"http://[::ffff:127.0.0.1]:{port}/admin",
        f"http://0.0.0.0:{port}/admin",
        f"http://localhost:{port}/admin",
    ):
        with pytest.raises(FetchError, match="was not fetched") as caught:
            fetch_url(url, addresses=restricted(net))
        assert not caught.value.retryable
    # httpx itself refuses dotted octal (0177.0.0.1) as an invalid IPv4 address.
    with pytest.raises(FetchError, match="Invalid IPv4 address"):
        fetch_url(f"http://0177.0.0.1:{port}/admin", addresses=restricted(net))
    assert server.hits("/admin") == 0
    assert net.connects == []


def test_a_person_s_fetch_of_loopback_still_works(
    net: StandInNetwork, server: LoopbackServer
) -> None:
    page = fetch_url(f"http://127.0.0.1:{server.port}/admin")
    assert b"secret" in page.body
    page = fetch_url(f"http://0x7f000001:{server.port}/admin", addresses=ANY_ADDRESS)
    assert b"secret" in page.body


def test_a_redirect_to_another_local_port_is_refused(
    net: StandInNetwork, server: LoopbackServer, other: LoopbackServer
) -> None:
    net.name("public.example", [PUBLIC])
    net.route(PUBLIC, server)
    server.redirect("/go", f"http://127.0.0.1:{other.port}/secret")
    server.redirect("/go-hex", f"http://0x7f000001:{other.port}/secret")
    net.name("intranet.example", ["10.9.8.7"])
    server.redirect("/go-name", "http://intranet.example/secret")
    for path in ("/go", "/go-hex", "/go-name"):
        with pytest.raises(FetchError, match=r"redirected to .* which was not fetched"):
            fetch_url(f"http://public.example:{server.port}{path}", addresses=restricted(net))
    assert other.hits("/secret") == 0
    assert {host for host, _ in net.connects} == {PUBLIC}


def test_file_and_gopher_redirects_stay_refused(
    net: StandInNetwork, server: LoopbackServer
) -> None:
    server.redirect("/file", "file:///etc/passwd")
    server.redirect("/gopher", "gopher://127.0.0.1:70/_stats")
    for path in ("/file", "/gopher"):
        for policy in (ANY_ADDRESS, restricted(net)):
            url = server.url(path) if policy is ANY_ADDRESS else f"http://public.example{path}"
            net.name("public.example", [PUBLIC])
            net.route(PUBLIC, server)
            with pytest.raises(FetchError, match="redirected to a refused URL"):
                fetch_url(url, addresses=policy)
    for url in ("file:///etc/passwd", "gopher://127.0.0.1:70/"):
        with pytest.raises(FetchError, match="not allowed"):
            fetch_url(url, addresses=restricted(net))


def test_dns_rebinding_connects_to_the_address_that_was_checked(
    net: StandInNetwork, server: LoopbackServer
) -> None:
    """The name answers public first, loopback after: the fetch asks once and connects to
    the public address it checked; a second lookup (the connect's own) never happens."""
    net.name("rebind.example", [PUBLIC], ["127.0.0.1"])
    net.route(PUBLIC, server)
    page = fetch_url(f"http://rebind.example:{server.port}/page", addresses=restricted(net))
    assert b"public page" in page.body
    assert net.connects == [(PUBLIC, server.port)]
    assert net.lookups_of("rebind.example") == 1
    # The name's next answer is loopback: a new fetch asks again, and is refused.
    with pytest.raises(FetchError, match=re.escape("resolving to 127.0.0.1, a loopback address")):
        fetch_url(f"http://rebind.example:{server.port}/page", addresses=restricted(net))
    assert net.connects == [(PUBLIC, server.port)]


def test_every_hop_of_a_redirect_chain_resolves_and_is_checked(
    net: StandInNetwork, server: LoopbackServer
) -> None:
    net.name("a.example", [PUBLIC])
    net.name("b.example", ["169.254.169.254"])
    net.route(PUBLIC, server)
    server.redirect("/start", f"http://a.example:{server.port}/next")
    server.redirect("/next", "http://b.example/latest/meta-data/")
    with pytest.raises(FetchError, match=re.escape("169.254.169.254, a link-local address")):
        fetch_url(f"http://a.example:{server.port}/start", addresses=restricted(net))
    assert net.lookups_of("b.example") == 1
    assert all(host == PUBLIC for host, _ in net.connects)


# -- through an HTTP proxy ---------------------------------------------------------------------


@pytest.fixture
def proxy(net: StandInNetwork, monkeypatch: pytest.MonkeyPatch) -> Iterator[LoopbackServer]:
    """A loopback HTTP proxy standing in for every other address: it answers absolute-form
    requests itself (the path is the target's), forwarding nothing."""
    with LoopbackServer() as srv:
        srv.route("/page", Response.text("page served through the proxy"))
        monkeypatch.setenv("HTTP_PROXY", srv.base_url)
        yield srv


def test_through_a_proxy_the_target_is_resolved_and_checked_here(
    net: StandInNetwork, proxy: LoopbackServer
) -> None:
    net.name("public.example", [PUBLIC])
    net.name("intranet.example", ["10.1.2.3"])
    page = fetch_url("http://public.example/page", addresses=restricted(net))
    assert b"through the proxy" in page.body
    assert proxy.requests("/page")[0].headers["host"] == "public.example"
    for url in (
        "http://10.1.2.3/page",
        "http://169.254.169.254/page",
        "http://metadata.google.internal/page",
        "http://intranet.example/page",
        "http://127.0.0.1/page",
    ):
        with pytest.raises(FetchError, match="was not fetched"):
            fetch_url(url, addresses=restricted(net))
    assert proxy.hits("/page") == 1
    # A person's fetch goes through the proxy to wherever it says, unchecked.
    assert b"through the proxy" in fetch_url("http://10.1.2.3/page").body
    assert proxy.requests("/page")[1].headers["host"] == "10.1.2.3"


# -- sitemaps ----------------------------------------------------------------------------------


def test_a_sitemap_s_local_pages_and_child_sitemaps_are_skipped(
    net: StandInNetwork, server: LoopbackServer, other: LoopbackServer
) -> None:
    net.name("public.example", [PUBLIC])
    net.route(PUBLIC, server)
    base = f"http://public.example:{server.port}"
    locs = [
        f"{base}/page",
        f"http://127.0.0.1:{other.port}/secret",
        "http://169.254.169.254/latest/meta-data/",
        "http://[::1]/x",
    ]
    body = "".join(f"<url><loc>{u}</loc></url>" for u in locs)
    server.route(
        "/sitemap.xml",
        Response(body=f'<urlset xmlns="{NS}">{body}</urlset>'.encode(), content_type="text/xml"),
    )
    index = f"<sitemap><loc>http://127.0.0.1:{other.port}/sitemap.xml</loc></sitemap>"
    server.route(
        "/index.xml",
        Response(
            body=f'<sitemapindex xmlns="{NS}">{index}</sitemapindex>'.encode(),
            content_type="text/xml",
        ),
    )
    got = expand_sitemap(f"{base}/sitemap.xml", addresses=restricted(net))
    assert got.page_urls == [f"{base}/page"]
    assert len(got.errors) == 3 and all("page URL skipped" in e for e in got.errors)
    nested = expand_sitemap(f"{base}/index.xml", addresses=restricted(net))
    assert nested.page_urls == [] and "child sitemap skipped" in nested.errors[0]
    assert other.hits("/secret") == 0 and other.hits("/sitemap.xml") == 0
    # A person's sitemap keeps every page it lists.
    assert len(expand_sitemap(f"{base}/sitemap.xml").page_urls) == 4
