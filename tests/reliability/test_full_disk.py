"""A real full disk: Trove's data folder on a 5 MB tmpfs, filled by `trove add --wait`.

No injected fault: SQLite, the copies into raw/ and the log file all meet ENOSPC /
SQLITE_FULL where they happen to. `add --wait` must return (exit 1, one STORAGE_FULL line
with the way out, every unfinished document named, no traceback); once the tmpfs is made
bigger, `trove resume` finishes everything, the documents indexed before the disk filled
are all still there, and `trove doctor` is clean (exit 0; exit 1 whenever it lists a
problem). Before: 295 "job worker crashed" tracebacks, one a second, and a `--wait` that
never returned.

Needs root and a `mount -t tmpfs` the machine allows; skipped with the reason otherwise.
"""

from __future__ import annotations

import os
import random
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import apsw
import pytest

from app.knowledge.data_layout import DataLayout

ROOT = Path(__file__).resolve().parents[2]
SMALL = "5m"
BIG = "200m"
FILES = 11  # about 1 MB each: twice what the small tmpfs holds
EARLIER = 3
# Generous: on the fixed code it returned in 2.7 s; the old code never returned.
BOUND_S = 120.0


def _mount(target: Path, *options: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["mount", *options, str(target)], capture_output=True, text=True, check=False
    )


@pytest.fixture
def small_home(tmp_path: Path) -> Iterator[Path]:
    if os.name != "posix" or os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    home = tmp_path / "home"
    home.mkdir()
    mounted = _mount(home, "-t", "tmpfs", "-o", f"size={SMALL}", "tmpfs")
    if mounted.returncode != 0:
        pytest.skip(f"mount -t tmpfs was refused: {mounted.stderr.strip()}")
    try:
        yield home
    finally:
        subprocess.run(["umount", "-l", str(home)], capture_output=True, check=False)


def _grow(home: Path) -> None:
    grown = _mount(home, "-o", f"remount,size={BIG}")
    assert grown.returncode == 0, grown.stderr


def trove(home: Path, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "TROVE_HOME"}
    env["QT_QPA_PLATFORM"] = "offscreen"
    return subprocess.run(
        [sys.executable, "-m", "app", "--home", str(home), *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,  # a hang fails the test instead of stalling the suite
        check=False,
    )


def _text_files(folder: Path, count: int, size: int, prefix: str) -> Path:
    """Files of random words (they compress and index like prose, unlike one repeated
    word), each with a marker word of its own in its first line."""
    folder.mkdir(parents=True)
    rng = random.Random(prefix)
    words = ["".join(rng.choices("abcdefghijklmnop", k=rng.randint(3, 9))) for _ in range(4000)]
    for n in range(count):
        lines = [f"{prefix}marker{n} opens this file"]
        length = 0
        while length < size:
            line = " ".join(rng.choices(words, k=16))
            lines.append(line)
            length += len(line) + 1
        (folder / f"{prefix}{n:02d}.txt").write_text("\n".join(lines), encoding="utf-8")
    return folder


def _statuses(home: Path) -> dict[str, str]:
    """Each document's status by file name, read straight from the catalog."""
    conn = apsw.Connection(str(DataLayout(home).catalog_path), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        rows = conn.execute("SELECT source, status FROM items WHERE type = 'file'").fetchall()
    finally:
        conn.close()
    return {Path(str(source)).name: str(status) for source, status in rows}


def _doctor(home: Path) -> subprocess.CompletedProcess[str]:
    """`trove doctor`, whose exit code must say whether it listed a problem."""
    run = trove(home, "doctor")
    assert "Traceback" not in run.stderr, run.stderr
    match = re.search(r"(\d+) problem\(s\)", run.stdout)
    assert match is not None, run.stdout
    assert run.returncode == (1 if int(match[1]) else 0), run.stdout
    return run


def test_add_wait_on_a_full_tmpfs_returns_and_resume_finishes_it(
    small_home: Path, tmp_path: Path
) -> None:
    home = small_home
    earlier = _text_files(tmp_path / "earlier", EARLIER, 2_000, "early")
    big = _text_files(tmp_path / "big", FILES, 1_000_000, "big")
    assert trove(home, "base", "create", "kb").returncode == 0
    first = trove(home, "add", "kb", str(earlier), "--wait")
    assert first.returncode == 0, first.stderr
    before = {name for name, status in _statuses(home).items() if status == "completed"}
    assert len(before) == EARLIER

    started = time.monotonic()
    full = trove(home, "add", "kb", str(big), "--wait", timeout=BOUND_S + 60)
    took = time.monotonic() - started
    print(f"add --wait on the full {SMALL} tmpfs returned after {took:.1f} s")
    assert full.returncode == 1, full.stderr
    assert took < BOUND_S, took
    assert "Traceback" not in full.stderr, full.stderr
    assert "job worker crashed" not in full.stderr
    assert "STORAGE_FULL" in full.stderr, full.stderr
    # What is not done is named, each document once.
    summary = re.search(
        r"indexed (\d+) document\(s\), (\d+) failed(, (\d+) unfinished)?", full.stderr
    )
    assert summary is not None, full.stderr
    done, failed, left = int(summary[1]), int(summary[2]), int(summary[4] or 0)
    assert done + failed + left == FILES and done < FILES, full.stderr
    named = {
        Path(line.split(": ")[1]).name
        for line in full.stderr.splitlines()
        if line.startswith(("unfinished: ", "failed: "))
    }
    assert len(named) == failed + left, full.stderr
    assert "trove resume kb" in full.stderr or "reindex" in full.stderr

    _grow(home)  # space is back
    _doctor(home)  # exit 1 if it lists the items the full disk left running, 0 if none
    resumed = trove(home, "resume", "kb")
    assert resumed.returncode == 0, resumed.stderr
    assert "Traceback" not in resumed.stderr, resumed.stderr

    statuses = _statuses(home)
    assert set(statuses) == before | {f"big{n:02d}.txt" for n in range(FILES)}
    assert set(statuses.values()) == {"completed"}, statuses
    doctor = _doctor(home)
    assert doctor.returncode == 0 and "0 problem(s)" in doctor.stdout, doctor.stdout
    for word, name in (
        ("earlymarker1", "early01"),
        (f"bigmarker{FILES - 1}", f"big{FILES - 1:02d}"),
    ):
        found = trove(home, "search", "kb", word)
        assert found.returncode == 0 and name in found.stdout, (word, found.stdout)
