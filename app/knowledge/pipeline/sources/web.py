"""Fetch one web page safely: http/https only, every redirect re-checked, size and time capped.

`fetch_url` is synchronous because it runs in job worker threads. The exception it lets
escape is `FetchError`, whose `retryable` flag tells the job runner whether another attempt
could succeed (429, 5xx, timeouts, dropped connections) or not (4xx, refused URLs, too large);
and `FetchCancelled` when the caller's cancel check asked it to stop.

`total_timeout` is one wall-clock deadline for the whole fetch, redirects, headers and body
included: the clients `fetch_url` and `make_client` build put every socket operation under
it (see `deadline.py`). An injected client of the caller's own is checked between
operations only (per hop and per body chunk).

`addresses` says which hosts the fetch may connect to (address_policy.py): a person's own
URL may reach anything; one an agent added, or one from an imported base, only public
internet addresses unless the person allowed more. It holds for every connection of the
fetch, redirects included, on the clients built here (`make_client`).
"""

from __future__ import annotations

import codecs
import email.utils
import re
import ssl
import time
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from urllib.parse import urljoin, urlsplit, urlunsplit

import httpx

from app.knowledge.pipeline.sources.address_policy import ANY_ADDRESS, AddressPolicy, AddressRefused
from app.knowledge.types import ErrorCode
from app.providers.deadline import DeadlineClient, fetch_scope
from app.providers.deadline import (
    FetchCancelled as FetchCancelled,  # re-exported: callers of fetch_url catch it from here
)

ALLOWED_SCHEMES = ("http", "https")
MAX_URL_LENGTH = 2048
DEFAULT_USER_AGENT = "Trove/0.1 (+knowledge base)"

# What the readers can turn into text. PDFs are let through; the caller picks the reader.
ACCEPTED_CONTENT_TYPES: frozenset[str] = frozenset(
    {
        "text/html",
        "application/xhtml+xml",
        "text/plain",
        "text/markdown",
        "application/xml",
        "text/xml",
        "application/json",
        "application/pdf",
    }
)

_REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
_DEFAULT_PORTS = {"http": 80, "https": 443}
# Whitespace, control characters and backslashes are where URL parsers disagree with each
# other (and with browsers) about the host; refusing them closes that gap.
_UNSAFE_URL_CHARS = re.compile(r"[\x00-\x20\x7f\\]")
_RETRY_AFTER_SECONDS = re.compile(r"\d+(\.\d+)?")
_ACCEPT_HEADER = (
    "text/html,application/xhtml+xml,application/xml;q=0.9,text/plain;q=0.8,"
    "text/markdown;q=0.8,application/json;q=0.8,application/pdf;q=0.8,*/*;q=0.1"
)


