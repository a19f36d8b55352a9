"""Putting the engine's work on the job queue: the one place that knows each job's payload
and idempotency key, so admission (ingestion) and the handlers (jobs) queue work alike."""

from __future__ import annotations

from collections.abc import Sequence

from app.knowledge import vector_stage
from app.knowledge.catalog import Catalog
from app.knowledge.engine import EngineParts
from app.knowledge.jobs.kinds import JobKind, check_key, index_key, prepare_key, vectors_key
from app.knowledge.material_paths import CONTAINER_TYPES
from app.knowledge.types import Item, ItemStatus

DELETE_GROUP = 500  # roots per delete-subtree job (DESIGN.md section 5)


def queue_index(parts: EngineParts, item: Item, *, reacquire: bool) -> None:
    parts.catalog.enqueue_job(
        JobKind.INDEX_DOCUMENTS,
        item.base_id,
        item_id=item.id,
        payload={"reacquire": reacquire},
        idempotency_key=index_key(item.id),
    )


def queue_recognised_index(parts: EngineParts, item: Item, *, reacquire: bool) -> None:
    """Index the item again, now with the text recognised from its page images."""
    parts.catalog.enqueue_job(
        JobKind.INDEX_DOCUMENTS,
        item.base_id,
        item_id=item.id,
        payload={"reacquire": reacquire, "recognised": True},
        idempotency_key=index_key(item.id),
    )


def queue_check(parts: EngineParts, item: Item, *, reacquire: bool, not_before: float) -> None:
    """Poll the item's text recognition (check-file-processing-result) from `not_before`."""
    parts.catalog.enqueue_job(
        JobKind.CHECK_FILE_PROCESSING_RESULT,
        item.base_id,
        item_id=item.id,
        payload={"reacquire": reacquire},
        idempotency_key=check_key(item.id),
        not_before=not_before,
    )


def queue_prepare(parts: EngineParts, item: Item, options: dict[str, object] | None = None) -> None:
    parts.catalog.enqueue_job(
        JobKind.PREPARE_ROOT,
        item.base_id,
        item_id=item.id,
        payload=options or {},
        idempotency_key=prepare_key(item.id),
    )


def queue_vectors(parts: EngineParts, base_id: str) -> bool:
    """Queue the base's vector stage unless it is paused or stopped by a provider error
    until the person resumes it (one live job per base: a queued one is reused); whether
    it is queued."""
    catalog = parts.catalog
    if vector_stage.is_paused(catalog, base_id) or vector_stage.stopped(catalog, base_id):
        return False
    parts.catalog.enqueue_job(JobKind.EMBED_VECTORS, base_id, idempotency_key=vectors_key(base_id))
    return True


def queue_work(parts: EngineParts, item: Item, *, reacquire: bool) -> None:
    """Queue the job that does an item's work: containers expand, leaves index."""
    if item.type in CONTAINER_TYPES:
        queue_prepare(parts, item, item.options)
    else:
        queue_index(parts, item, reacquire=reacquire)


def top_roots(catalog: Catalog, items: Sequence[Item]) -> list[Item]:
    """Drop items whose ancestor is also selected: deleting the ancestor covers them."""
    chosen = {i.id for i in items}
    roots = []
    for item in items:
        parent, covered = item.parent_id, False
        while parent is not None:
            if parent in chosen:
                covered = True
                break
            parent_item = catalog.get_item(parent)
            parent = parent_item.parent_id if parent_item else None
        if not covered:
            roots.append(item)
    return roots


def mark_deleting(parts: EngineParts, items: Sequence[Item]) -> list[str]:
    """Flip subtrees to deleting and queue their deletion. Caller holds the base mutex."""
    roots = top_roots(parts.catalog, items)
    with parts.catalog.transaction():
        for root in roots:
            for item in [root, *parts.catalog.descendants(root.id)]:
                if item.status is not ItemStatus.DELETING:
                    parts.catalog.set_item_status(item.id, ItemStatus.DELETING)
        queue_deletes(parts, [r.id for r in roots], roots[0].base_id if roots else "")
    return [r.id for r in roots]


def queue_deletes(parts: EngineParts, root_ids: Sequence[str], base_id: str) -> None:
    for start in range(0, len(root_ids), DELETE_GROUP):
        group = list(root_ids[start : start + DELETE_GROUP])
        key = f"{JobKind.DELETE_SUBTREE}:{group[0]}" if len(group) == 1 else None
        parts.catalog.enqueue_job(
            JobKind.DELETE_SUBTREE,
            base_id,
            item_id=group[0] if len(group) == 1 else None,
            payload={"roots": group},
            idempotency_key=key,
        )


def queue_reindexes(parts: EngineParts, root_ids: Sequence[str], base_id: str) -> None:
    for start in range(0, len(root_ids), DELETE_GROUP):
        group = list(root_ids[start : start + DELETE_GROUP])
        parts.catalog.enqueue_job(
            JobKind.REINDEX_SUBTREE,
            base_id,
            item_id=group[0] if len(group) == 1 else None,
            payload={"roots": group},
            idempotency_key=f"{JobKind.REINDEX_SUBTREE}:{group[0]}" if len(group) == 1 else None,
        )
