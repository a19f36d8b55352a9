"""A damaged index or catalog: recovery never makes things worse.

Each case damages a real data folder the way disks and people do (a truncated index,
random bytes over some of its pages, a WAL lost before it was checkpointed), then drives
the real `trove` CLI in subprocesses: the damage is reported (search exits 1 with one
INDEX_CORRUPT line, `doctor` names it and recommends restore), `restore` brings every
item with an intact copy under raw/ back to completed, never fewer completed items than
before, and search finds the documents again.
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import apsw
import pytest

from app import cli
from app.knowledge.layout import DataLayout
from app.knowledge.pipeline.store.index_store import index_path

ROOT = Path(__file__).resolve().parents[2]
DOCS = 24
PAGE = 4096


def trove(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "TROVE_HOME"}
    return subprocess.run(
        [sys.executable, "-m", "app.cli", "--home", str(home), *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


def ok(run: subprocess.CompletedProcess[str]) -> subprocess.CompletedProcess[str]:
    assert run.returncode == 0, run.stdout + run.stderr
    assert "Traceback" not in run.stderr, run.stderr
    return run


def write_docs(folder: Path, count: int) -> Path:
    folder.mkdir(parents=True)
    for n in range(count):
        (folder / f"doc{n:03d}.md").write_text(
            f"# Document {n}\n\nThe marker{n} word and the shared quokka word.\n"
            + "Filler sentence about nothing in particular. " * 20,
            encoding="utf-8",
        )
    return folder


def base_dir(home: Path) -> Path:
    (folder,) = DataLayout(home).bases_dir.iterdir()
    return folder


def completed_leaves(home: Path) -> int:
    conn = apsw.Connection(str(DataLayout(home).catalog_path), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        row = conn.execute(
            "SELECT count(*) FROM items WHERE status = 'completed' AND type != 'directory'"
        ).fetchone()
    finally:
        conn.close()
    assert row is not None
    return int(row[0])


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    ok(trove(home, "base", "create", "kb"))
    ok(trove(home, "add", "kb", str(write_docs(tmp_path / "docs", DOCS)), "--wait"))
    assert completed_leaves(home) == DOCS
    return home


def truncate(home: Path) -> None:
    index = index_path(base_dir(home))
    with index.open("r+b") as f:
        f.truncate(2 * PAGE)


def damage_pages(home: Path, seed: int = 13, pages: int = 4) -> None:
    """Random bytes over `pages` random pages (never page 1: that is a truncation case)."""
    index = index_path(base_dir(home))
    total = index.stat().st_size // PAGE
    rng = random.Random(seed)
    with index.open("r+b") as f:
        for page in rng.sample(range(1, total), min(pages, total - 1)):
            f.seek(page * PAGE)
            f.write(rng.randbytes(PAGE))


def lose_wal(home: Path, tmp_path: Path) -> None:
    """A note written while another connection keeps the WAL from being checkpointed; then
    the main file is kept and its -wal/-shm lost (a copy or sync of only the .sqlite)."""
    index = index_path(base_dir(home))
    holder = apsw.Connection(str(index))
    holder.execute("SELECT count(*) FROM materials").fetchone()
    try:
        ok(trove(home, "note", "kb", "Late note", "The walrus word lives only in the WAL."))
        assert Path(f"{index}-wal").stat().st_size > 0
        kept = tmp_path / "kept.sqlite"
        shutil.copyfile(index, kept)
    finally:
        holder.close()
    for suffix in ("-wal", "-shm"):
        Path(f"{index}{suffix}").unlink(missing_ok=True)
    os.replace(kept, index)


def assert_found(home: Path, word: str, title: str) -> None:
    found = ok(trove(home, "search", "kb", word))
    assert title in found.stdout, found.stdout


DAMAGE: dict[str, Callable[[Path, Path], None]] = {
    "truncated": lambda home, tmp: truncate(home),
    "page-damage": lambda home, tmp: damage_pages(home),
}


@pytest.mark.parametrize("kind", sorted(DAMAGE))
def test_a_damaged_index_is_reported_and_restore_brings_every_item_back(
    home: Path, tmp_path: Path, kind: str
) -> None:
    DAMAGE[kind](home, tmp_path)
    before = completed_leaves(home)

    doctor = trove(home, "doctor")
    assert doctor.returncode == cli.EXIT_FAILED, doctor.stdout + doctor.stderr
    assert "INDEX_CORRUPT" in doctor.stdout and "trove restore" in doctor.stdout, doctor.stdout
    assert "Traceback" not in doctor.stderr, doctor.stderr
    if kind == "truncated":  # page damage may miss every page a query touches
        search = trove(home, "search", "kb", "quokka")
        assert search.returncode == cli.EXIT_FAILED
        lines = search.stderr.strip().splitlines()
        assert len(lines) == 1 and "INDEX_CORRUPT" in lines[0], search.stderr
        assert "trove restore" in lines[0]

    ok(trove(home, "restore", "kb"))
    after = completed_leaves(home)
    assert after >= before
    assert after == DOCS
    ok(trove(home, "doctor"))
    assert_found(home, "marker7", "Document 7")
    assert_found(home, f"marker{DOCS - 1}", f"Document {DOCS - 1}")
    leftovers = [p.name for p in index_path(base_dir(home)).parent.iterdir() if "fresh" in p.name]
    assert leftovers == []


def test_a_lost_wal_is_reported_and_restore_brings_the_note_back(
    home: Path, tmp_path: Path
) -> None:
    lose_wal(home, tmp_path)
    before = completed_leaves(home)
    assert before == DOCS + 1  # the catalog still says the note is indexed

    doctor = trove(home, "doctor")
    assert doctor.returncode == cli.EXIT_FAILED, doctor.stdout + doctor.stderr
    assert "Traceback" not in doctor.stderr

    ok(trove(home, "restore", "kb"))
    assert completed_leaves(home) == before
    ok(trove(home, "doctor"))
    assert_found(home, "walrus", "Late note")
    assert_found(home, "marker3", "Document 3")
