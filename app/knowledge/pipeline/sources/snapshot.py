"""A fetched web page -> the Document stored as its Markdown snapshot."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from urllib.parse import unquote, urlsplit

from app.knowledge.pipeline.readers.html import read_html_bytes
from app.knowledge.pipeline.readers.registry import Document, read_document
from app.knowledge.pipeline.readers.text import decode_text, markdown_title
from app.knowledge.pipeline.sources.web import FetchedPage

_HTML = frozenset({"text/html", "application/xhtml+xml"})


def _url_title(url: str) -> str:
    parts = urlsplit(url)
    last = unquote(parts.path.rstrip("/").rsplit("/", 1)[-1])
    return last or parts.hostname or url


def page_document(page: FetchedPage) -> Document:
    if page.content_type in _HTML:
        doc = read_html_bytes(page.body, page.charset)
        return doc if doc.title else Document(doc.text, _url_title(page.final_url), doc.page_starts)
    if page.content_type == "application/pdf":
        return _read_via_file(page.body, ".pdf")
    text = decode_text(page.body)
    return Document(text, markdown_title(text) or _url_title(page.final_url))


def _read_via_file(body: bytes, suffix: str) -> Document:
    """Readers take paths; give them a private temporary file."""
    fd, name = tempfile.mkstemp(suffix=suffix, prefix="trove-fetch-")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(body)
        return read_document(Path(name))
    finally:
        Path(name).unlink(missing_ok=True)
