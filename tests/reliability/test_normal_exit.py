"""A process that exits normally hands its work back; only a crash interrupts (DESIGN.md 5).

A real `trove add --wait` writer queues the indexing of a folder while a second process
claims some of it and exits normally mid-embedding: an MCP session (`trove mcp` over stdio)
or the window's job runtime (a `JobExecutor` in this process). The writer must exit 0
with every item completed, and the loopback provider (tests/reliability/paid_embeddings.py)
must have been paid once for each chunk text: what was embedded before the hand-back is
never embedded again. A session whose agent may write to no base claims nothing at all.
After a SIGKILL (a crash), `trove resume` finishes the interrupted item, again paying once
per text.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import apsw
import numpy as np
import pytest
from pytestqt.qtbot import QtBot

from app.knowledge import doctor
from app.knowledge.admin import PROBE_TEXT
from app.knowledge.jobs import index_documents
from app.knowledge.jobs.context import JobContext
from app.knowledge.jobs.hand_back import STOPPED_AT_EXIT, stopped_at_exit
from app.knowledge.jobs.kinds import JobKind
from app.knowledge.jobs.paid_vectors import PaidVectors
from app.knowledge.jobs.reader_pool import InlineExtraction
from app.knowledge.service import KnowledgeService
from app.knowledge.types import ItemPhase, ItemStatus, ItemType
from app.runtime.executor import JobExecutor
from tests.fakes import FakeModels
from tests.reliability.harness import ROOT
from tests.reliability.multiprocess import McpSession
from tests.reliability.paid_embeddings import (
    KEY,
    KEY_ENV,
    MODEL,
    PaidEmbeddings,
    configure,
    paid_embeddings,
    write_documents,
)

BASE = "exits"
WAIT_S = 120.0
FILES = 8
SENTENCES = 100  # about 35 chunks at chunk size 48: four batches of ten per file


@pytest.fixture
def provider(monkeypatch: pytest.MonkeyPatch) -> Iterator[PaidEmbeddings]:
    monkeypatch.setenv(KEY_ENV, KEY)
    monkeypatch.setenv("QT_QPA_PLATFORM", "offscreen")
    with paid_embeddings(delay_s=0.15) as paid:
        yield paid


def _service(home: Path) -> KnowledgeService:
    return KnowledgeService(home, extraction=InlineExtraction())


def _make_base(home: Path, provider: PaidEmbeddings, linked: Path, *, agent_writes: bool) -> str:
    """A base with an embedding model and a linked folder, indexed, as the reporter had."""
    write_documents(linked, 1, 3, tag="l")
    svc = _service(home)
    try:
        configure(svc, provider.api)
        base = svc.create_base(BASE, embedding_model=MODEL, chunk_size=48, chunk_overlap=0)
        svc.set_agent_writes(base.id, agent_writes)
        svc.add_linked_folders(base.id, [linked])
        svc.run_pending_jobs(base.id)
        return base.id
    finally:
        svc.close()


def _writer(home: Path, folder: Path, log: Path, *more: str) -> subprocess.Popen[bytes]:
    with log.open("wb") as out:
        return subprocess.Popen(
            [
                sys.executable,
                "-m",
                "app",
                "--home",
                str(home),
                "add",
                BASE,
                str(folder),
                "--wait",
                *more,
            ],
            cwd=ROOT,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=out,
            start_new_session=True,
        )


def _wait(predicate: Callable[[], bool], proc: subprocess.Popen[bytes] | None = None) -> bool:
    """Poll another process's progress through the catalog (nothing to wait on across
    processes); False when `proc` ended first or the deadline passed."""
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        if predicate():
            return True
        if proc is not None and proc.poll() is not None:
            return predicate()
        time.sleep(0.02)
    return False


def _working_elsewhere(svc: KnowledgeService, not_owned_by: set[int]) -> bool:
    """Another process than `not_owned_by` runs one of the writer's jobs: reading a
    document, or the vector stage once it has written a batch of the documents' vectors."""
    for job in svc.catalog.list_jobs(statuses=("running",)):
        pid = int((job.owner or "0:").split(":")[0] or 0)
        if pid in not_owned_by:
            continue
        if job.kind == JobKind.INDEX_DOCUMENTS:
            return True
        if job.kind != JobKind.EMBED_VECTORS:
            continue
        waiting = svc.catalog.list_items(
            job.base_id, statuses=(ItemStatus.COMPLETED,), phase=ItemPhase.EMBEDDING
        )
        if any((i.progress or 0) > 0 for i in waiting):
            return True
    return False


