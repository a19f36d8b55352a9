"""Startup recovery deletes failed and abandoned job rows older than JOB_RETENTION_DAYS, and
nothing else: live jobs of any age and recent failures (kept for diagnosis) stay."""

from __future__ import annotations

import time
from pathlib import Path

import apsw

from app.knowledge.jobs.kinds import JobKind, index_key
from app.knowledge.jobs.recovery import JOB_RETENTION_DAYS
from app.knowledge.service import KnowledgeService
from app.knowledge.types import ErrorCode, ItemStatus
from tests.conftest import write_files

DAY = 86_400.0
# pid_max is far below this on Linux: an owner that is certainly dead.
DEAD_OWNER = "999999:1.000"


def _age(svc: KnowledgeService, job_id: int, days: float) -> None:
    """Pretend a job row was last touched `days` ago (as another process would see it)."""
    conn = apsw.Connection(str(svc.catalog.path))
    try:
        conn.execute(
            "UPDATE jobs SET updated_at = ?, created_at = ? WHERE id = ?",
            (time.time() - days * DAY, time.time() - days * DAY, job_id),
        )
    finally:
        conn.close()


def test_recovery_prunes_only_old_failed_and_abandoned_jobs(
    svc: KnowledgeService, tmp_path: Path
) -> None:
    base = svc.create_base("kb")
    docs = write_files(
        tmp_path / "docs",
        {"a.exe": "not a document", "b.exe": "nor this", "c.exe": "nor this one"},
    )
    # Three failed jobs (unsupported files fail their items and keep their job rows).
    svc.add(base.id, [docs / "a.exe", docs / "b.exe", docs / "c.exe"])
    svc.run_pending_jobs(base.id)
    failed = svc.catalog.list_jobs(base.id, statuses=("failed",))
    assert len(failed) == 3
    assert {i.error_code for i in svc.list_items(base.id)} == {ErrorCode.UNSUPPORTED_FILE_TYPE}

    # One abandoned job: its process died while it ran.
    note = svc.add_note(base.id, "Note", "A note about pruning.")
    assert svc.catalog.claim_next_job(base.id, owner=DEAD_OWNER) is not None
    svc.recover()
    (abandoned,) = svc.catalog.list_jobs(base.id, statuses=("abandoned",))
    assert svc.get_item(note.id).error_code == ErrorCode.INDEXING_INTERRUPTED

    # A queued job as old as any of them: live work is never pruned.
    svc.catalog.set_item_status(note.id, ItemStatus.PROCESSING)
    queued = svc.catalog.enqueue_job(
        JobKind.INDEX_DOCUMENTS, base.id, item_id=note.id, idempotency_key=index_key(note.id)
    )

    old = JOB_RETENTION_DAYS + 1
    _age(svc, failed[0].id, old)
    _age(svc, failed[1].id, old)
    _age(svc, abandoned.id, old)
    _age(svc, failed[2].id, JOB_RETENTION_DAYS - 1)  # recent enough to keep
    _age(svc, queued.id, old * 10)

    report = svc.recover()

    assert report.pruned_jobs == 3
    left = {j.id: j.status for j in svc.catalog.list_jobs(base.id)}
    assert left == {failed[2].id: "failed", queued.id: "queued"}
    # The items keep their own error codes: pruning loses no diagnosis the person sees.
    assert {i.error_code for i in svc.list_items(base.id) if i.id != note.id} == {
        ErrorCode.UNSUPPORTED_FILE_TYPE
    }
    assert svc.recover().pruned_jobs == 0  # nothing more to prune
    svc.run_pending_jobs(base.id)
    assert svc.get_item(note.id).status is ItemStatus.COMPLETED
    assert svc.doctor().clean
