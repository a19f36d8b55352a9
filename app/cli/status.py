"""`trove status [--watch]`: what a base is doing, redrawn until nothing is in progress."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence

from app.cli.output import EXIT_OK, bar, shown
from app.cli.vectors_line import status_line
from app.cli.watch import Watch
from app.knowledge.service import KnowledgeService
from app.knowledge.types import (
    RUNNING_STATUSES,
    Base,
    Item,
    ItemPhase,
    ItemStatus,
)

WATCH_INTERVAL = 0.5


def cmd_status(svc: KnowledgeService, args: argparse.Namespace) -> int:
    base = svc.resolve_base(args.base)
    if not args.watch:
        print(_status_screen(svc, base))
        return EXIT_OK
    interactive = sys.stdout.isatty()
    watch = Watch(svc, base)
    while True:
        activity = watch.check()  # recovers a dead indexer's work before the redraw
        screen = _status_screen(svc, base)
        if interactive:
            sys.stdout.write("\x1b[H\x1b[J" + screen + "\n")
        else:
            print(screen)
        sys.stdout.flush()
        if not _in_progress(svc, base, svc.list_items(base.id)):
            return watch.report() if watch.stopped else EXIT_OK
        if watch.stopped and not watch.others_working(activity):
            return watch.report()  # nobody is left to pick the rest of the queue up
        time.sleep(WATCH_INTERVAL)  # polling another process's progress through the catalog


def _in_progress(svc: KnowledgeService, base: Base, items: Sequence[Item]) -> bool:
    """Something runs or waits to run: items being indexed or deleted, or documents whose
    vectors the vector stage still computes (not while it is paused or stopped)."""
    if any(i.status in RUNNING_STATUSES or i.status is ItemStatus.DELETING for i in items):
        return True
    if not any(i.status is ItemStatus.COMPLETED and i.phase is ItemPhase.EMBEDDING for i in items):
        return False
    return not svc.vectors_paused(base.id) and svc.vectors_stopped(base.id) is None


def _status_screen(svc: KnowledgeService, base: Base) -> str:
    items = svc.list_items(base.id)
    counts: dict[str, int] = {}
    for item in items:
        counts[str(item.status)] = counts.get(str(item.status), 0) + 1
    lines = [
        f"{shown(base.name)} ({base.id}): "
        + ", ".join(f"{n} {s}" for s, n in sorted(counts.items()))
    ]
    if base.embedding_model is not None:
        lines.append(status_line(svc.vector_status(base.id)))
    for item in items:
        if item.status in RUNNING_STATUSES:
            label = str(item.phase or item.status)
            lines.append(
                f"  {bar(item.progress if item.phase else None)} {label:<10} {shown(item.title)}"
            )
        elif item.status is ItemStatus.FAILED:
            lines.append(
                f"  failed {shown(item.error_code)}: {shown(item.title)}: "
                f"{shown(item.error_message)}"
            )
    return "\n".join(lines)
