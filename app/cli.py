"""Headless commands: `trove base create`, `trove add`, `trove search`, ...

Every command goes through KnowledgeService, the same facade the GUI uses.
"""

from __future__ import annotations

import argparse
import codecs
import io
import json
import os
import re
import shlex
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TextIO

import apsw

from app import __version__
from app.knowledge.data_layout import HOME_ENV, DataLayout, resolve_home
from app.knowledge.db import catalog_readable
from app.knowledge.doctor import Problem
from app.knowledge.jobs import recovery
from app.knowledge.jobs.errors import storage_failure
from app.knowledge.jobs.owner import owner_alive
from app.knowledge.logs import configure_logging, reset_logging
from app.knowledge.material_paths import CONTAINER_TYPES
from app.knowledge.pipeline.store.index_store import CORRUPTION_ERRORS
from app.knowledge.service import KnowledgeService
from app.knowledge.types import (
    RUNNING_STATUSES,
    Base,
    ErrorCode,
    Item,
    ItemPhase,
    ItemStatus,
    OnConflict,
    SearchResponse,
    TroveError,
)
from app.runtime.headless import run_until_drained

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2

Command = Callable[[KnowledgeService, argparse.Namespace], int]


def _print_json(data: Any, out: TextIO | None = None) -> None:
    text = json.dumps(data, ensure_ascii=False)
    if _has_surrogates(text):
        # A lone surrogate (a query's "\\ud800") cannot be written as UTF-8; as a JSON
        # escape it stays valid UTF-8 and round-trips to the same string.
        text = json.dumps(data, ensure_ascii=True)
    (out or sys.stdout).write(text + "\n")


_SURROGATE = re.compile("[\ud800-\udfff]")


def _has_surrogates(text: str) -> bool:
    return _SURROGATE.search(text) is not None


def _searchable(text: str) -> str:
    """The query as the engine gets it: lone surrogates are no characters (no material can
    contain one), so they become U+FFFD instead of failing deep in a tokenizer."""
    return _SURROGATE.sub("\ufffd", text)


def _base_json(base: Base) -> dict[str, Any]:
    return {
        "id": base.id,
        "name": base.name,
        "embeddingModel": base.embedding_model,
        "dimensions": base.dimensions,
        "rerankModel": base.rerank_model,
        "documentCount": base.document_count,
        "threshold": base.threshold,
        "chunkSize": base.chunk_size,
        "chunkOverlap": base.chunk_overlap,
        "status": str(base.status),
        "statusReason": base.status_reason,
    }


def _item_json(item: Item) -> dict[str, Any]:
    return {
        "id": item.id,
        "parentId": item.parent_id,
        "type": str(item.type),
        "source": item.source,
        "title": item.title,
        "relativePath": item.relative_path,
        "status": str(item.status),
        "phase": str(item.phase) if item.phase else None,
        "progress": item.progress,
        "errorCode": item.error_code,
        "errorMessage": item.error_message,
        "chunkCount": item.chunk_count,
        "size": item.size,
    }


def _table(rows: Sequence[Sequence[str]], headers: Sequence[str]) -> str:
    widths = [max(len(str(r[i])) for r in [headers, *rows]) for i in range(len(headers))]
    lines = ["  ".join(str(h).ljust(w) for h, w in zip(headers, widths, strict=True))]
    lines += ["  ".join(str(c).ljust(w) for c, w in zip(r, widths, strict=True)) for r in rows]
    return "\n".join(line.rstrip() for line in lines)


# -- commands ------------------------------------------------------------------------------


def cmd_base_create(svc: KnowledgeService, args: argparse.Namespace) -> int:
    base = svc.create_base(
        args.name,
        embedding_model=args.embedding,
        rerank_model=args.rerank,
        document_count=args.top_k,
        threshold=args.threshold,
        chunk_size=args.chunk_size,
        chunk_overlap=args.chunk_overlap,
    )
    if args.json:
        _print_json(_base_json(base))
    else:
        print(f"created knowledge base {base.name!r} (id {base.id})")
    return EXIT_OK


