"""Startup recovery: nothing is left spinning after a crash, and deletions always finish.

- Running jobs whose process is gone follow their policy: `retry` jobs (delete-subtree)
  go back to the queue; `abandon` jobs are dropped (a crash interrupts them). A job its
  process was handing back at a normal exit (hand_back.py) is handed back instead.
- Items left preparing/processing with no live job fail with INDEXING_INTERRUPTED (they
  can be reindexed by hand, or by `trove resume`), and temporary files of their
  interrupted writes (and the work folders of their text recognition) are removed; the
  record of vectors already paid for stays, so finishing them does not pay twice;
  folder and sitemap roots settle to their children's aggregate.
- Items left deleting without a live delete job get one again, in groups of 500 roots.
- Failed and abandoned job rows older than JOB_RETENTION_DAYS are deleted: they are kept
  only to diagnose recent failures (the item keeps its own error code and message), and
  would otherwise pile up for ever.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

from app.knowledge import vector_stage
from app.knowledge.catalog import Catalog, Job
from app.knowledge.engine import EngineParts
from app.knowledge.jobs.hand_back import hand_back, stopped_at_exit
from app.knowledge.jobs.index_documents import remove_temp_files
from app.knowledge.jobs.kinds import JobKind, Recovery, policy_for
from app.knowledge.jobs.parents import settle_parent
from app.knowledge.jobs.queue import queue_deletes, queue_vectors
from app.knowledge.material_paths import CONTAINER_TYPES
from app.knowledge.ocr import tasks as ocr_tasks
from app.knowledge.types import (
    RUNNING_STATUSES,
    SETTLED_STATUSES,
    ErrorCode,
    Item,
    ItemPhase,
    ItemStatus,
)

log = logging.getLogger(__name__)

INTERRUPTED_MESSAGE = "indexing was interrupted (Trove stopped unexpectedly); reindex to finish it"
JOB_RETENTION_DAYS = 14


@dataclass(slots=True)
class RecoveryReport:
    requeued_jobs: int = 0
    handed_back_jobs: int = 0  # left running by a normal exit that did not wait for them
    abandoned_jobs: int = 0
    interrupted_items: int = 0
    resumed_deletions: int = 0
    pruned_jobs: int = 0
    resumed_vector_stages: int = 0  # bases whose documents waited for vectors with no job


def job_items(job: Job) -> set[str]:
    """The item ids a job works on: its own item and the roots in its payload."""
    ids = {job.item_id} if job.item_id else set()
    roots = job.payload.get("roots")
    if isinstance(roots, list):
        ids.update(str(r) for r in roots)
    return ids


@dataclass(slots=True, frozen=True)
class Activity:
    """Who is working on a base, as another process (`trove status --watch`) can tell."""

    live_owners: frozenset[str]  # owners of running jobs of any base that are still alive
    base_owners: frozenset[str]  # owners of the base's running jobs, alive or not
    queued: int  # the base's queued jobs
    due: int  # of them, claimable now (the others wait for a retry's backoff)
    jobless: int  # the base's items in a running state with no job to finish them

    @property
    def dead_owners(self) -> frozenset[str]:
        return self.base_owners - self.live_owners


def activity(catalog: Catalog, base_id: str, *, now: float | None = None) -> Activity:
    now = time.time() if now is None else now
    jobs = catalog.list_jobs(statuses=("queued", "running"))
    alive: dict[str, bool] = {}
    for job in jobs:
        if job.status == "running" and job.owner and job.owner not in alive:
            alive[job.owner] = catalog.job_owner_alive(job)
    mine = [j for j in jobs if j.base_id == base_id]
    queued = [j for j in mine if j.status == "queued"]
    busy = set().union(*(job_items(j) for j in jobs)) if jobs else set()
    jobless = sum(
        1
        for i in catalog.list_items(base_id)
        if i.status in RUNNING_STATUSES
        and i.id not in busy
        and not (i.type in CONTAINER_TYPES and i.status is ItemStatus.PROCESSING)
    )
    return Activity(
        live_owners=frozenset(o for o, ok in alive.items() if ok),
        base_owners=frozenset(j.owner or "" for j in mine if j.status == "running"),
        queued=len(queued),
        due=sum(1 for j in queued if j.not_before <= now),
        jobless=jobless,
    )


def recover(parts: EngineParts, *, now: float | None = None) -> RecoveryReport:
    catalog = parts.catalog
    report = RecoveryReport()
    now = time.time() if now is None else now
    report.pruned_jobs = catalog.prune_finished_jobs(now - JOB_RETENTION_DAYS * 86_400)
    abandoned: set[str] = set()  # items of the jobs a crash cut short
    for job in catalog.list_jobs(statuses=("running",)):
        if catalog.job_owner_alive(job):
            continue  # another live Trove process is running it
        if stopped_at_exit(job):
            hand_back(catalog, job, "handed back after its process exited normally")
            report.handed_back_jobs += 1
        elif policy_for(job.kind).recovery is Recovery.RETRY:
            catalog.requeue_job(job.id, "resumed after an interrupted run")
            report.requeued_jobs += 1
        else:
            catalog.finish_job(job.id, "abandoned", "interrupted")
            report.abandoned_jobs += 1
            abandoned.update(job_items(job))

    for base in catalog.list_bases():
        # One write transaction per base: the jobs and items are read and fixed as one
        # snapshot, so an item another live process creates meanwhile (with its job) is
        # never taken for an interrupted one. Recovery may run while other writers work.
        with parts.mutex.lock(base.id), catalog.transaction():
            live = catalog.list_jobs(base.id, statuses=("queued", "running"))
            busy = set().union(*(job_items(j) for j in live)) if live else set()
            deleting_jobs = {
                i for j in live if j.kind == JobKind.DELETE_SUBTREE for i in job_items(j)
            }
            items = catalog.list_items(base.id)
            by_id = {i.id: i for i in items}
            to_settle: list[str] = []
            for item in items:
                if item.id in busy:
                    continue
                if item.status in SETTLED_STATUSES and item.id in abandoned:
                    # Killed after its outcome landed, before it cleaned up: what it left
                    # beside the material (the record of paid vectors too) is of no use.
                    remove_temp_files(parts.layout.raw_dir(base.id), item)
                    continue
                if item.status not in RUNNING_STATUSES:
                    continue
                if item.type in CONTAINER_TYPES and item.status is ItemStatus.PROCESSING:
                    to_settle.append(item.id)  # it only waits on its children
                    continue
                catalog.set_item_status(
                    item.id,
                    ItemStatus.FAILED,
                    error_code=ErrorCode.INDEXING_INTERRUPTED,
                    error_message=INTERRUPTED_MESSAGE,
                )
                # A write cut short by the crash leaves a temporary file beside its target;
                # a text recognition it waited on leaves its work folder.
                remove_temp_files(parts.layout.raw_dir(base.id), item, keep_paid=True)
                ocr_tasks.discard(ocr_tasks.work_dir(parts.layout, base.id, item.id))
                report.interrupted_items += 1
                if item.parent_id:
                    to_settle.append(item.parent_id)
            for item_id in dict.fromkeys(to_settle):
                settle_parent(catalog, item_id)
            orphans = [
                i.id
                for i in items
                if i.status is ItemStatus.DELETING
                and i.id not in deleting_jobs
                and not _ancestor_deleting(i.parent_id, by_id)
            ]
            if orphans:
                queue_deletes(parts, orphans, base.id)
                report.resumed_deletions += len(orphans)
            if _vectors_orphaned(parts, base.id, items, live):
                queue_vectors(parts, base.id)
                report.resumed_vector_stages += 1
    if (
        report.interrupted_items
        or report.requeued_jobs
        or report.handed_back_jobs
        or report.resumed_deletions
        or report.resumed_vector_stages
    ):
        log.warning("recovered after an interrupted run: %s", report)
    elif report.pruned_jobs:
        log.info(
            "removed %d failed job records older than %d days",
            report.pruned_jobs,
            JOB_RETENTION_DAYS,
        )
    return report


def _vectors_orphaned(parts: EngineParts, base_id: str, items: list[Item], live: list[Job]) -> bool:
    """Documents wait for vectors, yet no vector job is queued or running (its row was
    lost, or a job of an older Trove failed) and the stage is neither paused nor stopped."""
    if any(j.kind == JobKind.EMBED_VECTORS for j in live):
        return False
    if not any(i.status is ItemStatus.COMPLETED and i.phase is ItemPhase.EMBEDDING for i in items):
        return False
    catalog = parts.catalog
    return (
        not vector_stage.is_paused(catalog, base_id)
        and vector_stage.stopped(catalog, base_id) is None
    )


def _ancestor_deleting(parent_id: str | None, by_id: dict[str, Item]) -> bool:
    """Deleting the topmost deleting ancestor covers its subtree."""
    while parent_id is not None:
        parent = by_id.get(parent_id)
        if parent is None:
            return False
        if parent.status is ItemStatus.DELETING:
            return True
        parent_id = parent.parent_id
    return False
