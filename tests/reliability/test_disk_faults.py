"""A full disk or a read-only data dir: writes fail cleanly with a clear error, and nothing
already indexed is damaged.

Disk full is injected where Trove writes: copies into raw/ (the copy stops halfway with
ENOSPC), material snapshots (the text write stops halfway), the per-base index (SQLite's
`max_page_count` on the index's writer connection: the next page it needs is refused) and
the catalog (the same on its connection, through the CLI). Read-only is real: raw/ or the
index made read-only with chmod, and a whole data dir for the CLI. Root ignores permission
bits, so those tests take the bypassing capabilities away from the test's thread (see
tests/reliability/permissions.py) and are skipped only where that is impossible.

After each fault: the item is failed with STORAGE_FULL / STORAGE_READ_ONLY and a message
that says so, no temporary file is left under raw/, what was indexed before is still found
(BM25 and hybrid), the index passes SQLite's integrity check, `doctor` is clean, and once
the fault is gone a reindex completes the item.
"""

from __future__ import annotations

import errno
import os
import shutil
import stat
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

import apsw
import pytest

from app import cli
from app.knowledge import db
from app.knowledge.jobs.errors import storage_failure
from app.knowledge.jobs.reader_pool import InlineExtraction
from app.knowledge.pipeline.store.index_store import index_path
from app.knowledge.service import KnowledgeService
from app.knowledge.types import Base, ErrorCode, Item, ItemStatus, ItemType, SearchMode
from tests.conftest import write_files
from tests.fakes import FakeModels
from tests.reliability import permissions
from tests.unit.make_files import make_html

ROOT = Path(__file__).resolve().parents[2]
EARLIER = {
    "alpha.md": "# Alpha\n\nThe alphaword lives in the first document.\n",
    "beta.txt": "Betaword text in the second document.\n",
}
ENOSPC = OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

needs_permissions = pytest.mark.skipif(
    not permissions.can_enforce(), reason="file permissions cannot be enforced here"
)


@pytest.fixture
def svc(tmp_path: Path) -> Iterator[KnowledgeService]:
    service = KnowledgeService(
        tmp_path / "home", models=FakeModels(), extraction=InlineExtraction()
    )
    yield service
    service.close()


@pytest.fixture
def indexed(svc: KnowledgeService, tmp_path: Path) -> Base:
    """A vector base whose two documents are indexed before the fault."""
    base = svc.create_base("kb", embedding_model="fake:bow")
    svc.add(base.id, [write_files(tmp_path / "earlier", EARLIER)])
    svc.run_pending_jobs(base.id)
    assert _completed_files(svc, base.id) == 2
    return base


def _completed_files(svc: KnowledgeService, base_id: str) -> int:
    return sum(
        1
        for i in svc.list_items(base_id)
        if i.type is not ItemType.DIRECTORY and i.status is ItemStatus.COMPLETED
    )


def _found(svc: KnowledgeService, base_id: str, word: str, mode: SearchMode) -> set[str]:
    return {r.title for r in svc.search(base_id, word, mode=mode).results}


def assert_nothing_damaged(svc: KnowledgeService, base: Base) -> None:
    """The earlier documents are found both ways, the index is sound, doctor is clean."""
    for word, title in (("alphaword", "Alpha"), ("betaword", "beta")):
        assert title in _found(svc, base.id, word, SearchMode.BM25), word
        assert title in _found(svc, base.id, word, SearchMode.HYBRID), word
    store = svc.parts.stores.get(base.id)
    assert store.integrity_check() == []
    assert store.fts_integrity_check() == []
    assert store.vector_count() == store.chunk_count()
    raw = svc.layout.raw_dir(base.id)
    assert sorted(p.name for p in raw.rglob(".tmp-*")) == []  # no half-written leftovers
    report = svc.doctor(base.id).report
    assert report.clean, report.to_json()
    assert not [i for i in svc.list_items(base.id) if i.status not in _SETTLED]


_SETTLED = (ItemStatus.COMPLETED, ItemStatus.FAILED)


