"""Items that came in an imported `.trovebase` file: their sources are inert.

An imported item's source names a file, folder or web address that the person who exported
the base added, on their computer, not one the person here chose. Kept as information (it
shows where a document came from), it is never read: reindexing such an item reads the
base's own copy under raw/ (a folder's documents are reindexed from their copies, its
folder is not scanned), and it cannot be linked (kept in sync) or refreshed on a schedule.
To take in the original again, the person adds it from this computer.

The mark lives in the item's options, so it travels with the row wherever the row goes (a
copy or move into another base, a base on a PostgreSQL server, another export); the
importer sets it on every item it writes, whatever the file says.
"""

from __future__ import annotations

from typing import Any

from app.knowledge.types import IMPORTED_OPTION, ErrorCode, Item, TroveError


def is_imported(item: Item) -> bool:
    return item.imported


def marked(options: dict[str, Any] | None) -> dict[str, Any]:
    """The options of an item written by an import."""
    return {**(options or {}), IMPORTED_OPTION: True}


def refuse(item: Item, action: str) -> TroveError:
    """The error for reading an imported item's source (`action`: "link", "refresh")."""
    return TroveError(
        ErrorCode.IMPORTED_SOURCE,
        f"{item.title!r} came with an imported knowledge base: its source "
        f"{item.source[:200]!r} names a place on the computer it came from, so Trove does not {action} it; add "
        "the file, folder or page again from this computer instead",
    )
