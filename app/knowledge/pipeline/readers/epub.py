"""EPUB -> Markdown: chapters in spine order through the HTML converter, title from metadata.

The container is read with zipfile, one chapter at a time (images and fonts are never
loaded), after the zip-bomb check. A book whose chapters are DRM-encrypted is refused.
"""

from __future__ import annotations

import posixpath
import zipfile
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote

from lxml import etree

from app.knowledge.pipeline.readers.archive import (
    DEFAULT_ZIP_LIMITS,
    ZipLimits,
    check_inflated_sizes,
    check_zip_entries,
)
from app.knowledge.pipeline.readers.document import Document, clean_title, describe
from app.knowledge.pipeline.readers.errors import ReaderError
from app.knowledge.pipeline.readers.html import chapter_to_markdown
from app.knowledge.pipeline.readers.text import markdown_title
from app.knowledge.types import ErrorCode

KIND = "EPUB book"
_CONTAINER = "META-INF/container.xml"
_ENCRYPTION = "META-INF/encryption.xml"
_HTML_TYPES = frozenset({"application/xhtml+xml", "text/html", "application/x-dtbook+xml"})
_HTML_SUFFIXES = (".xhtml", ".html", ".htm", ".xht")
# Font obfuscation is not DRM: the text of such a book is readable.
_FONT_OBFUSCATION = frozenset(
    {"http://www.idpf.org/2008/embedding", "http://ns.adobe.com/pdf/enc#RC"}
)


@dataclass(frozen=True, slots=True)
class _Item:
    path: str
    media_type: str
    properties: str


def read_epub(path: Path, limits: ZipLimits = DEFAULT_ZIP_LIMITS) -> Document:
    try:
        archive = zipfile.ZipFile(path)
    except zipfile.BadZipFile as exc:
        raise _damaged(f"it is not a readable zip archive ({exc})") from exc
    with archive:
        check_zip_entries(archive.infolist(), KIND, limits)
        check_inflated_sizes(path, archive.infolist(), KIND, limits)
        names = {info.filename: info.filename for info in archive.infolist()}
        folded = {name.lower(): name for name in names}
        opf_path = _package_path(archive, names)
        package = _xml(archive.read(opf_path))
        base = posixpath.dirname(opf_path)
        manifest: dict[str, _Item] = {}
        for item in package.xpath("//*[local-name()='manifest']/*[local-name()='item']"):
            item_id, href = item.get("id"), item.get("href")
            if item_id and href:
                manifest[item_id] = _Item(
                    path=_resolve(base, href),
                    media_type=(item.get("media-type") or "").strip().lower(),
                    properties=item.get("properties") or "",
                )
        order = [
            manifest[idref]
            for idref in package.xpath("//*[local-name()='spine']/*[local-name()='itemref']/@idref")
            if idref in manifest
        ]
        chapters = [item for item in order if _is_html(item)]
        if not chapters:  # no usable spine: every HTML document, in manifest order
            chapters = [item for item in manifest.values() if _is_html(item)]
        encrypted = _encrypted_paths(archive, names)
        texts: list[str] = []
        seen: set[str] = set()
        for item in chapters:
            name = names.get(item.path) or folded.get(item.path.lower())
            if name is None or name in seen or "nav" in item.properties.split():
                continue
            seen.add(name)
            if name in encrypted:
                raise ReaderError(
                    ErrorCode.READ_FAILED, "the EPUB book is DRM-protected; its text is encrypted"
                )
            markdown, _ = chapter_to_markdown(archive.read(name))
            if markdown:
                texts.append(markdown)
        titles = package.xpath("//*[local-name()='metadata']/*[local-name()='title']/text()")
    text = "\n\n".join(texts)
    title = next((t for t in (clean_title(x) for x in titles) if t), None)
    return Document(text=text, title=title or markdown_title(text) or path.stem)


def _package_path(archive: zipfile.ZipFile, names: dict[str, str]) -> str:
    """The OPF package document named by META-INF/container.xml (or the first .opf)."""
    if _CONTAINER in names:
        container = _xml(archive.read(_CONTAINER))
        for full_path in container.xpath("//*[local-name()='rootfile']/@full-path"):
            candidate = _resolve("", str(full_path))
            if candidate in names:
                return candidate
    for name in names:
        if name.lower().endswith(".opf"):
            return name
    raise _damaged("it has no package document (content.opf)")


def _encrypted_paths(archive: zipfile.ZipFile, names: dict[str, str]) -> set[str]:
    if _ENCRYPTION not in names:
        return set()
    encryption = _xml(archive.read(_ENCRYPTION))
    paths: set[str] = set()
    for data in encryption.xpath("//*[local-name()='EncryptedData']"):
        algorithms = data.xpath("./*[local-name()='EncryptionMethod']/@Algorithm")
        if algorithms and all(str(a).strip() in _FONT_OBFUSCATION for a in algorithms):
            continue
        for uri in data.xpath(".//*[local-name()='CipherReference']/@URI"):
            paths.add(_resolve("", str(uri)))
    return paths


def _xml(data: bytes) -> etree._Element:
    parser = etree.XMLParser(
        resolve_entities=False, no_network=True, recover=True, load_dtd=False, huge_tree=False
    )
    try:
        root = etree.fromstring(data, parser=parser)
    except etree.XMLSyntaxError as exc:
        raise _damaged(f"its package files are not valid XML ({describe(exc)})") from exc
    if root is None:
        raise _damaged("its package files are empty or not XML")
    return root


def _resolve(base: str, href: str) -> str:
    target = unquote(href.split("#", 1)[0]).strip()
    return posixpath.normpath(posixpath.join(base, target)).lstrip("/")


def _is_html(item: _Item) -> bool:
    return item.media_type in _HTML_TYPES or item.path.lower().endswith(_HTML_SUFFIXES)


def _damaged(why: str) -> ReaderError:
    return ReaderError(ErrorCode.READ_FAILED, f"the {KIND} is damaged: {why}")
