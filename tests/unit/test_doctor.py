"""The integrity checker (`trove doctor`): a data dir damaged on purpose is reported problem
by problem, and `--repair` (through the service and through the CLI) leaves it clean."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import apsw

from app.knowledge import db, path_safety
from app.knowledge.doctor import Code, DoctorReport
from app.knowledge.jobs.reader_pool import InlineExtraction
from app.knowledge.material_paths import material_path
from app.knowledge.pipeline.store.index_store import ChunkRecord, index_path
from app.knowledge.service import KnowledgeService
from app.knowledge.types import ErrorCode, Item, ItemPhase, ItemStatus, ItemType, SearchMode
from tests.conftest import write_files
from tests.fakes import FakeModels
from tests.unit.make_files import make_pdf

# Each document holds one word found nowhere else, so a search names its item.
DOCS = {
    "alpha.md": "# Alpha\n\nThe alphaword grows in the garden.\n",
    "bravo.txt": "Bravo text about the bravoword and more.\n",
    "charlie.md": "# Charlie\n\nCharlieword lives here.\n",
    "delta.md": "# Delta\n\nDeltaword appears in this one.\n",
    "echo.txt": "Echoword sounds again and again.\n",
    "foxtrot.md": "# Foxtrot\n\nFoxtrotword dances.\n",
}


def _indexed(svc: KnowledgeService, tmp_path: Path, **base_args: str) -> str:
    base = svc.create_base("kb", **base_args)
    folder = write_files(tmp_path / "docs", DOCS)
    make_pdf(folder / "golf.pdf", ["Golfword on the first page."])
    svc.add(base.id, [folder])
    svc.run_pending_jobs(base.id)
    assert {i.status for i in svc.list_items(base.id)} == {ItemStatus.COMPLETED}
    return base.id


def _leaves(svc: KnowledgeService, base_id: str) -> dict[str, Item]:
    return {Path(i.source).name: i for i in svc.list_items(base_id) if i.type is ItemType.FILE}


def _index(svc: KnowledgeService, base_id: str) -> apsw.Connection:
    """A connection of our own to the base's index, for damaging it behind the engine."""
    return db.connect(index_path(svc.layout.base_dir(base_id)), create=False, vectors=True)


def _chunk_ids(conn: apsw.Connection, item_id: str) -> list[int]:
    return [int(r[0]) for r in conn.execute("SELECT id FROM chunks WHERE item_id = ?", (item_id,))]


def _unit_ids(conn: apsw.Connection, item_id: str) -> list[int]:
    """The item's full-text passages (the rowids of its full-text rows)."""
    return [
        int(r[0])
        for r in conn.execute(
            "SELECT u.id FROM fts_units u JOIN materials m ON m.id = u.material_id "
            "WHERE m.item_id = ?",
            (item_id,),
        )
    ]


def _codes(report: DoctorReport) -> dict[str, set[str | None]]:
    out: dict[str, set[str | None]] = {}
    for p in report.problems:
        out.setdefault(str(p.code), set()).add(p.item_id)
    return out


def _found(svc: KnowledgeService, base_id: str, word: str) -> set[str]:
    return {r.item_id for r in svc.search(base_id, word, mode=SearchMode.BM25).results}