def cmd_base_list(svc: KnowledgeService, args: argparse.Namespace) -> int:
    bases = svc.list_bases()
    if args.json:
        _print_json([_base_json(b) for b in bases])
        return EXIT_OK
    if not bases:
        print("no knowledge bases yet; create one with: trove base create NAME")
        return EXIT_OK
    rows = [
        (
            b.id,
            b.name,
            b.embedding_model or "(BM25 only)",
            str(b.status),
            str(svc.catalog.count_items(b.id)),
        )
        for b in bases
    ]
    print(_table(rows, ("ID", "NAME", "EMBEDDING", "STATUS", "ITEMS")))
    return EXIT_OK


def cmd_item_list(svc: KnowledgeService, args: argparse.Namespace) -> int:
    base = svc.resolve_base(args.base)
    items = svc.list_items(base.id)
    if args.json:
        _print_json([_item_json(i) for i in items])
        return EXIT_OK
    rows = [
        (
            i.id,
            str(i.type),
            _status_text(i),
            str(i.chunk_count),
            i.relative_path or "",
        )
        for i in items
    ]
    print(_table(rows, ("ID", "TYPE", "STATUS", "CHUNKS", "MATERIAL")) if rows else "no items")
    return EXIT_OK


def _status_text(item: Item) -> str:
    if item.status is ItemStatus.FAILED:
        return f"failed ({item.error_code})"
    if item.phase is ItemPhase.EMBEDDING and item.progress is not None:
        return f"{item.status}: embedding {item.progress:.0f}%"
    if item.phase:
        return f"{item.status}: {item.phase}"
    return str(item.status)


_URL_LIKE = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://|^(?:file|javascript|data|mailto|about):", re.I)


def cmd_add(svc: KnowledgeService, args: argparse.Namespace) -> int:
    base = svc.resolve_base(args.base)
    urls = [p for p in args.paths if _URL_LIKE.match(p)]
    files = [p for p in args.paths if not _URL_LIKE.match(p)]
    on_conflict = OnConflict(args.on_conflict)
    reports = []
    if files:
        options: dict[str, object] = {}
        if args.include:
            options["include"] = args.include
        if args.exclude:
            options["exclude"] = args.exclude
        reports.append(
            svc.add(base.id, files, on_conflict=on_conflict, folder_options=options or None)
        )
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
    return _process_and_report(
        svc, base, {i.id for i in added}, wait=args.wait, errors=any(r.errors for r in reports)
    )


def cmd_note(svc: KnowledgeService, args: argparse.Namespace) -> int:
    base = svc.resolve_base(args.base)
    text = sys.stdin.read() if args.text == "-" else args.text
    item = svc.add_note(base.id, args.title, text)
    print(f"added note {item.title!r} ({item.id})", file=sys.stderr)
    return _process_and_report(svc, base, {item.id}, wait=True, errors=False)


def cmd_reindex(svc: KnowledgeService, args: argparse.Namespace) -> int:
    base = svc.resolve_base(args.base)
    roots = svc.reindex(base.id, args.items or None)
    print(f"reindexing {len(roots)} item(s)", file=sys.stderr)
    return _process_and_report(svc, base, {r.id for r in roots}, wait=True, errors=False)


def cmd_resume(svc: KnowledgeService, args: argparse.Namespace) -> int:
    """Run what a stopped process left queued (and recover what it left running)."""
    base = svc.resolve_base(args.base)
    pending = {i.id for i in svc.list_items(base.id) if i.status in RUNNING_STATUSES}
    print(f"resuming {len(pending)} unfinished item(s) of {base.name!r}", file=sys.stderr)
    return _process_and_report(svc, base, pending, wait=True, errors=False)


def cmd_delete(svc: KnowledgeService, args: argparse.Namespace) -> int:
    base = svc.resolve_base(args.base)
    if not args.items and not args.all:
        print("error: name the items to delete, or pass --all", file=sys.stderr)
        return EXIT_USAGE
    roots = svc.delete_items(base.id, None if args.all else args.items)
    run_until_drained(svc)
    print(f"deleted {len(roots)} item(s) and everything inside them", file=sys.stderr)
    return EXIT_OK