class FetchError(Exception):
    """Why a fetch failed, with the item's error code and whether a retry may help."""

    def __init__(
        self,
        code: ErrorCode,
        message: str,
        *,
        retryable: bool = False,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.retryable = retryable
        self.retry_after = retry_after

    def __repr__(self) -> str:
        return (
            f"FetchError({self.code!s}, {self.message!r}, retryable={self.retryable}, "
            f"retry_after={self.retry_after})"
        )


@dataclass(frozen=True)
class FetchLimits:
    max_bytes: int = 20 * 1024 * 1024
    max_redirects: int = 5
    connect_timeout: float = 10.0
    read_timeout: float = 30.0
    total_timeout: float = 60.0

    def __post_init__(self) -> None:
        if self.max_bytes <= 0 or self.max_redirects < 0:
            raise ValueError("max_bytes must be positive and max_redirects not negative")
        if min(self.connect_timeout, self.read_timeout, self.total_timeout) <= 0:
            raise ValueError("timeouts must be positive")


@dataclass(frozen=True)
class FetchedPage:
    url: str
    final_url: str
    status: int
    content_type: str
    charset: str | None
    body: bytes
    # The validators a later conditional fetch sends back (scheduled refresh).
    etag: str | None = None
    last_modified: str | None = None

    @property
    def not_modified(self) -> bool:
        """A conditional fetch's answer that the page is as it was (HTTP 304, no body)."""
        return self.status == 304


def _failed(message: str, *, retryable: bool = False) -> FetchError:
    return FetchError(ErrorCode.FETCH_FAILED, message, retryable=retryable)


def _shorten(url: str, limit: int = 200) -> str:
    return url if len(url) <= limit else url[: limit - 3] + "..."


def check_url(url: str) -> str:
    """The normalised URL (lowercase scheme and host, no fragment, no default port).

    Raises FetchError(FETCH_FAILED) for anything but an http/https URL with a host, for URLs
    carrying credentials, and for empty or over-long input.
    """
    allowed = " and ".join(ALLOWED_SCHEMES)
    text = url.strip() if isinstance(url, str) else ""
    if not text:
        raise _failed(f"empty URL; only {allowed} URLs are allowed")
    if len(text) > MAX_URL_LENGTH:
        raise _failed(f"URL is {len(text)} characters long; the limit is {MAX_URL_LENGTH}")
    if _UNSAFE_URL_CHARS.search(text):
        raise _failed(f"URL contains spaces, control characters or backslashes: {_shorten(text)!r}")
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError as exc:
        raise _failed(f"malformed URL {_shorten(text)!r}: {exc}") from exc
    scheme = parts.scheme.lower()
    if scheme not in ALLOWED_SCHEMES:
        shown = f"'{scheme}:' URLs are" if scheme else "URLs without a scheme are"
        raise _failed(f"{shown} not allowed; only {allowed} URLs are allowed")
    if parts.username is not None or parts.password is not None or "@" in parts.netloc:
        # The URL itself is left out of the message: it holds a password.
        raise _failed("URLs with a user name or password are not allowed")
    host = parts.hostname
    if not host:
        raise _failed(f"URL has no host: {_shorten(text)!r}")
    netloc = f"[{host}]" if ":" in host else host
    if port is not None and port != _DEFAULT_PORTS[scheme]:
        netloc = f"{netloc}:{port}"
    return urlunsplit((scheme, netloc, parts.path or "/", parts.query, ""))


def parse_retry_after(value: str | None, *, now: float | None = None) -> float | None:
    """Seconds to wait from a Retry-After header (delta-seconds or an HTTP date), or None."""
    if value is None:
        return None
    value = value.strip()
    if _RETRY_AFTER_SECONDS.fullmatch(value):
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:  # RFC 9110 dates are GMT; a zone-less parse means the same
        when = when.replace(tzinfo=UTC)
    current = datetime.now(UTC).timestamp() if now is None else now
    return max(0.0, when.timestamp() - current)


def parse_content_type(header: str | None) -> tuple[str, str | None]:
    """(lowercase mime type without parameters, charset or None) of a Content-Type header.

    A charset Python cannot decode is reported as None, so callers can pass it to
    bytes.decode without guarding against LookupError.
    """
    if not header:
        return "", None
    mime, _, params = header.partition(";")
    charset: str | None = None
    for param in params.split(";"):
        key, _, value = param.partition("=")
        if key.strip().lower() == "charset":
            candidate = value.strip().strip("\"'").strip().lower()
            try:
                codecs.lookup(candidate)
            except LookupError:
                candidate = ""
            charset = candidate or None
    return mime.strip().lower(), charset


def _sniff(body: bytes) -> str | None:
    """A content type for a response that declared none, from its first bytes."""
    head = body[:1024].lstrip()
    if head.startswith(b"%PDF-"):
        return "application/pdf"
    lowered = head[:64].lower()
    if lowered.startswith((b"<!doctype html", b"<html")):
        return "text/html"
    if lowered.startswith(b"<?xml"):
        return "application/xml"
    if b"\x00" in head:
        return None
    try:
        # final=False: the 1 KiB window may end inside a multi-byte character.
        codecs.getincrementaldecoder("utf-8")().decode(head, final=False)
    except UnicodeDecodeError:
        return None
    return "text/plain"


def _status_error(response: httpx.Response, url: str) -> FetchError:
    status = response.status_code
    reason = response.reason_phrase or httpx.codes.get_reason_phrase(status)
    message = f"HTTP {status} {reason} for {_shorten(url)}".replace("  ", " ")
    # 408 is a 4xx that says "try again", like 429 and the 5xx family.
    retryable = status in (408, 429) or status >= 500
    retry_after = parse_retry_after(response.headers.get("Retry-After")) if retryable else None
    return FetchError(ErrorCode.FETCH_FAILED, message, retryable=retryable, retry_after=retry_after)


def _is_certificate_error(exc: BaseException) -> bool:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, ssl.SSLCertVerificationError):
            return True
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return False


