"""Job ids are never handed out twice: finished jobs are deleted, and a process that still
holds a removed job's id must not finish or retry the next job instead."""

from __future__ import annotations

from pathlib import Path

from app.knowledge import db
from app.knowledge.catalog import Catalog
from app.knowledge.catalog import migrations as catalog_migrations


def test_a_finished_jobs_id_is_not_reused(tmp_path: Path) -> None:
    catalog = Catalog(tmp_path / "trove.sqlite")
    try:
        base = catalog.create_base("kb")
        first = catalog.enqueue_job("index-documents", base.id)
        catalog.finish_job(first.id, "done")  # the row is deleted: the table is empty again
        second = catalog.enqueue_job("index-documents", base.id)
        assert second.id > first.id
    finally:
        catalog.close()


def test_the_migration_keeps_queued_jobs_and_their_ids(tmp_path: Path) -> None:
    path = tmp_path / "trove.sqlite"
    conn = db.connect(path)
    db.migrate(conn, catalog_migrations.MIGRATIONS[:4], "catalog")
    conn.execute(
        "INSERT INTO bases (id, name, document_count, chunk_size, chunk_overlap, status, "
        "created_at, updated_at) VALUES ('b', 'B', 10, 512, 64, 'completed', 0, 0)"
    )
    conn.execute(
        "INSERT INTO jobs (id, kind, base_id, item_id, payload, idempotency_key, status, "
        "created_at, updated_at, owner) VALUES "
        "(7, 'index-documents', 'b', 'i1', '{\"x\": 1}', 'k1', 'queued', 1, 2, NULL), "
        "(9, 'delete-subtree', 'b', NULL, '{}', NULL, 'running', 3, 4, '1:2.000')"
    )
    conn.close()

    catalog = Catalog(path)
    try:
        assert db.schema_version(catalog._conn) == len(catalog_migrations.MIGRATIONS)
        jobs = {j.id: j for j in catalog.list_jobs()}
        assert sorted(jobs) == [7, 9]
        assert (jobs[7].payload, jobs[7].idempotency_key, jobs[7].status) == (
            {"x": 1},
            "k1",
            "queued",
        )
        assert (jobs[9].status, jobs[9].owner) == ("running", "1:2.000")
        # The live-key index came along: the same key enqueues once.
        assert catalog.enqueue_job("index-documents", "b", idempotency_key="k1").id == 7
        catalog.finish_job(9, "done")
        assert catalog.enqueue_job("index-documents", "b").id == 10
    finally:
        catalog.close()