def cmd_base_set(svc: KnowledgeService, args: argparse.Namespace) -> int:
    base = svc.resolve_base(args.base)
    if args.agent_writes is None:
        print("error: nothing to set; e.g. --agent-writes on", file=sys.stderr)
        return EXIT_USAGE
    base = svc.set_agent_writes(base.id, args.agent_writes == "on")
    state = "on" if base.agent_writes else "off"
    print(f"agent writes {state} for knowledge base {base.name!r} ({base.id})", file=sys.stderr)
    return EXIT_OK


def cmd_mcp(svc: KnowledgeService, args: argparse.Namespace) -> int:
    # Imported here: only this command needs the MCP SDK.
    from app.agent.client_config import client_config_json
    from app.agent.server import serve

    if args.print_config:
        explicit = args.home or os.environ.get(HOME_ENV)
        print(client_config_json(svc.layout.home if explicit else None))
        return EXIT_OK
    return serve(svc)


def cmd_base_delete(svc: KnowledgeService, args: argparse.Namespace) -> int:
    base = svc.resolve_base(args.base)
    svc.delete_base(base.id)
    print(f"deleted knowledge base {base.name!r} ({base.id})", file=sys.stderr)
    return EXIT_OK


def cmd_restore(svc: KnowledgeService, args: argparse.Namespace) -> int:
    base = svc.resolve_base(args.base)
    report = svc.restore_base(base.id, args.embedding)
    print(
        f"restoring {report.restored} item(s); skipped {report.skipped_missing_source_count} whose "
        f"copy is missing; kept {report.unverifiable} that could not be checked",
        file=sys.stderr,
    )
    return _process_and_report(svc, base, None, wait=True, errors=False)


def cmd_doctor(svc: KnowledgeService, args: argparse.Namespace) -> int:
    base_id = svc.resolve_base(args.base).id if args.base else None
    result = svc.doctor(base_id, repair=args.repair)
    if args.json:
        _print_json(result.to_json())
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
        print(f"  {p.code} ({where}; {fix}): {p.detail}")


WATCH_INTERVAL = 0.5
# A live executor claims a due job within milliseconds and always keeps one running when
# it throttles for memory; due work nobody has claimed for this long has no process.
WATCH_IDLE_GRACE = 5.0
# More interrupted items than this are not listed one by one in the reindex hint.
HINT_MAX_IDS = 10


def cmd_status(svc: KnowledgeService, args: argparse.Namespace) -> int:
    base = svc.resolve_base(args.base)
    if not args.watch:
        print(_status_screen(svc, base))
        return EXIT_OK
    interactive = sys.stdout.isatty()
    watch = _Watch(svc, base)
    while True:
        activity = watch.check()  # recovers a dead indexer's work before the redraw
        screen = _status_screen(svc, base)
        if interactive:
            sys.stdout.write("\x1b[H\x1b[J" + screen + "\n")
        else:
            print(screen)
        sys.stdout.flush()
        if not _in_progress(svc.list_items(base.id)):
            return watch.report() if watch.stopped else EXIT_OK
        if watch.stopped and not watch.others_working(activity):
            return watch.report()  # nobody is left to pick the rest of the queue up
        time.sleep(WATCH_INTERVAL)  # polling another process's progress through the catalog


def _in_progress(items: Sequence[Item]) -> bool:
    return any(i.status in RUNNING_STATUSES or i.status is ItemStatus.DELETING for i in items)


