"""Turn a sitemap into the page URLs to index.

Reads XML `<urlset>` and `<sitemapindex>` documents (with or without the sitemaps.org
namespace), gzip-compressed sitemaps, plain-text sitemaps (one URL per line) and, as search
engines do, RSS and Atom feeds. XML is parsed with defusedxml and any DTD is refused, so
entity-expansion ("billion laughs") and external-entity documents never reach the parser.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from urllib.parse import urljoin, urlsplit
from xml.etree.ElementTree import Element, ParseError

import httpx
from defusedxml import DefusedXmlException
from defusedxml.ElementTree import fromstring as safe_fromstring

from app.knowledge.pipeline.sources.address_policy import (
    ANY_ADDRESS,
    AddressPolicy,
    AddressRefused,
    check_literal,
)
from app.knowledge.pipeline.sources.web import (
    FetchedPage,
    FetchError,
    FetchLimits,
    check_url,
    fetch_url,
    make_client,
)
from app.knowledge.types import ErrorCode

# The sitemap protocol caps an uncompressed sitemap at 50 MB; a gzip body inflating past that
# is refused rather than decompressed into memory.
MAX_SITEMAP_BYTES = 50 * 1024 * 1024
# A sitemap full of junk lines must not turn into an unbounded error list in the UI.
MAX_ERRORS = 100

# Compressed sitemaps are often served as gzip or octet-stream; HTML is let through so that a
# page given by mistake fails with "not a sitemap" instead of "unsupported type".
SITEMAP_CONTENT_TYPES: frozenset[str] = frozenset(
    {
        "application/xml",
        "text/xml",
        "text/plain",
        "application/rss+xml",
        "application/atom+xml",
        "application/gzip",
        "application/x-gzip",
        "application/octet-stream",
        "text/html",
        "application/xhtml+xml",
    }
)

_GZIP_MAGIC = b"\x1f\x8b"
_UTF8_BOM = b"\xef\xbb\xbf"
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")


@dataclass(frozen=True)
class SitemapLimits:
    max_pages: int = 500
    max_sitemaps: int = 50  # sitemaps fetched in all, the root included
    max_depth: int = 3  # index levels followed below the root (0: read the root only)
    concurrency: int = 4

    def __post_init__(self) -> None:
        if self.max_pages < 1 or self.max_sitemaps < 1 or self.concurrency < 1:
            raise ValueError("max_pages, max_sitemaps and concurrency must be at least 1")
        if self.max_depth < 0:
            raise ValueError("max_depth must not be negative")


@dataclass
class SitemapExpansion:
    page_urls: list[str] = field(default_factory=list)
    sitemaps_read: int = 0  # sitemaps fetched and parsed successfully, the root included
    truncated: bool = False  # a limit stopped the expansion before everything was read
    errors: list[str] = field(default_factory=list)


def _failed(message: str) -> FetchError:
    return FetchError(ErrorCode.FETCH_FAILED, message)


def _gunzip(data: bytes) -> bytes:
    out: list[bytes] = []
    size = 0
    while data[:2] == _GZIP_MAGIC:  # gzip allows several members back to back
        inflater = zlib.decompressobj(wbits=zlib.MAX_WBITS | 16)
        try:
            chunk = inflater.decompress(data, MAX_SITEMAP_BYTES + 1 - size)
        except zlib.error as exc:
            raise _failed(f"sitemap is not valid gzip: {exc}") from exc
        size += len(chunk)
        if size > MAX_SITEMAP_BYTES:
            raise FetchError(
                ErrorCode.FILE_TOO_LARGE,
                f"sitemap inflates to more than {MAX_SITEMAP_BYTES // (1024 * 1024)} MB",
            )
        if not inflater.eof:
            raise _failed("sitemap gzip data is truncated")
        out.append(chunk)
        data = inflater.unused_data
    return b"".join(out)


def _local(tag: object) -> str:
    # Comments and processing instructions have non-string tags; namespaces are ignored so
    # that sitemaps with the wrong (or no) namespace still read.
    return tag.rsplit("}", 1)[-1].lower() if isinstance(tag, str) else ""


def _children(element: Element, name: str) -> Iterable[Element]:
    return (child for child in element if _local(child.tag) == name)


def _child_text(element: Element, name: str) -> str | None:
    for child in _children(element, name):
        text = (child.text or "").strip()
        if text:
            return text
    return None


def _locs(parent: Element, entry: str, base_url: str) -> list[str]:
    """The <loc> of each direct <entry> child; nested extension locs (image:loc) are ignored."""
    found: list[str] = []
    for item in _children(parent, entry):
        loc = _child_text(item, "loc")
        if loc is not None:
            found.append(urljoin(base_url, loc))
    return found


def _feed_links(root: Element, kind: str, base_url: str) -> list[str]:
    found: list[str] = []
    if kind == "rss":
        for channel in _children(root, "channel"):
            for item in _children(channel, "item"):
                text = _child_text(item, "link")
                if text is not None:
                    found.append(urljoin(base_url, text))
        return found
    for entry in _children(root, "entry"):
        for link in _children(entry, "link"):
            href = (link.get("href") or "").strip()
            if href and link.get("rel", "alternate") == "alternate":
                found.append(urljoin(base_url, href))
                break
    return found


def _parse_text(data: bytes, base_url: str) -> list[str]:
    text = data.decode("utf-8", errors="replace")
    lines = (line.strip() for line in text.splitlines())
    return [urljoin(base_url, line) for line in lines if line and not line.startswith("#")]


def parse_sitemap(xml_bytes: bytes, base_url: str) -> tuple[list[str], list[str]]:
    """(page URLs, child sitemap URLs) in document order, resolved against base_url.

    The URLs are not validated here; `expand_sitemap` checks each one. Raises FetchError
    (FETCH_FAILED) for invalid XML, a DTD or entity declaration, or a document that is not a
    sitemap; FILE_TOO_LARGE for a gzip body that inflates past MAX_SITEMAP_BYTES.
    """
    data = _gunzip(xml_bytes) if xml_bytes[:2] == _GZIP_MAGIC else xml_bytes
    head = data.removeprefix(_UTF8_BOM).lstrip()
    if not head:
        return [], []
    if not head.startswith(b"<") and not head.startswith(_UTF16_BOMS):
        return _parse_text(data.removeprefix(_UTF8_BOM), base_url), []
    if head[:64].lower().startswith((b"<!doctype html", b"<html")):
        raise _failed("not a sitemap: the URL returned an HTML page")
    try:
        root = safe_fromstring(data, forbid_dtd=True, forbid_entities=True, forbid_external=True)
    except DefusedXmlException as exc:
        raise _failed(f"sitemap refused: it declares a DTD or entities ({exc})") from exc
    except ParseError as exc:
        raise _failed(f"sitemap is not valid XML: {exc}") from exc
    kind = _local(root.tag)
    if kind == "urlset":
        return _locs(root, "url", base_url), []
    if kind == "sitemapindex":
        return [], _locs(root, "sitemap", base_url)
    if kind in ("rss", "feed"):
        return _feed_links(root, kind, base_url), []
    raise _failed(f"not a sitemap: the root element is <{kind or '?'}>")


def fetch_sitemap(
    url: str,
    *,
    client: httpx.Client | None = None,
    cancelled: Callable[[], bool] | None = None,
    addresses: AddressPolicy = ANY_ADDRESS,
) -> FetchedPage:
    """fetch_url, also accepting the content types sitemaps are served with."""
    return fetch_url(
        url,
        client=client,
        accept=SITEMAP_CONTENT_TYPES,
        cancelled=cancelled,
        addresses=addresses,
    )


class _Collector:
    """Page URLs de-duplicated in order, capped at max_pages, with a capped error list."""

    def __init__(self, limits: SitemapLimits, addresses: AddressPolicy) -> None:
        self.limits = limits
        self.addresses = addresses
        self.result = SitemapExpansion()
        self._seen_pages: set[str] = set()
        self._seen_sitemaps: set[str] = set()
        self._errors_dropped = 0

    @property
    def full(self) -> bool:
        return len(self.result.page_urls) >= self.limits.max_pages

    def error(self, message: str) -> None:
        if len(self.result.errors) < MAX_ERRORS:
            self.result.errors.append(message)
        else:
            self._errors_dropped += 1

    def _checked(self, raw: str) -> str:
        """The URL normalised; refused like its fetch would be when it names a local
        address or name (a name that resolves to one is refused when its page is fetched)."""
        url = check_url(raw)
        if not self.addresses.allow_private:
            try:
                check_literal(urlsplit(url).hostname or "")
            except AddressRefused as exc:
                raise FetchError(ErrorCode.FETCH_FAILED, f"{url}: {exc}") from None
        return url

    def add_pages(self, urls: list[str]) -> None:
        for raw in urls:
            try:
                url = self._checked(raw)
            except FetchError as exc:
                self.error(f"page URL skipped: {exc.message}")
                continue
            if url in self._seen_pages:
                continue
            if self.full:
                self.result.truncated = True
                return
            self._seen_pages.add(url)
            self.result.page_urls.append(url)

    def mark_sitemap(self, url: str) -> None:
        self._seen_sitemaps.add(url)

    def new_sitemaps(self, urls: list[str]) -> list[str]:
        fresh: list[str] = []
        for raw in urls:
            try:
                url = self._checked(raw)
            except FetchError as exc:
                self.error(f"child sitemap skipped: {exc.message}")
                continue
            if url not in self._seen_sitemaps:  # an index listing itself, or a cycle
                self._seen_sitemaps.add(url)
                fresh.append(url)
        return fresh

    def finish(self) -> SitemapExpansion:
        if self._errors_dropped:
            self.result.errors.append(f"... and {self._errors_dropped} more errors")
        return self.result


def _read(fetch: Callable[[str], FetchedPage], url: str) -> tuple[list[str], list[str], str]:
    page = fetch(url)
    pages, children = parse_sitemap(page.body, page.final_url)
    return pages, children, page.final_url


def expand_sitemap(
    url: str,
    *,
    fetch: Callable[[str], FetchedPage] | None = None,
    limits: SitemapLimits = SitemapLimits(),
    cancelled: Callable[[], bool] | None = None,
    addresses: AddressPolicy = ANY_ADDRESS,
) -> SitemapExpansion:
    """Read the sitemap at url and the sitemaps it indexes, breadth first, within limits.

    `fetch` is called from worker threads (up to `limits.concurrency` at once); by default
    every sitemap is fetched with `fetch_sitemap` over one pooled client. A failing root
    raises FetchError; a failing child sitemap is recorded in `errors` and the rest go on.
    `cancelled` stops the default fetches (FetchCancelled escapes); a custom `fetch` is
    responsible for its own. `addresses` holds for every sitemap fetched and every page URL
    listed: a page or child sitemap on a refused host is skipped (recorded in `errors`).
    """
    root = check_url(url)
    if fetch is not None:
        return _expand(root, fetch, limits, addresses)
    with make_client(FetchLimits()) as client:
        read = partial(fetch_sitemap, client=client, cancelled=cancelled, addresses=addresses)
        return _expand(root, read, limits, addresses)


def _expand(
    root: str,
    fetch: Callable[[str], FetchedPage],
    limits: SitemapLimits,
    addresses: AddressPolicy,
) -> SitemapExpansion:
    collector = _Collector(limits, addresses)
    result = collector.result
    collector.mark_sitemap(root)
    pages, children, final_url = _read(fetch, root)
    result.sitemaps_read = 1
    collector.mark_sitemap(final_url)
    collector.add_pages(pages)
    level = collector.new_sitemaps(children)
    attempted = 1
    depth = 1
    pool = ThreadPoolExecutor(max_workers=limits.concurrency, thread_name_prefix="sitemap")
    try:
        while level:
            if collector.full:
                result.truncated = True
                break
            if depth > limits.max_depth:
                result.truncated = True
                collector.error(
                    f"{len(level)} sitemap(s) nested deeper than {limits.max_depth} "
                    "levels were not read"
                )
                break
            budget = limits.max_sitemaps - attempted
            if len(level) > budget:
                result.truncated = True
                collector.error(
                    f"{len(level) - budget} sitemap(s) were not read: the limit is "
                    f"{limits.max_sitemaps} sitemaps"
                )
                level = level[:budget]
                if not level:
                    break
            attempted += len(level)
            futures: list[Future[tuple[list[str], list[str], str]]] = [
                pool.submit(_read, fetch, child) for child in level
            ]
            next_level: list[str] = []
            # Results are taken in listing order so the page order does not depend on timing.
            for child, future in zip(level, futures, strict=True):
                if collector.full:
                    result.truncated = True
                    break
                try:
                    pages, children, final_url = future.result()
                except FetchError as exc:
                    collector.error(f"{child}: {exc.message}")
                    continue
                result.sitemaps_read += 1
                collector.mark_sitemap(final_url)
                collector.add_pages(pages)
                next_level.extend(collector.new_sitemaps(children))
            for future in futures:
                future.cancel()
            level = next_level
            depth += 1
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    return collector.finish()