def _damage(svc: KnowledgeService, base_id: str) -> dict[str, Item]:
    """One problem of each kind; returns the items involved by role."""
    docs = _leaves(svc, base_id)
    roles = {
        "no_file": docs["alpha.md"],
        "no_vectors": docs["bravo.txt"],
        "stale": docs["charlie.md"],
        "no_fts": docs["delta.md"],
        "stuck_delete": docs["echo.txt"],
        "miscounted": docs["foxtrot.md"],
        "pdf": docs["golf.pdf"],
    }
    raw = svc.layout.raw_dir(base_id)
    # A material file deleted behind the engine's back (the PDF's copy, its product stays).
    path_safety.resolve_below(raw, material_path(roles["no_file"]) or "").unlink()
    path_safety.resolve_below(raw, roles["pdf"].relative_path or "").unlink()
    # Files nobody owns: a stray file, a crashed write's temp file, and a write in flight.
    (raw / "stray.txt").write_text("nobody owns me", encoding="utf-8")
    (raw / "deep" / "er").mkdir(parents=True)
    (raw / "deep" / "er" / "stray.md").write_text("nor me", encoding="utf-8")
    old_tmp = raw / ".tmp-crashed.part"
    old_tmp.write_text("half", encoding="utf-8")
    an_hour_ago = time.time() - 3600
    os.utime(old_tmp, (an_hour_ago, an_hour_ago))
    (raw / ".tmp-in-flight.part").write_text("being written", encoding="utf-8")
    # Item states no job will ever finish.
    svc.catalog.set_item_status(roles["stale"].id, ItemStatus.PROCESSING)
    svc.catalog.set_item_status(roles["stuck_delete"].id, ItemStatus.DELETING)
    svc.catalog.update_item(roles["miscounted"].id, chunk_count=99)
    # Index rows: an item's vectors dropped, another's FTS rows dropped, a stray vector,
    # and a whole material whose item does not exist.
    store = svc.parts.stores.get(base_id)
    store.rebuild_material(
        "ghost-item", "ghost.md", "Ghost", 10, [ChunkRecord(0, 10, "ghostword", 1, "h")]
    )
    conn = _index(svc, base_id)
    try:
        with conn:
            for cid in _chunk_ids(conn, roles["no_vectors"].id):
                conn.execute("DELETE FROM vectors WHERE rowid = ?", (cid,))
            for unit in _unit_ids(conn, roles["no_fts"].id):
                conn.execute("DELETE FROM chunks_fts WHERE rowid = ?", (unit,))
            conn.execute(
                "INSERT INTO vectors (rowid, embedding) VALUES (?, ?)",
                (987654, bytes(4 * 16)),
            )
    finally:
        conn.close()
    return roles


def test_a_healthy_data_dir_is_clean(svc: KnowledgeService, tmp_path: Path) -> None:
    base_id = _indexed(svc, tmp_path, embedding_model="fake:bow")
    result = svc.doctor()
    assert result.clean and result.report.problems == []
    assert result.report.bases == [base_id] and result.after is None


def test_damage_is_reported_by_code_and_repaired(svc: KnowledgeService, tmp_path: Path) -> None:
    base_id = _indexed(svc, tmp_path, embedding_model="fake:bow")
    roles = _damage(svc, base_id)

    report = svc.doctor(base_id).report
    codes = _codes(report)
    assert codes == {
        Code.MISSING_MATERIAL_FILE: {roles["no_file"].id, roles["pdf"].id},
        Code.MISSING_VECTORS: {roles["no_vectors"].id},
        Code.STALE_RUNNING_ITEM: {roles["stale"].id},
        Code.STALE_DELETING_ITEM: {roles["stuck_delete"].id},
        Code.FTS_MISMATCH: {None},
        Code.CHUNK_COUNT_MISMATCH: {roles["miscounted"].id},
        Code.ORPHAN_MATERIAL: {"ghost-item"},
        Code.ORPHAN_VECTOR: {None},
        # rows deleted and inserted behind the store's back leave its search codes stale
        Code.VECTOR_CODES_MISMATCH: {None},
        Code.ORPHAN_FILE: {None},
    }
    orphans = sorted(p.detail for p in report.problems if p.code is Code.ORPHAN_FILE)
    assert orphans == [
        "raw/.tmp-crashed.part belongs to no item",
        "raw/deep/er/stray.md belongs to no item",
        "raw/stray.txt belongs to no item",
    ]  # the young temp file is a write in flight, not an orphan
    assert all(p.repairable and p.base_id == base_id for p in report.problems)
    assert _found(svc, base_id, "deltaword") == set()  # what the FTS damage breaks

    result = svc.doctor(base_id, repair=True)
    assert result.after is not None and result.after.problems == [], result.after
    assert {r.code for r in result.repairs} >= {
        Code.STALE_RUNNING_ITEM,
        Code.STALE_DELETING_ITEM,
        Code.ORPHAN_MATERIAL,
        Code.ORPHAN_VECTOR,
        Code.VECTOR_CODES_MISMATCH,
        Code.FTS_MISMATCH,
        Code.ORPHAN_FILE,
        Code.MISSING_MATERIAL_FILE,
        Code.MISSING_VECTORS,
        Code.CHUNK_COUNT_MISMATCH,
    }
    items = {i.id: i for i in svc.list_items(base_id)}
    for role in ("no_file", "pdf", "stale"):
        item = items[roles[role].id]
        assert item.status is ItemStatus.FAILED, role
        assert item.error_code == ErrorCode.INDEXING_INTERRUPTED and "reindex" in (
            item.error_message or ""
        )
    # Only its vectors were lost: it stays searchable and waits for the vector stage.
    waiting = items[roles["no_vectors"].id]
    assert (waiting.status, waiting.phase) == (ItemStatus.COMPLETED, ItemPhase.EMBEDDING)
    requeued = [r for r in result.repairs if r.requeued]
    assert [r.item_id for r in requeued] == [roles["no_vectors"].id]
    assert items[roles["miscounted"].id].chunk_count == 1
    assert items[roles["stuck_delete"].id].status is ItemStatus.DELETING  # queued again
    raw = svc.layout.raw_dir(base_id)
    assert not (raw / "stray.txt").exists() and not (raw / "deep").exists()
    assert not (raw / ".tmp-crashed.part").exists() and (raw / ".tmp-in-flight.part").exists()
    assert _found(svc, base_id, "deltaword") == {roles["no_fts"].id}
    assert _found(svc, base_id, "ghostword") == set()

    # The queued deletion finishes; reindexing the failed items makes them whole again.
    svc.run_pending_jobs(base_id)
    assert roles["stuck_delete"].id not in {i.id for i in svc.list_items(base_id)}
    whole = svc.get_item(roles["no_vectors"].id)
    assert (whole.status, whole.phase) == (ItemStatus.COMPLETED, None)
    failed = [i.id for i in svc.list_items(base_id) if i.status is ItemStatus.FAILED]
    svc.reindex(base_id, failed)
    svc.run_pending_jobs(base_id)
    assert {i.status for i in svc.list_items(base_id)} == {ItemStatus.COMPLETED}
    assert _found(svc, base_id, "alphaword") == {roles["no_file"].id}
    # Still a write in flight: on a loaded machine this test can outlast the temp files'
    # grace period, after which the doctor rightly calls the file an orphan.
    os.utime(raw / ".tmp-in-flight.part")
    assert svc.doctor().clean


