"""SIGKILL a `python -m app sync` mid-sync (while it looks at the folder, and while it
indexes what it found), then: doctor clean after recovery, the next sync completes, no
duplicates, every file of the folder searchable by its own word."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import apsw
import pytest

from app.knowledge.jobs.reader_pool import InlineExtraction
from app.knowledge.service import KnowledgeService
from app.knowledge.types import ItemStatus, ItemType
from tests.reliability.harness import ROOT, kill_and_check

BASE = "synced"
WAIT_S = 120.0

# When to kill: the sync job looking at the folder, or the indexing it queued under way.
_MOMENTS = {
    "looking": "SELECT count(*) FROM linked_folders WHERE state = 'syncing'",
    "indexing": "SELECT count(*) FROM items WHERE type = 'file' AND status = 'completed' "
    "AND source LIKE '%/new/%'",
}


def _word(n: int) -> str:
    return "w" + "".join(chr(ord("a") + int(d)) for d in f"{n:05d}")


def _write(folder: Path, rel: str, n: int) -> None:
    path = folder / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"Document {n} mentions {_word(n)} and little else.\n", encoding="utf-8")


def _cli(home: Path, *args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "app", "--home", str(home), *args],
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )


def _wait_for(home: Path, proc: subprocess.Popen[bytes], sql: str, at_least: int) -> bool:
    conn = apsw.Connection(str(home / "trove.sqlite"), flags=apsw.SQLITE_OPEN_READONLY)
    conn.set_busy_timeout(5000)
    deadline = time.monotonic() + WAIT_S
    try:
        while time.monotonic() < deadline and proc.poll() is None:
            row = conn.execute(sql).fetchone()
            if row and int(row[0]) >= at_least:
                return True
            time.sleep(0.005)  # polling another process's progress: nothing to wait on
    finally:
        conn.close()
    return False


@pytest.mark.parametrize("moment", sorted(_MOMENTS))
def test_a_sync_killed_mid_way_recovers_and_the_next_sync_completes(
    tmp_path: Path, moment: str
) -> None:
    home, folder = tmp_path / "home", tmp_path / "folder"
    for n in range(300):
        _write(folder, f"old/{n}.md", n)
    svc = KnowledgeService(home, extraction=InlineExtraction())
    try:
        base = svc.create_base(BASE)
        (root,) = svc.add_linked_folders(base.id, [folder]).added
        svc.run_pending_jobs(base.id)
    finally:
        svc.close()
    # Changes to take in: 400 new files, 30 edited, 30 renamed into a subfolder, 30 deleted.
    for n in range(1000, 1400):
        _write(folder, f"new/{n}.md", n)
    for n in range(30):
        _write(folder, f"old/{n}.md", 2000 + n)
    for n in range(30, 60):
        (folder / "moved").mkdir(exist_ok=True)
        (folder / "old" / f"{n}.md").rename(folder / "moved" / f"{n}.md")
    for n in range(60, 90):
        (folder / "old" / f"{n}.md").unlink()

    proc = _cli(home, "sync", BASE)
    try:
        reached = _wait_for(home, proc, _MOMENTS[moment], 1 if moment == "looking" else 40)
        assert reached, f"the sync ended before the {moment} moment: {proc.returncode}"
        check = kill_and_check(proc)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, 9)
        proc.wait()
    assert check.survivors == []

    svc = KnowledgeService(home, extraction=InlineExtraction())
    try:
        svc.recover()
        assert svc.doctor(base.id).report.problems == []
        state = svc.sync_states(base.id)[root.id]
        assert not state.link.syncing  # the killed sync is not shown as running
    finally:
        svc.close()

    again = _cli(home, "sync", BASE)
    _out, err = again.communicate(timeout=WAIT_S)
    assert again.returncode == 0, err.decode(errors="replace")

    svc = KnowledgeService(home, extraction=InlineExtraction())
    try:
        files = [i for i in svc.list_items(base.id) if i.type is ItemType.FILE]
        sources = [i.source for i in files]
        on_disk = sorted(str(p) for p in folder.rglob("*.md"))
        assert len(sources) == len(set(sources)), "an item was admitted twice"
        assert sorted(sources) == on_disk
        assert all(i.status is ItemStatus.COMPLETED for i in files)
        for n in (0, 29, 45, 100, 1000, 1399):
            word = _word(2000 + n if n < 30 else n)
            hits = svc.search(base.id, word).results
            assert len(hits) == 1, word
        assert svc.search(base.id, _word(70)).results == []  # deleted
        assert svc.doctor(base.id).report.problems == []
    finally:
        svc.close()
