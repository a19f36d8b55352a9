"""Linked folders on the command line: `add --link`, `item link|unlink|refresh`, `sync`.

There is no daemon: `trove sync` is the headless way to bring linked folders up to date
(the window and `trove mcp` also watch them while they run).
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from app.cli.folders import folder_options, print_skipped, skipped_json, skipped_lines
from app.cli.output import EXIT_FAILED, EXIT_OK, print_json, shown
from app.cli.progress import print_stall, process_and_report
from app.knowledge.folder_scan import scan_skipped
from app.knowledge.service import KnowledgeService
from app.knowledge.sync_types import SyncChanges
from app.knowledge.types import ItemStatus
from app.runtime.headless import run_until_drained


def add_sync_arguments(add: argparse.ArgumentParser) -> None:
    """`trove add --link --ignore PATTERN`."""
    add.add_argument(
        "--link",
        action="store_true",
        help="folders: keep them in sync (trove sync; watched while the window or mcp runs)",
    )
    add.add_argument(
        "--ignore",
        action="append",
        metavar="PATTERN",
        default=[],
        help="linked folders: leave out files matching this .gitignore-style pattern",
    )
    add.add_argument(
        "--follow-links",
        action="store_true",
        help="folders: follow symbolic links that lead outside the folder (by default they "
        "are not followed, and the summary counts them; -v lists them)",
    )


def add_link_commands(item_cmds: Any) -> None:
    """`trove item link|unlink|refresh`."""
    link = item_cmds.add_parser("link", help="keep a folder item in sync with its folder")
    link.add_argument("base", metavar="BASE")
    link.add_argument("item", metavar="ITEM", help="the folder item's id")
    link.add_argument(
        "--ignore", action="append", metavar="PATTERN", default=[], help=".gitignore-style"
    )
    link.set_defaults(func=cmd_item_link)
    unlink = item_cmds.add_parser("unlink", help="stop keeping a folder item in sync")
    unlink.add_argument("base", metavar="BASE")
    unlink.add_argument("item", metavar="ITEM")
    unlink.set_defaults(func=cmd_item_unlink)
    refresh = item_cmds.add_parser(
        "refresh", help="re-fetch a web page or sitemap item on a schedule, or now"
    )
    refresh.add_argument("base", metavar="BASE")
    refresh.add_argument("item", metavar="ITEM")
    when = refresh.add_mutually_exclusive_group(required=True)
    when.add_argument(
        "--every", type=_duration, metavar="DURATION", help="e.g. 30m, 6h, 1d (while Trove runs)"
    )
    when.add_argument("--off", action="store_true", help="no scheduled refresh (the default)")
    when.add_argument(
        "--now", action="store_true", help="re-fetch now; only pages whose text changed reindex"
    )
    refresh.set_defaults(func=cmd_item_refresh)


def add_sync_command(commands: Any) -> None:
    sync = commands.add_parser(
        "sync", help="bring linked folders up to date with their folders (no daemon)"
    )
    sync.add_argument("base", metavar="BASE")
    sync.add_argument("items", metavar="ITEM", nargs="*", help="linked folders (default: all)")
    sync.add_argument("--json", action="store_true")
    sync.set_defaults(func=cmd_sync)


def cmd_add_linked(svc: KnowledgeService, args: argparse.Namespace) -> int:
    base = svc.resolve_base(args.base)
    report = svc.add_linked_folders(
        base.id, args.paths, ignore_patterns=args.ignore, folder_options=folder_options(args)
    )
    for source, reason in report.skipped:
        print(f"{source}: {reason}; linking the folder the base has", file=sys.stderr)
    for source, message in report.errors:
        print(f"error: {source}: {message}", file=sys.stderr)
    print(f"linked {len(report.added)} new folder(s) to {base.name!r}", file=sys.stderr)
    code = process_and_report(
        svc,
        base,
        {i.id for i in report.added},
        wait=args.wait,
        errors=bool(report.errors),
        until_searchable=getattr(args, "until_searchable", False),
    )
    print_skipped(svc, [i.id for i in report.added], verbose=getattr(args, "verbose", False))
    return code


def cmd_item_link(svc: KnowledgeService, args: argparse.Namespace) -> int:
    base = svc.resolve_base(args.base)
    started = time.time()
    svc.link_folder(base.id, args.item, args.ignore)
    print(f"linked {args.item}; syncing it now", file=sys.stderr)
    return _sync_and_report(
        svc, base.id, [args.item], started, as_json=False, verbose=getattr(args, "verbose", False)
    )


def cmd_item_unlink(svc: KnowledgeService, args: argparse.Namespace) -> int:
    base = svc.resolve_base(args.base)
    svc.unlink_folder(base.id, args.item)
    print(f"unlinked {args.item}; its items stay as they are", file=sys.stderr)
    return EXIT_OK


def cmd_sync(svc: KnowledgeService, args: argparse.Namespace) -> int:
    base = svc.resolve_base(args.base)
    started = time.time()
    roots = svc.request_sync(base.id, args.items or None)
    if not roots:
        print(f"{base.name!r} has no linked folders (trove add --link DIR)", file=sys.stderr)
        if args.json:
            print_json([])
        return EXIT_OK
    return _sync_and_report(
        svc, base.id, roots, started, as_json=args.json, verbose=getattr(args, "verbose", False)
    )


def _sync_and_report(
    svc: KnowledgeService,
    base_id: str,
    roots: list[str],
    started: float,
    *,
    as_json: bool,
    verbose: bool = False,
) -> int:
    drain = run_until_drained(svc)
    if drain.interrupted:
        print("interrupted; the next sync picks up where this one stopped", file=sys.stderr)
        return 130
    if drain.stall is not None:
        print_stall(svc, svc.get_base(base_id).name, drain.stall)
        return EXIT_FAILED
    states = svc.sync_states(base_id)
    failed = False
    rows: list[dict[str, Any]] = []
    for root_id in roots:
        state = states.get(root_id)
        if state is None:
            continue
        root = svc.get_item(root_id)
        changes = svc.sync_changes_since(root_id, started)
        children = [i for i in svc.list_items(base_id) if i.parent_id == root_id]
        broken = [i for i in children if i.status is ItemStatus.FAILED]
        failed = failed or state.link.last_error is not None or bool(broken)
        rows.append(
            {
                "itemId": root_id,
                "folder": root.source,
                **changes.summary_json(),
                "failed": len(broken),
                "lastSyncedAt": state.link.last_synced_at,
                "error": state.link.last_error,
                **skipped_json(scan_skipped(root)),
            }
        )
        if not as_json:
            print(shown(_summary_line(root.source, changes, len(broken), state.link.last_error)))
            for line in skipped_lines(root.source, scan_skipped(root), verbose=verbose):
                print(shown(line))
    if as_json:
        print_json(rows)
    return EXIT_FAILED if failed else EXIT_OK


def _summary_line(folder: str, changes: SyncChanges, failed: int, error: str | None) -> str:
    parts = [
        f"{len(changes.added)} added",
        f"{len(changes.changed)} changed",
        f"{len(changes.removed)} removed",
        f"{len(changes.renamed)} renamed",
    ]
    if changes.deferred:
        parts.append(f"{len(changes.deferred)} still being written")
    if failed:
        parts.append(f"{failed} failed to index")
    line = f"{folder}: " + ", ".join(parts)
    return line + (f" — error: {error}" if error else "")


_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def _duration(text: str) -> float:
    value = text.strip().lower()
    unit = value[-1:] if value[-1:] in _UNITS else "s"
    number = value[:-1] if value[-1:] in _UNITS else value
    try:
        seconds = float(number) * _UNITS[unit]
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a duration: {text!r} (e.g. 30m, 6h, 1d)") from None
    if seconds <= 0:
        raise argparse.ArgumentTypeError("the interval must be positive")
    return seconds


def cmd_item_refresh(svc: KnowledgeService, args: argparse.Namespace) -> int:
    base = svc.resolve_base(args.base)
    if args.now:
        svc.refresh_now(base.id, args.item)
        return process_and_report(svc, base, {args.item}, wait=True, errors=False)
    svc.set_refresh(base.id, args.item, None if args.off else args.every)
    if args.off:
        print(f"{args.item}: no scheduled refresh", file=sys.stderr)
    else:
        print(
            f"{args.item}: refreshed every {args.every:.0f} s while the window or trove mcp runs",
            file=sys.stderr,
        )
    return EXIT_OK
