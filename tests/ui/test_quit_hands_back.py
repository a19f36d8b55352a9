"""Quitting the window while a document's vectors are computed fails nothing: the document
stays searchable ("Searchable · vectors 38%", never "Failed"), the vector stage goes back to
the queue, and the next start finishes it without paying the loopback provider again for
the batches already embedded."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings
from pytestqt.qtbot import QtBot

from app.knowledge import doctor
from app.knowledge.jobs.kinds import JobKind
from app.knowledge.jobs.reader_pool import InlineExtraction
from app.knowledge.service import KnowledgeService
from app.knowledge.types import ItemPhase, ItemStatus
from app.runtime.executor import JobExecutor
from app.ui.context import UiContext
from app.ui.items.status_delegate import badge_text
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

STOP_WAIT_S = 30.0


@pytest.fixture
def provider(monkeypatch: pytest.MonkeyPatch) -> Iterator[PaidEmbeddings]:
    monkeypatch.setenv(KEY_ENV, KEY)
    with paid_embeddings() as paid:
        yield paid


def _context(home: Path, settings: Path) -> UiContext:
    service = KnowledgeService(home, extraction=InlineExtraction())
    return UiContext(
        service=service,
        executor=JobExecutor(service, max_workers=2),
        tasks=BackgroundTasks(),
        settings=QSettings(str(settings), QSettings.Format.IniFormat),
        notifier=Notifier(),
    )


def _open_window(qtbot: QtBot, ctx: UiContext) -> MainWindow:
    """As the launcher's run_window does."""
    window = MainWindow(ctx)
    qtbot.addWidget(window)
    window.show()
    ctx.executor.start()
    ctx.watching.start()
    window.start()
    qtbot.waitUntil(lambda: window.bases.loaded)
    return window


def test_quitting_mid_vectors_hands_the_stage_back_and_the_next_start_finishes_it(
    qtbot: QtBot, tmp_path: Path, provider: PaidEmbeddings
) -> None:
    home, settings = tmp_path / "home", tmp_path / "settings.ini"
    (doc,) = write_documents(tmp_path / "docs", 1, 100)  # three batches of chunks
    ctx = _context(home, settings)
    configure(ctx.service, provider.api)
    base = ctx.service.create_base("Quits", embedding_model=MODEL, chunk_size=48, chunk_overlap=0)
    window = _open_window(qtbot, ctx)
    provider.hold_from(provider.requests + 2)  # the document's second batch
    (item,) = ctx.service.add(base.id, [doc]).added
    ctx.executor.schedule()
    qtbot.waitUntil(provider.held.is_set, timeout=int(STOP_WAIT_S * 1000))

    # The person quits; the held batch is answered (and paid) once the stop is asked for,
    # so the job stops between its second and third batch.
    window.close_without_asking()
    assert not window.isVisible()

    def answer_once_stopping() -> None:
        ctx.executor._stopping.wait(STOP_WAIT_S)
        provider.release()

    answering = threading.Thread(target=answer_once_stopping, daemon=True)
    answering.start()
    close_context(ctx)  # what the launcher does after the window's loop ends
    answering.join(STOP_WAIT_S)
    paid_before = provider.requests

    # The next start: nothing failed, the document is searchable and waits for its vectors.
    ctx = _context(home, settings)
    waiting = ctx.service.get_item(item.id)
    assert (waiting.status, waiting.error_code, waiting.phase) == (
        ItemStatus.COMPLETED,
        None,
        ItemPhase.EMBEDDING,
    )
    assert 0 < (waiting.progress or 0) < 100
    assert badge_text(waiting.status, waiting.phase, waiting.progress).startswith(
        "Searchable · vectors"
    )
    assert ctx.service.search(base.id, "tokend0x7").results  # found by its words
    paid_before = provider.requests  # the search embedded its query
    [job] = ctx.service.catalog.list_jobs()
    assert (job.kind, job.status, job.owner, job.attempts) == (
        JobKind.EMBED_VECTORS,
        "queued",
        None,
        0,
    )
    window = _open_window(qtbot, ctx)
    try:
        qtbot.waitUntil(
            lambda: ctx.service.get_item(item.id).phase is None,
            timeout=int(STOP_WAIT_S * 1000),
        )
        done = ctx.service.get_item(item.id)
        # Two batches were paid before the quit; the next start paid only for the third.
        assert paid_before >= 3 and provider.requests == paid_before + 1
        assert provider.texts_paid_twice() == []
        assert doctor.check(ctx.service.parts, base.id, tmp_grace=0.0).problems == []
        assert done.chunk_count > 20
    finally:
        window.close_without_asking()
        close_context(ctx)
