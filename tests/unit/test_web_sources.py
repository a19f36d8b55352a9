"""Fetching web pages and expanding sitemaps, against a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import gzip
import socket
import threading
import time
import zlib
from collections.abc import Iterable, Iterator
from email.utils import formatdate
from typing import Any

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.knowledge.pipeline.sources.sitemap import (
    SitemapLimits,
    expand_sitemap,
    parse_sitemap,
)
from app.knowledge.pipeline.sources.web import (
    FetchedPage,
    FetchError,
    FetchLimits,
    check_url,
    fetch_url,
    parse_content_type,
    parse_retry_after,
)
from app.knowledge.types import ErrorCode
from tests.httpserver import LoopbackServer, Response

NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
MB = 1024 * 1024

# ---------------------------------------------------------------- fixtures


@pytest.fixture(autouse=True)
def loopback_only(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Refuses (and records) any name lookup or connection that is not to 127.0.0.1."""
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(var, raising=False)
    attempts: list[str] = []
    real_getaddrinfo = socket.getaddrinfo
    real_connect = socket.socket.connect

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        if host not in ("127.0.0.1", b"127.0.0.1"):
            attempts.append(f"lookup {host!r}")
            raise socket.gaierror(socket.EAI_NONAME, f"test blocked lookup of {host!r}")
        return real_getaddrinfo(host, *args, **kwargs)

    def connect(self: socket.socket, address: Any) -> None:
        if isinstance(address, tuple) and address[0] != "127.0.0.1":
            attempts.append(f"connect {address!r}")
            raise ConnectionRefusedError(f"test blocked connection to {address!r}")
        real_connect(self, address)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    monkeypatch.setattr(socket.socket, "connect", connect)
    yield attempts
    assert attempts == [], "a test tried to reach something other than 127.0.0.1"


@pytest.fixture
def server() -> Iterator[LoopbackServer]:
    with LoopbackServer() as srv:
        yield srv


@pytest.fixture
def client() -> Iterator[httpx.Client]:
    with httpx.Client(trust_env=False) as c:
        yield c


def html(text: str = "<h1>hello</h1>") -> Response:
    return Response.text(text, content_type="text/html")


def urlset(*locs: str, ns: str | None = NS) -> bytes:
    xmlns = f' xmlns="{ns}"' if ns else ""
    entries = "".join(f"\n  <url>\n    <loc>\n      {loc}\n    </loc>\n  </url>" for loc in locs)
    return f'<?xml version="1.0" encoding="UTF-8"?>\n<urlset{xmlns}>{entries}\n</urlset>\n'.encode()


def sitemapindex(*locs: str) -> bytes:
    entries = "".join(f"<sitemap><loc>{loc}</loc></sitemap>" for loc in locs)
    return f'<sitemapindex xmlns="{NS}">{entries}</sitemapindex>'.encode()


def xml(body: bytes) -> Response:
    return Response(body=body, content_type="application/xml")


def fetch_error(**kwargs: Any) -> FetchError:
    url = kwargs.pop("url")
    with pytest.raises(FetchError) as info:
        fetch_url(url, **kwargs)
    return info.value


# ---------------------------------------------------------------- check_url


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("http://example.com/a?b=1", "http://example.com/a?b=1"),
        ("https://example.com/", "https://example.com/"),
        ("HTTPS://Example.COM/Path", "https://example.com/Path"),
        ("https://example.com/page#section-2", "https://example.com/page"),
        ("  http://example.com  ", "http://example.com/"),
        ("http://example.com:80/x", "http://example.com/x"),
        ("https://example.com:8443/x", "https://example.com:8443/x"),
        ("http://[::1]:8080/", "http://[::1]:8080/"),
    ],
)
def test_check_url_accepts_and_normalises(url: str, expected: str) -> None:
    assert check_url(url) == expected


@pytest.mark.parametrize(
    "url",
    [
        "file:///etc/passwd",
        "ftp://example.com/file.txt",
        "javascript:alert(1)",
        "data:text/html,<script>alert(1)</script>",
        "about:blank",
        "mailto:someone@example.com",
        "http://user:secret@example.com/",
        "https://user@example.com/",
        "",
        "   ",
        "example.com/page",
        "http:///path-only",
        "http://exa mple.com/",
        "http://example.com\\@evil.com/",
        "http://example.com:99999/",
        "http://example.com/" + "a" * 2048,
    ],
)
def test_check_url_refuses(url: str) -> None:
    with pytest.raises(FetchError) as info:
        check_url(url)
    assert info.value.code is ErrorCode.FETCH_FAILED
    assert not info.value.retryable