def assert_failed(item: Item, code: ErrorCode, *words: str) -> None:
    assert item.status is ItemStatus.FAILED, (item.status, item.error_message)
    assert item.error_code == code, (item.error_code, item.error_message)
    message = (item.error_message or "").lower()
    for word in words:
        assert word in message, message
    assert "traceback" not in message and "unexpected error" not in message


def _reindexed(svc: KnowledgeService, item: Item) -> Item:
    svc.reindex(item.base_id, [item.id])
    svc.run_pending_jobs(item.base_id)
    return svc.get_item(item.id)


# -- disk full ---------------------------------------------------------------------------------


def _half_then_full(real: Callable[..., Any]) -> Callable[..., Any]:
    """shutil.copyfile that writes half of the file and then meets a full disk."""

    def copyfile(src: str | os.PathLike[str], dst: str | os.PathLike[str], **_: Any) -> Any:
        data = Path(src).read_bytes()
        Path(dst).write_bytes(data[: len(data) // 2])
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), os.fspath(dst))

    return copyfile


def test_disk_full_while_copying_a_file_into_raw_fails_it_with_storage_full(
    svc: KnowledgeService, indexed: Base, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    page = make_html(tmp_path / "page.html", title="Page", body="<p>pagegamma words</p>")
    monkeypatch.setattr(shutil, "copyfile", _half_then_full(shutil.copyfile))
    (added,) = svc.add(indexed.id, [page]).added
    svc.run_pending_jobs(indexed.id)

    item = svc.get_item(added.id)
    assert_failed(item, ErrorCode.STORAGE_FULL, "disk", "full", "no space left")
    assert _found(svc, indexed.id, "pagegamma", SearchMode.BM25) == set()
    assert_nothing_damaged(svc, indexed)

    monkeypatch.undo()  # space was freed
    assert _reindexed(svc, item).status is ItemStatus.COMPLETED
    assert _found(svc, indexed.id, "pagegamma", SearchMode.BM25) == {"Page"}
    assert_nothing_damaged(svc, indexed)


class _FillingFile:
    """A text file whose disk fills up after `room` characters."""

    def __init__(self, handle: IO[str], room: int) -> None:
        self._handle = handle
        self._room = room

    def write(self, text: str) -> int:
        self._handle.write(text[: self._room])
        self._handle.flush()
        if len(text) > self._room:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return len(text)

    def __enter__(self) -> _FillingFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self._handle.close()


def test_disk_full_while_writing_a_material_fails_it_with_storage_full(
    svc: KnowledgeService, indexed: Base, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_fdopen = os.fdopen

    def fdopen(fd: int, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        handle = real_fdopen(fd, mode, *args, **kwargs)
        return _FillingFile(handle, 10) if "w" in mode else handle

    monkeypatch.setattr(os, "fdopen", fdopen)
    note = svc.add_note(indexed.id, "Full", "The notedelta word in a note that does not fit.")
    svc.run_pending_jobs(indexed.id)

    item = svc.get_item(note.id)
    assert_failed(item, ErrorCode.STORAGE_FULL, "disk", "full")
    assert not svc.layout.raw_dir(indexed.id).joinpath("notes", "Full.md").exists()
    assert_nothing_damaged(svc, indexed)

    monkeypatch.undo()
    assert _reindexed(svc, item).status is ItemStatus.COMPLETED
    assert _found(svc, indexed.id, "notedelta", SearchMode.BM25) == {"Full"}


def _cap_growth(conn: Any) -> None:
    """Let a SQLite connection use the pages its file has now and not one more."""
    pages = int(conn.execute("PRAGMA page_count").fetchone()[0])
    conn.execute(f"PRAGMA max_page_count = {pages}")


def test_full_index_database_fails_the_item_and_keeps_the_index_intact(
    svc: KnowledgeService, indexed: Base
) -> None:
    store = svc.parts.stores.get(indexed.id)
    before = (store.material_count(), store.chunk_count(), store.vector_count())
    writer = store._writer  # the one connection that writes the index
    _cap_growth(writer)
    # Far more text than the free space inside the file's pages can hold.
    big = "\n\n".join(f"Paragraph {n} about the indexepsilon topic. " * 20 for n in range(200))
    note = svc.add_note(indexed.id, "Big", big)
    svc.run_pending_jobs(indexed.id)

    item = svc.get_item(note.id)
    assert_failed(item, ErrorCode.STORAGE_FULL, "disk", "full")
    assert (store.material_count(), store.chunk_count(), store.vector_count()) == before
    assert _found(svc, indexed.id, "indexepsilon", SearchMode.BM25) == set()
    assert_nothing_damaged(svc, indexed)

    writer.execute("PRAGMA max_page_count = 1073741823")
    assert _reindexed(svc, item).status is ItemStatus.COMPLETED
    assert "Big" in _found(svc, indexed.id, "indexepsilon", SearchMode.HYBRID)
    assert_nothing_damaged(svc, indexed)


def test_cli_on_a_full_catalog_exits_non_zero_with_a_clear_message(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    home = tmp_path / "home"
    assert cli.main(["--home", str(home), "base", "create", "kb"]) == 0
    real_connect = db.connect

    def connect(path: Path, **kwargs: Any) -> Any:
        conn = real_connect(path, **kwargs)
        if path.name == "trove.sqlite":
            _cap_growth(conn)
        return conn

    monkeypatch.setattr(db, "connect", connect)
    capsys.readouterr()
    # A note's text is kept in the catalog (its source): this one needs new pages.
    code = cli.main(["--home", str(home), "note", "kb", "Huge", "notezeta " * 50_000])
    err = capsys.readouterr().err
    assert code == cli.EXIT_FAILED
    assert "STORAGE_FULL" in err and "full" in err and str(home) in err
    assert "Traceback" not in err

    monkeypatch.undo()
    svc = KnowledgeService(home, extraction=InlineExtraction())
    try:
        (base,) = svc.list_bases()
        assert svc.list_items(base.id) == []  # nothing half-added
        assert svc.catalog.list_jobs() == []
        assert svc.doctor().clean
    finally:
        svc.close()


# -- read-only ---------------------------------------------------------------------------------


def _chmod_tree(top: Path, writable: bool) -> None:
    """Take write permission away from (or give it back to) a folder and everything in it."""
    for path in [top, *top.rglob("*")]:
        mode = path.stat().st_mode
        bits = stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH
        path.chmod((mode | stat.S_IWUSR) if writable else (mode & ~bits))


@needs_permissions
def test_read_only_raw_folder_fails_new_items_with_storage_read_only(
    svc: KnowledgeService, indexed: Base
) -> None:
    raw = svc.layout.raw_dir(indexed.id)
    _chmod_tree(raw, writable=False)
    try:
        with permissions.enforced():
            note = svc.add_note(indexed.id, "Blocked", "The noteeta word cannot be stored.")
            svc.run_pending_jobs(indexed.id)
            item = svc.get_item(note.id)
            assert_failed(item, ErrorCode.STORAGE_READ_ONLY, "not writable", "permission")
            assert_nothing_damaged(svc, indexed)  # reading still works
    finally:
        _chmod_tree(raw, writable=True)
    assert _reindexed(svc, item).status is ItemStatus.COMPLETED
    assert _found(svc, indexed.id, "noteeta", SearchMode.BM25) == {"Blocked"}


@needs_permissions
def test_read_only_index_fails_new_items_and_searches_still_work(
    svc: KnowledgeService, indexed: Base, tmp_path: Path
) -> None:
    home = svc.layout.home
    svc.close()  # a fresh start: open files keep the write access they were opened with
    index = index_path(svc.layout.base_dir(indexed.id))
    index.chmod(0o444)
    try:
        with permissions.enforced():
            fresh = KnowledgeService(home, models=FakeModels(), extraction=InlineExtraction())
            try:
                note = fresh.add_note(indexed.id, "Blocked", "The notetheta word.")
                fresh.run_pending_jobs(indexed.id)
                item = fresh.get_item(note.id)
                assert_failed(item, ErrorCode.STORAGE_READ_ONLY, "not writable", "readonly")
                assert "Alpha" in _found(fresh, indexed.id, "alphaword", SearchMode.HYBRID)
            finally:
                fresh.close()
    finally:
        index.chmod(0o644)
    again = KnowledgeService(home, models=FakeModels(), extraction=InlineExtraction())
    try:
        assert_nothing_damaged(again, indexed)
        assert _reindexed(again, item).status is ItemStatus.COMPLETED
        assert _found(again, indexed.id, "notetheta", SearchMode.BM25) == {"Blocked"}
    finally:
        again.close()


def _cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The CLI in a subprocess with permission bits enforced even for root."""
    env = {k: v for k, v in os.environ.items() if k != "TROVE_HOME"}
    return subprocess.run(
        [sys.executable, "-m", "tests.reliability.permissions", "--home", str(home), *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@needs_permissions
def test_cli_on_a_read_only_data_dir_exits_non_zero_with_a_clear_message(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    assert _cli(home, "base", "create", "kb").returncode == 0
    docs = write_files(tmp_path / "docs", EARLIER)
    added = _cli(home, "add", "kb", str(docs), "--wait")
    assert added.returncode == 0, added.stderr
    before = sorted((p.relative_to(home), p.stat().st_mtime_ns) for p in home.rglob("*"))

    _chmod_tree(home, writable=False)
    try:
        for args in (("note", "kb", "Blocked", "text"), ("add", "kb", str(docs), "--wait")):
            run = _cli(home, *args)
            assert run.returncode == cli.EXIT_FAILED, (args, run.stderr)
            assert "STORAGE_READ_ONLY" in run.stderr and "not writable" in run.stderr
            assert str(home) in run.stderr
            assert "Traceback" not in run.stderr, run.stderr
    finally:
        _chmod_tree(home, writable=True)
    assert sorted((p.relative_to(home), p.stat().st_mtime_ns) for p in home.rglob("*")) == before

    found = _cli(home, "search", "kb", "alphaword")
    assert found.returncode == 0 and "Alpha" in found.stdout, found.stderr
    doctor = _cli(home, "doctor")
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr


# -- the classification itself -------------------------------------------------------------------


def _chained(outer: BaseException, inner: BaseException) -> BaseException:
    """`outer` raised while handling `inner`, as apsw's failed rollback is."""
    outer.__context__ = inner
    return outer


@pytest.mark.parametrize(
    ("make", "expected"),
    [
        (lambda d: OSError(errno.ENOSPC, "No space left on device", str(d / "x")), "STORAGE_FULL"),
        (lambda d: OSError(errno.EDQUOT, "Disk quota exceeded", str(d / "x")), "STORAGE_FULL"),
        (
            lambda d: OSError(errno.EROFS, "Read-only file system", str(d / "x")),
            "STORAGE_READ_ONLY",
        ),
        (lambda d: PermissionError(errno.EACCES, "Permission denied", str(d)), "STORAGE_READ_ONLY"),
        # A source the person cannot read is that file's problem, not the storage's.
        (lambda d: PermissionError(errno.EACCES, "Permission denied", "/elsewhere/a.pdf"), None),
        (lambda d: OSError(errno.EIO, "Input/output error", str(d / "x")), None),
        (lambda d: apsw.FullError("database or disk is full"), "STORAGE_FULL"),
        (lambda d: apsw.ReadOnlyError("attempt to write a readonly database"), "STORAGE_READ_ONLY"),
        (
            lambda d: _chained(apsw.SQLError("cannot rollback"), apsw.FullError("disk is full")),
            "STORAGE_FULL",
        ),
        (lambda d: apsw.SQLError("no such table: x"), None),
        (lambda d: apsw.CantOpenError("unable to open database file"), None),  # writable dir
        (lambda d: ValueError("a bug"), None),
    ],
)
def test_storage_failures_are_told_apart_from_other_errors(
    tmp_path: Path, make: Callable[[Path], BaseException], expected: str | None
) -> None:
    failure = storage_failure(make(tmp_path), tmp_path)
    assert (failure.code if failure else None) == expected
    if failure is not None:
        assert failure.message.endswith("then reindex")


@needs_permissions
def test_an_index_that_cannot_be_created_in_a_read_only_base_folder_is_storage_read_only(
    tmp_path: Path,
) -> None:
    tmp_path.chmod(0o555)
    try:
        with permissions.enforced():
            failure = storage_failure(apsw.CantOpenError("unable to open database file"), tmp_path)
    finally:
        tmp_path.chmod(0o755)
    assert failure is not None and failure.code == ErrorCode.STORAGE_READ_ONLY
