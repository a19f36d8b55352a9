"""Linked folders on a real directory: what a sync adds, reindexes, removes and renames,
checked through search results and item states (jobs/sync_folder.py)."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from app.knowledge.jobs import sync_folder
from app.knowledge.jobs.context import JobContext
from app.knowledge.jobs.kinds import JobKind
from app.knowledge.jobs.reader_pool import InlineExtraction
from app.knowledge.jobs.runner import run_job
from app.knowledge.service import KnowledgeService
from app.knowledge.types import Item, ItemStatus, ItemType, SearchMode
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
            "bravo.md": "# Bravo\n\nThe bison grazes the prairie.",
            "deep/charlie.txt": "The capybara swims in the river.",
        },
    )


def _linked(kb: KnowledgeService, folder: Path, **kw: object) -> tuple[str, str]:
    base = kb.create_base("kb", embedding_model="fake:bow")
    report = kb.add_linked_folders(base.id, [folder], **kw)  # type: ignore[arg-type]
    kb.run_pending_jobs(base.id)
    (root,) = report.added
    return base.id, root.id


def _sync(kb: KnowledgeService, base_id: str) -> None:
    kb.request_sync(base_id)
    kb.run_pending_jobs(base_id)


def _files(kb: KnowledgeService, base_id: str) -> dict[str, Item]:
    return {i.source: i for i in kb.list_items(base_id) if i.type is ItemType.FILE}


def _found(kb: KnowledgeService, base_id: str, word: str) -> set[str]:
    return {r.source for r in kb.search(base_id, word).results if word in r.text.lower()}


def _embedded(models: FakeModels) -> int:
    embedder: FakeEmbedder = models.embedder_instance
    return len(embedder.texts_embedded)


def _touch_later(path: Path, text: str) -> None:
    """Rewrite a file so its mtime moves even on a coarse clock."""
    before = path.stat().st_mtime_ns
    path.write_text(text, encoding="utf-8")
    if path.stat().st_mtime_ns == before:
        os.utime(path, ns=(before + 1_000_000_000, before + 1_000_000_000))


def test_a_linked_folder_is_indexed_and_its_sync_state_recorded(
    kb: KnowledgeService, folder: Path
) -> None:
    base_id, root_id = _linked(kb, folder)
    files = _files(kb, base_id)
    assert sorted(Path(s).name for s in files) == ["alpha.md", "bravo.md", "charlie.txt"]
    assert all(i.status is ItemStatus.COMPLETED for i in files.values())
    state = kb.sync_states(base_id)[root_id]
    assert state.link.last_synced_at is not None and state.link.last_error is None
    assert not state.pending and not state.link.syncing
    # Every file has a snapshot, so the next sync reads nothing that did not change.
    assert set(kb.catalog.file_snapshots(root_id)) == {i.id for i in files.values()}


def test_create_modify_delete_are_followed(
    kb: KnowledgeService, folder: Path, models: FakeModels
) -> None:
    base_id, root_id = _linked(kb, folder)
    (folder / "delta.md").write_text("The dingo howls at dawn.", encoding="utf-8")
    _touch_later(folder / "alpha.md", "# Alpha\n\nThe aardvark now eats ants with a walrus.")
    (folder / "bravo.md").unlink()
    _sync(kb, base_id)

    assert _found(kb, base_id, "dingo") == {str(folder / "delta.md")}
    assert _found(kb, base_id, "walrus") == {str(folder / "alpha.md")}
    assert _found(kb, base_id, "burrows") == set()  # the old text is gone
    assert _found(kb, base_id, "bison") == set()
    files = _files(kb, base_id)
    assert str(folder / "bravo.md") not in files
    assert all(i.status is ItemStatus.COMPLETED for i in files.values())
    assert kb.get_item(root_id).status is ItemStatus.COMPLETED
    (last,) = kb.sync_log(root_id)[:1]
    assert (last.added, last.changed, last.removed) == (["delta.md"], ["alpha.md"], ["bravo.md"])
    assert kb.doctor(base_id).report.problems == []


def test_an_untouched_folder_syncs_without_reading_or_embedding(
    kb: KnowledgeService, folder: Path, models: FakeModels
) -> None:
    base_id, root_id = _linked(kb, folder)
    before = _embedded(models)
    snapshots = kb.catalog.file_snapshots(root_id)
    _sync(kb, base_id)
    assert _embedded(models) == before
    assert kb.catalog.file_snapshots(root_id) == snapshots
    assert kb.sync_log(root_id) == []


def test_a_touched_but_identical_file_is_not_reindexed(
    kb: KnowledgeService, folder: Path, models: FakeModels
) -> None:
    base_id, _root_id = _linked(kb, folder)
    before = _embedded(models)
    updated = {i.id: i.updated_at for i in _files(kb, base_id).values()}
    _touch_later(folder / "alpha.md", (folder / "alpha.md").read_text(encoding="utf-8"))
    _sync(kb, base_id)
    assert _embedded(models) == before
    assert {i.id: i.updated_at for i in _files(kb, base_id).values()} == updated


def test_rename_and_move_into_a_subfolder_keep_the_item_and_its_vectors(
    kb: KnowledgeService, folder: Path, models: FakeModels
) -> None:
    base_id, root_id = _linked(kb, folder)
    files = _files(kb, base_id)
    alpha_id = files[str(folder / "alpha.md")].id
    bravo_id = files[str(folder / "bravo.md")].id
    chunks_before = [c.text for c in kb.item_chunks(base_id, alpha_id)]
    before = _embedded(models)

    (folder / "alpha.md").rename(folder / "aardvarks.md")
    (folder / "archive").mkdir()
    (folder / "bravo.md").rename(folder / "archive" / "bravo.md")
    _sync(kb, base_id)

    assert _embedded(models) == before  # nothing embedded again
    files = _files(kb, base_id)
    assert files[str(folder / "aardvarks.md")].id == alpha_id
    assert files[str(folder / "archive" / "bravo.md")].id == bravo_id
    assert [c.text for c in kb.item_chunks(base_id, alpha_id)] == chunks_before
    assert _found(kb, base_id, "aardvark") == {str(folder / "aardvarks.md")}
    assert _found(kb, base_id, "bison") == {str(folder / "archive" / "bravo.md")}
    assert len(files) == 3
    (last,) = kb.sync_log(root_id)[:1]
    assert sorted(last.renamed) == [
        ("alpha.md", "aardvarks.md"),
        ("bravo.md", "archive/bravo.md"),
    ]
    assert last.added == [] and last.removed == []
    assert kb.doctor(base_id).report.problems == []


def test_ignore_rules_leave_files_out(kb: KnowledgeService, folder: Path) -> None:
    (folder / ".gitignore").write_text("build/\n", encoding="utf-8")
    write_files(
        folder,
        {
            "build/out.md": "The buildbot output.",
            "secret.md": "The secretary bird.",
            "~$report.docx": "lock",
            "draft.md.part": "The partial download.",
            "notes.md.swp": "swap",
            "#autosave#": "emacs",
            ".hidden.md": "The hidden hedgehog.",
        },
    )
    base_id, root_id = _linked(kb, folder, ignore_patterns=["secret.md"])
    names = sorted(Path(s).relative_to(folder).as_posix() for s in _files(kb, base_id))
    assert names == ["alpha.md", "bravo.md", "deep/charlie.txt"]
    # Rules hold for later files too, and a new rule removes what it now covers.
    (folder / "build" / "later.md").write_text("The buildbot again.", encoding="utf-8")
    (folder / "deep" / "x.tmp").write_text("temp", encoding="utf-8")
    kb.link_folder(base_id, root_id, ["secret.md", "deep/"])
    _sync(kb, base_id)
    names = sorted(Path(s).relative_to(folder).as_posix() for s in _files(kb, base_id))
    assert names == ["alpha.md", "bravo.md"]
    assert _found(kb, base_id, "capybara") == set()


def test_a_file_still_being_written_is_taken_in_only_once_finished(
    kb: KnowledgeService, folder: Path
) -> None:
    base_id, root_id = _linked(kb, folder)
    growing = folder / "growing.md"
    growing.write_text("The gnu begins.\n", encoding="utf-8")
    started = threading.Event()

    def writer() -> None:
        with growing.open("a", encoding="utf-8") as fh:
            for n in range(40):  # a write every 50 ms for 2 s: the settle check sees it move
                fh.write(f"Line {n} of the long report.\n")
                fh.flush()
                started.set()
                time.sleep(0.05)
            fh.write("The gnu ends with a zebu.\n")

    thread = threading.Thread(target=writer)
    thread.start()
    started.wait(5)
    try:
        _sync(kb, base_id)  # drains follow-ups too: returns once the file has settled
    finally:
        thread.join()
    log = kb.sync_log(root_id)
    assert any("growing.md" in entry.deferred for entry in log)
    # Indexed whole: its last line is found, in one item.
    assert _found(kb, base_id, "zebu") == {str(growing)}
    assert sum(1 for s in _files(kb, base_id) if s == str(growing)) == 1


def test_a_burst_of_saves_between_syncs_is_one_reindex(
    kb: KnowledgeService, folder: Path, models: FakeModels
) -> None:
    base_id, _root_id = _linked(kb, folder)
    target = folder / "alpha.md"
    for n in range(10):
        _touch_later(target, f"# Alpha\n\nSave number {n} of the aardvark.")
    old = target.stat().st_mtime_ns - 5_000_000_000  # settled: no second look needed
    os.utime(target, ns=(old, old))
    index_jobs = _count_index_jobs(kb)
    _sync(kb, base_id)
    assert index_jobs() == 1
    assert _found(kb, base_id, "9") == {str(target)}


def _count_index_jobs(kb: KnowledgeService) -> Callable[[], int]:
    """How many index-documents jobs are queued from now on (counted as they are queued)."""
    seen: list[str] = []
    original = kb.catalog.enqueue_job

    def counting(kind: str, base_id: str, **kw: object) -> object:
        if kind == JobKind.INDEX_DOCUMENTS:
            seen.append(str(kw.get("item_id")))
        return original(kind, base_id, **kw)  # type: ignore[arg-type]

    kb.catalog.enqueue_job = counting  # type: ignore[method-assign,assignment]
    return lambda: len(seen)


def _claim_sync(kb: KnowledgeService, base_id: str) -> None:
    """Run the queued sync job alone (other queued jobs stay queued)."""
    skip = [(base_id, k.value) for k in JobKind if k is not JobKind.SYNC_FOLDER]
    job = kb.catalog.claim_next_job(base_id, owner="test", skip=skip)
    assert job is not None and job.kind == JobKind.SYNC_FOLDER
    run_job(JobContext(kb.parts), job)


def test_a_folder_being_deleted_is_not_brought_back(kb: KnowledgeService, folder: Path) -> None:
    base_id, root_id = _linked(kb, folder)
    (folder / "echo.md").write_text("The emu.", encoding="utf-8")
    kb.delete_items(base_id, [root_id])
    sync_folder.queue_sync(kb.parts, base_id, root_id)
    _claim_sync(kb, base_id)
    assert all(i.status is ItemStatus.DELETING for i in kb.list_items(base_id))
    kb.run_pending_jobs(base_id)
    assert kb.list_items(base_id) == []
    assert kb.linked_folders(base_id) == []


def test_a_file_being_deleted_is_not_resurrected_by_that_sync(
    kb: KnowledgeService, folder: Path
) -> None:
    base_id, root_id = _linked(kb, folder)
    bravo = _files(kb, base_id)[str(folder / "bravo.md")]
    kb.delete_items(base_id, [bravo.id])
    sync_folder.queue_sync(kb.parts, base_id, root_id)
    _claim_sync(kb, base_id)
    same_source = [i for i in kb.list_items(base_id) if i.source == bravo.source]
    assert [(i.id, i.status) for i in same_source] == [(bravo.id, ItemStatus.DELETING)]


def test_two_services_syncing_one_base_at_once_make_no_duplicates(
    tmp_path: Path, folder: Path
) -> None:
    home = tmp_path / "home"
    first = KnowledgeService(home, models=FakeModels(), extraction=InlineExtraction())
    second = KnowledgeService(home, models=FakeModels(), extraction=InlineExtraction())
    try:
        base_id, _root_id = _linked(first, folder)
        write_files(folder, {f"new/{n}.md": f"The number {n} newt." for n in range(30)})
        errors: list[BaseException] = []

        def sync(svc: KnowledgeService) -> None:
            try:
                for _ in range(3):
                    svc.request_sync(base_id)
                    svc.run_pending_jobs(base_id)
            except BaseException as exc:
                errors.append(exc)

        threads = [threading.Thread(target=sync, args=(s,)) for s in (first, second)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == []
        sources = [i.source for i in first.list_items(base_id) if i.type is ItemType.FILE]
        assert len(sources) == len(set(sources)) == 33
        assert all(i.status is ItemStatus.COMPLETED for i in first.list_items(base_id))
        assert first.doctor(base_id).report.problems == []
    finally:
        first.close()
        second.close()


def test_a_missing_folder_keeps_its_items_and_says_so(kb: KnowledgeService, folder: Path) -> None:
    base_id, root_id = _linked(kb, folder)
    folder.rename(folder.with_name("elsewhere"))
    _sync(kb, base_id)
    assert len(_files(kb, base_id)) == 3
    state = kb.sync_states(base_id)[root_id]
    assert state.link.last_error is not None and "not there" in state.link.last_error


def test_only_folder_roots_link(kb: KnowledgeService, folder: Path) -> None:
    base_id, root_id = _linked(kb, folder)
    child = next(iter(_files(kb, base_id).values()))
    with pytest.raises(Exception, match="only a folder"):
        kb.link_folder(base_id, child.id)
    kb.unlink_folder(base_id, root_id)
    assert kb.linked_folders(base_id) == []
    assert kb.catalog.file_snapshots(root_id) == {}


def test_a_renamed_file_is_found_and_shown_under_its_new_name(
    kb: KnowledgeService, folder: Path
) -> None:
    """Found by the sync simulation (seeds 1, 2, 4, ...): the index kept a renamed file's
    old title, so results named it by its old name and its new name found nothing."""
    base_id, _root_id = _linked(kb, folder)
    (folder / "deep" / "charlie.txt").rename(folder / "deep" / "rodent-notes.txt")
    _sync(kb, base_id)
    hits = kb.search(base_id, "rodent", mode=SearchMode.BM25).results  # the title only
    assert [(h.source, h.title) for h in hits] == [
        (str(folder / "deep" / "rodent-notes.txt"), "rodent-notes")
    ]
    # What a fresh index of the folder holds for it, chunk for chunk.
    fresh = kb.create_base("fresh", embedding_model="fake:bow")
    kb.add(fresh.id, [folder])
    kb.run_pending_jobs(fresh.id)
    renamed, indexed = (
        next(i for i in kb.list_items(b) if i.source.endswith("rodent-notes.txt"))
        for b in (base_id, fresh.id)
    )
    assert renamed.title == indexed.title == "rodent-notes"
    assert [
        (c.char_start, c.char_end, c.text, c.title) for c in kb.item_chunks(base_id, renamed.id)
    ] == [(c.char_start, c.char_end, c.text, c.title) for c in kb.item_chunks(fresh.id, indexed.id)]


def test_a_sync_killed_before_it_looked_does_not_swallow_the_next_request(
    kb: KnowledgeService, folder: Path
) -> None:
    """Found by the sync simulation (seeds 18 and 42 of one run): a sync claimed by a
    process that died before it took its lease still held the request key, so the next
    process's request returned it, nothing ran, and the changes waited for another sync."""
    base_id, _root_id = _linked(kb, folder)
    write_files(folder, {"echo.md": "# Echo\n\nThe emu runs."})
    old = time.time() - 60  # settled: no second look needed
    os.utime(folder / "echo.md", (old, old))
    kb.request_sync(base_id)
    dead = kb.catalog.claim_next_job(base_id, owner="1:0.000")  # pid 1 never started then
    assert dead is not None and dead.kind == JobKind.SYNC_FOLDER
    kb.request_sync(base_id)  # the next process asks, before any recovery runs
    kb.run_pending_jobs(base_id)
    assert _found(kb, base_id, "emu") == {str(folder / "echo.md")}