def _transport_error(
    exc: httpx.HTTPError, url: str, limits: FetchLimits, deadline: float
) -> FetchError:
    where = _shorten(url)
    if isinstance(exc, httpx.TimeoutException) and time.monotonic() >= deadline:
        # The deadline backend cut the wait short: the whole fetch is what ran too long.
        return _total_timeout(url, limits)
    if isinstance(exc, httpx.ConnectTimeout | httpx.PoolTimeout):
        return _failed(
            f"could not connect to {where} within {limits.connect_timeout:g} s", retryable=True
        )
    if isinstance(exc, httpx.TimeoutException):
        return _failed(
            f"{where} sent no data for {limits.read_timeout:g} s (read timeout)", retryable=True
        )
    if _is_certificate_error(exc):
        # A bad certificate does not fix itself between attempts.
        return _failed(f"TLS certificate of {where} could not be verified: {exc}")
    if isinstance(exc, httpx.ConnectError):
        return _failed(f"could not connect to {where}: {exc}", retryable=True)
    if isinstance(exc, httpx.DecodingError):
        return _failed(f"{where} sent a body that could not be decoded: {exc}")
    if isinstance(exc, httpx.TransportError):
        return _failed(f"connection to {where} failed: {exc or type(exc).__name__}", retryable=True)
    return _failed(f"request to {where} failed: {exc or type(exc).__name__}")


def _refused(url: str, current: str, exc: AddressRefused, *, redirected: bool) -> FetchError:
    where = (
        f"{_shorten(url)} redirected to {_shorten(current)}, which" if redirected else _shorten(url)
    )
    return _failed(
        f"{where} was not fetched: {exc} (web pages that agents add, and those of imported "
        "bases, may reach only public internet addresses unless the person allows it)"
    )


def _too_large(url: str, limits: FetchLimits) -> FetchError:
    megabytes = limits.max_bytes / (1024 * 1024)
    return FetchError(
        ErrorCode.FILE_TOO_LARGE,
        f"{_shorten(url)} is larger than the {megabytes:.3g} MB limit",
    )


def _total_timeout(url: str, limits: FetchLimits) -> FetchError:
    return _failed(
        f"fetching {_shorten(url)} took longer than {limits.total_timeout:g} s", retryable=True
    )


def _read_body(response: httpx.Response, url: str, limits: FetchLimits, deadline: float) -> bytes:
    declared = response.headers.get("Content-Length", "")
    if declared.isdigit() and int(declared) > limits.max_bytes:
        raise _too_large(url, limits)
    chunks: list[bytes] = []
    size = 0
    # Counting decoded bytes caps memory even for a compressed body that inflates hugely;
    # Content-Length alone is not trusted because a server may send more than it declared.
    for chunk in response.iter_bytes():
        size += len(chunk)
        if size > limits.max_bytes:
            raise _too_large(url, limits)
        chunks.append(chunk)
        if time.monotonic() > deadline:
            raise _total_timeout(url, limits)
    return b"".join(chunks)


def _hop_timeout(limits: FetchLimits, deadline: float, url: str) -> httpx.Timeout:
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise _total_timeout(url, limits)
    read = min(limits.read_timeout, remaining)
    connect = min(limits.connect_timeout, remaining)
    return httpx.Timeout(connect=connect, read=read, write=read, pool=connect)


def fetch_url(
    url: str,
    *,
    client: httpx.Client | None = None,
    limits: FetchLimits = FetchLimits(),
    user_agent: str = DEFAULT_USER_AGENT,
    accept: Collection[str] = ACCEPTED_CONTENT_TYPES,
    cancelled: Callable[[], bool] | None = None,
    validators: Mapping[str, str] | None = None,
    addresses: AddressPolicy = ANY_ADDRESS,
) -> FetchedPage:
    """GET url, following redirects by hand so that every hop passes `check_url`.

    `validators` (If-None-Match / If-Modified-Since) make it a conditional fetch: a 304
    answer comes back as a page whose `not_modified` is true and whose body is empty.

    `limits` applies to an injected client too (timeouts are set per request). `accept` is
    the set of mime types let through; a response that declares no type is sniffed.
    `cancelled` is polled while the fetch waits on the network (a few times a second); once
    it returns true the fetch ends with FetchCancelled.

    `addresses` refuses hosts before any connection is made; a restricted policy needs a
    client from `make_client` (another client's connections could not be checked).
    """
    current = check_url(url)
    if (
        not addresses.allow_private
        and client is not None
        and not isinstance(client, DeadlineClient)
    ):
        raise ValueError("a restricted address policy needs a client from make_client")
    deadline = time.monotonic() + limits.total_timeout
    own_client = client is None
    active = client if client is not None else make_client(limits)
    guard = None if addresses.allow_private else addresses.guard
    try:
        with fetch_scope(deadline, cancelled, guard):
            return _follow(
                active, url, current, limits, deadline, user_agent, accept, validators or {}
            )
    finally:
        if own_client:
            active.close()


