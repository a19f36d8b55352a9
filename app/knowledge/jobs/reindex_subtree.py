"""reindex-subtree: check the sources again, then queue the re-acquiring work.

The service already admitted the roots (settled, sources present) and flipped them to
working; sources can still vanish before this job runs, so they are checked once more.
The old material stays indexed until its replacement is written in one transaction, so
stored vectors for unchanged chunk texts are reused instead of paid for again. An item that
came with an imported base is reindexed from the base's own copy, never from its source
(imported_sources.py).
"""

from __future__ import annotations

from app.knowledge.catalog import Job
from app.knowledge.imported_sources import is_imported
from app.knowledge.jobs.context import JobContext
from app.knowledge.jobs.delete_subtree import roots_of
from app.knowledge.jobs.parents import settle_parent
from app.knowledge.jobs.queue import queue_work
from app.knowledge.source_check import SourceCheck, check_reindex
from app.knowledge.types import ErrorCode, ItemStatus

_MESSAGES = {
    SourceCheck.MISSING: (
        ErrorCode.SOURCE_MISSING,
        "the source is gone; delete the item and add it again",
    ),
    SourceCheck.UNVERIFIABLE: (
        ErrorCode.READ_FAILED,
        "the source could not be checked; retry the reindex",
    ),
}

_COPY_MISSING = (
    "the base's own copy is gone; this item came with an imported base, so its original is "
    "not read: add it again from this computer"
)


def run(ctx: JobContext, job: Job) -> None:
    parts = ctx.parts
    for root_id in roots_of(job):
        ctx.raise_if_cancelled()
        root = parts.catalog.get_item(root_id)
        if root is None or root.status not in (ItemStatus.PREPARING, ItemStatus.PROCESSING):
            continue
        verdict = check_reindex(parts.layout.raw_dir(root.base_id), root)
        with parts.mutex.lock(root.base_id):
            if verdict is SourceCheck.OK:
                queue_work(parts, root, reacquire=not is_imported(root))
                continue
            code, message = _MESSAGES[verdict]
            if verdict is SourceCheck.MISSING and is_imported(root):
                message = _COPY_MISSING
            parts.catalog.set_item_status(
                root.id, ItemStatus.FAILED, error_code=code, error_message=message
            )
            settle_parent(parts.catalog, root.parent_id)
