"""A linked folder's files indexed in place: no copy of the originals under raw/, the
original is the source of truth for reindex, restore and export (material_paths.py)."""

from __future__ import annotations

import os
import threading
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.knowledge.jobs.reader_pool import InlineExtraction
from app.knowledge.material_paths import in_place
from app.knowledge.service import KnowledgeService
from app.knowledge.types import ErrorCode, Item, ItemStatus, ItemType, TroveError
from tests.fakes import FakeModels
from tests.unit.make_files import make_docx, make_pdf


def _page(sentence: str) -> str:
    """A page with as much text as a real one (a sparse page reads as a scan: pdf.py)."""
    return "\n".join([sentence] + [f"Line {n} of an ordinary page of prose." for n in range(40)])


@pytest.fixture
def kb(tmp_path: Path) -> Iterator[KnowledgeService]:
    service = KnowledgeService(
        tmp_path / "home", models=FakeModels(), extraction=InlineExtraction()
    )
    yield service
    service.close()


@pytest.fixture
def library(tmp_path: Path) -> Path:
    folder = tmp_path / "library"
    (folder / "papers").mkdir(parents=True)
    make_pdf(
        folder / "papers" / "okapi.pdf",
        [_page("The okapi lives in the Ituri rainforest of the Democratic Republic of Congo.")],
    )
    make_docx(folder / "memo.docx", ["The quokka smiles on Rottnest Island."])
    (folder / "notes.md").write_text("# Notes\n\nThe axolotl regrows its limbs.", "utf-8")
    return folder


def _link(kb: KnowledgeService, folder: Path, model: str | None = "fake:bow") -> str:
    base = kb.create_base("library", embedding_model=model)
    kb.add_linked_folders(base.id, [folder])
    kb.run_pending_jobs(base.id)
    return base.id


def _files(kb: KnowledgeService, base_id: str) -> dict[str, Item]:
    return {Path(i.source).name: i for i in kb.list_items(base_id) if i.type is ItemType.FILE}


def _raw(kb: KnowledgeService, base_id: str) -> set[str]:
    raw = kb.layout.raw_dir(base_id)
    return {p.relative_to(raw).as_posix() for p in raw.rglob("*") if p.is_file()}


def _found(kb: KnowledgeService, base_id: str, word: str) -> set[str]:
    hits = kb.search(base_id, word).results
    return {Path(r.source).name for r in hits if word in r.text.lower()}


def test_a_linked_folder_keeps_only_its_text_under_raw(kb: KnowledgeService, library: Path) -> None:
    base_id = _link(kb, library)
    files = _files(kb, base_id)
    assert {n: i.status for n, i in files.items()} == dict.fromkeys(
        ("okapi.pdf", "memo.docx", "notes.md"), ItemStatus.COMPLETED
    )
    assert all(in_place(i) for i in files.values())
    stored = _raw(kb, base_id)
    # The PDF's and the DOCX's bytes are not copied: their extracted text is the material.
    assert not any(name.endswith((".pdf", ".docx")) for name in stored), stored
    assert files["okapi.pdf"].relative_path is not None
    assert any(name.endswith(".md") and "okapi" in name for name in stored)
    assert _found(kb, base_id, "okapi") == {"okapi.pdf"}
    assert _found(kb, base_id, "quokka") == {"memo.docx"}
    assert _found(kb, base_id, "axolotl") == {"notes.md"}
    # Reindexing reads the originals again (there is nothing else to read).
    (library / "papers" / "okapi.pdf").unlink()
    make_pdf(
        library / "papers" / "okapi.pdf",
        [_page("The okapi eats leaves, grasses and fruit, and cleans its ears with its tongue.")],
    )
    kb.reindex(base_id, [files["okapi.pdf"].id])
    kb.run_pending_jobs(base_id)
    assert "fruit" in " ".join(r.text for r in kb.search(base_id, "okapi fruit").results)


def test_a_plain_added_folder_still_keeps_copies(kb: KnowledgeService, library: Path) -> None:
    base = kb.create_base("copies", embedding_model=None)
    kb.add(base.id, [library])
    kb.run_pending_jobs(base.id)
    stored = _raw(kb, base.id)
    assert any(n.endswith(".pdf") for n in stored) and any(n.endswith(".docx") for n in stored)
    assert not any(in_place(i) for i in _files(kb, base.id).values())