def _follow(
    active: httpx.Client,
    url: str,
    current: str,
    limits: FetchLimits,
    deadline: float,
    user_agent: str,
    accept: Collection[str],
    validators: Mapping[str, str],
) -> FetchedPage:
    """Send, follow redirects, and read the final page."""
    for hop in range(limits.max_redirects + 1):
        try:
            response = _send(active, current, limits, deadline, user_agent, validators)
        except AddressRefused as exc:
            raise _refused(url, current, exc, redirected=hop > 0) from None
        try:
            location = response.headers.get("Location")
            if response.status_code in _REDIRECT_STATUSES and location is not None:
                try:
                    current = check_url(urljoin(current, location))
                except FetchError as exc:
                    raise _failed(
                        f"{_shorten(current)} redirected to a refused URL: {exc.message}"
                    ) from None
                continue
            if response.status_code == 304 and validators:
                return _unchanged(response, url, current)
            return _page(response, url, current, limits, deadline, accept)
        finally:
            response.close()
    raise _failed(f"too many redirects (more than {limits.max_redirects}) fetching {_shorten(url)}")


def make_client(limits: FetchLimits = FetchLimits()) -> httpx.Client:
    """A client with the limits' timeouts, for callers that pool connections across fetches.

    Its connections obey the wall-clock deadline (and cancel check) of whichever
    `fetch_url` call is using them."""
    timeout = httpx.Timeout(
        connect=limits.connect_timeout,
        read=limits.read_timeout,
        write=limits.read_timeout,
        pool=limits.connect_timeout,
    )
    return DeadlineClient(timeout=timeout, follow_redirects=False)


def _send(
    client: httpx.Client,
    url: str,
    limits: FetchLimits,
    deadline: float,
    user_agent: str,
    validators: Mapping[str, str] | None = None,
) -> httpx.Response:
    headers = {"User-Agent": user_agent, "Accept": _ACCEPT_HEADER, **(validators or {})}
    timeout = _hop_timeout(limits, deadline, url)
    try:
        request = client.build_request("GET", url, headers=headers, timeout=timeout)
    except (httpx.InvalidURL, UnicodeError, ValueError) as exc:
        # check_url passed, but httpx may still reject a host (e.g. invalid IDNA labels).
        raise _failed(f"invalid URL {_shorten(url)!r}: {exc}") from exc
    try:
        return client.send(request, stream=True, follow_redirects=False)
    except httpx.HTTPError as exc:
        raise _transport_error(exc, url, limits, deadline) from exc
    except httpx.InvalidURL as exc:
        # httpx parses a redirect's Location even when not following it, so an unparsable
        # Location surfaces here rather than in check_url.
        raise _failed(f"{_shorten(url)} redirected to a refused URL: {exc}") from exc


def _unchanged(response: httpx.Response, requested: str, final: str) -> FetchedPage:
    return FetchedPage(
        url=requested,
        final_url=final,
        status=304,
        content_type="",
        charset=None,
        body=b"",
        etag=response.headers.get("ETag"),
        last_modified=response.headers.get("Last-Modified"),
    )


def _page(
    response: httpx.Response,
    requested: str,
    final: str,
    limits: FetchLimits,
    deadline: float,
    accept: Collection[str],
) -> FetchedPage:
    status = response.status_code
    if status >= 400:
        raise _status_error(response, final)
    if not 200 <= status < 300:
        # 304 without a conditional request, 300, or a 3xx redirect that named no Location.
        raise _failed(f"unexpected HTTP {status} for {_shorten(final)}")
    content_type, charset = parse_content_type(response.headers.get("Content-Type"))
    if content_type and content_type not in accept:
        raise FetchError(
            ErrorCode.UNSUPPORTED_FILE_TYPE,
            f"{_shorten(final)} is {content_type}, which Trove cannot index",
        )
    try:
        body = _read_body(response, final, limits, deadline)
    except httpx.HTTPError as exc:
        raise _transport_error(exc, final, limits, deadline) from exc
    if not content_type:
        sniffed = _sniff(body)
        if sniffed is None or sniffed not in accept:
            raise FetchError(
                ErrorCode.UNSUPPORTED_FILE_TYPE,
                f"{_shorten(final)} declared no content type and does not look like text",
            )
        content_type = sniffed
    return FetchedPage(
        url=requested,
        final_url=final,
        status=status,
        content_type=content_type,
        charset=charset,
        body=body,
        etag=response.headers.get("ETag"),
        last_modified=response.headers.get("Last-Modified"),
    )
