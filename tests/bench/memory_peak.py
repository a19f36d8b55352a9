"""Peak memory of a real `trove add --wait`: the main process and its reader workers.

    python tests/bench/memory_peak.py [--single-mb 200] [--gb 1] [--corpus DIR]
                                      [--workdir DIR] [--seed S]

Runs `trove add --wait` as a subprocess (BM25-only base, default workers) for

(a) one single-line text file of --single-mb MB (no line break anywhere: the worst case
    for a chunker that looks for structure), and
(b) a generated mixed corpus of --gb GB, as tests/bench/ingest.py builds it.

A sampler thread in this process reads, every ~50 ms with psutil, the RSS of the `trove`
process and of all its descendants, and keeps two peaks: the main process alone and the
sum of main + descendants sampled at the same instant. Prints one JSON line. `--gb 0`
or `--single-mb 0` skips that case; `--corpus DIR` adds an existing folder instead of
generating one (e.g. to compare two checkouts on the very same files).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

SAMPLE_SECONDS = 0.05
MB = 1024 * 1024


@dataclass
class Peaks:
    main: int = 0
    family: int = 0
    samples: int = 0
    processes: set[int] = field(default_factory=set)


def _sample(root: psutil.Process, peaks: Peaks) -> None:
    try:
        main = root.memory_info().rss
        children = root.children(recursive=True)
    except psutil.Error:
        return  # the process just exited
    total = main
    for child in children:
        with contextlib.suppress(psutil.Error):  # a worker that just exited
            total += child.memory_info().rss
            peaks.processes.add(child.pid)
    peaks.main = max(peaks.main, main)
    peaks.family = max(peaks.family, total)
    peaks.samples += 1


def watch(pid: int, stop: threading.Event, peaks: Peaks) -> None:
    """Sample until `stop` is set; a separate thread, so the process measured is untouched."""
    root = psutil.Process(pid)
    while not stop.wait(SAMPLE_SECONDS):
        _sample(root, peaks)


def trove_env(home: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["TROVE_HOME"] = str(home)
    env["QT_QPA_PLATFORM"] = "offscreen"
    # The spawned reader workers inherit this path, so they run the same checkout.
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def trove(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "app", "--home", str(home), *args],
        env=trove_env(home),
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )


def measure_add(home: Path, source: Path) -> dict[str, object]:
    """Peak RSS of `trove add --wait` on `source`, into a fresh BM25-only base."""
    created = trove(home, "base", "create", "bench")
    if created.returncode != 0:
        raise RuntimeError(f"base create failed: {created.stderr}")
    peaks = Peaks()
    stop = threading.Event()
    started = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "app", "--home", str(home), "add", "bench", str(source), "--wait"],
        env=trove_env(home),
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    sampler = threading.Thread(target=watch, args=(proc.pid, stop, peaks), daemon=True)
    sampler.start()
    out, err = proc.communicate()
    stop.set()
    sampler.join()
    seconds = time.perf_counter() - started
    return {
        "ok": proc.returncode == 0,
        "seconds": round(seconds, 1),
        "peak_main_mb": round(peaks.main / MB, 1),
        "peak_main_and_workers_mb": round(peaks.family / MB, 1),
        "samples": peaks.samples,
        "descendants_seen": len(peaks.processes),
        "summary": err.strip().splitlines()[-3:] if err.strip() else out.strip().splitlines()[-3:],
    }


def single_line_file(path: Path, size_mb: float, seed: int) -> int:
    """A text file of words and spaces without a single line break, written in pieces."""
    rng = random.Random(seed)
    letters = "abcdefghijklmnopqrstuvwxyz"
    words = ["".join(rng.choice(letters) for _ in range(rng.randint(2, 10))) for _ in range(5000)]
    block = " ".join(rng.choice(words) for _ in range(200_000)) + " "
    data = block.encode("ascii")
    target = int(size_mb * MB)
    written = 0
    with path.open("wb") as fh:
        while written < target:
            piece = data[: target - written]
            fh.write(piece)
            written += len(piece)
    return written


def _size_of(folder: Path) -> tuple[int, int]:
    sizes = [p.stat().st_size for p in folder.rglob("*") if p.is_file()]
    return len(sizes), sum(sizes)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--single-mb", type=float, default=200.0)
    parser.add_argument("--gb", type=float, default=1.0)
    parser.add_argument("--corpus", type=Path, help="add this folder instead of generating one")
    parser.add_argument("--workdir", type=Path)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    result: dict[str, object] = {"bench": "memory_peak", "budget_mb": 400}
    with tempfile.TemporaryDirectory(dir=args.workdir) as tmp:
        work = Path(tmp)
        if args.single_mb > 0:
            source = work / "single-line.txt"
            size = single_line_file(source, args.single_mb, args.seed)
            case = measure_add(work / "home-single", source)
            case["file_mb"] = round(size / MB, 1)
            result["single_line"] = case
            source.unlink()
        if args.corpus is not None:
            files, total = _size_of(args.corpus)
            case = measure_add(work / "home-corpus", args.corpus.resolve())
            case["files"] = files
            case["corpus_mb"] = round(total / MB, 1)
            result["corpus"] = case
        elif args.gb > 0:
            from tests.bench.ingest import generate

            files, total = generate(work / "corpus", args.gb * 1024, args.seed)
            case = measure_add(work / "home-corpus", work / "corpus")
            case["files"] = files
            case["corpus_mb"] = round(total / MB, 1)
            result["corpus"] = case
    print(json.dumps(result))


if __name__ == "__main__":
    main()
