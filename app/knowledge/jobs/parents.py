"""Directory and sitemap roots show the aggregate status of their children."""

from __future__ import annotations

from app.knowledge import states
from app.knowledge.catalog import Catalog
from app.knowledge.types import ErrorCode, ItemStatus


def settle_parent(catalog: Catalog, parent_id: str | None) -> None:
    """Move a root to the aggregate of its children once they have settled.

    Read and write in one transaction: two processes finishing a folder's last children
    at once both see all of them, and only the first moves the folder."""
    with catalog.transaction():
        _settle(catalog, parent_id)


def _settle(catalog: Catalog, parent_id: str | None) -> None:
    while parent_id is not None:
        parent = catalog.get_item(parent_id)
        if parent is None or parent.status is ItemStatus.DELETING:
            return
        counts = catalog.child_status_counts(parent.id)
        target = states.aggregate_counts(counts)
        if target is parent.status or not states.is_legal(parent.status, target):
            return
        if target is ItemStatus.FAILED:
            catalog.set_item_status(
                parent.id,
                target,
                error_code=ErrorCode.ALL_CHILDREN_FAILED,
                error_message=f"all {sum(counts.values())} items inside failed",
            )
        else:
            catalog.set_item_status(parent.id, target)
        parent_id = parent.parent_id