def test_refusal_names_the_allowed_schemes_and_hides_passwords() -> None:
    with pytest.raises(FetchError) as info:
        check_url("file:///etc/passwd")
    assert "http and https" in info.value.message
    with pytest.raises(FetchError) as info:
        check_url("https://alice:hunter2@example.com/")
    assert "hunter2" not in info.value.message


_URLISH = st.one_of(
    st.text(max_size=80),
    st.builds(
        "{}://{}{}".format,
        st.sampled_from(["http", "HTTPS", "file", "ftp", "javascript", ""]),
        st.text(alphabet="abcXYZ09.-_:@[]%", max_size=20),
        st.text(alphabet="/?#&=abc%\\ \t", max_size=20),
    ),
)


@settings(max_examples=300, deadline=None)
@given(_URLISH)
def test_check_url_raises_only_fetch_error_and_is_idempotent(url: str) -> None:
    try:
        normalised = check_url(url)
    except FetchError as exc:
        assert exc.code is ErrorCode.FETCH_FAILED
        return
    assert normalised.startswith(("http://", "https://"))
    assert "#" not in normalised and "@" not in normalised.split("/")[2]
    assert check_url(normalised) == normalised


# ---------------------------------------------------------------- fetch_url


def test_fetches_an_html_page(server: LoopbackServer, client: httpx.Client) -> None:
    server.route("/page", html("<h1>héllo</h1>"))
    page = fetch_url(server.url("/page"), client=client)
    assert page == FetchedPage(
        url=server.url("/page"),
        final_url=server.url("/page"),
        status=200,
        content_type="text/html",
        charset="utf-8",
        body="<h1>héllo</h1>".encode(),
    )
    sent = server.requests("/page")[0]
    assert sent.headers["user-agent"].startswith("Trove/")
    assert "text/html" in sent.headers["accept"]


def test_without_a_client_one_is_made_and_closed(server: LoopbackServer) -> None:
    server.route("/page", html())
    page = fetch_url(server.url("/page"), limits=FetchLimits(read_timeout=5))
    assert page.body == b"<h1>hello</h1>"


@pytest.mark.parametrize("status", [400, 403, 404, 410])
def test_client_errors_are_not_retryable(
    server: LoopbackServer, client: httpx.Client, status: int
) -> None:
    server.route("/gone", Response.text("no", status=status))
    error = fetch_error(url=server.url("/gone"), client=client)
    assert error.code is ErrorCode.FETCH_FAILED
    assert not error.retryable
    assert str(status) in error.message
    assert error.retry_after is None


def test_server_error_is_retryable(server: LoopbackServer, client: httpx.Client) -> None:
    server.route("/boom", Response.text("oops", status=500))
    error = fetch_error(url=server.url("/boom"), client=client)
    assert (error.code, error.retryable, error.retry_after) == (ErrorCode.FETCH_FAILED, True, None)
    assert "500" in error.message


def test_429_carries_retry_after_seconds(server: LoopbackServer, client: httpx.Client) -> None:
    server.route("/busy", Response.text("slow down", status=429, headers={"Retry-After": "7"}))
    error = fetch_error(url=server.url("/busy"), client=client)
    assert error.retryable
    assert error.retry_after == 7


def test_503_carries_retry_after_http_date(server: LoopbackServer, client: httpx.Client) -> None:
    later = formatdate(time.time() + 120, usegmt=True)
    server.route("/down", Response.text("later", status=503, headers={"Retry-After": later}))
    error = fetch_error(url=server.url("/down"), client=client)
    assert error.retryable
    assert error.retry_after is not None and 100 < error.retry_after <= 121


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        ("7", 7.0),
        (" 0 ", 0.0),
        ("1.5", 1.5),
        ("Wed, 21 Oct 2015 07:28:00 GMT", 30.0),
        ("Wed, 21 Oct 2015 07:27:00 GMT", 0.0),  # in the past: retry now
        ("soon", None),
        ("-5", None),
        (None, None),
    ],
)
def test_parse_retry_after(header: str | None, expected: float | None) -> None:
    now = 1445412450.0  # 2015-10-21 07:27:30 GMT
    assert parse_retry_after(header, now=now) == expected