class _Watch:
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
        activity = recovery.activity(self._svc.catalog, self._base.id)
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
        return recovery.activity(self._svc.catalog, self._base.id)

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
            named = " ".join(ids) if len(ids) <= HINT_MAX_IDS else "ITEM... (see trove item list)"
            line += (
                f"; {len(ids)} item(s) were marked interrupted ({ErrorCode.INDEXING_INTERRUPTED})"
                f"; reindex them with: trove reindex {shlex.quote(self._base.id)} {named}"
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
    left = [f"{waiting} queued item(s)"] if waiting else []
    left += [f"{deleting} deletion(s)"] if deleting else []
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


def _bar(percent: float | None, width: int = 20) -> str:
    if percent is None:
        return "[" + "·" * width + "]"
    filled = round(width * max(0.0, min(100.0, percent)) / 100)
    return "[" + "#" * filled + "-" * (width - filled) + f"] {percent:3.0f}%"


def _status_screen(svc: KnowledgeService, base: Base) -> str:
    items = svc.list_items(base.id)
    counts: dict[str, int] = {}
    for item in items:
        counts[str(item.status)] = counts.get(str(item.status), 0) + 1
    lines = [
        f"{base.name} ({base.id}): " + ", ".join(f"{n} {s}" for s, n in sorted(counts.items()))
    ]
    for item in items:
        if item.status in RUNNING_STATUSES:
            label = str(item.phase or item.status)
            lines.append(
                f"  {_bar(item.progress if item.phase else None)} {label:<10} {item.title}"
            )
        elif item.status is ItemStatus.FAILED:
            lines.append(f"  failed {item.error_code}: {item.title}: {item.error_message}")
    return "\n".join(lines)


def _process_and_report(
    svc: KnowledgeService, base: Base, item_ids: set[str] | None, *, wait: bool, errors: bool
) -> int:
    """Run the queue to the end, then summarise the items this command touched."""
    with _progress_printer() as progress:
        finished = run_until_drained(svc, progress)
    if not finished:
        print("interrupted; items in progress were marked interrupted", file=sys.stderr)
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
        detail = f" {_bar(percent)}" if percent >= 0 else ""
        sys.stderr.write(f"\r\x1b[Kdocument {len(seen)}: {phase or 'done'}{detail}")
        sys.stderr.flush()

    try:
        yield report
    finally:
        if interactive and seen:
            sys.stderr.write("\r\x1b[K")


def cmd_provider_add(svc: KnowledgeService, args: argparse.Namespace) -> int:
    key = sys.stdin.readline().strip() if args.key_stdin else None
    settings = svc.save_provider(
        args.name,
        args.kind,
        base_url=args.url,
        display_name=args.display_name or "",
        models=args.model or [],
        key=key,
        # One outcome: a key that cannot be kept leaves no half-saved provider behind.
        all_or_nothing=True,
    )
    print(f"saved provider {settings.id!r} ({settings.kind}, {settings.base_url})", file=sys.stderr)
    return EXIT_OK


def cmd_provider_list(svc: KnowledgeService, args: argparse.Namespace) -> int:
    providers = svc.list_providers()
    if args.json:
        _print_json(
            [
                {
                    "id": p.id,
                    "kind": p.kind,
                    "displayName": p.display_name,
                    "baseUrl": p.base_url,
                    "enabled": p.enabled,
                    "models": p.models,
                }
                for p in providers
            ]
        )
        return EXIT_OK
    rows = [(p.id, p.kind, p.base_url or "(built in)", ", ".join(p.models)) for p in providers]
    print(_table(rows, ("ID", "KIND", "URL", "MODELS")))
    return EXIT_OK


def cmd_provider_remove(svc: KnowledgeService, args: argparse.Namespace) -> int:
    svc.remove_provider(args.name)
    print(f"removed provider {args.name!r} and its stored key", file=sys.stderr)
    return EXIT_OK


def cmd_provider_test(svc: KnowledgeService, args: argparse.Namespace) -> int:
    print(svc.check_provider(args.name, args.model))
    return EXIT_OK


def cmd_provider_models(svc: KnowledgeService, args: argparse.Namespace) -> int:
    for name in svc.provider_models(args.name):
        print(name)
    return EXIT_OK


def cmd_search(svc: KnowledgeService, args: argparse.Namespace) -> int:
    base = svc.resolve_base(args.base)
    if args.queries:
        return _search_batch(svc, base, args)
    if args.query is None:
        print("error: give a QUERY or --queries FILE", file=sys.stderr)
        return EXIT_USAGE
    response = svc.search(base.id, _searchable(args.query), top_k=args.top_k)
    if args.json:
        _print_json(_response_json(response, debug=args.debug))
        return EXIT_OK
    _print_results(response, debug=args.debug)
    return EXIT_OK


def _response_json(response: SearchResponse, *, debug: bool = True) -> dict[str, Any]:
    data: dict[str, Any] = {
        "query": response.query,
        "mode": str(response.mode),
        "results": [r.to_json() for r in response.results],
        "degraded": response.degraded_json(),
    }
    if debug:
        data["metrics"] = response.metrics.to_json()
    return data


def _print_results(response: SearchResponse, *, debug: bool) -> None:
    # Said before the results, and always: a degraded search is not a debugging detail.
    for d in response.degraded:
        print(f"warning: {d.stage} unavailable ({d.code}): {d.message}", file=sys.stderr)
    if not response.results:
        print("no results")
    for r in response.results:
        snippet = " ".join(r.text.split())
        if len(snippet) > 240:
            snippet = snippet[:239] + "…"
        print(
            f"{r.rank:>3}. {r.title}  [{r.score_kind} {r.score:.4f}]  {r.concept_id}:{r.char_start}-{r.char_end}"
        )
        print(f"     {snippet}")
    if debug:
        m = response.metrics.to_json()
        print(
            f"mode {response.mode} | " + " | ".join(f"{k} {v}" for k, v in m.items()),
            file=sys.stderr,
        )


def _search_batch(svc: KnowledgeService, base: Base, args: argparse.Namespace) -> int:
    """BEIR-style queries (JSON Lines with _id and text) -> one JSON line per query."""
    path = Path(args.queries)
    try:
        data = path.read_bytes()
    except OSError as exc:
        print(f"error: cannot read {path}: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_FAILED
    encoding, text = _decode_queries(data)
    failures = 0
    for number, line in enumerate(text.split("\n"), start=1):
        line = line.rstrip("\r")
        if not line.strip():
            continue
        query = _parse_query_line(line, encoding)
        if isinstance(query, str):
            print(f"error: {path}:{number}: {query}", file=sys.stderr)
            failures += 1
            continue
        _answer_query(svc, base, *query, top_k=args.top_k)
    return EXIT_FAILED if failures else EXIT_OK


# Byte order marks the queries file may start with; without one it is UTF-8.
_BOMS = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
_UNDECODABLE = "\udfff"


def _mark_undecodable(error: UnicodeError) -> tuple[str, int]:
    # A lone surrogate never comes out of a successful decode, so it marks the bad bytes
    # unambiguously; the line holding it is reported as malformed, the others still run.
    if not isinstance(error, UnicodeDecodeError):
        raise error
    return _UNDECODABLE, error.end


codecs.register_error("trove-mark-undecodable", _mark_undecodable)


def _decode_queries(data: bytes) -> tuple[str, str]:
    """(encoding, text) of a queries file; undecodable bytes become _UNDECODABLE."""
    encoding = "utf-8"
    for bom, name in _BOMS:
        if data.startswith(bom):
            data, encoding = data[len(bom) :], name
            break
    return encoding, data.decode(encoding, errors="trove-mark-undecodable")


def _parse_query_line(line: str, encoding: str) -> tuple[str, str] | str:
    """(query id, text), or why the line is malformed."""
    if _UNDECODABLE in line:
        return f"the line is not valid {encoding.upper()}"
    expected = "expected a JSON object with _id and text"
    try:
        record = json.loads(line)
    except (ValueError, RecursionError):
        # RecursionError: a line of thousands of nested brackets.
        return expected
    if not isinstance(record, dict) or "_id" not in record or "text" not in record:
        return expected
    query_id, text = record["_id"], record["text"]
    if isinstance(query_id, bool) or not isinstance(query_id, (str, int)):
        return f"{expected}: _id must be a string or a whole number"
    if not isinstance(text, str):
        return f"{expected}: text must be a string"
    return str(query_id), text


def _answer_query(
    svc: KnowledgeService, base: Base, query_id: str, text: str, *, top_k: int | None
) -> None:
    searched = _searchable(text)
    try:
        response = svc.search(base.id, searched, top_k=top_k)
    except TroveError as exc:
        # A query the engine refuses (no searchable token) is an answer, not a failure.
        error = {"code": str(exc.code), "message": exc.message}
        _print_json({"query_id": query_id, "query": text, "error": error, "results": []})
        return
    answer = {"query_id": query_id, **_response_json(response)}
    if searched != text:
        answer["query"] = text  # echo the query as given, not its U+FFFD stand-in
    _print_json(answer)


# -- parser --------------------------------------------------------------------------------


def _positive(value: str) -> int:
    number = int(value)
    if number < 1:
        raise argparse.ArgumentTypeError("must be a positive whole number")
    return number


def _non_negative(value: str) -> int:
    number = int(value)
    if number < 0:
        raise argparse.ArgumentTypeError("must be zero or more")
    return number


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="trove",
        description="Trove knowledge bases from the command line. Without a command, trove opens the desktop window (options: --home, --lang, --screenshot PATH, --self-test).",
    )
    parser.add_argument("--version", action="version", version=f"trove {__version__}")
    parser.add_argument(
        "--home",
        metavar="DIR",
        help="data directory (default: $TROVE_HOME, else the platform data dir)",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="log progress details")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    base = commands.add_parser("base", help="create and list knowledge bases")
    base_cmds = base.add_subparsers(dest="base_command", metavar="ACTION", required=True)
    create = base_cmds.add_parser("create", help="create a knowledge base")
    create.add_argument("name")
    create.add_argument(
        "--embedding", metavar="PROVIDER:MODEL", help="embedding model (omit for BM25 only)"
    )
    create.add_argument("--rerank", metavar="PROVIDER:MODEL", help="rerank model")
    create.add_argument(
        "--top-k", type=_positive, default=10, help="results per search (default 10)"
    )
    create.add_argument(
        "--chunk-size", type=_positive, default=512, help="tokens per chunk (default 512)"
    )
    create.add_argument(
        "--chunk-overlap", type=_non_negative, default=64, help="tokens of overlap (default 64)"
    )
    create.add_argument(
        "--threshold", type=float, help="minimum relevance score (0..1) for reranked results"
    )
    create.add_argument("--json", action="store_true")
    create.set_defaults(func=cmd_base_create)
    bdelete = base_cmds.add_parser("delete", help="delete a knowledge base and all its files")
    bdelete.add_argument("base", metavar="BASE")
    bdelete.set_defaults(func=cmd_base_delete)
    bset = base_cmds.add_parser("set", help="change a knowledge base's settings")
    bset.add_argument("base", metavar="BASE", help="base id or unique name")
    bset.add_argument(
        "--agent-writes",
        choices=["on", "off"],
        help="let agent tools (trove mcp: kb_manage) add, delete and refresh items",
    )
    bset.set_defaults(func=cmd_base_set)
    blist = base_cmds.add_parser("list", help="list knowledge bases")
    blist.add_argument("--json", action="store_true")
    blist.set_defaults(func=cmd_base_list)

    provider = commands.add_parser("provider", help="embedding and rerank providers")
    provider_cmds = provider.add_subparsers(
        dest="provider_command", metavar="ACTION", required=True
    )
    padd = provider_cmds.add_parser("add", help="add or update a provider")
    padd.add_argument("name", help="provider id, used in model ids as NAME:MODEL")
    padd.add_argument("--kind", required=True, choices=["openai", "ollama", "rerank"])
    padd.add_argument("--url", required=True, help="base URL, e.g. https://api.openai.com")
    padd.add_argument(
        "--key-stdin", action="store_true", help="read the API key from standard input"
    )
    padd.add_argument("--display-name")
    padd.add_argument("--model", action="append", help="a model to offer (repeatable)")
    padd.set_defaults(func=cmd_provider_add)
    plist = provider_cmds.add_parser("list", help="list providers")
    plist.add_argument("--json", action="store_true")
    plist.set_defaults(func=cmd_provider_list)
    premove = provider_cmds.add_parser("remove", help="remove a provider and its stored key")
    premove.add_argument("name")
    premove.set_defaults(func=cmd_provider_remove)
    ptest = provider_cmds.add_parser("test", help="make one real call to a provider")
    ptest.add_argument("name")
    ptest.add_argument("--model")
    ptest.set_defaults(func=cmd_provider_test)
    pmodels = provider_cmds.add_parser("models", help="list the models a provider offers")
    pmodels.add_argument("name")
    pmodels.set_defaults(func=cmd_provider_models)

    item = commands.add_parser("item", help="list the items of a knowledge base")
    item_cmds = item.add_subparsers(dest="item_command", metavar="ACTION", required=True)
    ilist = item_cmds.add_parser("list", help="list items")
    ilist.add_argument("base", metavar="BASE", help="base id or unique name")
    ilist.add_argument("--json", action="store_true")
    ilist.set_defaults(func=cmd_item_list)

    add = commands.add_parser("add", help="add files, folders and web pages, then index them")
    add.add_argument("base", metavar="BASE", help="base id or unique name")
    add.add_argument("paths", metavar="PATH|URL", nargs="+")
    add.add_argument(
        "--sitemap", action="store_true", help="the URLs are sitemaps: add every page they list"
    )
    add.add_argument(
        "--wait", action="store_true", help="exit non-zero if any item failed, listing the failures"
    )
    add.add_argument(
        "--on-conflict",
        choices=[c.value for c in OnConflict],
        default="skip",
        help="what to do with sources the base already has (default: skip)",
    )
    add.add_argument(
        "--include", action="append", metavar="GLOB", help="folders: only files matching GLOB"
    )
    add.add_argument(
        "--exclude", action="append", metavar="GLOB", help="folders: skip files matching GLOB"
    )
    add.set_defaults(func=cmd_add)

    note = commands.add_parser(
        "note", help="add a note (TEXT, or - to read it from standard input)"
    )
    note.add_argument("base", metavar="BASE")
    note.add_argument("title", metavar="TITLE")
    note.add_argument("text", metavar="TEXT|-")
    note.set_defaults(func=cmd_note)

    reindex = commands.add_parser("reindex", help="re-read sources and index them again")
    reindex.add_argument("base", metavar="BASE")
    reindex.add_argument("items", metavar="ITEM", nargs="*", help="item ids (default: everything)")
    reindex.set_defaults(func=cmd_reindex)

    resume = commands.add_parser(
        "resume", help="run the work a stopped Trove left queued, and report it"
    )
    resume.add_argument("base", metavar="BASE")
    resume.set_defaults(func=cmd_resume)

    delete = commands.add_parser("delete", help="delete items and everything inside them")
    delete.add_argument("base", metavar="BASE")
    delete.add_argument("items", metavar="ITEM", nargs="*")
    delete.add_argument("--all", action="store_true", help="delete every item of the base")
    delete.set_defaults(func=cmd_delete)

    restore = commands.add_parser("restore", help="rebuild a base from its own copies")
    restore.add_argument("base", metavar="BASE")
    restore.add_argument(
        "--embedding", metavar="PROVIDER:MODEL", help="switch to this embedding model"
    )
    restore.set_defaults(func=cmd_restore)

    status = commands.add_parser("status", help="show what a base is doing")
    status.add_argument("base", metavar="BASE")
    status.add_argument("--watch", action="store_true", help="refresh until nothing is in progress")
    status.set_defaults(func=cmd_status)

    doctor = commands.add_parser(
        "doctor", help="check that the catalog, indexes and stored files agree"
    )
    doctor.add_argument("base", metavar="BASE", nargs="?", help="one base (default: all)")
    doctor.add_argument(
        "--repair", action="store_true", help="fix what can be fixed, then check again"
    )
    doctor.add_argument("--json", action="store_true")
    doctor.set_defaults(func=cmd_doctor)

    mcp = commands.add_parser(
        "mcp", help="serve the agent tools (kb_search, kb_read, ...) over MCP on stdio"
    )
    mcp.add_argument(
        "--print-config",
        action="store_true",
        help="print the JSON that tells an MCP client (e.g. Claude Desktop) how to start this",
    )
    mcp.set_defaults(func=cmd_mcp)

    search = commands.add_parser("search", help="search a knowledge base")
    search.add_argument("base", metavar="BASE", help="base id or unique name")
    search.add_argument("query", metavar="QUERY", nargs="?")
    search.add_argument(
        "--queries", metavar="FILE", help="JSON Lines of {_id, text}; one JSON line out per query"
    )
    search.add_argument(
        "--top-k", type=_positive, help="results (default: the base's document count)"
    )
    search.add_argument("--json", action="store_true")
    search.add_argument(
        "--debug", action="store_true", help="show per-stage timings and hit counts"
    )
    search.set_defaults(func=cmd_search)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    _tolerant_output()
    try:
        code = _run(argv)
        # Flushed here, not at interpreter exit, so a closed pipe is caught below.
        sys.stdout.flush()
    except BrokenPipeError:
        # `trove status B | head -1`: the reader left; stop quietly (Python docs, "Note on
        # SIGPIPE"): point stdout at devnull so the final flush at exit cannot fail again.
        _stdout_to_devnull()
        return EXIT_FAILED
    return code


def _tolerant_output() -> None:
    """Whatever text reaches stdout/stderr (a path or argv with undecodable bytes) is
    written, escaped if need be, never a UnicodeEncodeError; piped stdout is UTF-8."""
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors="backslashreplace")
    if isinstance(sys.stdout, io.TextIOWrapper) and not sys.stdout.isatty():
        sys.stdout.reconfigure(encoding="utf-8")


