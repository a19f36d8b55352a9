"""`trove vectors BASE [--pause | --resume] [--wait] [--json]`: the vector stage of a base.

Documents of a base with an embedding model are searchable by full text as soon as they
are read; their vectors come after, in the background (jobs/embed_vectors.py). This command
shows how far that stage is, pauses it (a restart keeps it paused) and resumes it.
"""

from __future__ import annotations

import argparse
import json
import sys

from app.cli.output import EXIT_FAILED, EXIT_OK, EXIT_USAGE, shown
from app.cli.progress import print_stall
from app.cli.vectors_line import status_line
from app.knowledge.service import KnowledgeService
from app.runtime.headless import run_until_drained


def add_vectors_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    vectors = commands.add_parser(
        "vectors",
        help="show, pause or resume the background computing of a base's vectors",
    )
    vectors.add_argument("base", metavar="BASE")
    action = vectors.add_mutually_exclusive_group()
    action.add_argument(
        "--pause", action="store_true", help="stop after the batch in flight (kept after a restart)"
    )
    action.add_argument("--resume", action="store_true", help="compute the missing vectors again")
    vectors.add_argument(
        "--wait", action="store_true", help="with --resume: compute them now, then report"
    )
    vectors.add_argument("--json", action="store_true")
    vectors.set_defaults(func=cmd_vectors)


def cmd_vectors(svc: KnowledgeService, args: argparse.Namespace) -> int:
    base = svc.resolve_base(args.base)
    if args.wait and not args.resume:
        print("error: --wait goes with --resume", file=sys.stderr)
        return EXIT_USAGE
    if args.pause:
        svc.pause_vectors(base.id)
        print(f"vectors of {shown(base.name)!r} paused", file=sys.stderr)
    elif args.resume:
        queued = svc.resume_vectors(base.id)
        print(
            f"vectors of {shown(base.name)!r} "
            + ("resumed" if queued else "resumed; none are missing"),
            file=sys.stderr,
        )
        if queued and args.wait:
            drain = run_until_drained(svc)
            if drain.interrupted:
                print("interrupted; the rest waits in the queue", file=sys.stderr)
                return drain.exit_code
            if drain.stall is not None:
                print_stall(svc, base.name, drain.stall)
                return EXIT_FAILED
    status = svc.vector_status(base.id)
    if args.json:
        print(json.dumps(status.to_json()))
    else:
        print(status_line(status))
    return EXIT_FAILED if status.stopped is not None else EXIT_OK