def test_follows_a_redirect_chain(server: LoopbackServer, client: httpx.Client) -> None:
    server.redirect("/a", server.url("/b"), status=301)
    server.redirect("/b", "/c", status=307)  # relative Location
    server.redirect("/c", "final?x=1#frag", status=308)
    server.route("/final", html("done"))
    page = fetch_url(server.url("/a"), client=client)
    assert page.url == server.url("/a")
    assert page.final_url == server.url("/final?x=1")
    assert page.body == b"done"
    assert [server.hits(p) for p in ("/a", "/b", "/c", "/final")] == [1, 1, 1, 1]


def test_redirect_loop_fails(server: LoopbackServer, client: httpx.Client) -> None:
    server.redirect("/ping", "/pong")
    server.redirect("/pong", "/ping")
    error = fetch_error(url=server.url("/ping"), client=client, limits=FetchLimits(max_redirects=4))
    assert error.code is ErrorCode.FETCH_FAILED
    assert "too many redirects" in error.message
    assert not error.retryable
    assert server.hits("/ping") + server.hits("/pong") == 5  # the first request + 4 redirects


@pytest.mark.parametrize(
    "target",
    ["file:///etc/passwd", "ftp://127.0.0.1/x", "javascript:alert(1)", "http://u:p@127.0.0.1/"],
)
def test_redirect_to_a_refused_url_is_not_followed(
    server: LoopbackServer, client: httpx.Client, target: str
) -> None:
    server.redirect("/sneaky", target)
    error = fetch_error(url=server.url("/sneaky"), client=client)
    assert error.code is ErrorCode.FETCH_FAILED
    assert not error.retryable
    assert "redirected to a refused URL" in error.message


