"""Moving linked folders between bases: a linked folder moves with its link; a file inside
one cannot be moved out (the next sync would bring it back), only copied."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from app.knowledge.jobs.reader_pool import InlineExtraction
from app.knowledge.service import KnowledgeService
from app.knowledge.types import ErrorCode, Item, ItemType, TroveError
from tests.conftest import write_files
from tests.fakes import FakeEmbedder, FakeModels


@pytest.fixture
def models() -> FakeModels:
    return FakeModels()


@pytest.fixture
def kb(tmp_path: Path, models: FakeModels) -> Iterator[KnowledgeService]:
    service = KnowledgeService(tmp_path / "home", models=models, extraction=InlineExtraction())
    yield service
    service.close()


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return write_files(
        tmp_path / "notes",
        {
            "alpha.md": "# Alpha\n\nThe aardvark digs burrows at night.",
            "deep/charlie.txt": "The capybara swims in the river.",
        },
    )


def _two_bases(kb: KnowledgeService, folder: Path) -> tuple[str, str, str]:
    source = kb.create_base("source", embedding_model="fake:bow")
    target = kb.create_base("target", embedding_model="fake:bow")
    (root,) = kb.add_linked_folders(source.id, [folder]).added
    kb.run_pending_jobs(source.id)
    return source.id, target.id, root.id


def _files(kb: KnowledgeService, base_id: str) -> dict[str, Item]:
    return {i.source: i for i in kb.list_items(base_id) if i.type is ItemType.FILE}


def _embedded(models: FakeModels) -> int:
    embedder: FakeEmbedder = models.embedder_instance
    return len(embedder.texts_embedded)


def test_a_file_in_a_linked_folder_is_copied_but_never_moved_out(
    kb: KnowledgeService, folder: Path
) -> None:
    source, target, _root = _two_bases(kb, folder)
    alpha = _files(kb, source)[str(folder / "alpha.md")]
    with pytest.raises(TroveError) as refused:
        kb.copy_items(source, [alpha.id], target, move=True)
    assert refused.value.code is ErrorCode.INVALID_ARGUMENT
    assert "linked folder" in str(refused.value)
    assert _files(kb, target) == {}  # nothing half moved
    assert alpha.id in {i.id for i in kb.list_items(source)}

    kb.copy_items(source, [alpha.id], target)
    kb.run_pending_jobs(target)
    assert [r.title for r in kb.search(target, "aardvark").results] == ["Alpha"]


def test_a_moved_linked_folder_stays_linked_and_embeds_nothing_again(
    kb: KnowledgeService, folder: Path, models: FakeModels
) -> None:
    source, target, root = _two_bases(kb, folder)
    before = _embedded(models)
    kb.copy_items(source, [root], target, move=True)
    kb.run_pending_jobs(source)
    kb.run_pending_jobs(target)  # the carried link's first sync runs here

    assert [link.base_id for link in kb.linked_folders()] == [target]
    assert _embedded(models) == before  # same files, same vectors: the sync only looked
    assert sorted(_files(kb, target)) == [
        str(folder / "alpha.md"),
        str(folder / "deep/charlie.txt"),
    ]
    assert _files(kb, source) == {}

    # The folder keeps syncing into its new base.
    (folder / "bravo.md").write_text("# Bravo\n\nThe bison grazes the prairie.", encoding="utf-8")
    kb.request_sync(target)
    kb.run_pending_jobs(target)
    assert kb.search(target, "bison").results[0].title == "Bravo"
    assert len(_files(kb, target)) == 3
