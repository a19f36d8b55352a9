"""`trove restore` and `trove doctor`: rebuilding and checking a data folder."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from app.cli.output import EXIT_FAILED, EXIT_OK, print_json, shown
from app.cli.progress import process_and_report
from app.knowledge.doctor import Problem
from app.knowledge.service import KnowledgeService


def cmd_restore(svc: KnowledgeService, args: argparse.Namespace) -> int:
    base = svc.resolve_base(args.base)
    report = svc.restore_base(base.id, args.embedding)
    print(
        f"restoring {report.restored} item(s); skipped {report.skipped_missing_source_count} whose "
        f"copy is missing; kept {report.unverifiable} that could not be checked",
        file=sys.stderr,
    )
    return process_and_report(svc, base, None, wait=True, errors=False)


def cmd_doctor(svc: KnowledgeService, args: argparse.Namespace) -> int:
    base_id = svc.resolve_base(args.base).id if args.base else None
    result = svc.doctor(base_id, repair=args.repair)
    if args.json:
        print_json(result.to_json())
        return EXIT_OK if result.clean else EXIT_FAILED
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
    elif any(p.repairable for p in report.problems):
        fixable = sum(1 for p in report.problems if p.repairable)
        print(f"{fixable} of them can be repaired: trove doctor --repair", file=sys.stderr)
    return EXIT_OK if result.clean else EXIT_FAILED


def _print_problems(problems: Sequence[Problem]) -> None:
    for p in problems:
        where = f"base {p.base_id or '-'}" + (f" item {p.item_id}" if p.item_id else "")
        fix = "repairable" if p.repairable else "not repairable"
        print(f"  {p.code} ({where}; {fix}): {shown(p.detail)}")