def _big_body(total: int = 50 * MB, chunk: int = 64 * 1024) -> Iterable[bytes]:
    block = b"x" * chunk
    for _ in range(total // chunk):
        yield block


def test_huge_streamed_body_stops_at_the_cap(server: LoopbackServer, client: httpx.Client) -> None:
    server.route("/huge", Response(body=_big_body, content_type="text/plain", chunked=True))
    error = fetch_error(url=server.url("/huge"), client=client, limits=FetchLimits(max_bytes=MB))
    assert error.code is ErrorCode.FILE_TOO_LARGE
    assert not error.retryable
    [exchange] = server.wait_for("/huge")
    # The client hung up after about 1 MB; the rest sat at most in socket buffers.
    assert exchange.client_disconnected
    assert exchange.bytes_sent < 25 * MB


def test_huge_declared_length_is_refused_before_reading(
    server: LoopbackServer, client: httpx.Client
) -> None:
    server.route(
        "/declared",
        Response(
            body=_big_body,
            content_type="text/html",
            headers={"Content-Length": str(50 * MB)},
        ),
    )
    error = fetch_error(
        url=server.url("/declared"), client=client, limits=FetchLimits(max_bytes=MB)
    )
    assert error.code is ErrorCode.FILE_TOO_LARGE
    [exchange] = server.wait_for("/declared")
    assert exchange.client_disconnected
    assert exchange.bytes_sent < 25 * MB


def test_body_exactly_at_the_cap_is_accepted(server: LoopbackServer, client: httpx.Client) -> None:
    server.route("/exact", Response(body=b"y" * 1000, content_type="text/plain"))
    page = fetch_url(server.url("/exact"), client=client, limits=FetchLimits(max_bytes=1000))
    assert len(page.body) == 1000
    error = fetch_error(url=server.url("/exact"), client=client, limits=FetchLimits(max_bytes=999))
    assert error.code is ErrorCode.FILE_TOO_LARGE


def test_slow_server_times_out_and_is_retryable(
    server: LoopbackServer, client: httpx.Client
) -> None:
    gate = threading.Event()
    server.route("/slow", Response(body=b"late", content_type="text/plain", gate=gate))
    started = time.monotonic()
    try:
        error = fetch_error(
            url=server.url("/slow"), client=client, limits=FetchLimits(read_timeout=0.3)
        )
    finally:
        gate.set()
    assert time.monotonic() - started < 5
    assert error.code is ErrorCode.FETCH_FAILED
    assert error.retryable
    assert "timeout" in error.message


def test_body_that_stalls_midway_times_out(server: LoopbackServer, client: httpx.Client) -> None:
    gate = threading.Event()

    def stalls() -> Iterable[bytes]:
        yield b"first part "
        gate.wait(30)
        yield b"never read"

    server.route("/stall", Response(body=stalls, content_type="text/plain", chunked=True))
    try:
        error = fetch_error(
            url=server.url("/stall"), client=client, limits=FetchLimits(read_timeout=0.3)
        )
    finally:
        gate.set()
    assert error.retryable
    assert "timeout" in error.message


def test_total_timeout_caps_a_trickling_body(server: LoopbackServer, client: httpx.Client) -> None:
    done = threading.Event()

    def trickle() -> Iterable[bytes]:
        # Each pause is shorter than the read timeout, so only the wall-clock cap can stop it.
        while not done.wait(0.02):
            yield b"."

    server.route("/trickle", Response(body=trickle, content_type="text/plain", chunked=True))
    started = time.monotonic()
    try:
        error = fetch_error(
            url=server.url("/trickle"),
            client=client,
            limits=FetchLimits(read_timeout=5, total_timeout=0.4),
        )
    finally:
        done.set()
    assert 0.4 <= time.monotonic() - started < 5
    assert error.retryable
    assert "longer than 0.4 s" in error.message


def test_connection_refused_is_retryable(client: httpx.Client) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    error = fetch_error(url=f"http://127.0.0.1:{port}/", client=client)
    assert error.code is ErrorCode.FETCH_FAILED
    assert error.retryable
    assert "could not connect" in error.message


@pytest.mark.parametrize(
    "content_type", ["image/png", "video/mp4", "application/octet-stream", "application/zip"]
)
def test_unsupported_content_type(
    server: LoopbackServer, client: httpx.Client, content_type: str
) -> None:
    server.route("/file", Response(body=b"\x89PNG\r\n\x1a\n....", content_type=content_type))
    error = fetch_error(url=server.url("/file"), client=client)
    assert error.code is ErrorCode.UNSUPPORTED_FILE_TYPE
    assert content_type in error.message
    assert not error.retryable


@pytest.mark.parametrize(
    "content_type",
    [
        "text/html",
        "application/xhtml+xml",
        "text/plain",
        "text/markdown",
        "application/xml",
        "text/xml",
        "application/json",
        "application/pdf",
        "TEXT/HTML; charset=UTF-8",
    ],
)
def test_accepted_content_types(
    server: LoopbackServer, client: httpx.Client, content_type: str
) -> None:
    server.route("/doc", Response(body=b"content", content_type=content_type))
    page = fetch_url(server.url("/doc"), client=client)
    assert page.content_type == content_type.split(";")[0].lower()


def test_body_without_content_length(server: LoopbackServer, client: httpx.Client) -> None:
    body = b"line\n" * 10_000
    server.route("/eof", Response(body=body, content_type="text/plain", content_length=False))
    page = fetch_url(server.url("/eof"), client=client)
    assert page.body == body
    assert "content-length" not in {k.lower() for k in server.requests("/eof")[0].headers}


def test_chunked_body(server: LoopbackServer, client: httpx.Client) -> None:
    server.route(
        "/chunks",
        Response(
            body=lambda: iter([b"a" * 10, b"b" * 20, b"c"]), content_type="text/plain", chunked=True
        ),
    )
    assert fetch_url(server.url("/chunks"), client=client).body == b"a" * 10 + b"b" * 20 + b"c"


def test_gzip_content_encoding_is_decoded(server: LoopbackServer, client: httpx.Client) -> None:
    text = b"<p>compressed</p>" * 100
    server.route(
        "/gz",
        Response(
            body=gzip.compress(text),
            content_type="text/html",
            headers={"Content-Encoding": "gzip"},
        ),
    )
    assert fetch_url(server.url("/gz"), client=client).body == text


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        ("text/html; charset=utf-8", ("text/html", "utf-8")),
        ('text/html; Charset="ISO-8859-1"', ("text/html", "iso-8859-1")),
        ("Text/Plain;charset=windows-1252;format=flowed", ("text/plain", "windows-1252")),
        ("text/plain; format=flowed", ("text/plain", None)),
        ("text/html; charset=no-such-codec", ("text/html", None)),
        ("text/html; charset=", ("text/html", None)),
        ("application/json", ("application/json", None)),
        ("", ("", None)),
        (None, ("", None)),
    ],
)
def test_parse_content_type(header: str | None, expected: tuple[str, str | None]) -> None:
    assert parse_content_type(header) == expected


