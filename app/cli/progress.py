"""Running the queue to the end with live progress, then one summary of what a command touched."""

from __future__ import annotations

import shlex
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from app.cli.output import EXIT_FAILED, EXIT_OK, bar
from app.knowledge.material_paths import CONTAINER_TYPES
from app.knowledge.service import KnowledgeService
from app.knowledge.types import (
    RUNNING_STATUSES,
    Base,
    ErrorCode,
    ItemStatus,
)
from app.runtime.headless import run_until_drained


def process_and_report(
    svc: KnowledgeService, base: Base, item_ids: set[str] | None, *, wait: bool, errors: bool
) -> int:
    """Run the queue to the end, then summarise the items this command touched."""
    with _progress_printer() as progress:
        finished = run_until_drained(svc, progress)
    if not finished:
        print(
            f"interrupted; unfinished items wait in the queue (the window, or: trove resume "
            f"{shlex.quote(base.name)})",
            file=sys.stderr,
        )
        return 130
    items = svc.list_items(base.id)
    if item_ids is not None:
        items = [i for i in items if i.id in item_ids or i.parent_id in item_ids]
    leaves = [i for i in items if i.type not in CONTAINER_TYPES]
    failed = [i for i in leaves if i.status is ItemStatus.FAILED]
    # The queue drained but these never got an outcome written (the catalog refused it):
    # the next start marks them INDEXING_INTERRUPTED. Never reported as a success.
    unfinished = [i for i in leaves if i.status in RUNNING_STATUSES]
    done = sum(1 for i in leaves if i.status is ItemStatus.COMPLETED)
    summary = f"indexed {done} document(s), {len(failed)} failed"
    if unfinished:
        summary += f", {len(unfinished)} unfinished"
    print(summary, file=sys.stderr)
    for item in failed:
        print(
            f"failed: {item.source[:200]}: {item.error_code}: {item.error_message}", file=sys.stderr
        )
    for item in unfinished:
        print(
            f"unfinished: {item.source[:200]}: its result could not be saved (Trove's data "
            f"storage refused the write); "
            f"it is marked {ErrorCode.INDEXING_INTERRUPTED} on the next start",
            file=sys.stderr,
        )
    if wait and (failed or unfinished or errors):
        return EXIT_FAILED
    return EXIT_OK


@contextmanager
def _progress_printer() -> Iterator[Callable[[str, str, str, float], None]]:
    """Live progress on a terminal; silent when output is piped."""
    interactive = sys.stderr.isatty()
    seen: set[str] = set()

    def report(base_id: str, item_id: str, phase: str, percent: float) -> None:
        if not interactive:
            return
        seen.add(item_id)
        detail = f" {bar(percent)}" if percent >= 0 else ""
        sys.stderr.write(f"\r\x1b[Kdocument {len(seen)}: {phase or 'done'}{detail}")
        sys.stderr.flush()

    try:
        yield report
    finally:
        if interactive and seen:
            sys.stderr.write("\r\x1b[K")
