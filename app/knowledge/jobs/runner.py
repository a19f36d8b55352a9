"""Run one claimed job through its handler and apply the outcome and retry policy.

Qt-free: the headless drain loop below and the Qt runtime's workers both call `run_job`.

Whatever the handler raises, a job run ends in one of two ways (DESIGN.md section 5):

- *recorded*: the outcome's writes landed (the item failed with its code, the job row is
  done / failed / abandoned, or queued again for a retry or handed back by a normal exit);
- *released*: a write of the outcome itself failed (catalog busy, disk full, I/O error)
  even after a few short retries. The job row stays `running` but loses its owner, which is
  what a job of a dead process looks like: startup recovery (this or any other Trove
  process) then applies the job's policy — an abandoned item becomes failed with
  INDEXING_INTERRUPTED, a deletion is queued again; a job a normal exit was handing back is
  released marked as such, and recovery hands it back. When even that write fails, the run is
  `unrecorded`: the row still names this process, and recovery takes it after this process
  exits. Either way `run_job` returns, so waiters (the executor, `drain`) move on.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

import apsw

from app.knowledge.catalog import Job
from app.knowledge.jobs import (
    check_file_processing,
    delete_subtree,
    embed_vectors,
    index_documents,
    prepare_root,
    refresh_pages,
    reindex_subtree,
    sync_folder,
)
from app.knowledge.jobs.context import JobContext
from app.knowledge.jobs.errors import (
    ItemFailure,
    JobCancelled,
    PollLater,
    RetryableFailure,
    storage_failure,
)
from app.knowledge.jobs.hand_back import STOPPED_AT_EXIT, hand_back
from app.knowledge.jobs.kinds import JobKind, Recovery, policy_for
from app.knowledge.jobs.owner import current_owner
from app.knowledge.jobs.parents import settle_parent
from app.knowledge.pipeline.store.index_store import CORRUPTION_ERRORS
from app.knowledge.types import CancelReason, ErrorCode, ItemStatus

log = logging.getLogger(__name__)

Handler = Callable[[JobContext, Job], None]
T = TypeVar("T")

HANDLERS: dict[str, Handler] = {
    JobKind.INDEX_DOCUMENTS: index_documents.run,
    JobKind.PREPARE_ROOT: prepare_root.run,
    JobKind.DELETE_SUBTREE: delete_subtree.run,
    JobKind.REINDEX_SUBTREE: reindex_subtree.run,
    JobKind.SYNC_FOLDER: sync_folder.run,
    JobKind.REFRESH_PAGES: refresh_pages.run,
    JobKind.CHECK_FILE_PROCESSING_RESULT: check_file_processing.run,
    JobKind.EMBED_VECTORS: embed_vectors.run,
}

# The outcomes of a run whose writes did not all land (see the module docstring).
RELEASED = "released"
UNRECORDED = "unrecorded"

# Delays before the second and third try of an outcome write. SQLite already waited its
# busy timeout before raising BusyError; these cover a lock or a full WAL that clears a
# moment later, and keep a persistent fault from holding a worker for long.
WRITE_RETRY_DELAYS_S: tuple[float, ...] = (0.05, 0.25)
# Errors of the storage under a write, worth another try; anything else (an illegal status
# transition, a bug) is not retried but still releases the job.
_TRANSIENT = (apsw.Error, OSError)


@dataclass(frozen=True, slots=True)
class Outcome:
    """What a run decided, before anything of it is written."""

    status: str  # done, failed, abandoned, or queued (again)
    error: str | None = None  # kept on the job row
    fail_item: tuple[str, str] | None = None  # (code, message) the item fails with first
    # queued by a normal exit's hand-back (due at once, the claim not counted as an
    # attempt) rather than as a retry after `not_before`
    hand_back: bool = False
    not_before: float = 0.0
    # queued to run again later without using up an attempt (PollLater); `fresh`: with
    # its attempts forgotten (it made progress)
    poll: bool = False
    fresh: bool = False


def run_job(ctx: JobContext, job: Job, *, clock: Callable[[], float] = time.time) -> str:
    """Run a claimed job; returns the job's new status (done, failed, abandoned, queued for
    retry) or, when the outcome could not be written, `released` / `unrecorded`."""
    outcome = _decide(ctx, job, clock)
    try:
        _record(ctx, job, outcome)
    except Exception as exc:  # the storage refused the outcome: never leave the job spinning
        return _release(ctx, job, outcome, exc)
    return outcome.status


def release_job(ctx: JobContext, job: Job, reason: str) -> str:
    """Hand a job this process cannot finish to recovery; `released` or `unrecorded`."""
    try:
        _persist(f"release job {job.id}", lambda: ctx.parts.catalog.release_job(job.id, reason))
    except Exception as exc:
        # The storage's state, not a bug: no traceback (the retries logged each error).
        log.error(
            "job %s (%s): could not record its end nor release it (%s: %s); it is "
            "recovered when this Trove process exits",
            job.id,
            job.kind,
            type(exc).__name__,
            exc,
        )
        return UNRECORDED
    return RELEASED


def _release(ctx: JobContext, job: Job, outcome: Outcome, exc: Exception) -> str:
    reason = f"could not record {outcome.status} ({type(exc).__name__}: {exc})"
    if outcome.hand_back:
        reason = STOPPED_AT_EXIT  # recovery hands it back, as this run meant to
    failure = storage_failure(exc, ctx.parts.layout.base_dir(job.base_id))
    log.error(
        "job %s (%s): its end could not be recorded: %s; handing it to recovery",
        job.id,
        job.kind,
        f"{failure.code}: {failure.message}" if failure is not None else reason,
    )
    return release_job(ctx, job, reason)


def _persist(what: str, write: Callable[[], T]) -> T:
    """Run one outcome write, trying again a bounded number of times on a storage error."""
    for delay in WRITE_RETRY_DELAYS_S:
        try:
            return write()
        except _TRANSIENT as exc:
            # Info, not warning: the final outcome is logged once, as an error.
            log.info("%s failed (%s: %s); trying again", what, type(exc).__name__, exc)
            time.sleep(delay)
    return write()


def _record(ctx: JobContext, job: Job, outcome: Outcome) -> None:
    """Write the outcome: the item's failure first (its parent settles), then the job row."""
    catalog = ctx.parts.catalog
    if outcome.fail_item is not None:
        code, message = outcome.fail_item
        _persist(f"fail the item of job {job.id}", lambda: _fail_item(ctx, job, code, message))
    if outcome.status != "queued":
        _persist(
            f"finish job {job.id}",
            lambda: catalog.finish_job(job.id, outcome.status, outcome.error),
        )
    elif outcome.hand_back:
        _persist(f"hand back job {job.id}", lambda: hand_back(catalog, job))
    elif outcome.poll:
        error = outcome.error or ""
        _persist(
            f"poll job {job.id} later",
            lambda: catalog.poll_job(job.id, outcome.not_before, error, fresh=outcome.fresh),
        )
    else:
        error = outcome.error or ""
        _persist(
            f"retry job {job.id}", lambda: catalog.retry_job(job.id, outcome.not_before, error)
        )