def test_page_charset_comes_from_the_header(server: LoopbackServer, client: httpx.Client) -> None:
    server.route(
        "/latin",
        Response(body="café".encode("latin-1"), content_type='text/html; charset="ISO-8859-1"'),
    )
    page = fetch_url(server.url("/latin"), client=client)
    assert page.charset == "iso-8859-1"
    assert page.body.decode(page.charset) == "café"


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (b"%PDF-1.7\n...", "application/pdf"),
        (b"<!DOCTYPE html><html></html>", "text/html"),
        (b"<?xml version='1.0'?><a/>", "application/xml"),
        ("plain words, ünïcode".encode(), "text/plain"),
    ],
)
def test_missing_content_type_is_sniffed(
    server: LoopbackServer, client: httpx.Client, body: bytes, expected: str
) -> None:
    server.route("/untyped", Response(body=body))
    assert fetch_url(server.url("/untyped"), client=client).content_type == expected


def test_missing_content_type_with_binary_body(
    server: LoopbackServer, client: httpx.Client
) -> None:
    server.route("/blob", Response(body=bytes(range(256))))
    assert (
        fetch_error(url=server.url("/blob"), client=client).code is ErrorCode.UNSUPPORTED_FILE_TYPE
    )


def test_unexpected_3xx_without_location(server: LoopbackServer, client: httpx.Client) -> None:
    server.route("/choices", Response(status=300, body=b"pick", content_type="text/plain"))
    error = fetch_error(url=server.url("/choices"), client=client)
    assert error.code is ErrorCode.FETCH_FAILED
    assert "300" in error.message


def test_refused_url_is_never_requested(client: httpx.Client) -> None:
    error = fetch_error(url="file:///etc/passwd", client=client)
    assert error.code is ErrorCode.FETCH_FAILED


def test_limits_are_validated() -> None:
    with pytest.raises(ValueError):
        FetchLimits(max_bytes=0)
    with pytest.raises(ValueError):
        FetchLimits(read_timeout=0)
    with pytest.raises(ValueError):
        SitemapLimits(max_pages=0)


# ---------------------------------------------------------------- parse_sitemap


def test_parse_urlset_with_and_without_namespace() -> None:
    for ns in (NS, None):
        pages, children = parse_sitemap(
            urlset("https://a.test/1", "/relative", ns=ns), "https://a.test/sitemap.xml"
        )
        assert pages == ["https://a.test/1", "https://a.test/relative"]
        assert children == []


def test_parse_ignores_extension_locs_and_empty_entries() -> None:
    body = f"""<urlset xmlns="{NS}" xmlns:image="http://www.google.com/schemas/sitemap-image/1.1">
      <url><loc>https://a.test/p</loc>
        <image:image><image:loc>https://a.test/img.png</image:loc></image:image></url>
      <url><lastmod>2024-01-01</lastmod></url>
      <url><loc>   </loc></url>
      <!-- a comment -->
    </urlset>""".encode()
    assert parse_sitemap(body, "https://a.test/") == (["https://a.test/p"], [])


def test_parse_sitemapindex() -> None:
    body = b"\xef\xbb\xbf  \n" + sitemapindex("https://a.test/s1.xml", "https://a.test/s2.xml")
    assert parse_sitemap(body, "https://a.test/") == (
        [],
        ["https://a.test/s1.xml", "https://a.test/s2.xml"],
    )


def test_parse_gzip_and_plain_text() -> None:
    assert parse_sitemap(gzip.compress(urlset("https://a.test/z")), "https://a.test/") == (
        ["https://a.test/z"],
        [],
    )
    two_members = gzip.compress(b"https://a.test/1\n") + gzip.compress(b"https://a.test/2\n")
    assert parse_sitemap(two_members, "https://a.test/")[0] == [
        "https://a.test/1",
        "https://a.test/2",
    ]
    text = b"\xef\xbb\xbfhttps://a.test/one\r\n\n  https://a.test/two  \n# comment\n"
    assert parse_sitemap(text, "https://a.test/") == (
        ["https://a.test/one", "https://a.test/two"],
        [],
    )


def test_parse_feeds() -> None:
    rss = b"""<?xml version="1.0"?><rss version="2.0"><channel><title>t</title>
      <item><link>https://a.test/post-1</link></item><item><title>no link</title></item>
    </channel></rss>"""
    assert parse_sitemap(rss, "https://a.test/") == (["https://a.test/post-1"], [])
    atom = b"""<feed xmlns="http://www.w3.org/2005/Atom"><entry>
      <link rel="self" href="https://a.test/self"/><link href="https://a.test/post-2"/>
    </entry></feed>"""
    assert parse_sitemap(atom, "https://a.test/") == (["https://a.test/post-2"], [])


