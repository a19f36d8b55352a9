"""Creating items, each with its first job queued, under names allocated in the same write
transaction (used by admission and by prepare-root for a container's children)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from app.knowledge import path_safety
from app.knowledge.catalog import Catalog
from app.knowledge.engine import EngineParts
from app.knowledge.jobs.queue import queue_index, queue_prepare
from app.knowledge.material_paths import in_place_options, needs_product
from app.knowledge.types import Item, ItemStatus, ItemType


def _reserved_paths(catalog: Catalog, base_id: str) -> set[str]:
    return {i.relative_path for i in catalog.list_items(base_id) if i.relative_path}


def create_items(
    parts: EngineParts,
    base_id: str,
    item_type: ItemType,
    entries: Sequence[tuple[str, str, str]],
    *,
    parent_id: str | None = None,
    hashes: dict[str, str] | None = None,
    options: dict[str, object] | None = None,
) -> list[Item]:
    """Create leaf items (source, desired material name, title) and queue their indexing.

    The caller holds the base mutex: allocation reads what exists, then rows are created,
    in one write transaction, so another process cannot take the same names meanwhile.
    """
    items: list[Item] = []
    with parts.catalog.transaction():
        namer = path_safety.MaterialNamer(
            parts.layout.raw_dir(base_id), _reserved_paths(parts.catalog, base_id)
        )
        for source, desired, title in entries:
            rel = namer.allocate(
                desired, with_md_product=item_type is ItemType.FILE and needs_product(desired)
            )
            item = parts.catalog.create_item(
                base_id,
                item_type,
                source,
                title,
                status=ItemStatus.PROCESSING,
                parent_id=parent_id,
                relative_path=rel,
                size=_size(source) if item_type is ItemType.FILE else None,
                content_hash=(hashes or {}).get(source),
                options=options,
            )
            queue_index(parts, item, reacquire=True)
            items.append(item)
    return items


def create_children(
    parts: EngineParts, root: Item, child_type: ItemType, wanted: Sequence[tuple[str, str]]
) -> list[Item]:
    entries = [(source, desired, _title_for(child_type, source)) for source, desired in wanted]
    options = in_place_options(root.options) if child_type is ItemType.FILE else None
    return create_items(
        parts, root.base_id, child_type, entries, parent_id=root.id, options=options
    )


def _title_for(item_type: ItemType, source: str) -> str:
    return Path(source).name if item_type is ItemType.FILE else source


def create_root(
    parts: EngineParts,
    base_id: str,
    item_type: ItemType,
    source: str,
    title: str,
    desired: str,
    options: dict[str, object] | None = None,
) -> Item:
    with parts.catalog.transaction():
        rel = path_safety.allocate_material_name(
            parts.layout.raw_dir(base_id),
            desired,
            reserved=_reserved_paths(parts.catalog, base_id),
        )
        item = parts.catalog.create_item(
            base_id,
            item_type,
            source,
            title,
            status=ItemStatus.PREPARING,
            relative_path=rel,
            options=options,
        )
        queue_prepare(parts, item, options)
    return item


def _size(source: str) -> int | None:
    try:
        return Path(source).stat().st_size
    except OSError:
        return None