def test_deleting_a_linked_folder_never_touches_the_originals(
    kb: KnowledgeService, library: Path
) -> None:
    base_id = _link(kb, library, model=None)
    before = sorted(p.name for p in library.rglob("*") if p.is_file())
    root = next(i for i in kb.list_items(base_id) if i.type is ItemType.DIRECTORY)
    kb.delete_items(base_id, [root.id])
    kb.run_pending_jobs(base_id)
    assert kb.list_items(base_id) == []
    assert _raw(kb, base_id) == set()
    assert sorted(p.name for p in library.rglob("*") if p.is_file()) == before


class _Gate:
    """Holds the first extraction of `name` until released, to change the original while
    Trove reads it."""

    def __init__(self, kb: KnowledgeService, name: str) -> None:
        self.reached = threading.Event()
        self.release = threading.Event()
        extraction = kb.parts.extraction
        original = extraction.run

        def run(fn, *args, **kwargs):  # type: ignore[no-untyped-def]
            first = not self.reached.is_set()
            if first and args and isinstance(args[0], str) and args[0].endswith(name):
                self.reached.set()
                assert self.release.wait(30)
            return original(fn, *args, **kwargs)

        extraction.run = run  # type: ignore[method-assign]


def _link_while(kb: KnowledgeService, library: Path, name: str, change) -> str:  # type: ignore[no-untyped-def]
    """Link the library, and change `name`'s original while it is being read."""
    gate = _Gate(kb, name)
    base = kb.create_base("library", embedding_model="fake:bow")
    kb.add_linked_folders(base.id, [library])
    worker = threading.Thread(target=kb.run_pending_jobs, args=(base.id,))
    worker.start()
    assert gate.reached.wait(30)
    change()
    gate.release.set()
    worker.join(60)
    assert not worker.is_alive()
    kb.request_sync(base.id)
    kb.run_pending_jobs(base.id)
    return base.id


def test_an_original_edited_while_indexed_ends_up_indexed_as_edited(
    kb: KnowledgeService, library: Path
) -> None:
    path = library / "papers" / "okapi.pdf"

    def edit() -> None:
        make_pdf(
            path, ["The okapi is also called the forest giraffe, though it looks like a zebra."]
        )
        later = path.stat().st_mtime_ns + 2_000_000_000
        os.utime(path, ns=(later, later))

    base_id = _link_while(kb, library, "okapi.pdf", edit)
    files = _files(kb, base_id)
    assert files["okapi.pdf"].status is ItemStatus.COMPLETED
    assert _found(kb, base_id, "giraffe") == {"okapi.pdf"}
    assert _found(kb, base_id, "ituri") == set()
    assert not any(n.endswith(".pdf") for n in _raw(kb, base_id))


def test_an_original_deleted_while_indexed_leaves_nothing_behind(
    kb: KnowledgeService, library: Path
) -> None:
    path = library / "memo.docx"
    base_id = _link_while(kb, library, "memo.docx", path.unlink)
    files = _files(kb, base_id)
    assert "memo.docx" not in files  # the sync removed the item whose original is gone
    assert {i.status for i in files.values()} == {ItemStatus.COMPLETED}
    assert not any("memo" in n for n in _raw(kb, base_id)), _raw(kb, base_id)
    assert _found(kb, base_id, "quokka") == set()
    assert _found(kb, base_id, "okapi") == {"okapi.pdf"}
    assert kb.doctor(base_id).report.problems == []


def test_restore_rebuilds_from_the_originals_and_names_the_gone_ones(
    kb: KnowledgeService, library: Path
) -> None:
    base_id = _link(kb, library)
    kb.unlink_folder(base_id, next(i.id for i in kb.list_items(base_id) if i.parent_id is None))
    gone = library / "papers" / "okapi.pdf"
    gone.unlink()
    report = kb.restore_base(base_id, "fake:bow")
    kb.run_pending_jobs(base_id)
    assert report.missing_sources == [str(gone)]
    assert report.restored == 2
    files = _files(kb, base_id)
    okapi = files["okapi.pdf"]
    assert okapi.status is ItemStatus.FAILED
    assert okapi.error_code == ErrorCode.SOURCE_MISSING
    assert str(gone) in (okapi.error_message or "") and "in place" in (okapi.error_message or "")
    assert files["memo.docx"].status is ItemStatus.COMPLETED
    assert _found(kb, base_id, "quokka") == {"memo.docx"}