BILLION_LAUGHS = b"""<?xml version="1.0"?>
<!DOCTYPE lolz [
 <!ENTITY lol "lol">
 <!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
 <!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
 <!ENTITY lol5 "&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;">
 <!ENTITY lol6 "&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;">
 <!ENTITY lol7 "&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;">
 <!ENTITY lol8 "&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;">
 <!ENTITY lol9 "&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;">
]>
<urlset><url><loc>https://a.test/&lol9;</loc></url></urlset>"""

XXE = b"""<?xml version="1.0"?>
<!DOCTYPE urlset [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>
<urlset><url><loc>https://a.test/&xxe;</loc></url></urlset>"""


@pytest.mark.parametrize(
    "body",
    [
        BILLION_LAUGHS,
        XXE,
        b'<!DOCTYPE urlset SYSTEM "http://a.test/sitemap.dtd"><urlset/>',
    ],
)
def test_parse_refuses_dtds_and_entities(body: bytes) -> None:
    with pytest.raises(FetchError) as info:
        parse_sitemap(body, "https://a.test/")
    assert info.value.code is ErrorCode.FETCH_FAILED
    assert "DTD" in info.value.message


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        (b"<urlset><url><loc>https://a.test/</loc></url>", "not valid XML"),
        (b"<urlset><url></urlset>", "not valid XML"),
        (b"<?xml version='1.0'?><html><body/></html>", "not a sitemap"),
        (b"<!DOCTYPE html>\n<html><body>hi</body></html>", "HTML page"),
        (b"\x1f\x8bnot really gzip", "gzip"),
        (gzip.compress(urlset("https://a.test/"))[:-12], "gzip"),
    ],
)
def test_parse_refuses_broken_documents(body: bytes, fragment: str) -> None:
    with pytest.raises(FetchError) as info:
        parse_sitemap(body, "https://a.test/")
    assert info.value.code is ErrorCode.FETCH_FAILED
    assert fragment in info.value.message


def test_parse_refuses_a_gzip_bomb() -> None:
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)
    zeros = bytes(MB)
    bomb = b"".join(packer.compress(zeros) for _ in range(51)) + packer.flush()
    assert len(bomb) < MB
    with pytest.raises(FetchError) as info:
        parse_sitemap(bomb, "https://a.test/")
    assert info.value.code is ErrorCode.FILE_TOO_LARGE


@settings(max_examples=200, deadline=None)
@given(
    st.one_of(
        st.binary(max_size=200),
        st.builds(lambda b: b"\x1f\x8b" + b, st.binary(max_size=50)),
        st.builds(lambda t: t.encode(), st.text(alphabet="<>/?!=\"' &;xmlurlsetloc", max_size=80)),
    )
)
def test_parse_sitemap_raises_only_fetch_error(body: bytes) -> None:
    try:
        pages, children = parse_sitemap(body, "https://a.test/")
    except FetchError:
        return
    assert all(isinstance(u, str) for u in pages + children)


def test_parse_empty_document() -> None:
    assert parse_sitemap(b"  \n", "https://a.test/") == ([], [])


# ---------------------------------------------------------------- expand_sitemap


def test_expand_urlset_over_http(server: LoopbackServer) -> None:
    server.route(
        "/sitemap.xml",
        xml(urlset(server.url("/a"), server.url("/b#top"), server.url("/a"), "/c")),
    )
    result = expand_sitemap(server.url("/sitemap.xml"))
    assert result.page_urls == [server.url("/a"), server.url("/b"), server.url("/c")]
    assert (result.sitemaps_read, result.truncated, result.errors) == (1, False, [])
    assert server.hits("/a") == 0  # pages are listed, not fetched


def test_expand_index_with_two_children(server: LoopbackServer) -> None:
    server.route("/index.xml", xml(sitemapindex(server.url("/s1.xml"), "/s2.xml")))
    server.route("/s1.xml", xml(urlset(server.url("/1"), server.url("/2"))))
    server.route("/s2.xml", xml(urlset(server.url("/2"), server.url("/3"))))
    result = expand_sitemap(server.url("/index.xml"))
    assert result.page_urls == [server.url(p) for p in ("/1", "/2", "/3")]
    assert result.sitemaps_read == 3
    assert not result.truncated and result.errors == []


def test_expand_gzip_sitemap_served_as_gzip_file(server: LoopbackServer) -> None:
    server.route(
        "/sitemap.xml.gz",
        Response(body=gzip.compress(urlset(server.url("/g"))), content_type="application/x-gzip"),
    )
    assert expand_sitemap(server.url("/sitemap.xml.gz")).page_urls == [server.url("/g")]


