"""Commands that change a base's items: `item list`, `add`, `note`, `reindex`, `resume`, `delete`."""

from __future__ import annotations

import argparse
import re
import sys

from app.cli.folders import folder_options, print_skipped
from app.cli.output import EXIT_OK, EXIT_USAGE, item_json, print_json, shown, status_text, table
from app.cli.progress import process_and_report
from app.cli.sync import cmd_add_linked
from app.knowledge.ingestion import EMPTY_PATH
from app.knowledge.service import KnowledgeService
from app.knowledge.types import (
    RUNNING_STATUSES,
    OnConflict,
)
from app.runtime.headless import run_until_drained


def cmd_item_list(svc: KnowledgeService, args: argparse.Namespace) -> int:
    base = svc.resolve_base(args.base)
    items = svc.list_items(base.id)
    if args.json:
        print_json([item_json(i) for i in items])
        return EXIT_OK
    rows = [
        (
            i.id,
            str(i.type),
            status_text(i),
            str(i.chunk_count),
            i.relative_path or "",
        )
        for i in items
    ]
    print(table(rows, ("ID", "TYPE", "STATUS", "CHUNKS", "MATERIAL")) if rows else "no items")
    return EXIT_OK


_URL_LIKE = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://|^(?:file|javascript|data|mailto|about):", re.I)


def refuse_empty_paths(paths: list[str]) -> bool:
    """An empty argument (an unset "$DIR") would add the current folder: say so instead."""
    if all(p.strip() for p in paths):
        return False
    print(f"error: {EMPTY_PATH}; nothing was added", file=sys.stderr)
    return True


def cmd_add(svc: KnowledgeService, args: argparse.Namespace) -> int:
    if refuse_empty_paths(args.paths):
        return EXIT_USAGE
    if getattr(args, "link", False):
        return cmd_add_linked(svc, args)
    base = svc.resolve_base(args.base)
    urls = [p for p in args.paths if _URL_LIKE.match(p)]
    files = [p for p in args.paths if not _URL_LIKE.match(p)]
    on_conflict = OnConflict(args.on_conflict)
    reports = []
    if files:
        options = folder_options(args)
        reports.append(svc.add(base.id, files, on_conflict=on_conflict, folder_options=options))
    if urls:
        reports.append(svc.add_urls(base.id, urls, sitemap=args.sitemap, on_conflict=on_conflict))
    added = [i for r in reports for i in r.added]
    for report in reports:
        for source, reason in report.skipped:
            print(
                f"skipped {source}: {reason} (use --on-conflict replace to replace it)",
                file=sys.stderr,
            )
        for source, _old in report.replaced:
            print(f"replacing {source}", file=sys.stderr)
        for source, message in report.errors:
            print(f"error: {source}: {message}", file=sys.stderr)
    print(f"added {len(added)} item(s) to {base.name!r}", file=sys.stderr)
    code = process_and_report(
        svc,
        base,
        {i.id for i in added},
        wait=args.wait,
        errors=any(r.errors for r in reports),
        until_searchable=args.until_searchable,
    )
    print_skipped(svc, [i.id for i in added], verbose=getattr(args, "verbose", False))
    return code


def cmd_note(svc: KnowledgeService, args: argparse.Namespace) -> int:
    base = svc.resolve_base(args.base)
    text = sys.stdin.read() if args.text == "-" else args.text
    item = svc.add_note(base.id, args.title, text)
    print(f"added note {item.title!r} ({item.id})", file=sys.stderr)
    return process_and_report(svc, base, {item.id}, wait=True, errors=False)


def cmd_reindex(svc: KnowledgeService, args: argparse.Namespace) -> int:
    base = svc.resolve_base(args.base)
    roots = svc.reindex(base.id, args.items or None)
    print(f"reindexing {len(roots)} item(s)", file=sys.stderr)
    return process_and_report(svc, base, {r.id for r in roots}, wait=True, errors=False)


def cmd_resume(svc: KnowledgeService, args: argparse.Namespace) -> int:
    """Run what a stopped process left queued, and finish what a crash interrupted or a
    full disk failed."""
    base = svc.resolve_base(args.base)
    interrupted = {i.id for i in svc.resume_interrupted(base.id)}
    pending = {i.id for i in svc.list_items(base.id) if i.status in RUNNING_STATUSES}
    print(
        f"resuming {len(pending)} unfinished item(s) of {shown(base.name)!r}"
        + (f" ({len(interrupted)} of them interrupted before)" if interrupted else ""),
        file=sys.stderr,
    )
    return process_and_report(svc, base, pending | interrupted, wait=True, errors=False)


def cmd_delete(svc: KnowledgeService, args: argparse.Namespace) -> int:
    base = svc.resolve_base(args.base)
    if not args.items and not args.all:
        print("error: name the items to delete, or pass --all", file=sys.stderr)
        return EXIT_USAGE
    roots = svc.delete_items(base.id, None if args.all else args.items)
    run_until_drained(svc)
    print(f"deleted {len(roots)} item(s) and everything inside them", file=sys.stderr)
    return EXIT_OK
