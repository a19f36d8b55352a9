"""Running the queue to the end with live progress, then one summary of what a command touched."""

from __future__ import annotations

import shlex
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import apsw

from app.cli.output import EXIT_FAILED, EXIT_OK, bar, shown
from app.cli.vectors_line import status_line
from app.knowledge.jobs.errors import storage_failure
from app.knowledge.material_paths import CONTAINER_TYPES
from app.knowledge.service import KnowledgeService
from app.knowledge.types import (
    RUNNING_STATUSES,
    Base,
    ErrorCode,
    Item,
    ItemStatus,
)
from app.runtime.executor import QueueStall
from app.runtime.headless import run_until_drained


def process_and_report(
    svc: KnowledgeService,
    base: Base,
    item_ids: set[str] | None,
    *,
    wait: bool,
    errors: bool,
    until_searchable: bool = False,
) -> int:
    """Run the queue to the end (or, with `until_searchable`, until the base's documents
    are searchable by full text), then summarise the items this command touched."""
    hybrid = base.embedding_model is not None
    with _progress_printer() as progress:
        drain = run_until_drained(
            svc,
            progress,
            searchable=(lambda: svc.pending_documents(base.id) == 0) if hybrid else None,
            until_searchable=until_searchable and hybrid,
        )
    if drain.interrupted:
        print(
            f"interrupted; unfinished items wait in the queue (the window, or: trove resume "
            f"{shlex.quote(base.name)})",
            file=sys.stderr,
        )
        return drain.exit_code
    if drain.stall is not None:
        print_stall(svc, base.name, drain.stall)
    items = svc.list_items(base.id)
    if item_ids is not None:
        items = [i for i in items if i.id in item_ids or i.parent_id in item_ids]
    leaves = [i for i in items if i.type not in CONTAINER_TYPES]
    failed = [i for i in leaves if i.status is ItemStatus.FAILED]
    # The queue drained but these never got an outcome written (the catalog refused it),
    # or it stalled before they ran: never reported as a success.
    unfinished = [i for i in leaves if i.status in RUNNING_STATUSES]
    # A folder still preparing was never expanded: its files are not known yet.
    unfinished += [
        i for i in items if i.type in CONTAINER_TYPES and i.status is ItemStatus.PREPARING
    ]
    done = sum(1 for i in leaves if i.status is ItemStatus.COMPLETED)
    if drain.searchable_after is not None:
        print(f"searchable by full text after {drain.searchable_after:.1f} s", file=sys.stderr)
    if hybrid:
        vectors = svc.vector_status(base.id)
        line = status_line(vectors)
        if not vectors.done and not vectors.paused and vectors.stopped is None:
            line += (
                "; the rest is computed in the background by the next Trove that runs the "
                f"queue (the window, or: trove vectors {shlex.quote(base.name)} --resume --wait)"
            )
        print(line, file=sys.stderr)
    summary = f"indexed {done} document(s), {len(failed)} failed"
    if unfinished:
        summary += f", {len(unfinished)} unfinished"
    print(summary, file=sys.stderr)
    for item in failed:
        print(
            f"failed: {shown(item.source[:200])}: {shown(item.error_code)}: "
            f"{shown(item.error_message)}",
            file=sys.stderr,
        )
    queued = _queued_items(svc, base) if unfinished else set()
    for item in unfinished:
        print(
            f"unfinished: {shown(item.source[:200])}: {_why_unfinished(item, queued, base)}",
            file=sys.stderr,
        )
    if drain.stall is not None or (wait and (failed or unfinished or errors)):
        return EXIT_FAILED
    return EXIT_OK


def print_stall(svc: KnowledgeService, base_name: str, stall: QueueStall) -> None:
    """One line: why no job could be claimed, and what to run once it is fixed."""
    then = f"run: trove resume {base_name}"
    failure = storage_failure(stall.error, svc.layout.home, then=then)
    if failure is not None:
        print(
            f"error: {failure.code}: no job could be taken from the queue: {failure.message} "
            f"(data folder: {svc.layout.home})",
            file=sys.stderr,
        )
        return
    print(
        f"error: no job could be taken from the queue ({type(stall.error).__name__}: "
        f"{stall.error}; {stall.failures} tries); once Trove's catalog "
        f"{svc.layout.catalog_path} works again, {then}",
        file=sys.stderr,
    )


def _queued_items(svc: KnowledgeService, base: Base) -> set[str]:
    """Items a queued job of the base is about (they never started)."""
    try:
        return svc.jobs.queued_items(base.id)
    except apsw.Error:  # the summary must still come out
        return set()


def _why_unfinished(item: Item, queued: set[str], base: Base) -> str:
    if item.id in queued or item.parent_id in queued:
        return f"not indexed yet (still queued); trove resume {base.name} runs it"
    return (
        f"its result could not be saved (Trove's data storage refused the write); it is "
        f"marked {ErrorCode.INDEXING_INTERRUPTED} on the next start, and trove resume "
        f"{base.name} indexes it again"
    )


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