def test_expand_plain_text_sitemap(server: LoopbackServer) -> None:
    lines = f"{server.url('/t1')}\n{server.url('/t2')}\nmailto:x@a.test\n"
    server.route("/sitemap.txt", Response.text(lines))
    result = expand_sitemap(server.url("/sitemap.txt"))
    assert result.page_urls == [server.url("/t1"), server.url("/t2")]
    assert len(result.errors) == 1 and "mailto" in result.errors[0]


def test_expand_nested_indexes_stop_at_max_depth(server: LoopbackServer) -> None:
    for level in range(4):
        server.route(f"/i{level}.xml", xml(sitemapindex(f"/i{level + 1}.xml")))
    server.route("/i4.xml", xml(urlset(server.url("/deep"))))
    shallow = expand_sitemap(server.url("/i0.xml"), limits=SitemapLimits(max_depth=2))
    assert shallow.page_urls == []
    assert shallow.truncated
    assert shallow.sitemaps_read == 3  # i0 (the root), i1, i2
    assert server.hits("/i3.xml") == 0
    assert "deeper than 2" in shallow.errors[0]
    deep = expand_sitemap(server.url("/i0.xml"), limits=SitemapLimits(max_depth=4))
    assert deep.page_urls == [server.url("/deep")]
    assert not deep.truncated


def test_expand_stops_at_max_pages(server: LoopbackServer) -> None:
    server.route("/index.xml", xml(sitemapindex("/s1.xml", "/s2.xml")))
    server.route("/s1.xml", xml(urlset(*(server.url(f"/p{i}") for i in range(8)))))
    server.route("/s2.xml", xml(urlset(server.url("/later"))))
    result = expand_sitemap(server.url("/index.xml"), limits=SitemapLimits(max_pages=5))
    assert result.page_urls == [server.url(f"/p{i}") for i in range(5)]
    assert result.truncated


def test_expand_exactly_max_pages_is_not_truncated(server: LoopbackServer) -> None:
    server.route("/s.xml", xml(urlset(server.url("/1"), server.url("/2"), server.url("/1"))))
    result = expand_sitemap(server.url("/s.xml"), limits=SitemapLimits(max_pages=2))
    assert result.page_urls == [server.url("/1"), server.url("/2")]
    assert not result.truncated


def test_expand_stops_at_max_sitemaps(server: LoopbackServer) -> None:
    children = [f"/s{i}.xml" for i in range(10)]
    server.route("/index.xml", xml(sitemapindex(*children)))
    for i, child in enumerate(children):
        server.route(child, xml(urlset(server.url(f"/p{i}"))))
    result = expand_sitemap(server.url("/index.xml"), limits=SitemapLimits(max_sitemaps=4))
    assert result.sitemaps_read == 4
    assert result.page_urls == [server.url(f"/p{i}") for i in range(3)]
    assert result.truncated
    assert sum(server.hits(c) for c in children) == 3


def test_expand_records_broken_children_and_goes_on(server: LoopbackServer) -> None:
    server.route(
        "/index.xml",
        xml(
            sitemapindex(
                "/missing.xml", "/broken.xml", "/good.xml", "/bomb.xml", "ftp://a.test/s.xml"
            )
        ),
    )
    server.route("/broken.xml", xml(b"<urlset><url><loc>oops"))
    server.route("/good.xml", xml(urlset(server.url("/ok"))))
    server.route("/bomb.xml", xml(BILLION_LAUGHS))
    result = expand_sitemap(server.url("/index.xml"))
    assert result.page_urls == [server.url("/ok")]
    assert result.sitemaps_read == 2
    assert not result.truncated
    joined = "\n".join(result.errors)
    assert len(result.errors) == 4
    assert "ftp:" in joined and "404" in joined and "not valid XML" in joined and "DTD" in joined


def test_expand_survives_index_cycles(server: LoopbackServer) -> None:
    server.route("/a.xml", xml(sitemapindex("/a.xml", "/b.xml")))
    server.route("/b.xml", xml(sitemapindex("/a.xml", "/c.xml")))
    server.route("/c.xml", xml(urlset(server.url("/page"))))
    result = expand_sitemap(server.url("/a.xml"))
    assert result.page_urls == [server.url("/page")]
    assert [server.hits(p) for p in ("/a.xml", "/b.xml", "/c.xml")] == [1, 1, 1]


