"""A normal exit hands its claimed and running work back to the queue (DESIGN.md section 5).

The window closing, a CLI ending (Ctrl-C included) or an MCP session ending asks running
jobs to stop at their next step; the runner then puts each back in the queue as it was
before the claim, for whichever Trove process runs the queue next. Nothing is failed and
nothing paid for is lost: an index job keeps the vectors of the batches it embedded beside
the item's material (paid_vectors.py) and its next run reuses them.

A job that does not stop within its process's shutdown wait (an embedding request that
takes its time) is marked `STOPPED_AT_EXIT` while its row still names the live process;
once the process is gone, recovery hands it back instead of abandoning it as it abandons
the work of a crashed process. A run whose hand-back write failed releases its row with
the same mark.
"""

from __future__ import annotations

from app.knowledge.catalog import Catalog, Job
from app.knowledge.jobs.kinds import JobKind
from app.knowledge.types import RUNNING_STATUSES

HANDED_BACK = "handed back by a normal exit; it runs again from the queue"
STOPPED_AT_EXIT = "still running when its Trove process exited normally; to be handed back"


def hand_back(catalog: Catalog, job: Job, reason: str = HANDED_BACK) -> None:
    """Queue a running job again at once; its claim does not count as an attempt.

    An index job's item shows as queued again: its reading / embedding phase and percent
    belonged to the run that stopped. The phase goes first, while no other process can
    have claimed the job and reported a phase of its own.
    """
    if job.kind == JobKind.INDEX_DOCUMENTS and job.item_id is not None:
        item = catalog.get_item(job.item_id)
        if item is not None and item.status in RUNNING_STATUSES and item.phase is not None:
            catalog.set_item_phase(item.id, None, None)
    catalog.hand_back_job(job.id, reason)


def stopped_at_exit(job: Job) -> bool:
    """Whether a running job of a process that is gone was left by a normal exit."""
    return job.last_error == STOPPED_AT_EXIT