def _queued(svc: KnowledgeService) -> int:
    return len(svc.catalog.list_jobs(statuses=("queued",)))


def _finish_writer(proc: subprocess.Popen[bytes], log: Path) -> str:
    try:
        proc.wait(timeout=WAIT_S)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    return log.read_text(encoding="utf-8", errors="replace")


def _assert_all_indexed_once(home: Path, base_id: str, provider: PaidEmbeddings) -> None:
    svc = _service(home)
    try:
        files = [i for i in svc.list_items(base_id) if i.type is ItemType.FILE]
        assert len(files) == FILES + 1
        assert all(i.status is ItemStatus.COMPLETED for i in files), [
            (i.title, i.status, i.error_code) for i in files
        ]
        assert svc.catalog.list_jobs(statuses=("queued", "running")) == []
        # Paid once per chunk text: nothing embedded before a hand-back is embedded again.
        assert provider.texts_paid_twice() == []
        assert len(set(provider.paid) - {PROBE_TEXT}) == sum(i.chunk_count for i in files)
        # Temporary files of any age count: no record of paid vectors is left behind.
        assert doctor.check(svc.parts, base_id, tmp_grace=0.0).problems == []
    finally:
        svc.close()


def test_an_mcp_session_that_ends_hands_the_writers_work_back(
    tmp_path: Path, provider: PaidEmbeddings
) -> None:
    """The writer returns once its documents are searchable (`--until-searchable`), handing
    the vector stage back; an MCP session (agent writes on) takes it up and ends normally
    while it runs; `trove resume` finishes it, and every chunk text was paid for once."""
    home = tmp_path / "home"
    base_id = _make_base(home, provider, tmp_path / "linked", agent_writes=True)
    write_documents(tmp_path / "docs", FILES, SENTENCES)
    log = tmp_path / "writer.log"
    with (tmp_path / "mcp.log").open("w", encoding="utf-8") as mcp_log:
        session = McpSession(home, mcp_log)  # runs the queue: its agent may write
        svc = _service(home)
        try:
            writer = _writer(home, tmp_path / "docs", log, "--until-searchable")
            output = _finish_writer(writer, log)
            assert writer.returncode == 0, output
            assert f"indexed {FILES} document(s), 0 failed" in output, output
            claimed = _wait(lambda: _working_elsewhere(svc, {writer.pid}))
        finally:
            svc.close()
            session.close()  # a normal end: stdin closes, the server returns
    assert claimed, f"the MCP session never took up the vector stage: {output}"
    resumed = subprocess.run(
        [sys.executable, "-m", "app", "--home", str(home), "resume", BASE],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=WAIT_S,
    )
    assert resumed.returncode == 0, resumed.stderr
    _assert_all_indexed_once(home, base_id, provider)


def test_an_mcp_session_whose_agent_may_not_write_claims_nothing(
    tmp_path: Path, provider: PaidEmbeddings
) -> None:
    home = tmp_path / "home"
    base_id = _make_base(home, provider, tmp_path / "linked", agent_writes=False)
    write_documents(tmp_path / "docs", FILES, SENTENCES)
    log = tmp_path / "writer.log"
    writer = _writer(home, tmp_path / "docs", log)
    owners: set[int] = set()
    with (tmp_path / "mcp.log").open("w", encoding="utf-8") as mcp_log:
        session = McpSession(home, mcp_log)
        svc = _service(home)
        try:
            while writer.poll() is None:
                for job in svc.catalog.list_jobs(statuses=("running",)):
                    owners.add(int((job.owner or "0:").split(":")[0] or 0))
                time.sleep(0.02)  # sampling who runs jobs while the writer works
        finally:
            svc.close()
            session.close()
    output = _finish_writer(writer, log)
    assert writer.returncode == 0, output
    assert owners == {writer.pid}, f"jobs ran under {owners}, the writer is {writer.pid}"
    _assert_all_indexed_once(home, base_id, provider)


