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
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import apsw
import pytest

from app import cli
from app.knowledge.data_layout import DataLayout
from app.knowledge.jobs.reader_pool import InlineExtraction
from app.knowledge.pipeline.store.index_store import index_path
from app.knowledge.service import KnowledgeService
from app.knowledge.types import ErrorCode, ItemStatus, ItemType, SearchMode, TroveError
from tests.fakes import FakeModels

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
            "SELECT count(*) FROM items WHERE status = 'completed' AND type != 'directory' "
            "AND base_id IN (SELECT id FROM bases)"
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


def damage_catalog_rows(home: Path) -> tuple[str, str]:
    """Rows the schema forbids: an unknown base and item status, an item of a base that
    does not exist, and queued jobs of an unknown kind and with a malformed payload (its
    item left processing, as a job in flight leaves it). Returns the two damaged items."""
    conn = apsw.Connection(str(DataLayout(home).catalog_path))
    try:
        conn.execute("PRAGMA foreign_keys=OFF")
        conn.execute("PRAGMA ignore_check_constraints=ON")
        ids = [
            str(r[0]) for r in conn.execute("SELECT id FROM items WHERE type = 'file' ORDER BY id")
        ]
        zombie, stuck = ids[0], ids[1]
        conn.execute("UPDATE bases SET status = 'weird'")
        conn.execute("UPDATE items SET status = 'zombie' WHERE id = ?", (zombie,))
        conn.execute("UPDATE items SET status = 'processing' WHERE id = ?", (stuck,))
        conn.execute(
            "INSERT INTO items (id, base_id, type, source, title, status, created_at, updated_at) "
            "VALUES ('orphan1', 'ghost-base', 'note', 'note', 'Ghost', 'completed', 0, 0)"
        )
        (base_id,) = conn.execute("SELECT id FROM bases").fetchone()
        conn.execute(
            "INSERT INTO jobs (kind, base_id, item_id, payload, created_at, updated_at) "
            "VALUES ('frobnicate', ?, ?, '{}', 0, 0), ('index-documents', ?, ?, 'not json{', 0, 0)",
            (base_id, zombie, base_id, stuck),
        )
    finally:
        conn.close()
    return zombie, stuck


def test_garbage_catalog_rows_are_reported_repaired_and_restored(home: Path) -> None:
    damage_catalog_rows(home)
    before = completed_leaves(home)
    assert before == DOCS - 2

    listed = ok(trove(home, "base", "list"))
    assert "kb" in listed.stdout and "failed" in listed.stdout
    doctor = trove(home, "doctor")
    assert doctor.returncode == cli.EXIT_FAILED
    assert "Traceback" not in doctor.stderr, doctor.stderr
    for code in ("BAD_BASE_ROW", "BAD_ITEM_ROW", "ORPHAN_ITEM", "BAD_JOB"):
        assert code in doctor.stdout, doctor.stdout

    ok(trove(home, "doctor", "--repair"))
    assert completed_leaves(home) >= before
    ok(trove(home, "restore", "kb"))
    assert completed_leaves(home) == DOCS
    ok(trove(home, "doctor"))
    assert_found(home, "marker5", "Document 5")


def test_the_runner_fails_a_job_of_unknown_kind_or_bad_payload_instead_of_crashing(
    tmp_path: Path,
) -> None:
    svc = KnowledgeService(tmp_path / "home", models=FakeModels(), extraction=InlineExtraction())
    try:
        base = svc.create_base("kb")
        svc.add(base.id, [write_docs(tmp_path / "docs", 2)])
        svc.run_pending_jobs(base.id)
        conn = apsw.Connection(str(svc.layout.catalog_path))
        try:
            items = [i for i in svc.list_items(base.id) if i.type is ItemType.FILE]
            conn.execute(
                "UPDATE items SET status = 'processing' WHERE id IN (?, ?)",
                (items[0].id, items[1].id),
            )
            conn.execute(
                "INSERT INTO jobs (kind, base_id, item_id, payload, created_at, updated_at) "
                "VALUES ('frobnicate', ?, ?, '{}', 0, 0), ('index-documents', ?, ?, '[1,', 0, 0)",
                (base.id, items[0].id, base.id, items[1].id),
            )
        finally:
            conn.close()
        assert svc.run_pending_jobs(base.id) == 2
        for item in items:
            got = svc.get_item(item.id)
            assert got is not None and got.status is ItemStatus.FAILED, got
            assert got.error_message and "reindex" in got.error_message
        assert {j.status for j in svc.catalog.list_jobs(base.id)} == {"failed"}
    finally:
        svc.close()


