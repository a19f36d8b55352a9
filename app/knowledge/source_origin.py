"""Who put a source into a base, and what a fetch of it may therefore reach.

A person's own URLs are fetched as they are: an intranet wiki or a server on this computer
is a legitimate thing to add. A URL an agent added (kb_manage), or one that came in an
imported base, is someone else's choice: its fetches (the first one, reindexes, scheduled
refreshes, a sitemap's pages) reach only public internet addresses unless the person set
the base's `agent_private_urls`. The mark lives in the item's options under `origin`; a
sitemap's pages take their root's. An item without a mark is the person's (every item
from before the mark existed, too).
"""

from __future__ import annotations

from enum import StrEnum

from app.knowledge.catalog import Catalog
from app.knowledge.pipeline.sources.address_policy import ANY_ADDRESS, AddressPolicy, Resolver
from app.knowledge.types import Item

ORIGIN_KEY = "origin"


class Origin(StrEnum):
    PERSON = "person"
    AGENT = "agent"
    IMPORT = "import"


def with_origin(options: object, origin: Origin) -> dict[str, object] | None:
    """`options` marked with `origin`; whatever mark they carried is replaced (an archive
    cannot vouch for itself), and a person's own items carry none."""
    marked: dict[str, object] = dict(options) if isinstance(options, dict) else {}
    marked.pop(ORIGIN_KEY, None)
    if origin is not Origin.PERSON:
        marked[ORIGIN_KEY] = origin.value
    return marked or None


def _mark(item: Item) -> str | None:
    options = item.options
    value = options.get(ORIGIN_KEY) if isinstance(options, dict) else None
    return None if value is None else str(value)


def origin_of(catalog: Catalog, item: Item) -> Origin:
    mark = _mark(item)
    if mark is None and item.parent_id is not None:
        parent = catalog.get_item(item.parent_id)
        mark = _mark(parent) if parent is not None else None
    if mark is None:
        return Origin.PERSON
    try:
        return Origin(mark)
    except ValueError:
        return Origin.IMPORT  # a mark Trove never writes: trust it least


def address_policy(catalog: Catalog, item: Item, resolve: Resolver) -> AddressPolicy:
    """What fetches of the item (a URL or a sitemap, or a sitemap's page) may reach."""
    if origin_of(catalog, item) is Origin.PERSON:
        return ANY_ADDRESS
    base = catalog.get_base(item.base_id)
    if base is not None and base.agent_private_urls:
        return ANY_ADDRESS
    return AddressPolicy(allow_private=False, resolve=resolve)