@pytest.mark.parametrize(
    ("route", "code"),
    [
        (Response.text("nope", status=404), ErrorCode.FETCH_FAILED),
        (xml(BILLION_LAUGHS), ErrorCode.FETCH_FAILED),
        (xml(b"<urlset>"), ErrorCode.FETCH_FAILED),
        (Response(body=b"\x89PNG", content_type="image/png"), ErrorCode.UNSUPPORTED_FILE_TYPE),
    ],
)
def test_expand_raises_when_the_root_fails(
    server: LoopbackServer, route: Response, code: ErrorCode
) -> None:
    server.route("/root.xml", route)
    with pytest.raises(FetchError) as info:
        expand_sitemap(server.url("/root.xml"))
    assert info.value.code is code


def test_expand_refuses_a_bad_root_url() -> None:
    with pytest.raises(FetchError):
        expand_sitemap("file:///etc/sitemap.xml", fetch=lambda url: pytest.fail(url))


def test_expand_follows_redirects_and_resolves_against_the_final_url(
    server: LoopbackServer,
) -> None:
    server.redirect("/sitemap.xml", "/moved/sitemap.xml")
    server.route("/moved/sitemap.xml", xml(urlset("page")))
    result = expand_sitemap(server.url("/sitemap.xml"))
    assert result.page_urls == [server.url("/moved/page")]


class FakeWeb:
    """A fetch callable serving canned sitemaps for any host, so nothing leaves the machine."""

    def __init__(self, documents: dict[str, bytes]) -> None:
        self.documents = documents
        self.fetched: list[str] = []
        self.lock = threading.Lock()

    def __call__(self, url: str) -> FetchedPage:
        with self.lock:
            self.fetched.append(url)
        if url not in self.documents:
            raise FetchError(ErrorCode.FETCH_FAILED, f"HTTP 404 Not Found for {url}")
        return FetchedPage(url, url, 200, "application/xml", None, self.documents[url])


def test_children_on_other_hosts_go_through_the_given_fetch(
    server: LoopbackServer, loopback_only: list[str]
) -> None:
    web = FakeWeb(
        {
            "https://cdn.example.com/s1.xml": urlset("https://www.example.com/a"),
            "https://other.example.org/s2.xml": urlset("https://www.example.com/b"),
        }
    )
    root = server.url("/index.xml")
    server.route(
        "/index.xml",
        xml(sitemapindex("https://cdn.example.com/s1.xml", "https://other.example.org/s2.xml")),
    )

    def fetch(url: str) -> FetchedPage:
        return fetch_url(url) if url == root else web(url)

    result = expand_sitemap(root, fetch=fetch)
    assert result.page_urls == ["https://www.example.com/a", "https://www.example.com/b"]
    assert sorted(web.fetched) == [
        "https://cdn.example.com/s1.xml",
        "https://other.example.org/s2.xml",
    ]
    assert loopback_only == []


def test_child_fetches_are_concurrent_but_bounded() -> None:
    children = [f"https://a.test/s{i}.xml" for i in range(6)]
    documents = {"https://a.test/index.xml": sitemapindex(*children)}
    documents.update({c: urlset(f"https://a.test/p{i}") for i, c in enumerate(children)})
    web = FakeWeb(documents)
    lock = threading.Lock()
    in_flight = 0
    peak = 0
    pair_seen = threading.Event()

    def fetch(url: str) -> FetchedPage:
        nonlocal in_flight, peak
        if url.endswith("index.xml"):
            return web(url)
        with lock:
            in_flight += 1
            peak = max(peak, in_flight)
            if in_flight >= 2:
                pair_seen.set()
        pair_seen.wait(5)  # hold the first worker until a second one runs alongside it
        with lock:
            in_flight -= 1
        return web(url)

    result = expand_sitemap(
        "https://a.test/index.xml", fetch=fetch, limits=SitemapLimits(concurrency=2)
    )
    assert peak == 2
    # Listing order, whatever order the workers finished in.
    assert result.page_urls == [f"https://a.test/p{i}" for i in range(6)]


def test_errors_list_is_capped() -> None:
    junk = "\n".join(f"not a url {i}" for i in range(500)).encode()
    web = FakeWeb({"https://a.test/s.txt": junk})
    result = expand_sitemap("https://a.test/s.txt", fetch=web)
    assert result.page_urls == []
    assert len(result.errors) == 101
    assert result.errors[-1] == "... and 400 more errors"
