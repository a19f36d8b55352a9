"""`trove restore` and `trove doctor`: rebuilding and checking a data folder."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from app.cli.output import EXIT_FAILED, EXIT_OK, print_json, shown
from app.cli.progress import process_and_report
from app.knowledge.doctor import Code, Problem, Repair
from app.knowledge.service import KnowledgeService
from app.knowledge.types import Item, ItemStatus, VectorStop
from app.runtime.headless import run_until_drained

# Restore names this many gone sources; the rest are counted (they are failed items too).
MAX_NAMED = 50


def cmd_restore(svc: KnowledgeService, args: argparse.Namespace) -> int:
    base = svc.resolve_base(args.base)
    report = svc.restore_base(base.id, args.embedding)
    print(
        f"restoring {report.restored} item(s); skipped {report.skipped_missing_source_count} whose "
        f"copy or original is missing; kept {report.unverifiable} that could not be checked",
        file=sys.stderr,
    )
    for source in report.missing_sources[:MAX_NAMED]:
        print(f"  gone: {source}", file=sys.stderr)
    if len(report.missing_sources) > MAX_NAMED:
        print(f"  ... and {len(report.missing_sources) - MAX_NAMED} more", file=sys.stderr)
    return process_and_report(svc, base, None, wait=True, errors=False)


def cmd_doctor(svc: KnowledgeService, args: argparse.Namespace) -> int:
    base_id = svc.resolve_base(args.base).id if args.base else None
    result = svc.doctor(base_id, repair=args.repair)
    # Items the repair queued to be indexed again from their copies finish here, so the
    # command ends with them completed (or says which could not be).
    unfinished = _index_requeued(svc, result.repairs)
    stopped = _vectors_stopped(svc, result.repairs)
    clean = result.clean and not unfinished and not stopped
    if args.json:
        print_json(result.to_json())
        return EXIT_OK if clean else EXIT_FAILED
    report = result.report
    print(f"checked {len(report.bases)} knowledge base(s): {len(report.problems)} problem(s)")
    _print_problems(report.problems)
    if result.after is not None:
        for repair in result.repairs:
            where = f" item {repair.item_id}" if repair.item_id else ""
            print(f"repaired {repair.code} (base {repair.base_id or '-'}{where}): {repair.action}")
        remaining = result.after.problems
        print(f"after repair: {len(remaining)} problem(s)")
        _print_problems(remaining)
        for item in unfinished:
            print(f"  not indexed again: {item.title!r}: {item.error_code}: {item.error_message}")
        for base_id, stop in stopped:
            print(
                f"  vectors not computed (base {base_id}): {stop.code}: {shown(stop.message)}; "
                "the documents stay searchable by their words (trove vectors BASE --resume)"
            )
    elif any(p.repairable for p in report.problems):
        fixable = sum(1 for p in report.problems if p.repairable)
        print(f"{fixable} of them can be repaired: trove doctor --repair", file=sys.stderr)
    for corrupt in sorted({p.base_id or "" for p in result.final.problems if _needs_restore(p)}):
        print(
            f"the index of base {corrupt} must be rebuilt from its own copies: "
            f"trove restore {corrupt}",
            file=sys.stderr,
        )
    return EXIT_OK if clean else EXIT_FAILED


def _needs_restore(problem: Problem) -> bool:
    return problem.code is Code.INDEX_CORRUPT and problem.base_id is not None


def _index_requeued(svc: KnowledgeService, repairs: Sequence[Repair]) -> list[Item]:
    """Run the queue when the repair queued items again; the ones that did not complete."""
    ids = {r.item_id for r in repairs if r.requeued and r.item_id}
    if not ids:
        return []
    run_until_drained(svc)
    items = [svc.get_item(i) for i in sorted(ids)]
    return [i for i in items if i.status is not ItemStatus.COMPLETED]


def _vectors_stopped(
    svc: KnowledgeService, repairs: Sequence[Repair]
) -> list[tuple[str, VectorStop]]:
    """The bases whose vector stage the repair queued and that stopped (after the queue ran)."""
    bases = sorted({r.base_id for r in repairs if r.code is Code.MISSING_VECTORS and r.base_id})
    found = []
    for base_id in bases:
        stop = svc.vector_status(base_id).stopped
        if stop is not None:
            found.append((base_id, stop))
    return found


def _print_problems(problems: Sequence[Problem]) -> None:
    for p in problems:
        where = f"base {p.base_id or '-'}" + (f" item {p.item_id}" if p.item_id else "")
        fix = "repairable" if p.repairable else "not repairable"
        print(f"  {p.code} ({where}; {fix}): {shown(p.detail)}")