def test_export_carries_the_originals_only_when_asked(
    kb: KnowledgeService, library: Path, tmp_path: Path
) -> None:
    base_id = _link(kb, library)
    bare = kb.export_base(base_id, tmp_path / "bare.trovebase")
    full = kb.export_base(base_id, tmp_path / "full.trovebase", with_originals=True)
    # The PDF and the DOCX; the Markdown file's text is its material, in both.
    assert full.files == bare.files + 2
    assert full.originals_gone == []
    binaries = {
        p.name: p.stat().st_size for p in library.rglob("*") if p.suffix in (".pdf", ".docx")
    }
    with zipfile.ZipFile(tmp_path / "full.trovebase") as zf:
        carried = {
            Path(i.filename).name: i.file_size
            for i in zf.infolist()
            if i.filename.endswith((".pdf", ".docx"))
        }
    assert carried == binaries

    # Without originals: searchable elsewhere, and a reindex says why it cannot read them.
    imported = kb.import_base(tmp_path / "bare.trovebase", name="bare").base
    kb.run_pending_jobs(imported.id)
    assert _found(kb, imported.id, "okapi") == {"okapi.pdf"}
    assert all(in_place(i) for i in _files(kb, imported.id).values())

    # With originals: the importing base keeps them as copies and rebuilds from them.
    copied = kb.import_base(tmp_path / "full.trovebase", name="full").base
    kb.run_pending_jobs(copied.id)
    stored = _raw(kb, copied.id)
    assert any(n.endswith(".pdf") for n in stored) and any(n.endswith(".docx") for n in stored)
    assert not any(in_place(i) for i in _files(kb, copied.id).values())
    kb.restore_base(copied.id, "fake:bow")
    kb.run_pending_jobs(copied.id)
    assert {i.status for i in _files(kb, copied.id).values()} == {ItemStatus.COMPLETED}
    assert _found(kb, copied.id, "okapi") == {"okapi.pdf"}


def test_export_with_originals_names_a_gone_one_and_follows_no_swapped_link(
    kb: KnowledgeService, library: Path, tmp_path: Path
) -> None:
    base_id = _link(kb, library, model=None)
    secret = tmp_path / "secret.txt"
    secret.write_text("the password is hunter2", "utf-8")
    (library / "memo.docx").unlink()
    notes = library / "notes.md"
    notes.unlink()
    notes.symlink_to(secret)  # swapped for a link out of the folder after it was indexed
    report = kb.export_base(base_id, tmp_path / "out.trovebase", with_originals=True)
    assert sorted(Path(s).name for s in report.originals_gone) == ["memo.docx", "notes.md"]
    with zipfile.ZipFile(tmp_path / "out.trovebase") as zf:
        for name in zf.namelist():
            assert b"hunter2" not in zf.read(name), name


def test_an_imported_in_place_document_says_its_original_was_not_carried(
    kb: KnowledgeService, library: Path, tmp_path: Path
) -> None:
    base_id = _link(kb, library, model=None)
    kb.export_base(base_id, tmp_path / "bare.trovebase", strip_sources=True)
    imported = kb.import_base(tmp_path / "bare.trovebase", name="bare").base
    okapi = _files(kb, imported.id)["okapi.pdf"]
    with pytest.raises(TroveError) as excinfo:
        kb.reindex(imported.id, [okapi.id])
    assert "with-originals" in str(excinfo.value)


def test_an_imported_document_never_reads_the_path_its_row_names(
    kb: KnowledgeService, library: Path, tmp_path: Path
) -> None:
    """Imported on the computer it came from, the original is right there: still not read
    (an archive's rows are hostile input; imported_sources.py)."""
    base_id = _link(kb, library, model=None)
    kb.export_base(base_id, tmp_path / "bare.trovebase")
    imported = kb.import_base(tmp_path / "bare.trovebase", name="bare").base
    files = _files(kb, imported.id)
    assert Path(files["okapi.pdf"].source).is_file()
    with pytest.raises(TroveError) as excinfo:
        kb.reindex(imported.id, [files["okapi.pdf"].id])
    assert "with-originals" in str(excinfo.value)
    report = kb.restore_base(imported.id, None)
    kb.run_pending_jobs(imported.id)
    assert sorted(Path(s).name for s in report.missing_sources) == ["memo.docx", "okapi.pdf"]
    assert _found(kb, imported.id, "okapi") == set()
    assert _found(kb, imported.id, "axolotl") == {"notes.md"}  # rebuilt from its text