def _decide(ctx: JobContext, job: Job, clock: Callable[[], float]) -> Outcome:
    """Run the handler and turn what it did or raised into an outcome (no writes here)."""
    handler = HANDLERS.get(job.kind)
    damage = _unrunnable(job, handler is not None)
    if damage is not None:
        # A damaged job row fails its item with a message, never the runner.
        log.error("job %s cannot run: %s", job.id, damage)
        return Outcome("failed", damage, (ErrorCode.READ_FAILED, f"{damage}; reindex the item"))
    assert handler is not None
    policy = policy_for(job.kind)
    try:
        handler(ctx, job)
    except JobCancelled as exc:
        return _cancelled(exc.reason)
    except PollLater as exc:
        return Outcome(
            "queued", str(exc), not_before=clock() + exc.delay, poll=True, fresh=exc.fresh
        )
    except RetryableFailure as exc:
        if job.attempts < policy.attempts:
            delay = max(policy.backoff(job.attempts), exc.retry_after or 0.0)
            announce_retry(ctx, job, exc, delay, policy.attempts)
            return Outcome("queued", f"{exc.code}: {exc.message}", not_before=clock() + delay)
        return _item_failed(exc.code, exc.message)
    except ItemFailure as exc:
        return _item_failed(exc.code, exc.message)
    except Exception as exc:  # a bug or an unexpected OS error must fail one item, not the app
        return _crashed(ctx, job, exc, clock)
    return Outcome("done")


