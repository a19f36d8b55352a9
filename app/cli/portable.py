"""`trove base export|import` and `trove item copy|move`: bases and items between places."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from app.cli.bases import server_dsn
from app.cli.output import EXIT_OK, base_json, print_json
from app.cli.progress import process_and_report
from app.knowledge.service import KnowledgeService


def _byte_progress(label: str) -> Callable[[int, int], None]:
    """A progress line on a terminal, whole percents only (nothing when stderr is piped)."""
    shown = [-1]

    def report(done: int, total: int) -> None:
        if not sys.stderr.isatty():
            return
        percent = 100 * done // total if total else 100
        if percent != shown[0]:
            shown[0] = percent
            print(f"\r{label} {percent:3d}%", end="", file=sys.stderr, flush=True)

    return report


def cmd_base_export(svc: KnowledgeService, args: argparse.Namespace) -> int:
    base = svc.resolve_base(args.base)
    target = Path(args.file).expanduser()
    report = svc.export_base(
        base.id,
        target,
        progress=_byte_progress("exporting"),
        strip_sources=args.strip_sources,
        with_originals=args.with_originals,
    )
    if sys.stderr.isatty():
        print(file=sys.stderr)
    if args.json:
        print_json(
            {
                "path": report.path,
                "items": report.items,
                "files": report.files,
                "chunks": report.chunks,
                "vectors": report.vectors,
                "bytes": report.bytes,
                "originalsGone": report.originals_gone,
            }
        )
    else:
        print(
            f"exported {base.name!r} to {report.path}: {report.items} item(s), "
            f"{report.files} file(s), {report.chunks} chunk(s), {report.vectors} vector(s)",
            file=sys.stderr,
        )
        for source in report.originals_gone:
            print(f"  original gone, not carried: {source}", file=sys.stderr)
        if not args.with_originals and svc.has_in_place_files(base.id):
            print(
                "note: the originals of linked folders are not in the file (they are indexed "
                "in place); export with --with-originals to carry them",
                file=sys.stderr,
            )
        if not args.strip_sources:
            print(
                "note: the file says where each file and folder came from on this computer "
                "(their paths); export with --strip-sources to leave them out",
                file=sys.stderr,
            )
    return EXIT_OK


def cmd_base_import(svc: KnowledgeService, args: argparse.Namespace) -> int:
    report = svc.import_base(
        Path(args.file).expanduser(),
        name=args.name,
        progress=_byte_progress("importing"),
        dsn=server_dsn(args.dsn),
    )
    if sys.stderr.isatty():
        print(file=sys.stderr)
    base = report.base
    if args.json:
        data = base_json(base)
        data.update(
            {
                "items": report.items,
                "chunks": report.chunks,
                "vectors": report.vectors,
                "modelAvailable": report.model_available,
            }
        )
        print_json(data)
    else:
        print(
            f"imported knowledge base {base.name!r} (id {base.id}): {report.items} item(s), "
            f"{report.chunks} chunk(s), {report.vectors} vector(s) kept",
            file=sys.stderr,
        )
    if not report.model_available:
        print(
            f"note: its embedding model {base.embedding_model} is not configured here, so "
            "searches use full text only until it is (trove provider add ...); or compute "
            f"new vectors with a model you have: trove restore {base.id} --embedding MODEL",
            file=sys.stderr,
        )
    return EXIT_OK


def _transfer(svc: KnowledgeService, args: argparse.Namespace, *, move: bool) -> int:
    source = svc.resolve_base(args.base)
    target = svc.resolve_base(args.to)
    report = svc.copy_items(source.id, args.items, target.id, move=move)
    verb = "moved" if move else "copied"
    print(
        f"{verb} {len(report.copied)} item(s) to {target.name!r}: "
        f"{report.vectors_reused} stored vector(s) reused, "
        f"{report.reindexing} document(s) to index with {target.name!r}'s model",
        file=sys.stderr,
    )
    # Runs the target's indexing and, for a move, the source's deletion.
    return process_and_report(svc, target, set(report.copied), wait=True, errors=False)


def cmd_item_copy(svc: KnowledgeService, args: argparse.Namespace) -> int:
    return _transfer(svc, args, move=False)


def cmd_item_move(svc: KnowledgeService, args: argparse.Namespace) -> int:
    return _transfer(svc, args, move=True)
