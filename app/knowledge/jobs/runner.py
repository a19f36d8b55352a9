"""Run one claimed job through its handler and apply the outcome and retry policy.

Qt-free: the headless drain loop below and the Qt runtime's workers both call `run_job`.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from app.knowledge.catalog import Job
from app.knowledge.jobs import delete_subtree, index_documents, prepare_root, reindex_subtree
from app.knowledge.jobs.context import JobContext
from app.knowledge.jobs.errors import (
    CancelReason,
    ItemFailure,
    JobCancelled,
    RetryableFailure,
    storage_failure,
)
from app.knowledge.jobs.kinds import JobKind, Recovery, policy_for
from app.knowledge.jobs.owner import current_owner
from app.knowledge.jobs.parents import settle_parent
from app.knowledge.pipeline.store.index_store import CORRUPTION_ERRORS
from app.knowledge.types import ErrorCode, ItemStatus

log = logging.getLogger(__name__)

Handler = Callable[[JobContext, Job], None]

HANDLERS: dict[str, Handler] = {
    JobKind.INDEX_DOCUMENTS: index_documents.run,
    JobKind.PREPARE_ROOT: prepare_root.run,
    JobKind.DELETE_SUBTREE: delete_subtree.run,
    JobKind.REINDEX_SUBTREE: reindex_subtree.run,
}


def run_job(ctx: JobContext, job: Job, *, clock: Callable[[], float] = time.time) -> str:
    """Run a claimed job; returns the job's new status (done, failed or queued for retry)."""
    catalog = ctx.parts.catalog
    handler = HANDLERS.get(job.kind)
    damage = _unrunnable(job, handler is not None)
    if damage is not None:
        # A damaged job row fails its item with a message, never the runner.
        log.error("job %s cannot run: %s", job.id, damage)
        _fail_item(ctx, job, ErrorCode.READ_FAILED, f"{damage}; reindex the item")
        catalog.finish_job(job.id, "failed", damage)
        return "failed"
    assert handler is not None
    policy = policy_for(job.kind)
    try:
        handler(ctx, job)
    except JobCancelled as exc:
        return _cancelled(ctx, job, policy.recovery, exc.reason)
    except RetryableFailure as exc:
        if job.attempts < policy.attempts:
            delay = max(policy.backoff(job.attempts), exc.retry_after or 0.0)
            catalog.retry_job(job.id, clock() + delay, f"{exc.code}: {exc.message}")
            return "queued"
        _fail_item(ctx, job, exc.code, exc.message)
    except ItemFailure as exc:
        _fail_item(ctx, job, exc.code, exc.message)
    except Exception as exc:  # a bug or an unexpected OS error must fail one item, not the app
        storage = storage_failure(exc, ctx.parts.layout.base_dir(job.base_id))
        if storage is None:
            log.exception("job %s (%s) crashed", job.id, job.kind)
        else:
            # Not a bug: say what the person can fix, without a traceback in the log.
            log.error("job %s (%s): %s: %s", job.id, job.kind, storage.code, storage.message)
        if policy.recovery is Recovery.RETRY:
            # A deletion always finishes: retry it, and after the last attempt leave it
            # for startup recovery rather than failing the items.
            if job.attempts < policy.attempts:
                catalog.retry_job(job.id, clock() + policy.backoff(job.attempts), str(exc))
                return "queued"
            catalog.finish_job(job.id, "failed", str(exc))
            return "failed"
        if storage is not None:
            _fail_item(ctx, job, storage.code, storage.message)
        elif isinstance(exc, CORRUPTION_ERRORS):
            _fail_item(ctx, job, ErrorCode.INDEX_CORRUPT, INDEX_CORRUPT_ITEM_MESSAGE)
        else:
            _fail_item(ctx, job, ErrorCode.READ_FAILED, f"unexpected error: {exc}")
    else:
        catalog.finish_job(job.id, "done")
        return "done"
    catalog.finish_job(job.id, "failed", "item failed")
    return "failed"


INDEX_CORRUPT_ITEM_MESSAGE = (
    "the knowledge base's index is damaged; restore the base (trove restore), which "
    "rebuilds it from the base's own copies"
)


def _unrunnable(job: Job, has_handler: bool) -> str | None:
    """Why a job row cannot run (unknown kind, unreadable payload), or None."""
    if not has_handler:
        return f"unknown job kind {job.kind!r}"
    return job.payload_error


def _cancelled(ctx: JobContext, job: Job, recovery: Recovery, reason: CancelReason) -> str:
    catalog = ctx.parts.catalog
    if reason is CancelReason.ITEM_GONE:
        catalog.finish_job(job.id, "done", "item deleted or settled meanwhile")
        return "done"
    if reason is CancelReason.SHUTDOWN and recovery is Recovery.RETRY:
        catalog.requeue_job(job.id, "interrupted by shutdown; resumes on the next start")
        return "queued"
    if reason is CancelReason.TIMEOUT:
        message = "indexing took longer than the time limit and was stopped; reindex to try again"
    else:
        message = "Trove was closed while this item was being processed; reindex it to finish"
    _fail_item(ctx, job, ErrorCode.INDEXING_INTERRUPTED, message)
    catalog.finish_job(job.id, "abandoned", str(reason))
    return "abandoned"


def _fail_item(ctx: JobContext, job: Job, code: str, message: str) -> None:
    catalog = ctx.parts.catalog
    if job.item_id is None:
        return
    with ctx.parts.mutex.lock(job.base_id):
        item = catalog.get_item(job.item_id)
        if item is None or item.status not in (ItemStatus.PROCESSING, ItemStatus.PREPARING):
            return
        catalog.set_item_status(
            item.id, ItemStatus.FAILED, error_code=str(code), error_message=message
        )
        settle_parent(catalog, item.parent_id)


def drain(
    ctx: JobContext, base_id: str | None = None, *, clock: Callable[[], float] = time.time
) -> int:
    """Run queued jobs in this thread until none is due; returns how many ran.

    The headless CLI uses this; jobs waiting on a retry delay are waited for, so the
    queue is empty when it returns.
    """
    ran = 0
    catalog = ctx.parts.catalog
    while True:
        # Claimed in this process's name, so another process's recovery leaves it alone.
        job = catalog.claim_next_job(base_id, now=clock(), owner=current_owner())
        if job is None:
            due = catalog.next_due_time(base_id)
            if due is None:
                return ran
            time.sleep(max(0.0, due - clock()))
            continue
        run_job(ctx, job, clock=clock)
        ran += 1
