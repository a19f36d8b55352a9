"""Editing a note: the new title and text replace the old, the note is indexed again through
the reindex path, and a note that is busy (indexing, deleting) or not a note is refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.knowledge import path_safety
from app.knowledge.jobs.kinds import JobKind
from app.knowledge.service import KnowledgeService
from app.knowledge.types import ErrorCode, Item, ItemStatus, SearchMode, TroveError


def found(svc: KnowledgeService, base_id: str, word: str) -> set[str]:
    return {r.item_id for r in svc.search(base_id, word, mode=SearchMode.BM25).results}


def material_text(svc: KnowledgeService, item: Item) -> str:
    assert item.relative_path is not None
    raw = svc.layout.raw_dir(item.base_id)
    return path_safety.resolve_below(raw, item.relative_path).read_text(encoding="utf-8")


def indexed_note(svc: KnowledgeService, base_id: str, title: str, text: str) -> Item:
    note = svc.add_note(base_id, title, text)
    svc.run_pending_jobs()
    done = svc.get_item(note.id)
    assert done.status is ItemStatus.COMPLETED
    return done


def test_an_edited_note_is_indexed_again_with_its_new_title_and_text(
    svc: KnowledgeService,
) -> None:
    base = svc.create_base("Notes")
    note = indexed_note(svc, base.id, "Garden", "The quasarwort grows by the fence.")
    assert found(svc, base.id, "quasarwort") == {note.id}

    edited = svc.update_note(base.id, note.id, "  Garden   plans ", "Plant nebulaberry in May.")
    assert edited.status is ItemStatus.PROCESSING
    assert (edited.title, edited.source) == ("Garden plans", "Plant nebulaberry in May.")
    # Through the reindex path: a reindex-subtree job for the note, nothing else.
    queued = svc.catalog.list_jobs(base.id, statuses=["queued"])
    assert [(j.kind, j.item_id) for j in queued] == [(JobKind.REINDEX_SUBTREE, note.id)]

    svc.run_pending_jobs()
    done = svc.get_item(note.id)
    assert done.status is ItemStatus.COMPLETED
    assert found(svc, base.id, "nebulaberry") == {note.id}
    assert found(svc, base.id, "quasarwort") == set()  # the old text is gone from the index
    # The snapshot under raw/ holds the new text, at the same path (the Concept ID).
    assert done.relative_path == note.relative_path
    assert material_text(svc, done) == "Plant nebulaberry in May."
    material = svc.parts.stores.get(base.id).material(note.id)
    assert material is not None and material.title == "Garden plans"
    hit = svc.search(base.id, "nebulaberry", mode=SearchMode.BM25).results[0]
    assert hit.title == "Garden plans"


def test_an_untitled_edit_gets_the_default_title(svc: KnowledgeService) -> None:
    base = svc.create_base("Notes")
    note = indexed_note(svc, base.id, "Draft", "first words")
    assert svc.update_note(base.id, note.id, "   ", "second words").title == "Untitled note"


def test_a_note_being_indexed_is_refused(svc: KnowledgeService) -> None:
    base = svc.create_base("Notes")
    note = svc.add_note(base.id, "Busy", "still indexing")
    with pytest.raises(TroveError) as refused:
        svc.update_note(base.id, note.id, "Busy", "changed meanwhile")
    assert refused.value.code is ErrorCode.INVALID_ARGUMENT
    assert "still being indexed" in refused.value.message
    assert svc.get_item(note.id).source == "still indexing"  # nothing was changed


def test_a_note_being_deleted_is_refused(svc: KnowledgeService) -> None:
    base = svc.create_base("Notes")
    note = indexed_note(svc, base.id, "Old", "going away")
    svc.delete_items(base.id, [note.id])
    with pytest.raises(TroveError) as refused:
        svc.update_note(base.id, note.id, "Old", "too late")
    assert refused.value.code is ErrorCode.INVALID_ARGUMENT
    assert "being deleted" in refused.value.message
    svc.run_pending_jobs()
    assert svc.find_item(note.id) is None


def test_only_notes_of_the_base_with_text_can_be_edited(
    svc: KnowledgeService, tmp_path: Path
) -> None:
    base = svc.create_base("Notes")
    other = svc.create_base("Other")
    doc = tmp_path / "doc.md"
    doc.write_text("# Doc\n\nsome words", encoding="utf-8")
    (file_item,) = svc.add(base.id, [doc]).added
    note = svc.add_note(base.id, "Keep", "kept words")
    svc.run_pending_jobs()

    def refused(base_id: str, item_id: str, text: str) -> TroveError:
        with pytest.raises(TroveError) as caught:
            svc.update_note(base_id, item_id, "Title", text)
        return caught.value

    assert "only notes can be edited" in refused(base.id, file_item.id, "text").message
    assert refused(base.id, note.id, " \n ").code is ErrorCode.INVALID_ARGUMENT
    assert refused(other.id, note.id, "text").code is ErrorCode.ITEM_NOT_FOUND
    assert refused(base.id, "no-such-item", "text").code is ErrorCode.ITEM_NOT_FOUND
    assert svc.get_item(note.id).source == "kept words"
    assert svc.get_item(note.id).status is ItemStatus.COMPLETED


def test_a_read_only_data_folder_refuses_the_edit(svc: KnowledgeService) -> None:
    base = svc.create_base("Notes")
    note = indexed_note(svc, base.id, "Fixed", "fixed words")
    svc.read_only = True
    with pytest.raises(TroveError) as refused:
        svc.update_note(base.id, note.id, "Fixed", "new words")
    assert refused.value.code is ErrorCode.STORAGE_READ_ONLY