def test_stuck_folder_root_settles_and_broken_fts_is_rebuilt(
    svc: KnowledgeService, tmp_path: Path
) -> None:
    base_id = _indexed(svc, tmp_path)  # BM25 only: no vector checks
    (root,) = [i for i in svc.list_items(base_id) if i.type is ItemType.DIRECTORY]
    svc.catalog.set_item_status(root.id, ItemStatus.PROCESSING)  # its children are all done
    conn = _index(svc, base_id)
    try:
        with conn:  # a row for a chunk that does not exist
            conn.execute("INSERT INTO chunks_fts (rowid, body, title) VALUES (424242, 'x', 'y')")
    finally:
        conn.close()
    assert _codes(svc.doctor().report) == {
        Code.STALE_RUNNING_ITEM: {root.id},
        Code.FTS_MISMATCH: {None},
    }
    result = svc.doctor(repair=True)
    assert result.clean
    assert svc.get_item(root.id).status is ItemStatus.COMPLETED


def test_a_chunk_without_a_passage_is_found_and_given_one(
    svc: KnowledgeService, tmp_path: Path
) -> None:
    base_id = _indexed(svc, tmp_path, embedding_model="fake:bow")
    delta = _leaves(svc, base_id)["delta.md"]
    conn = _index(svc, base_id)
    try:
        with conn:  # full text can no longer reach delta's chunks
            for unit in _unit_ids(conn, delta.id):
                conn.execute("DELETE FROM fts_units WHERE id = ?", (unit,))
    finally:
        conn.close()
    assert _found(svc, base_id, "deltaword") == set()
    assert _codes(svc.doctor(base_id).report) == {Code.FTS_MISMATCH: {None}}
    assert svc.doctor(base_id, repair=True).clean
    assert _found(svc, base_id, "deltaword") == {delta.id}


def test_checking_never_creates_an_index(svc: KnowledgeService, tmp_path: Path) -> None:
    base_id = _indexed(svc, tmp_path)
    svc.parts.stores.close(base_id)
    index = index_path(svc.layout.base_dir(base_id))
    for suffix in ("", "-wal", "-shm"):
        Path(f"{index}{suffix}").unlink(missing_ok=True)
    report = svc.doctor(base_id).report
    assert not index.exists()
    leaves = {i.id for i in _leaves(svc, base_id).values()}
    # One problem that names the way out, not one MISSING_MATERIAL per item.
    assert _codes(report) == {Code.INDEX_CORRUPT: {None}}
    (problem,) = report.problems
    assert "missing" in problem.detail and f"trove restore {base_id}" in problem.detail
    assert not problem.repairable
    result = svc.doctor(base_id, repair=True)
    assert not result.clean and not index.exists()
    # The repair throws no item's work away: restore brings them back from raw/.
    assert {i.status for i in svc.list_items(base_id) if i.id in leaves} == {ItemStatus.COMPLETED}


