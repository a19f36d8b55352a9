"""Restore of a damaged index at scale: completed items before/after and restore time.

    python -m tests.bench.corruption_restore [--docs 200] [--pages 8] [--root SRC ...]

Builds one base of `--docs` documents with the CLI, then for each damage (a truncated
index, `--pages` random pages overwritten, seeded) and each source tree given with
`--root` (default: this checkout; pass an older checkout's folder to compare) copies the
pristine data folder, damages it, runs `trove restore` from that tree and counts
completed items before and after, and whether search then works. Prints one JSON line.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from tests.reliability.test_corruption import (
    completed_leaves,
    damage_pages,
    truncate,
    write_docs,
)

ROOT = Path(__file__).resolve().parents[2]


def trove(root: Path, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("TROVE_HOME", "PYTHONPATH")}
    return subprocess.run(
        [sys.executable, "-m", "app.cli", "--home", str(home), *args],
        cwd=root,  # `python -m` puts the tree's own app/ first on sys.path
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )


def build(work: Path, docs: int) -> Path:
    home = work / "pristine"
    for args in (("base", "create", "kb"), ("add", "kb", str(write_docs(work / "docs", docs)))):
        run = trove(ROOT, home, *args, *(("--wait",) if args[0] == "add" else ()))
        if run.returncode != 0:
            raise SystemExit(f"building the base failed: {run.stderr}")
    return home


def one_run(root: Path, pristine: Path, work: Path, damage: str, pages: int) -> dict[str, Any]:
    home = work / f"run-{damage}-{root.name}"
    shutil.rmtree(home, ignore_errors=True)
    shutil.copytree(pristine, home)
    if damage == "truncated":
        truncate(home)
    else:
        damage_pages(home, seed=13, pages=pages)
    before = completed_leaves(home)
    start = time.perf_counter()
    restore = trove(root, home, "restore", "kb")
    seconds = time.perf_counter() - start
    after = completed_leaves(home)
    search = trove(ROOT, home, "search", "kb", "marker7")
    return {
        "damage": damage,
        "root": str(root),
        "completed_before": before,
        "completed_after": after,
        "restore_exit": restore.returncode,
        "restore_traceback": "Traceback" in restore.stderr,
        "restore_seconds": round(seconds, 2),
        "search_exit": search.returncode,
        "search_finds": "Document 7" in search.stdout,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--docs", type=int, default=200)
    parser.add_argument("--pages", type=int, default=8)
    parser.add_argument("--root", type=Path, action="append")
    args = parser.parse_args()
    roots = [r.resolve() for r in (args.root or [ROOT])]
    with tempfile.TemporaryDirectory(prefix="trove-corrupt-") as tmp:
        work = Path(tmp)
        pristine = build(work, args.docs)
        runs = [
            one_run(root, pristine, work, damage, args.pages)
            for damage in ("truncated", "page-damage")
            for root in roots
        ]
    print(json.dumps({"docs": args.docs, "damaged_pages": args.pages, "runs": runs}))


if __name__ == "__main__":
    main()
