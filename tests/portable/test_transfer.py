"""Copy and move items between bases: stored vectors travel when both bases use the same
model (no embedding call), otherwise the target indexes the copies with its own model."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.knowledge.jobs.reader_pool import InlineExtraction
from app.knowledge.service import KnowledgeService
from app.knowledge.types import ErrorCode, ItemStatus, TroveError
from tests.conftest import write_files
from tests.fakes import FakeModels
from tests.portable.world import KEY, MODEL, World, build, embed_calls, service, trove
from tests.providers.fake_api import FakeApi


@pytest.fixture
def api() -> Iterator[FakeApi]:
    with FakeApi(api_key=KEY, dims=8) as server:
        yield server


@pytest.fixture
def models() -> FakeModels:
    return FakeModels()


@pytest.fixture
def svc(tmp_path: Path, models: FakeModels) -> Iterator[KnowledgeService]:
    service = KnowledgeService(tmp_path / "home", models=models, extraction=InlineExtraction())
    yield service
    service.close()


def _folder(tmp_path: Path) -> Path:
    return write_files(
        tmp_path / "recipes",
        {
            "soup.md": "# Soup\n\nTomato soup wants basil, garlic and slow heat.",
            "bread/rye.md": "# Rye\n\nRye bread needs a sour starter and patience.",
            "bread/naan.txt": "Naan is baked fast in a very hot tandoor oven.",
        },
    )


def _indexed(svc: KnowledgeService, name: str, model: str | None, folder: Path) -> str:
    base = svc.create_base(name, embedding_model=model)
    svc.add(base.id, [folder])
    svc.run_pending_jobs(base.id)
    assert {i.status for i in svc.list_items(base.id)} == {ItemStatus.COMPLETED}
    return base.id


def _titles(svc: KnowledgeService, base_id: str, query: str) -> list[str]:
    return [r.title for r in svc.search(base_id, query).results]


def test_copy_with_the_same_model_reuses_vectors(
    tmp_path: Path, svc: KnowledgeService, models: FakeModels
) -> None:
    source = _indexed(svc, "kitchen", "fake:bow", _folder(tmp_path))
    target = svc.create_base("cookbook", embedding_model="fake:bow").id
    root = svc.list_items(source)[0]
    assert root.parent_id is None
    embedder = models.embedder("fake:bow")
    calls = len(embedder.calls)

    report = svc.copy_items(source, [root.id], target)

    assert len(embedder.calls) == calls, "vectors are copied, not embedded again"
    assert report.reindexing == 0 and report.vectors_reused >= 3
    copies = svc.list_items(target)
    assert len(copies) == len(svc.list_items(source)) == 4
    assert {i.status for i in copies} == {ItemStatus.COMPLETED}
    assert _titles(svc, target, "tandoor") == _titles(svc, source, "tandoor")
    assert "naan" in _titles(svc, target, "tandoor")
    # The copies own their raw files: deleting the source base leaves them intact.
    svc.delete_base(source)
    assert "naan" in _titles(svc, target, "tandoor")
    assert svc.doctor().clean


def test_copy_to_another_model_indexes_in_the_target(
    tmp_path: Path, svc: KnowledgeService, models: FakeModels
) -> None:
    source = _indexed(svc, "plain", None, _folder(tmp_path))
    target = svc.create_base("vectors", embedding_model="fake:bow").id
    naan = next(i for i in svc.list_items(source) if i.title == "naan")
    embedder = models.embedder("fake:bow")
    calls = len(embedder.calls)

    report = svc.copy_items(source, [naan.id], target)
    assert report.reindexing == 1 and report.vectors_reused == 0
    svc.run_pending_jobs(target)

    assert len(embedder.calls) > calls
    [copy] = svc.list_items(target)
    assert copy.status is ItemStatus.COMPLETED and copy.parent_id is None
    assert copy.relative_path == "naan.txt"
    assert _titles(svc, target, "tandoor") == ["naan"]
    assert svc.doctor().clean


def test_move_removes_the_originals_after_the_copy(
    tmp_path: Path, svc: KnowledgeService, models: FakeModels
) -> None:
    source = _indexed(svc, "kitchen", "fake:bow", _folder(tmp_path))
    target = svc.create_base("cookbook", embedding_model="fake:bow").id
    naan = next(i for i in svc.list_items(source) if i.title == "naan")
    calls = len(models.embedder("fake:bow").calls)

    report = svc.copy_items(source, [naan.id], target, move=True)
    svc.run_pending_jobs(source)

    assert len(models.embedder("fake:bow").calls) == calls
    assert report.removed_from_source == 1
    assert "naan" not in _titles(svc, source, "tandoor")
    assert "naan" in _titles(svc, target, "tandoor")
    assert sorted(i.title for i in svc.list_items(source)) == ["Rye", "Soup", "recipes"]
    [copy] = svc.list_items(target)
    assert (copy.title, copy.relative_path, copy.parent_id) == ("naan", "naan.txt", None)
    assert svc.doctor().clean


def test_copies_of_the_same_names_get_their_own_files(
    tmp_path: Path, svc: KnowledgeService
) -> None:
    source = _indexed(svc, "kitchen", "fake:bow", _folder(tmp_path))
    target = svc.create_base("cookbook", embedding_model="fake:bow").id
    root = svc.list_items(source)[0]
    svc.copy_items(source, [root.id], target)
    svc.copy_items(source, [root.id], target)
    paths = [i.relative_path for i in svc.list_items(target)]
    assert len(paths) == len(set(paths)) == 8
    assert {"recipes", "recipes_1"} <= set(paths)
    assert svc.doctor().clean


def test_copy_refuses_what_it_cannot_do(tmp_path: Path, svc: KnowledgeService) -> None:
    source = _indexed(svc, "kitchen", None, _folder(tmp_path))
    root = svc.list_items(source)[0]
    with pytest.raises(TroveError) as same:
        svc.copy_items(source, [root.id], source)
    assert same.value.code is ErrorCode.INVALID_ARGUMENT
    other = svc.create_base("other").id
    with pytest.raises(TroveError) as unknown:
        svc.copy_items(source, ["nope"], other)
    assert unknown.value.code is ErrorCode.ITEM_NOT_FOUND
    assert svc.list_items(other) == []


@pytest.fixture
def world(tmp_path: Path, api: FakeApi) -> World:
    return build(tmp_path, api, docs=9)


def test_cli_copy_and_move_between_hybrid_bases_embed_nothing(
    tmp_path: Path, api: FakeApi, world: World
) -> None:
    os.environ.setdefault("TROVE_KEY_PORTAPI", KEY)
    svc = service(world.home)
    try:
        target = svc.create_base("shelf", embedding_model=MODEL, chunk_size=96, chunk_overlap=16)
        items = svc.list_items(world.base_id)
        root = next(i for i in items if i.parent_id is None)
        loose = next(i for i in items if (i.relative_path or "").endswith("doc01.md"))
    finally:
        svc.close()
    calls = embed_calls(api)

    copied = trove(world.home, "item", "copy", "garden", root.id, "--to", "shelf")
    assert copied.returncode == 0, copied.stderr
    assert "stored vector(s) reused" in copied.stderr
    moved = trove(world.home, "item", "move", "garden", loose.id, "--to", "shelf")
    assert moved.returncode == 0, moved.stderr
    assert embed_calls(api) == calls, "same model: no embedding call"

    svc = service(world.home)
    try:
        copies = svc.list_items(target.id)
        assert len(copies) == len(items) + 1  # the folder with its documents, and one more
        assert all(i.status is ItemStatus.COMPLETED for i in svc.list_items(target.id))
        assert loose.id not in {i.id for i in svc.list_items(world.base_id)}
        word = "Topic 1 "
        found = svc.search(target.id, "Topic 1").results
        assert any(r.concept_id.endswith("doc01.md") and word in r.text for r in found)
        assert svc.doctor().clean
    finally:
        svc.close()


def test_a_folder_copied_to_another_model_settles_when_its_documents_are_indexed(
    tmp_path: Path, svc: KnowledgeService, models: FakeModels
) -> None:
    source = _indexed(svc, "plain", None, _folder(tmp_path))
    target = svc.create_base("vectors", embedding_model="fake:bow").id
    root = next(i for i in svc.list_items(source) if i.parent_id is None)

    report = svc.copy_items(source, [root.id], target)
    assert report.reindexing == 3
    assert svc.get_item(report.copied[0]).status is ItemStatus.PROCESSING
    svc.run_pending_jobs(target)

    copies = svc.list_items(target)
    assert {i.status for i in copies} == {ItemStatus.COMPLETED}
    assert len(models.embedder("fake:bow").calls) > 0
    assert "naan" in _titles(svc, target, "tandoor")
    assert svc.doctor().clean
