"""check-file-processing-result: poll a document's text recognition, then index it.

index-documents submits the pages without a text layer to a recognition worker and queues
this job. Each run looks at the worker's folder once and either queues the indexing of the
document with its recognised pages, fails the item with the worker's reason, starts the
worker again (its Trove died: it resumes after the pages already read), or asks to be run
again a little later (backing off from 0.25 s to 2 s). The item shows phase `waiting` with
the share of pages read, and holds the page count in its options ("3/12 pages").
"""

from __future__ import annotations

from pathlib import Path

from app.knowledge.catalog import Job
from app.knowledge.jobs.context import JobContext
from app.knowledge.jobs.errors import ItemFailure, PollLater
from app.knowledge.jobs.queue import queue_recognised_index
from app.knowledge.ocr import tasks as ocr_tasks
from app.knowledge.types import ErrorCode, ItemPhase, ItemStatus

POLL_INITIAL_S = 0.25
POLL_MAX_S = 2.0
# Workers started for one document before it fails: a page that kills the worker (out of
# memory, a crashing renderer) would otherwise be tried for ever.
MAX_STARTS = 3


def poll_delay(attempt: int) -> float:
    return float(min(POLL_MAX_S, POLL_INITIAL_S * 1.5 ** max(0, attempt - 1)))


def run(ctx: JobContext, job: Job) -> None:
    parts = ctx.parts
    item = parts.catalog.get_item(job.item_id or "")
    folder = ocr_tasks.work_dir(parts.layout, job.base_id, job.item_id or "")
    if item is None or item.status is not ItemStatus.PROCESSING:
        ocr_tasks.discard(folder)  # deleted or settled meanwhile
        return
    state = ocr_tasks.state(folder)
    if state is None:
        raise ItemFailure(
            ErrorCode.OCR_FAILED, "the text recognition of this file was lost; reindex it"
        )
    ctx.progress(item.id, ItemPhase.WAITING, 100.0 * state.done / max(1, state.total))
    if state.failure is not None:
        ocr_tasks.discard(folder)
        raise ItemFailure(*state.failure)
    if state.finished:
        queue_recognised_index(parts, item, reacquire=bool(job.payload.get("reacquire", True)))
        return
    if not state.running:
        _start_again(folder, state.starts)
    raise PollLater(poll_delay(job.attempts))


def _start_again(folder: Path, starts: int) -> None:
    """No worker is at it: it waits for its turn, or its Trove was killed, or it crashed."""
    if starts >= MAX_STARTS:
        ocr_tasks.discard(folder)
        raise ItemFailure(
            ErrorCode.OCR_FAILED,
            f"text recognition stopped {starts} times before it finished (a page may need "
            "more memory than allowed); reindex to try again",
        )
    ocr_tasks.start_if_free(folder)