def test_restore_of_a_truncated_vector_index_brings_vectors_back(tmp_path: Path) -> None:
    """The fresh file gets the base's vector table: hybrid search works after restore."""
    svc = KnowledgeService(tmp_path / "home", models=FakeModels(), extraction=InlineExtraction())
    try:
        base = svc.create_base("kb", embedding_model="fake:bow")
        svc.add(base.id, [write_docs(tmp_path / "docs", 6)])
        svc.run_pending_jobs(base.id)
        svc.parts.stores.close(base.id)
        truncate(tmp_path / "home")
        with pytest.raises(TroveError) as caught:
            svc.search(base.id, "marker2")
        assert caught.value.code is ErrorCode.INDEX_CORRUPT

        report = svc.restore_base(base.id)
        svc.run_pending_jobs(base.id)
        assert report.restored == 6
        assert completed_leaves(tmp_path / "home") == 6
        hits = svc.search(base.id, "marker2", mode=SearchMode.HYBRID).results
        assert hits and hits[0].title == "Document 2"
        store = svc.parts.stores.get(base.id)
        assert store.vector_count() == store.chunk_count() > 0
    finally:
        svc.close()


def test_an_item_added_to_a_damaged_index_fails_with_index_corrupt(tmp_path: Path) -> None:
    svc = KnowledgeService(tmp_path / "home", models=FakeModels(), extraction=InlineExtraction())
    try:
        base = svc.create_base("kb")
        svc.add(base.id, [write_docs(tmp_path / "docs", 3)])
        svc.run_pending_jobs(base.id)
        svc.parts.stores.close(base.id)
        truncate(tmp_path / "home")
        late = svc.add_note(base.id, "Late", "The latecomer word.")
        svc.run_pending_jobs(base.id)
        got = svc.get_item(late.id)
        assert got.status is ItemStatus.FAILED and got.error_code == ErrorCode.INDEX_CORRUPT
        assert got.error_message and "trove restore" in got.error_message
        assert completed_leaves(tmp_path / "home") == 3

        svc.restore_base(base.id)
        svc.run_pending_jobs(base.id)
        assert completed_leaves(tmp_path / "home") == 4
        assert [r.title for r in svc.search(base.id, "latecomer").results] == ["Late"]
    finally:
        svc.close()


# A zeroed header (not a database any more) and text written over its first pages.
@pytest.mark.parametrize(
    "garbage", [b"\0" * 100, b"not a database at all " * 300], ids=["zeroed", "text"]
)
def test_an_unreadable_catalog_is_catalog_damaged_in_one_line(
    tmp_path: Path, garbage: bytes
) -> None:
    home = tmp_path / "home"
    ok(trove(home, "base", "create", "kb"))
    catalog = DataLayout(home).catalog_path
    for suffix in ("-wal", "-shm"):
        Path(f"{catalog}{suffix}").unlink(missing_ok=True)
    with catalog.open("r+b") as f:
        f.write(garbage)
    for args in (("base", "list"), ("search", "kb", "word"), ("doctor",)):
        run = trove(home, *args)
        assert run.returncode == cli.EXIT_FAILED, (args, run.stdout, run.stderr)
        lines = run.stderr.strip().splitlines()
        assert len(lines) == 1 and "CATALOG_DAMAGED" in lines[0], (args, run.stderr)
        assert str(catalog) in lines[0]


# -- an index lost whole: the doctor's own advice brings every item back -----------------------


def _emptied(index: Path) -> None:
    index.write_bytes(b"")  # a 0-byte file is a valid, empty SQLite database


def _removed(index: Path) -> None:
    index.unlink()


def _folder_in_its_place(index: Path) -> None:
    index.unlink()
    index.mkdir()
    (index / "something.txt").write_text("not an index", encoding="utf-8")


