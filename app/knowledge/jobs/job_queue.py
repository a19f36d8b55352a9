"""The job queue as the runtime works it: claim, count, release, report phases.

The executor (app/runtime) runs claimed jobs on its own threads; it reaches the queue only
through this object, so the catalog stays the engine's own.
"""

from __future__ import annotations

from collections.abc import Iterable

from app.knowledge.catalog import Job
from app.knowledge.engine import EngineParts
from app.knowledge.jobs.context import CancelCheck, JobContext, ProgressCallback
from app.knowledge.jobs.hand_back import STOPPED_AT_EXIT
from app.knowledge.jobs.recovery import job_items
from app.knowledge.types import ItemPhase


class JobQueue:
    def __init__(self, parts: EngineParts) -> None:
        self._parts = parts

    def claim_next(
        self, *, now: float, owner: str, skip: Iterable[tuple[str, str]] = ()
    ) -> Job | None:
        """Mark the oldest due queued job (of a (base, kind) queue not in `skip`) running."""
        return self._parts.catalog.claim_next_job(now=now, owner=owner, skip=skip)

    def counts(self, base_id: str | None = None) -> tuple[int, int]:
        """(queued, running) jobs, of one base or all."""
        return self._parts.catalog.job_counts(base_id)

    def running(self, base_id: str | None = None) -> list[Job]:
        return self._parts.catalog.list_jobs(base_id, statuses=("running",))

    def queued_items(self, base_id: str) -> set[str]:
        """The items the base's queued jobs are about: work that has not started."""
        jobs = self._parts.catalog.list_jobs(base_id, statuses=("queued",))
        return set().union(*(job_items(j) for j in jobs)) if jobs else set()

    def next_due_time(self) -> float | None:
        return self._parts.catalog.next_due_time()

    def release(self, job_id: int, error: str) -> None:
        self._parts.catalog.release_job(job_id, error)

    def mark_stopped_at_exit(self, job_id: int, owner: str) -> None:
        """A job still running as its process exits normally: recovery hands it back."""
        self._parts.catalog.mark_running_job(job_id, owner, STOPPED_AT_EXIT)

    def set_item_phase(self, item_id: str, phase: ItemPhase | None, percent: float | None) -> None:
        """Persist a running item's phase, for other processes that read progress."""
        self._parts.catalog.set_item_phase(item_id, phase, percent)

    def context(self, *, progress: ProgressCallback, cancelled: CancelCheck) -> JobContext:
        """What a claimed job's handler runs with."""
        return JobContext(self._parts, progress=progress, cancelled=cancelled)
