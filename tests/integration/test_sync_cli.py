"""Linked folders through real `python -m app` subprocesses: add --link with ignore rules,
sync with its summary and --json, item link / unlink / refresh, and several `trove sync`
processes at once making no duplicates."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from app.knowledge.jobs.reader_pool import InlineExtraction
from app.knowledge.service import KnowledgeService
from app.knowledge.types import ItemStatus, ItemType
from tests.conftest import write_files

ROOT = Path(__file__).resolve().parents[2]


def trove(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "app", "--home", str(home), *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _files(home: Path) -> list[str]:
    svc = KnowledgeService(home, extraction=InlineExtraction())
    try:
        (base,) = svc.list_bases()
        items = [i for i in svc.list_items(base.id) if i.type is ItemType.FILE]
        assert all(i.status is ItemStatus.COMPLETED for i in items)
        return sorted(i.source for i in items)
    finally:
        svc.close()


def test_add_link_sync_json_and_unlink(tmp_path: Path) -> None:
    home = tmp_path / "home"
    folder = write_files(
        tmp_path / "docs", {"a.md": "The aardvark.", "skip/b.md": "The bison.", "c.md": "Cat."}
    )
    assert trove(home, "base", "create", "kb").returncode == 0
    added = trove(home, "add", "kb", str(folder), "--link", "--ignore", "skip/", "--wait")
    assert added.returncode == 0, added.stderr
    assert _files(home) == [str(folder / "a.md"), str(folder / "c.md")]

    (folder / "c.md").rename(folder / "cats.md")
    (folder / "d.md").write_text("The dingo.", encoding="utf-8")
    (folder / "a.md").unlink()
    synced = trove(home, "sync", "kb")
    assert synced.returncode == 0, synced.stderr
    assert "1 added, 0 changed, 1 removed, 1 renamed" in synced.stdout

    (folder / "e.md").write_text("The emu.", encoding="utf-8")
    as_json = trove(home, "sync", "kb", "--json")
    assert as_json.returncode == 0, as_json.stderr
    (row,) = json.loads(as_json.stdout)
    assert row["folder"] == str(folder)
    assert (row["added"], row["removed"], row["renamed"]) == (1, 0, 0)
    assert row["paths"]["added"] == ["e.md"] and row["error"] is None
    assert _files(home) == [str(folder / n) for n in ("cats.md", "d.md", "e.md")]

    listing = json.loads(trove(home, "item", "list", "kb", "--json").stdout)
    root_id = next(i["id"] for i in listing if i["type"] == "directory")
    assert trove(home, "item", "unlink", "kb", root_id).returncode == 0
    nothing = trove(home, "sync", "kb", "--json")
    assert nothing.returncode == 0 and json.loads(nothing.stdout) == []
    relinked = trove(home, "item", "link", "kb", root_id)
    assert relinked.returncode == 0, relinked.stderr
    child = next(i["id"] for i in listing if i["type"] == "file")
    refused = trove(home, "item", "link", "kb", child)
    assert refused.returncode != 0 and "only a folder" in refused.stderr


def test_refresh_settings_from_the_command_line(tmp_path: Path) -> None:
    home = tmp_path / "home"
    folder = write_files(tmp_path / "docs", {"a.md": "The aardvark."})
    assert trove(home, "base", "create", "kb").returncode == 0
    assert trove(home, "add", "kb", str(folder), "--wait").returncode == 0
    listing = json.loads(trove(home, "item", "list", "kb", "--json").stdout)
    folder_id = next(i["id"] for i in listing if i["type"] == "directory")
    refused = trove(home, "item", "refresh", "kb", folder_id, "--every", "1h")
    assert refused.returncode != 0 and "web page or sitemap" in refused.stderr
    bad = trove(home, "item", "refresh", "kb", folder_id, "--every", "soon")
    assert bad.returncode == 2


def test_several_sync_processes_at_once_make_no_duplicates(tmp_path: Path) -> None:
    home = tmp_path / "home"
    folder = write_files(tmp_path / "docs", {f"old/{n}.md": f"Old note {n}." for n in range(20)})
    assert trove(home, "base", "create", "kb").returncode == 0
    assert trove(home, "add", "kb", str(folder), "--link", "--wait").returncode == 0
    write_files(folder, {f"new/{n}.md": f"New note {n}." for n in range(60)})
    for n in range(5):
        (folder / "old" / f"{n}.md").rename(folder / f"moved{n}.md")
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "app", "--home", str(home), "sync", "kb"],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(3)
    ]
    for proc in procs:
        _out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
    assert _files(home) == sorted(str(p) for p in folder.rglob("*.md"))
    doctor = trove(home, "doctor", "kb")
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr


def test_restore_of_a_linked_folder_names_the_originals_that_are_gone(tmp_path: Path) -> None:
    """A linked folder is indexed in place (no copies): restore reads the originals again,
    and names each one that is gone."""
    home = tmp_path / "home"
    folder = write_files(
        tmp_path / "docs", {"a.md": "The aardvark.", "b/bison.md": "The bison.", "c.md": "Cat."}
    )
    assert trove(home, "base", "create", "kb").returncode == 0
    assert trove(home, "add", "kb", str(folder), "--link", "--wait").returncode == 0
    (folder / "b" / "bison.md").unlink()
    restored = trove(home, "restore", "kb")
    assert restored.returncode != 0  # one item could not be rebuilt
    assert f"gone: {folder / 'b' / 'bison.md'}" in restored.stderr
    assert "skipped 1 whose copy or original is missing" in restored.stderr
    found = trove(home, "search", "kb", "aardvark", "--json")
    assert found.returncode == 0 and "aardvark" in found.stdout

    exported = trove(home, "base", "export", "kb", str(tmp_path / "kb.trovebase"))
    assert exported.returncode == 0
    assert "--with-originals" in exported.stderr