def test_the_windows_runtime_stopping_hands_the_writers_work_back(
    tmp_path: Path, provider: PaidEmbeddings, qtbot: QtBot
) -> None:
    home = tmp_path / "home"
    base_id = _make_base(home, provider, tmp_path / "linked", agent_writes=False)
    write_documents(tmp_path / "docs", FILES, SENTENCES)
    log = tmp_path / "writer.log"
    writer = _writer(home, tmp_path / "docs", log)
    window = _service(home)
    executor = JobExecutor(window, max_workers=2)
    try:
        # The window opens while the terminal's `add` has work queued: its start claims.
        assert _wait(lambda: _queued(window) >= FILES // 2, writer), log.read_text()
        executor.start()
        qtbot.waitUntil(
            lambda: _working_elsewhere(window, {writer.pid}) or writer.poll() is not None,
            timeout=int(WAIT_S * 1000),
        )
        claimed = _working_elsewhere(window, {writer.pid})
    finally:
        assert executor.shutdown()  # the window's quit: every running job stops in time
        executor.deleteLater()
        window.close()
    output = _finish_writer(writer, log)
    assert claimed, f"the window's runtime never ran one of the writer's jobs: {output}"
    assert writer.returncode == 0, output
    assert f"indexed {FILES} document(s), 0 failed" in output, output
    _assert_all_indexed_once(home, base_id, provider)


def _crash_in_the_vector_stage(
    home: Path, provider: PaidEmbeddings, folder: Path, log: Path
) -> Path:
    """`trove add --wait` of one document, killed while its vectors' second batch is out:
    one batch written, the one in flight refused (not billed). The first batch is written
    while the second embeds (embed_vectors._work), so the kill waits for its progress too:
    on a loaded machine the write can land after the second request is out."""
    (doc,) = write_documents(folder, 1, SENTENCES)
    provider.delay_s = 0.0
    provider.hold_from(provider.requests + 2)  # the document's second batch of vectors
    writer = _writer(home, doc, log)
    try:
        assert _wait(
            lambda: provider.held.is_set() and _embedding_progress(home, doc) > 0, writer
        ), log.read_text()
        os.kill(writer.pid, signal.SIGKILL)  # a crash, one batch paid for
        writer.wait()
    finally:
        provider.release(refuse=True)  # the request in flight is not billed
        if writer.poll() is None:
            os.killpg(writer.pid, signal.SIGKILL)
            writer.wait()
    return doc


def _embedding_progress(home: Path, doc: Path) -> float:
    """The document's persisted vector-stage percent, read as another process can."""
    conn = apsw.Connection(str(home / "trove.sqlite"), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        conn.setbusytimeout(5_000)
        row = conn.execute(
            "SELECT progress FROM items WHERE source = ? AND phase = 'embedding'", (str(doc),)
        ).fetchone()
    finally:
        conn.close()
    return float(row[0]) if row and row[0] is not None else 0.0


def test_after_a_crash_in_the_vector_stage_resume_finishes_without_paying_twice(
    tmp_path: Path, provider: PaidEmbeddings
) -> None:
    home = tmp_path / "home"
    base_id = _make_base(home, provider, tmp_path / "linked", agent_writes=False)
    doc = _crash_in_the_vector_stage(home, provider, tmp_path / "one", tmp_path / "writer.log")
    paid_before = sum(provider.paid.values())
    # Searchable by full text right after the crash, from another process.
    found = subprocess.run(
        [sys.executable, "-m", "app", "--home", str(home), "search", BASE, "tokend0x7"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=WAIT_S,
    )
    assert found.returncode == 0 and doc.name in found.stdout, found.stdout + found.stderr
    resumed = subprocess.run(
        [sys.executable, "-m", "app", "--home", str(home), "resume", BASE],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=WAIT_S,
    )
    assert resumed.returncode == 0, resumed.stderr
    assert "(100 %)" in resumed.stderr, resumed.stderr
    svc = _service(home)
    try:
        files = [i for i in svc.list_items(base_id) if i.source == str(doc)]
        assert [(i.status, i.phase, i.error_code) for i in files] == [
            (ItemStatus.COMPLETED, None, None)
        ]
        status = svc.vector_status(base_id)
        assert status.vectors == status.chunks
        # 0 re-embedded chunks: the resume paid only for what the crash had not written.
        assert provider.texts_paid_twice() == []
        assert sum(provider.paid.values()) > paid_before
        assert doctor.check(svc.parts, base_id, tmp_grace=0.0).problems == []
    finally:
        svc.close()


def test_after_a_crash_in_the_vector_stage_the_next_start_keeps_the_document_searchable(
    tmp_path: Path, provider: PaidEmbeddings
) -> None:
    """The window's next start (recovery) queues the vector stage again: the document stays
    completed, nothing is failed, and running the queue finishes its vectors."""
    home = tmp_path / "home"
    base_id = _make_base(home, provider, tmp_path / "linked", agent_writes=False)
    doc = _crash_in_the_vector_stage(home, provider, tmp_path / "one", tmp_path / "writer.log")
    svc = _service(home)
    try:
        report = svc.recover()
        assert (report.requeued_jobs, report.interrupted_items) == (1, 0)
        (item,) = [i for i in svc.list_items(base_id) if i.source == str(doc)]
        assert (item.status, item.phase) == (ItemStatus.COMPLETED, ItemPhase.EMBEDDING)
        assert 0 < (item.progress or 0) < 100
        assert doctor.check(svc.parts, base_id, tmp_grace=0.0).problems == []
        svc.run_pending_jobs(base_id)
        assert svc.get_item(item.id).phase is None
        assert provider.texts_paid_twice() == []
    finally:
        svc.close()


def test_a_job_that_outlives_the_shutdown_wait_is_handed_back_once_its_process_is_gone(
    tmp_path: Path, qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An embedding request still out when the wait ends: the exit marks the job, and
    recovery (in the next process) hands it back instead of interrupting the item."""
    models = FakeModels()
    svc = KnowledgeService(tmp_path / "home", models=models, extraction=InlineExtraction())
    gate = threading.Event()
    executor = JobExecutor(svc, max_workers=1)
    try:
        base = svc.create_base("slow", embedding_model="fake:bow")
        embedding = threading.Event()

        def held(_texts: object) -> None:
            embedding.set()
            gate.wait(WAIT_S)

        models.embedder_instance.before_embed = held
        note = svc.add_note(base.id, "Held", "a note whose embedding outlives the quit")
        executor.start()
        assert embedding.wait(WAIT_S)
        assert not executor.shutdown(timeout_ms=200)  # the provider is still answering
        [job] = svc.catalog.list_jobs(statuses=("running",))
        assert stopped_at_exit(job)
        gate.set()
        qtbot.waitUntil(lambda: executor.running_count == 0, timeout=int(WAIT_S * 1000))
        # The job stopped at its next step and handed itself back; had the process exited
        # first, its row would still say running under a dead owner: recovery's case.
        svc.catalog.claim_next_job(owner="1:0.000")  # a process long gone ran it
        monkeypatch.setattr("app.knowledge.catalog.routing.owner_alive", lambda _owner: False)
        svc.catalog.mark_running_job(job.id, "1:0.000", STOPPED_AT_EXIT)
        report = svc.recover()
        assert (report.handed_back_jobs, report.abandoned_jobs, report.interrupted_items) == (
            1,
            0,
            0,
        )
        [queued] = svc.catalog.list_jobs()
        assert (queued.status, queued.owner, queued.kind) == ("queued", None, JobKind.EMBED_VECTORS)
        # Searchable all along: only its vectors wait in the queue.
        assert svc.get_item(note.id).status is ItemStatus.COMPLETED
        gate.set()
        svc.run_pending_jobs(base.id)
        assert svc.get_item(note.id).status is ItemStatus.COMPLETED
    finally:
        gate.set()
        executor.shutdown()
        executor.deleteLater()
        svc.close()


def test_a_crash_after_an_item_completed_leaves_no_record_of_paid_vectors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Found by the sync simulation (seeds 266 and 443 of 500): a process killed after an
    item's final write, before its job cleaned up, left the record of paid vectors beside
    the material, which doctor then reported as a file of no item."""
    svc = KnowledgeService(tmp_path / "home", models=FakeModels(), extraction=InlineExtraction())
    try:
        base = svc.create_base("kb", embedding_model="fake:bow")
        note = svc.add_note(base.id, "Note", "a few words worth embedding")
        job = svc.catalog.claim_next_job(owner="1:0.000")  # a process long gone ran it
        assert job is not None
        # A record of paid vectors as a Trove that embedded inside this job left it.
        paid = index_documents._paid_vectors(JobContext(svc.parts), base, note)
        assert paid is not None
        paid.add(["0" * 32], np.zeros((1, base.dimensions or 0), dtype=np.float32))
        with monkeypatch.context() as killed:  # the kill lands before the cleanup
            killed.setattr(PaidVectors, "discard", lambda self: None)
            index_documents.run(JobContext(svc.parts), job)
        assert svc.get_item(note.id).status is ItemStatus.COMPLETED
        raw = svc.layout.raw_dir(base.id)
        assert len(list(raw.rglob(".tmp-*.part"))) == 1
        report = svc.recover()
        assert (report.abandoned_jobs, report.interrupted_items) == (1, 0)
        assert list(raw.rglob(".tmp-*.part")) == []
        assert doctor.check(svc.parts, base.id, tmp_grace=0.0).problems == []
    finally:
        svc.close()
