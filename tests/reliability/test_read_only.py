"""A read-only data folder (a read-only mount, a backup, permissions): reading still works.

The real CLI runs in subprocesses with permission bits enforced even for root (see
tests/reliability/permissions.py). Searching, listing and checking work; every command
that would write exits 1 with one STORAGE_READ_ONLY line naming the folder, and nothing
under the folder changes.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import apsw
import pytest

from app import cli
from app.knowledge.data_layout import DataLayout
from app.knowledge.pipeline.store.index_store import index_path
from tests.reliability import permissions

ROOT = Path(__file__).resolve().parents[2]

needs_permissions = pytest.mark.skipif(
    not permissions.can_enforce(), reason="file permissions cannot be enforced here"
)


def trove(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The CLI with permission bits enforced, as they are for anybody but root."""
    env = {k: v for k, v in os.environ.items() if k != "TROVE_HOME"}
    return subprocess.run(
        [sys.executable, "-m", "tests.reliability.permissions", "--home", str(home), *args],
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


def chmod_tree(top: Path, writable: bool) -> None:
    for path in [top, *top.rglob("*")]:
        mode = path.stat().st_mode
        bits = stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH
        path.chmod((mode | stat.S_IWUSR) if writable else (mode & ~bits))


def snapshot(home: Path) -> list[tuple[str, int, int]]:
    return sorted(
        (str(p.relative_to(home)), p.stat().st_size, p.stat().st_mtime_ns) for p in home.rglob("*")
    )


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "alpha.md").write_text("# Alpha\n\nThe alphaword lives here.\n", encoding="utf-8")
    (docs / "beta.md").write_text("# Beta\n\nThe betaword lives here.\n", encoding="utf-8")
    ok(trove(home, "base", "create", "kb"))
    ok(trove(home, "add", "kb", str(docs), "--wait"))
    return home


def assert_reads_work(home: Path, word: str, title: str) -> None:
    found = ok(trove(home, "search", "kb", word))
    assert title in found.stdout, found.stdout
    listed = ok(trove(home, "base", "list"))
    assert "kb" in listed.stdout
    doctor = ok(trove(home, "doctor"))
    assert "0 problem(s)" in doctor.stdout, doctor.stdout


def assert_writes_refused(home: Path, tmp_path: Path) -> None:
    for args in (
        ("add", "kb", str(tmp_path / "docs"), "--wait"),
        ("note", "kb", "Blocked", "text"),
        ("restore", "kb"),
        ("doctor", "--repair"),
    ):
        run = trove(home, *args)
        assert run.returncode == cli.EXIT_FAILED, (args, run.stdout, run.stderr)
        lines = run.stderr.strip().splitlines()
        assert len(lines) == 1, (args, run.stderr)
        assert "STORAGE_READ_ONLY" in lines[0] and str(home) in lines[0], (args, lines[0])


@needs_permissions
def test_a_read_only_data_folder_is_searchable_and_refuses_changes_cleanly(
    home: Path, tmp_path: Path
) -> None:
    before = snapshot(home)
    chmod_tree(home, writable=False)
    try:
        assert_reads_work(home, "alphaword", "Alpha")
        assert_writes_refused(home, tmp_path)
    finally:
        chmod_tree(home, writable=True)
    assert snapshot(home) == before


@needs_permissions
def test_a_read_only_folder_with_a_wal_still_shows_its_last_writes(
    home: Path, tmp_path: Path
) -> None:
    """A copy taken while Trove was running: the last note is only in the index's WAL."""
    index = index_path(next(DataLayout(home).bases_dir.iterdir()))
    holder = apsw.Connection(str(index))  # keeps the note's WAL from being checkpointed
    try:
        holder.execute("SELECT count(*) FROM materials").fetchone()
        ok(trove(home, "note", "kb", "Late note", "The walrusword lives in the WAL."))
        assert Path(f"{index}-wal").stat().st_size > 0
        chmod_tree(home, writable=False)
        try:
            assert_reads_work(home, "walrusword", "Late note")
        finally:
            chmod_tree(home, writable=True)
    finally:
        holder.close()


@needs_permissions
def test_a_read_only_data_folder_can_be_exported(home: Path, tmp_path: Path) -> None:
    """Export only reads the base: it stages beside the output file, not under the data
    folder (it was refused with STORAGE_READ_ONLY for its staging folder there)."""
    out = tmp_path / "out"
    out.mkdir()
    before = snapshot(home)
    chmod_tree(home, writable=False)
    try:
        ok(trove(home, "base", "export", "kb", str(out / "kb.trovebase")))
    finally:
        chmod_tree(home, writable=True)
    assert snapshot(home) == before
    assert [p.name for p in out.iterdir()] == ["kb.trovebase"]  # no staging, no .part left
    copy = tmp_path / "copy"
    ok(trove(copy, "base", "import", str(out / "kb.trovebase")))
    found = ok(trove(copy, "search", "kb", "betaword"))
    assert "Beta" in found.stdout, found.stdout