def announce_retry(
    ctx: JobContext, job: Job, exc: RetryableFailure, delay: float, attempts: int
) -> None:
    """Say that a retry is under way, and when: a fetch that ran into its 60 s deadline
    otherwise holds `add --wait` for minutes without a word."""
    try:
        item = ctx.parts.catalog.get_item(job.item_id) if job.item_id else None
    except Exception:  # only the name of what is retried is lost
        item = None
    what = item.source[:200] if item is not None else f"job {job.id} ({job.kind})"
    at = time.strftime("%H:%M:%S", time.localtime(time.time() + delay))
    log.warning(
        "%s: %s: %s; trying again in %.0f s (at %s), attempt %d of %d",
        what,
        exc.code,
        exc.message,
        delay,
        at,
        job.attempts + 1,
        attempts,
    )


def _item_failed(code: str, message: str) -> Outcome:
    return Outcome("failed", "item failed", (code, message))


def _crashed(ctx: JobContext, job: Job, exc: Exception, clock: Callable[[], float]) -> Outcome:
    policy = policy_for(job.kind)
    storage = storage_failure(exc, ctx.parts.layout.base_dir(job.base_id))
    if storage is None:
        log.error("job %s (%s) crashed", job.id, job.kind, exc_info=exc)
    else:
        # Not a bug: say what the person can fix, without a traceback in the log.
        log.error("job %s (%s): %s: %s", job.id, job.kind, storage.code, storage.message)
    if policy.recovery is Recovery.RETRY:
        # A deletion always finishes: retry it, and after the last attempt leave it
        # for startup recovery rather than failing the items.
        if job.attempts < policy.attempts:
            return Outcome("queued", str(exc), not_before=clock() + policy.backoff(job.attempts))
        return Outcome("failed", str(exc))
    if storage is not None:
        return _item_failed(storage.code, storage.message)
    if isinstance(exc, CORRUPTION_ERRORS):
        return _item_failed(ErrorCode.INDEX_CORRUPT, INDEX_CORRUPT_ITEM_MESSAGE)
    return _item_failed(ErrorCode.READ_FAILED, f"unexpected error: {exc}")


INDEX_CORRUPT_ITEM_MESSAGE = (
    "the knowledge base's index is damaged; restore the base (trove restore), which "
    "rebuilds it from the base's own copies"
)


def _unrunnable(job: Job, has_handler: bool) -> str | None:
    """Why a job row cannot run (unknown kind, unreadable payload), or None."""
    if not has_handler:
        return f"unknown job kind {job.kind!r}"
    return job.payload_error


TIMEOUT_MESSAGE = "indexing took longer than the time limit and was stopped; reindex to try again"


def _cancelled(reason: CancelReason) -> Outcome:
    if reason is CancelReason.ITEM_GONE:
        return Outcome("done", "item deleted or settled meanwhile")
    if reason is CancelReason.SHUTDOWN:
        # A normal exit fails nothing: the next process to run the queue finishes the job,
        # reusing what this run embedded (hand_back.py).
        return Outcome("queued", hand_back=True)
    return Outcome("abandoned", str(reason), (ErrorCode.INDEXING_INTERRUPTED, TIMEOUT_MESSAGE))


def _fail_item(ctx: JobContext, job: Job, code: str, message: str) -> None:
    """Fail the job's item (if it is still running) and settle its parent. Safe to repeat:
    a second try after a failed write settles the parent of an item already failed."""
    catalog = ctx.parts.catalog
    if job.item_id is None:
        return
    with ctx.parts.mutex.lock(job.base_id):
        item = catalog.get_item(job.item_id)
        if item is None:
            return
        if item.status in (ItemStatus.PROCESSING, ItemStatus.PREPARING):
            catalog.set_item_status(
                item.id, ItemStatus.FAILED, error_code=str(code), error_message=message
            )
        elif item.status is not ItemStatus.FAILED:
            return  # completed or deleting meanwhile: not ours to fail
        settle_parent(catalog, item.parent_id)


def drain(
    ctx: JobContext, base_id: str | None = None, *, clock: Callable[[], float] = time.time
) -> int:
    """Run queued jobs in this thread until none is due; returns how many ran.

    The headless CLI uses this; jobs waiting on a retry delay are waited for, so the
    queue is empty when it returns. A released job is not queued, so it is not waited for.
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
