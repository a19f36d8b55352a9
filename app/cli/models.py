"""`trove model list|download|remove|import|mirror`: local models beyond the built-in one."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from app.cli.output import EXIT_OK, bar, print_json, table
from app.knowledge.service import (
    HubEndpoint,
    KnowledgeService,
    ModelListing,
    ModelState,
)

EXIT_INTERRUPTED = 130
_REDRAW_S = 0.1


def cmd_model_list(svc: KnowledgeService, args: argparse.Namespace) -> int:
    models = svc.list_models()
    if args.json:
        print_json([_listing_json(m) for m in models])
        return EXIT_OK
    rows = [
        (
            m.id,
            str(m.kind),
            _state_text(m),
            _size_text(m),
            m.license + (" (non-commercial)" if m.non_commercial else ""),
            ", ".join(m.languages),
            ", ".join(m.used_by),
            m.runs_on.describe() if m.runs_on else "",
        )
        for m in models
    ]
    headers = ("ID", "KIND", "STATE", "SIZE", "LICENCE", "LANGUAGES", "USED BY", "RUNS ON")
    print(table(rows, headers))
    print(
        f"A base uses a model as local:ID. Downloads come from {_endpoint_text(svc.model_mirror())}.",
        file=sys.stderr,
    )
    return EXIT_OK


def cmd_model_download(svc: KnowledgeService, args: argparse.Namespace) -> int:
    progress = _ProgressBar(args.id) if sys.stderr.isatty() else None
    try:
        result = svc.download_model(
            args.id, progress=progress, mirror=args.mirror, force=args.force
        )
    except KeyboardInterrupt:
        if progress is not None:
            progress.clear()
        kept = _partial_bytes(svc, args.id)
        again = f"`trove model download {args.id}`"
        if kept:
            print(
                f"download cancelled; {_mb(kept)} kept: run {again} again to resume it",
                file=sys.stderr,
            )
        else:
            print(
                f"download cancelled before any file arrived; run {again} to start again",
                file=sys.stderr,
            )
        return EXIT_INTERRUPTED
    finally:
        if progress is not None:
            progress.clear()
    model = result.model
    if result.already_installed:
        print(
            f"{model.id} is already installed ({model.model_id}); --force downloads it again",
            file=sys.stderr,
        )
        return EXIT_OK
    print(
        f"installed {model.name} as {model.model_id} ({_mb(model.size_on_disk or 0)}, "
        f"from {result.endpoint})",
        file=sys.stderr,
    )
    for name in result.verified:
        print(f"  {name}: sha256 matches the hub's checksum", file=sys.stderr)
    for name in result.unverified:
        print(f"  {name}: the hub offered no checksum; its size was checked", file=sys.stderr)
    option = "--embedding" if model.kind == "embedding" else "--rerank"
    print(f"use it: trove base create NAME {option} {model.model_id}", file=sys.stderr)
    return EXIT_OK


def cmd_model_remove(svc: KnowledgeService, args: argparse.Namespace) -> int:
    svc.remove_model(args.id)
    print(f"removed {args.id}", file=sys.stderr)
    return EXIT_OK


def cmd_model_import(svc: KnowledgeService, args: argparse.Namespace) -> int:
    result = svc.import_model(Path(args.dir).expanduser())
    model = result.model
    replaced = "; it replaced the installed copy" if result.replaced else ""
    print(
        f"imported {model.name} as {model.model_id} ({_mb(model.size_on_disk or 0)}){replaced}",
        file=sys.stderr,
    )
    return EXIT_OK


def cmd_model_mirror(svc: KnowledgeService, args: argparse.Namespace) -> int:
    if args.clear:
        endpoint = svc.set_model_mirror(None)
    elif args.url:
        endpoint = svc.set_model_mirror(args.url)
    else:
        endpoint = svc.model_mirror()
    print(f"model downloads come from {_endpoint_text(endpoint)}")
    if endpoint.origin.startswith("env:") and (args.url or args.clear):
        variable = endpoint.origin.removeprefix("env:")
        print(f"note: {variable} overrides the stored mirror while it is set", file=sys.stderr)
    return EXIT_OK


class _ProgressBar:
    """One redrawn line on the terminal: model, bar, megabytes, speed."""

    def __init__(self, model_id: str) -> None:
        self._model_id = model_id
        self._started = time.monotonic()
        self._first: int | None = None
        self._drawn = 0.0
        self._shown = False

    def __call__(self, done: int, total: int) -> None:
        now = time.monotonic()
        if self._first is None:
            self._first = done  # resumed bytes do not count towards the speed
        if now - self._drawn < _REDRAW_S and done != total:
            return
        self._drawn = now
        percent = 100.0 * done / total if total else None
        speed = (done - self._first) / max(now - self._started, 1e-6)
        of = f" of {_mb(total)}" if total else ""
        sys.stderr.write(
            f"\r\x1b[K{self._model_id} {bar(percent)} {_mb(done)}{of}  {_mb(int(speed))}/s"
        )
        sys.stderr.flush()
        self._shown = True

    def clear(self) -> None:
        if self._shown:
            sys.stderr.write("\r\x1b[K")
            sys.stderr.flush()
            self._shown = False


def _partial_bytes(svc: KnowledgeService, model_id: str) -> int:
    bare = model_id.removeprefix("local:")
    return next((m.partial_bytes for m in svc.list_models() if m.id == bare), 0)


def _state_text(model: ModelListing) -> str:
    if model.problem:
        return f"{model.state}: {model.problem}"
    if model.state is ModelState.AVAILABLE and model.partial_bytes:
        return f"available ({_mb(model.partial_bytes)} downloaded; download resumes)"
    return str(model.state)


def _size_text(model: ModelListing) -> str:
    if model.size_on_disk is not None:
        return _mb(model.size_on_disk)
    if model.approx_bytes is not None:
        return f"~{_mb(model.approx_bytes)}"
    return ""


def _endpoint_text(endpoint: HubEndpoint) -> str:
    origin = endpoint.origin
    if origin.startswith("env:"):
        return f"{endpoint.url} (set by {origin.removeprefix('env:')})"
    if origin == "setting":
        return f"{endpoint.url} (the stored mirror)"
    return f"{endpoint.url} ({origin})"


def _mb(size: int) -> str:
    return f"{size / 1_000_000:,.1f} MB"


def _listing_json(model: ModelListing) -> dict[str, Any]:
    return {
        "id": model.id,
        "modelId": model.model_id,
        "kind": str(model.kind),
        "name": model.name,
        "state": str(model.state),
        "license": model.license,
        "nonCommercial": model.non_commercial,
        "languages": list(model.languages),
        "maxTokens": model.max_tokens,
        "dimensions": model.dimensions,
        "approxBytes": model.approx_bytes,
        "sizeOnDisk": model.size_on_disk,
        "partialBytes": model.partial_bytes,
        "source": model.source,
        "quality": [
            {"benchmark": q.benchmark, "metric": q.metric, "value": q.value, "source": q.source}
            for q in model.quality
        ],
        "summary": model.summary,
        "usedBy": list(model.used_by),
        "problem": model.problem,
        "inCatalog": model.in_catalog,
        # "CPU (2 threads)" and the provider onnxruntime names; null when not installed.
        "runsOn": model.runs_on.describe() if model.runs_on else None,
        "executionProvider": model.runs_on.placement.provider if model.runs_on else None,
    }