def test_a_rename_that_gives_chunks_another_size_indexes_the_file_as_a_fresh_index_would(
    kb: KnowledgeService, tmp_path: Path
) -> None:
    """Chunks as long as the model reads leave room for the title repeated in front of
    them: a longer title, shorter chunks. Only then does a rename cost embedding calls."""
    words = " ".join(f"word{n}" for n in range(700))  # one paragraph: cut between words
    folder = write_files(tmp_path / "long", {"a.txt": words})
    base = kb.create_base("kb", embedding_model="fake:bow", chunk_size=100_000)
    kb.add_linked_folders(base.id, [folder])
    kb.run_pending_jobs(base.id)
    (folder / "a.txt").rename(folder / "a much longer name than before.txt")
    _sync(kb, base.id)
    fresh = kb.create_base("fresh", embedding_model="fake:bow", chunk_size=100_000)
    kb.add(fresh.id, [folder])
    kb.run_pending_jobs(fresh.id)
    renamed, indexed = (
        next(i for i in kb.list_items(b) if i.type is ItemType.FILE) for b in (base.id, fresh.id)
    )
    spans = [(c.char_start, c.char_end) for c in kb.item_chunks(base.id, renamed.id)]
    assert len(spans) > 1
    assert spans == [(c.char_start, c.char_end) for c in kb.item_chunks(fresh.id, indexed.id)]
    assert renamed.status is ItemStatus.COMPLETED
