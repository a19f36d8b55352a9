"""The window's jobs run in a process of their own (runtime/work_process.py), reached through
`ProcessExecutor`: real `python -m app.runtime.work_process` processes on a real data folder,
killed as people kill things."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings
from pytestqt.qtbot import QtBot

from app.knowledge.jobs.reader_pool import InlineExtraction
from app.knowledge.service import KnowledgeService
from app.knowledge.types import ItemPhase, ItemStatus
from app.runtime.process_executor import ProcessExecutor
from app.ui.context import UiContext
from app.ui.launcher import close_context
from app.ui.main_window import MainWindow
from app.ui.notifications import Notifier
from app.ui.tasks import BackgroundTasks
from tests.reliability.paid_embeddings import (
    KEY,
    KEY_ENV,
    MODEL,
    PaidEmbeddings,
    configure,
    paid_embeddings,
    write_documents,
)

ROOT = Path(__file__).resolve().parents[2]
WAIT_MS = 60_000


@pytest.fixture
def service(tmp_path: Path) -> Iterator[KnowledgeService]:
    svc = KnowledgeService(tmp_path / "home", extraction=InlineExtraction())
    yield svc
    svc.close()


@pytest.fixture
def jobs(qtbot: QtBot, tmp_path: Path) -> Iterator[ProcessExecutor]:
    executor = ProcessExecutor(tmp_path / "home")
    yield executor
    executor.shutdown()


def _notes(service: KnowledgeService, count: int) -> str:
    base = service.create_base("kb")
    for n in range(count):
        service.add_note(base.id, f"note {n}", f"Note {n} is about the aardvark{n}. " * 30)
    return base.id


def _statuses(service: KnowledgeService, base_id: str) -> set[ItemStatus]:
    return {i.status for i in service.list_items(base_id)}


def test_the_jobs_run_in_another_process_and_report_as_the_executor_does(
    qtbot: QtBot, service: KnowledgeService, jobs: ProcessExecutor
) -> None:
    base_id = _notes(service, 12)
    changed: list[str] = []
    jobs.itemsChanged.connect(lambda _base, ids: changed.extend(ids))
    with qtbot.waitSignal(jobs.drained, timeout=WAIT_MS):
        jobs.start()
    assert jobs.pid is not None and jobs.pid != os.getpid()
    assert _statuses(service, base_id) == {ItemStatus.COMPLETED}
    assert set(changed) == {i.id for i in service.list_items(base_id)}
    assert jobs.running_count == 0
    assert service.search(base_id, "aardvark3").results

    # Work queued later is taken when asked (as the window asks after an add).
    more = service.add_note(base_id, "late", "The late note is about the bison.")
    with qtbot.waitSignal(jobs.drained, timeout=WAIT_MS):
        jobs.schedule()
    assert service.get_item(more.id).status is ItemStatus.COMPLETED
    pid = jobs.pid
    assert jobs.shutdown()
    assert jobs.pid is None
    assert pid is not None
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_a_killed_job_process_is_started_again_and_the_work_finishes(
    qtbot: QtBot, service: KnowledgeService, jobs: ProcessExecutor
) -> None:
    base_id = _notes(service, 1)
    with qtbot.waitSignal(jobs.drained, timeout=WAIT_MS):
        jobs.start()
    first = jobs.pid
    assert first is not None
    for n in range(40):
        service.add_note(base_id, f"more {n}", f"More {n} is about the okapi{n}. " * 30)
    os.kill(first, signal.SIGKILL)
    with qtbot.waitSignal(jobs.ready, timeout=WAIT_MS):
        pass  # started again after its pause
    assert jobs.pid not in (None, first)
    with qtbot.waitSignal(jobs.drained, timeout=WAIT_MS):
        jobs.schedule()
    assert _statuses(service, base_id) == {ItemStatus.COMPLETED}


_WINDOW = """
import os, sys, time
from pathlib import Path
from PySide6.QtCore import QCoreApplication
from app.runtime.process_executor import ProcessExecutor
app = QCoreApplication([])
jobs = ProcessExecutor(Path(sys.argv[1]))
jobs.ready.connect(lambda: print(jobs.pid, flush=True))
jobs.start()
app.exec()
"""


def test_the_job_process_ends_when_its_window_is_killed(
    tmp_path: Path, service: KnowledgeService
) -> None:
    """No orphan: a window killed with SIGKILL closes the job process's stdin, which stops
    it; the jobs it ran go back to the queue (nothing failed) for the next Trove."""
    base_id = _notes(service, 300)
    window = subprocess.Popen(
        [sys.executable, "-c", _WINDOW, str(tmp_path / "home")],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
    )
    try:
        assert window.stdout is not None
        worker = int(window.stdout.readline())
        deadline = time.monotonic() + 60
        while not any(i.status is ItemStatus.COMPLETED for i in service.list_items(base_id)):
            assert time.monotonic() < deadline, "the job process did no work"
            time.sleep(0.05)
        window.send_signal(signal.SIGKILL)
        window.wait(10)
        deadline = time.monotonic() + 60
        while True:
            try:
                os.kill(worker, 0)
            except ProcessLookupError:
                break
            assert time.monotonic() < deadline, "the job process outlived its window"
            time.sleep(0.05)
    finally:
        window.kill()
        window.wait(10)
    items = service.list_items(base_id)
    assert ItemStatus.FAILED not in {i.status for i in items}
    assert any(i.status is ItemStatus.PROCESSING for i in items), "it finished too early"
    service.run_pending_jobs(base_id)
    assert _statuses(service, base_id) == {ItemStatus.COMPLETED}


@pytest.fixture
def provider(monkeypatch: pytest.MonkeyPatch) -> Iterator[PaidEmbeddings]:
    monkeypatch.setenv(KEY_ENV, KEY)  # the job process inherits it
    with paid_embeddings() as paid:
        yield paid


def _window(qtbot: QtBot, home: Path, settings: Path) -> tuple[UiContext, MainWindow]:
    service = KnowledgeService(home, extraction=InlineExtraction())
    ctx = UiContext(
        service=service,
        executor=ProcessExecutor(home),
        tasks=BackgroundTasks(),
        settings=QSettings(str(settings), QSettings.Format.IniFormat),
        notifier=Notifier(),
    )
    window = MainWindow(ctx)
    qtbot.addWidget(window)
    window.show()
    ctx.executor.start()
    window.start()
    qtbot.waitUntil(lambda: window.bases.loaded)
    return ctx, window


def test_closing_the_window_mid_vectors_fails_nothing_and_pays_nothing_twice(
    qtbot: QtBot, tmp_path: Path, provider: PaidEmbeddings
) -> None:
    home, settings = tmp_path / "home", tmp_path / "settings.ini"
    (doc,) = write_documents(tmp_path / "docs", 1, 100)  # three batches of chunks
    ctx, window = _window(qtbot, home, settings)
    configure(ctx.service, provider.api)
    base = ctx.service.create_base("Quits", embedding_model=MODEL, chunk_size=48, chunk_overlap=0)
    provider.hold_from(provider.requests + 2)  # the document's second batch
    (item,) = ctx.service.add(base.id, [doc]).added
    ctx.executor.schedule()
    qtbot.waitUntil(provider.held.is_set, timeout=WAIT_MS)
    # The held batch is answered while the window closes: the job process stops at its
    # next step and hands the stage back.
    threading.Timer(0.5, provider.release).start()
    window.close_without_asking()
    close_context(ctx)

    service = KnowledgeService(home, extraction=InlineExtraction())
    try:
        waiting = service.get_item(item.id)
        assert (waiting.status, waiting.error_code) == (ItemStatus.COMPLETED, None)
        assert service.search(base.id, "tokend0x7").results  # found by its words meanwhile
        if waiting.phase is ItemPhase.EMBEDDING:
            service.run_pending_jobs(base.id)
        assert service.vector_status(base.id).done
        assert provider.texts_paid_twice() == []
    finally:
        service.close()