def test_corrupt_index_and_orphan_jobs(svc: KnowledgeService, tmp_path: Path) -> None:
    base_id = _indexed(svc, tmp_path)
    svc.parts.stores.close(base_id)
    index = index_path(svc.layout.base_dir(base_id))
    for suffix in ("-wal", "-shm"):
        Path(f"{index}{suffix}").unlink(missing_ok=True)
    index.write_bytes(b"this is not a database" * 100)
    conn = db.connect(svc.layout.catalog_path, create=False)
    try:
        conn.execute("PRAGMA foreign_keys=OFF")
        conn.execute(
            "INSERT INTO jobs (kind, base_id, payload, created_at, updated_at) "
            "VALUES ('delete-subtree', 'gone-base', '{}', 0, 0)"
        )
    finally:
        conn.close()
    report = svc.doctor().report
    assert set(_codes(report)) == {Code.INDEX_CORRUPT, Code.ORPHAN_JOB}
    corrupt = [p for p in report.problems if p.code is Code.INDEX_CORRUPT]
    assert [(p.base_id, p.repairable) for p in corrupt] == [(base_id, False)]
    result = svc.doctor(repair=True)
    assert not result.clean  # a corrupt index is not repaired by guessing
    assert result.after is not None and set(_codes(result.after)) == {Code.INDEX_CORRUPT}
    assert [r.code for r in result.repairs] == [Code.ORPHAN_JOB]
    assert svc.catalog.list_jobs() == []


def _trove(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "TROVE_HOME"}
    return subprocess.run(
        [sys.executable, "-m", "app", "--home", str(home), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )


def test_cli_doctor_reports_and_repairs(tmp_path: Path) -> None:
    home = tmp_path / "home"
    svc = KnowledgeService(home, models=FakeModels(), extraction=InlineExtraction())
    try:
        base_id = _indexed(svc, tmp_path, embedding_model="fake:bow")
        roles = _damage(svc, base_id)
    finally:
        svc.close()

    checked = _trove(home, "doctor", "--json")
    assert checked.returncode == 1, checked.stderr
    data = json.loads(checked.stdout)
    assert data["clean"] is False and "after" not in data
    problems = data["report"]["problems"]
    assert {p["code"] for p in problems} == {
        "MISSING_MATERIAL_FILE",
        "MISSING_VECTORS",
        "STALE_RUNNING_ITEM",
        "STALE_DELETING_ITEM",
        "FTS_MISMATCH",
        "CHUNK_COUNT_MISMATCH",
        "ORPHAN_MATERIAL",
        "ORPHAN_VECTOR",
        "VECTOR_CODES_MISMATCH",
        "ORPHAN_FILE",
    }
    assert set(problems[0]) == {"code", "baseId", "itemId", "detail", "repairable"}

    repaired = _trove(home, "doctor", "kb", "--repair")
    out = repaired.stdout
    assert "checked 1 knowledge base(s): 13 problem(s)" in out
    assert f"STALE_RUNNING_ITEM (base {base_id} item {roles['stale'].id}; repairable)" in out
    assert "repaired ORPHAN_FILE" in out and "deleted raw/stray.txt" in out
    assert "after repair: 0 problem(s)" in out
    # Only the vectors of the item without them are computed again (it stays searchable);
    # this child process has no 'fake' embedder (only the test process does), so the
    # vector stage stops, and the command says so.
    assert f"queued the missing vectors of {roles['no_vectors'].title!r}" in out
    assert f"vectors not computed (base {base_id}): MODEL_NOT_AVAILABLE" in out
    assert repaired.returncode == 1, out + repaired.stderr

    svc = KnowledgeService(home, models=FakeModels(), extraction=InlineExtraction())
    try:
        assert svc.doctor().clean
        assert svc.get_item(roles["stale"].id).status is ItemStatus.FAILED
    finally:
        svc.close()