LOSS: dict[str, Callable[[Path], None]] = {
    "zero-bytes": _emptied,
    "missing": _removed,
    "directory": _folder_in_its_place,
}
ADVICE = re.compile(r"trove (restore \S+|doctor --repair)")


def _advised(run: subprocess.CompletedProcess[str]) -> list[list[str]]:
    """The commands the doctor tells the person to run, restore first, each once."""
    found = dict.fromkeys(m[1] for m in ADVICE.finditer(run.stdout + run.stderr))
    return sorted((cmd.split() for cmd in found), key=lambda c: c[0] != "restore")


@pytest.mark.parametrize("repair_first", [False, True], ids=["advice", "repair-first"])
@pytest.mark.parametrize("kind", sorted(LOSS))
def test_a_lost_index_is_rebuilt_by_following_the_doctors_advice(
    home: Path, kind: str, repair_first: bool
) -> None:
    """Before: a 0-byte or missing index made the doctor list one MISSING_MATERIAL per
    item and offer --repair, which failed every completed item; a folder in the index's
    place made restore crash with IsADirectoryError and leave a .fresh file behind."""
    index = index_path(base_dir(home))
    for suffix in ("-wal", "-shm"):
        Path(f"{index}{suffix}").unlink(missing_ok=True)
    LOSS[kind](index)
    before = completed_leaves(home)
    assert before == DOCS

    doctor = trove(home, "doctor")
    assert doctor.returncode == cli.EXIT_FAILED, doctor.stdout + doctor.stderr
    assert "Traceback" not in doctor.stderr, doctor.stderr
    assert "INDEX_CORRUPT" in doctor.stdout and "MISSING_MATERIAL" not in doctor.stdout
    if repair_first:  # what a person does who reads only "repair"
        repaired = trove(home, "doctor", "--repair")
        assert "Traceback" not in repaired.stderr, repaired.stderr
        assert completed_leaves(home) == before
    for _ in range(3):
        advice = _advised(doctor)
        assert advice, doctor.stdout + doctor.stderr
        for command in advice:
            ran = trove(home, *command)
            assert "Traceback" not in ran.stderr, (command, ran.stderr)
            assert completed_leaves(home) >= before, command
        doctor = trove(home, "doctor")
        if doctor.returncode == cli.EXIT_OK:
            break
    assert doctor.returncode == cli.EXIT_OK, doctor.stdout + doctor.stderr
    assert "0 problem(s)" in doctor.stdout and _advised(doctor) == []
    assert completed_leaves(home) == DOCS
    assert_found(home, "marker3", "Document 3")
    assert index.is_file()
    leftovers = [p.name for p in index.parent.iterdir() if "fresh" in p.name]
    assert leftovers == []


def test_restore_replaces_a_folder_standing_where_the_index_should_be(home: Path) -> None:
    index = index_path(base_dir(home))
    _folder_in_its_place(index)
    ok(trove(home, "restore", "kb"))
    assert index.is_file() and completed_leaves(home) == DOCS
    assert [p.name for p in index.parent.iterdir() if "fresh" in p.name] == []


def test_lost_rows_of_one_item_are_indexed_again_from_its_copy(home: Path) -> None:
    """The index lost one document's material and chunks, its copy under raw/ is intact:
    --repair indexes it again from that copy (before: it failed the item for good)."""
    index = index_path(base_dir(home))
    conn = apsw.Connection(str(index))
    try:
        (item_id,) = conn.execute(
            "SELECT item_id FROM materials ORDER BY item_id LIMIT 1"
        ).fetchone()
        conn.execute("DELETE FROM chunks WHERE item_id = ?", (item_id,))
        conn.execute("DELETE FROM materials WHERE item_id = ?", (item_id,))
    finally:
        conn.close()
    doctor = trove(home, "doctor")
    assert doctor.returncode == cli.EXIT_FAILED and "MISSING_MATERIAL" in doctor.stdout
    assert _advised(doctor) == [["doctor", "--repair"]]
    repaired = ok(trove(home, "doctor", "--repair"))
    assert "indexed again from its own copy" in repaired.stdout, repaired.stdout
    assert completed_leaves(home) == DOCS
    ok(trove(home, "doctor"))
    assert_found(home, "quokka", "Document")
