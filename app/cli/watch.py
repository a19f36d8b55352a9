"""What `status --watch` knows about the processes working on a base, and its last line."""

from __future__ import annotations

import shlex
import sys
import time
from collections.abc import Sequence

from app.cli.output import EXIT_FAILED
from app.knowledge.jobs import recovery
from app.knowledge.jobs.owner import owner_alive
from app.knowledge.material_paths import CONTAINER_TYPES
from app.knowledge.service import KnowledgeService
from app.knowledge.types import (
    RUNNING_STATUSES,
    Base,
    ErrorCode,
    Item,
    ItemPhase,
    ItemStatus,
)

# A live executor claims a due job within milliseconds and always keeps one running when
# it throttles for memory; due work nobody has claimed for this long has no process.
WATCH_IDLE_GRACE = 5.0

# More interrupted items than this are not listed one by one in the reindex hint.
HINT_MAX_IDS = 10


class Watch:
    """What `status --watch` knows about the processes working on a base.

    The indexing runs in another process (`trove add`, the window), which may be killed.
    Its running jobs then name an owner that is gone; the watch runs the same recovery as
    the executor does for a dead owner (its items fail with INDEXING_INTERRUPTED,
    deletions go back to the queue) and ends once no live process works any more."""

    def __init__(self, svc: KnowledgeService, base: Base) -> None:
        self._svc = svc
        self._base = base
        self._seen: set[str] = set()  # live owners seen running the base's jobs
        self._idle_since: float | None = None
        self.stopped = False
        self._dead_pids: set[str] = set()
        self._interrupted: dict[str, Item] = {}  # by id, in the catalog's order

    def check(self) -> recovery.Activity:
        activity = self._svc.activity(self._base.id)
        # A process seen working is asked directly: between two jobs, or while a job
        # waits for its retry, it has no running job to name it.
        self._seen |= activity.base_owners & activity.live_owners
        dead = activity.dead_owners | {o for o in self._seen if not owner_alive(o)}
        self._seen -= dead
        if dead:
            self._dead_pids.update(o.partition(":")[0] for o in dead if o)
            return self._recover()
        # No owner seen dying: it may have died before claiming anything.
        unclaimed = activity.due or activity.jobless
        if self.others_working(activity) or not unclaimed:
            self._idle_since = None
        elif self._idle_since is None:
            self._idle_since = time.monotonic()
        elif time.monotonic() - self._idle_since >= WATCH_IDLE_GRACE:
            return self._recover()
        return activity

    def others_working(self, activity: recovery.Activity) -> bool:
        """Is a live process running jobs (it may pick up the base's queue) or known to
        be working on the base?"""
        return bool(activity.live_owners or self._seen)

    def _recover(self) -> recovery.Activity:
        self.stopped = True
        if not self._svc.read_only:
            before = {i.id: i.status for i in self._svc.list_items(self._base.id)}
            self._svc.recover()
            for item in self._svc.list_items(self._base.id):
                if _interrupted_now(item, before.get(item.id)):
                    self._interrupted[item.id] = item
        return self._svc.activity(self._base.id)

    def report(self) -> int:
        """One line: what stopped, what it left, and how to finish it."""
        pids = ", ".join(sorted(self._dead_pids))
        who = f" (pid {pids} is gone)" if pids else " (no Trove process is working on it)"
        line = f"the process indexing {self._base.name!r} stopped{who}"
        items = self._svc.list_items(self._base.id)
        if self._svc.read_only:
            unfinished = sum(1 for i in items if i.status in RUNNING_STATUSES)
            print(f"{line}; {unfinished} item(s) were left unfinished", file=sys.stderr)
            return EXIT_FAILED
        ids = list(self._interrupted)
        if ids:
            named = " ".join(ids) if len(ids) <= HINT_MAX_IDS else "see trove item list"
            line += (
                f"; {len(ids)} item(s) were marked interrupted ({ErrorCode.INDEXING_INTERRUPTED})"
                f"; finish them with: trove resume {shlex.quote(self._base.id)} ({named})"
            )
        else:
            line += "; no item was interrupted"
        print(line + _still_queued(items, self._base.id), file=sys.stderr)
        return EXIT_FAILED


def _still_queued(items: Sequence[Item], base_id: str) -> str:
    """Work the dead process queued but never started: recovery leaves it queued (queued
    jobs have no owner), and the next executor, of any indexing command, runs it."""
    waiting = sum(
        1
        for i in items
        if i.status in RUNNING_STATUSES
        and not (i.type in CONTAINER_TYPES and i.status is ItemStatus.PROCESSING)
    )
    deleting = sum(1 for i in items if i.status is ItemStatus.DELETING)
    vectors = sum(
        1 for i in items if i.status is ItemStatus.COMPLETED and i.phase is ItemPhase.EMBEDDING
    )
    left = [f"{waiting} queued item(s)"] if waiting else []
    left += [f"{deleting} deletion(s)"] if deleting else []
    # Searchable already; their vector stage is queued again by recovery (never failed).
    left += [f"the vector stage of {vectors} searchable document(s)"] if vectors else []
    if not left:
        return ""
    return (
        f"; {' and '.join(left)} will run the next time Trove runs its queue "
        f"(the window, or: trove resume {shlex.quote(base_id)})"
    )


def _interrupted_now(item: Item, before: ItemStatus | None) -> bool:
    """Failed by this recovery: it was running, and is not a folder or sitemap that only
    settled to its children's aggregate."""
    return (
        before in RUNNING_STATUSES
        and item.status is ItemStatus.FAILED
        and item.error_code == ErrorCode.INDEXING_INTERRUPTED
        and not (item.type in CONTAINER_TYPES and before is ItemStatus.PROCESSING)
    )
