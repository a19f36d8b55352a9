"""Where an item's material lives under raw/, which is also its Concept ID.

Plain-text files are their own material (stored as UTF-8 text). Other files are copied as
they are and their extracted text is written beside them as a `.md` product; the product is
the material. URL and note items are Markdown snapshots.

A linked folder's files are indexed in place: the original stays where it is and is the
source of truth, so only the material (the product, or a plain text's UTF-8 text, which the
chunks' offsets point into) is kept under raw/, never a copy of the original's bytes.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import PurePosixPath
from urllib.parse import urlsplit

from app.knowledge import path_safety
from app.knowledge.pipeline.readers.registry import MARKDOWN_EXTENSIONS, TEXT_EXTENSIONS
from app.knowledge.types import Item, ItemType

CONTAINER_TYPES = frozenset({ItemType.DIRECTORY, ItemType.SITEMAP})

_SLUG_JUNK = re.compile(r"[^\w.\-]+")

# The item option that marks a file indexed in place (set when a linked folder creates it).
IN_PLACE_KEY = "inPlace"
# Why such a file cannot be read once its original is gone, said wherever that matters.
IN_PLACE_WHY = "its linked folder is indexed in place, so Trove keeps no copy of it"
NOT_CARRIED = (
    "it was indexed in place on the computer it came from, and the exported file holds its "
    "text, not its original (export the base with --with-originals to carry it)"
)


def in_place(item: Item) -> bool:
    """Is the item a linked folder's file, indexed without a copy of its original?"""
    return (
        item.type is ItemType.FILE
        and isinstance(item.options, dict)
        and item.options.get(IN_PLACE_KEY) is True
    )


def in_place_options(options: object) -> dict[str, object] | None:
    """The options a folder's new file gets: the in-place mark, when the folder has it."""
    if isinstance(options, dict) and options.get(IN_PLACE_KEY) is True:
        return {IN_PLACE_KEY: True}
    return None


def is_plain_text(name: str) -> bool:
    return PurePosixPath(name).suffix.lower() in TEXT_EXTENSIONS | MARKDOWN_EXTENSIONS


def needs_product(name: str) -> bool:
    return not is_plain_text(name)


def material_path(item: Item) -> str | None:
    """The relative path under raw/ that holds the item's indexed text."""
    if item.type in CONTAINER_TYPES or item.relative_path is None:
        return None
    if item.type is ItemType.FILE and needs_product(item.relative_path):
        return path_safety.md_product_name(item.relative_path)
    return item.relative_path


def stored_files(item: Item) -> list[str]:
    """Every file under raw/ that belongs to the item (copy and product; the material alone
    for a file indexed in place)."""
    if item.type in CONTAINER_TYPES or item.relative_path is None:
        return []
    product = material_path(item)
    if in_place(item):
        return [product] if product is not None else []
    files = [item.relative_path]
    if product is not None and product != item.relative_path:
        files.append(product)
    return files


def url_material_name(url: str, prefix: str = "web") -> str:
    """A readable material name for a URL snapshot: prefix/host/path-slug.md."""
    parts = urlsplit(url)
    path = parts.path.strip("/")
    slug = _SLUG_JUNK.sub("-", path.replace("/", "_")).strip("-_.") or "index"
    if parts.query:
        slug += "-" + hashlib.sha256(parts.query.encode()).hexdigest()[:8]
    return f"{prefix}/{parts.hostname or 'site'}/{slug[:120]}.md"