def _stdout_to_devnull() -> None:
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):
        return  # not a real file (a test's buffer): nothing will flush it at exit
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fd)
    os.close(devnull)


def _parse(parser: argparse.ArgumentParser, argv: Sequence[str] | None) -> argparse.Namespace:
    """parse_args, except that a search QUERY may start with '-' (`trove search B -bar`,
    `trove search B --json -- -bar`) when it is not one of search's options."""
    args, extras = parser.parse_known_args(argv)
    if getattr(args, "func", None) is cmd_search and args.query is None:
        rest = list(extras)
        if "--" in rest:
            rest.remove("--")
        if len(rest) == 1:
            args.query, extras = rest[0], []
    if extras:
        parser.error(f"unrecognized arguments: {' '.join(extras)}")
    return args


def _run(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    args = _parse(parser, argv)
    func: Command | None = getattr(args, "func", None)
    if func is None:
        parser.print_help()
        return EXIT_OK
    home = resolve_home(args.home)
    configure_logging(home, verbose=args.verbose)
    try:
        return _run_command(func, args, home)
    finally:
        reset_logging()


def _run_command(func: Command, args: argparse.Namespace, home: Path) -> int:
    try:
        svc = KnowledgeService(home)
    except CORRUPTION_ERRORS as exc:
        return _damaged(exc, home, catalog=True)
    except (OSError, apsw.Error) as exc:
        return _storage_error(exc, home)
    try:
        return func(svc, args)
    except TroveError as exc:
        print(f"error: {exc.code}: {exc.message}", file=sys.stderr)
        return EXIT_FAILED
    except BrokenPipeError:
        raise  # an OSError, but not the data folder's: main() ends quietly
    except CORRUPTION_ERRORS as exc:
        return _damaged(exc, home, catalog=not catalog_readable(svc.layout.catalog_path))
    except (OSError, apsw.Error) as exc:
        return _storage_error(exc, home)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    finally:
        svc.close()


def _damaged(exc: apsw.Error, home: Path, *, catalog: bool) -> int:
    """A damaged database is said in one line with the way out, never as a traceback."""
    if catalog:
        code, what = ErrorCode.CATALOG_DAMAGED, f"the catalog {DataLayout(home).catalog_path}"
    else:
        code, what = ErrorCode.INDEX_CORRUPT, "an index"
    print(
        f"error: {code}: {what} is damaged ({exc}); run trove doctor to see what and how to "
        f"repair it (data folder: {home})",
        file=sys.stderr,
    )
    return EXIT_FAILED


def _storage_error(exc: OSError | apsw.Error, home: Path) -> int:
    """A full disk or a read-only data dir is said plainly; anything else is a bug."""
    failure = storage_failure(exc, home, then="run the command again")
    if failure is None:
        raise exc
    print(f"error: {failure.code}: {failure.message} (data folder: {home})", file=sys.stderr)
    return EXIT_FAILED


if __name__ == "__main__":
    sys.exit(main())
