"""Watching linked folders (folder_watch.py): a file created in a watched folder becomes
searchable with no manual sync; a burst of saves is one sync; temp files wake nothing."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.knowledge.folder_watch import FolderWatch
from app.knowledge.jobs.kinds import JobKind
from app.knowledge.jobs.reader_pool import InlineExtraction
from app.knowledge.service import KnowledgeService
from tests.conftest import write_files
from tests.fakes import FakeModels

WAIT_S = 15.0


@pytest.fixture
def kb(tmp_path: Path) -> Iterator[KnowledgeService]:
    service = KnowledgeService(
        tmp_path / "home", models=FakeModels(), extraction=InlineExtraction()
    )
    yield service
    service.close()


class Woken:
    """Counts the watch's requests; waiting on it is waiting for the next one."""

    def __init__(self) -> None:
        self.event = threading.Event()
        self.count = 0

    def __call__(self, base_id: str) -> None:
        self.count += 1
        self.event.set()

    def wait(self) -> bool:
        got = self.event.wait(WAIT_S)
        self.event.clear()
        return got


def _start(kb: KnowledgeService, folder: Path) -> tuple[str, str, FolderWatch, Woken]:
    base = kb.create_base("kb")
    (root,) = kb.add_linked_folders(base.id, [folder]).added
    kb.run_pending_jobs(base.id)
    woken = Woken()
    watch = kb.start_watching(woken)
    assert woken.wait()  # the sync every linked folder gets at start
    kb.run_pending_jobs(base.id)
    assert kb.watching() == {root.id}
    return base.id, root.id, watch, woken


def test_a_new_file_becomes_searchable_without_a_manual_sync(
    kb: KnowledgeService, tmp_path: Path
) -> None:
    folder = write_files(tmp_path / "notes", {"a.md": "The aardvark."})
    base_id, _root_id, _watch, woken = _start(kb, folder)
    (folder / "sub").mkdir()
    (folder / "sub" / "new.md").write_text("The narwhal arrives.", encoding="utf-8")
    deadline = time.monotonic() + WAIT_S
    while not kb.search(base_id, "narwhal").results:
        assert time.monotonic() < deadline, "the new file was never indexed"
        woken.wait()
        kb.run_pending_jobs(base_id)
    assert kb.search(base_id, "narwhal").results[0].source == str(folder / "sub" / "new.md")


def test_a_burst_of_saves_is_one_sync_and_one_reindex(kb: KnowledgeService, tmp_path: Path) -> None:
    folder = write_files(tmp_path / "notes", {"a.md": "The aardvark.", "b.md": "The bison."})
    base_id, _root_id, watch, woken = _start(kb, folder)
    watch.debounce_s = 1.0
    before = woken.count
    target = folder / "a.md"
    for n in range(10):  # an editor saving ten times, faster than the debounce
        target.write_text(f"The aardvark, save {n}.", encoding="utf-8")
        time.sleep(0.02)
    assert woken.wait()
    assert woken.count == before + 1
    index_jobs = []
    original = kb.catalog.enqueue_job

    def counting(kind: str, base: str, **kw: object) -> object:
        if kind == JobKind.INDEX_DOCUMENTS:
            index_jobs.append(kw.get("item_id"))
        return original(kind, base, **kw)  # type: ignore[arg-type]

    kb.catalog.enqueue_job = counting  # type: ignore[method-assign,assignment]
    kb.run_pending_jobs(base_id)
    assert len(index_jobs) == 1
    assert "save 9" in kb.search(base_id, "aardvark").results[0].text


def test_temporary_and_ignored_files_wake_nothing(kb: KnowledgeService, tmp_path: Path) -> None:
    folder = write_files(tmp_path / "notes", {"a.md": "The aardvark."})
    _base_id, _root_id, watch, woken = _start(kb, folder)
    watch.debounce_s = 0.1
    for name in ("~$a.docx", "a.md.swp", "download.part", ".hidden.md", "#a.md#", "song.mp3"):
        (folder / name).write_text("scratch", encoding="utf-8")
    # Ten debounce periods of quiet: had these woken the watch, it would have asked by now.
    assert not woken.event.wait(1.0)
    (folder / "real.md").write_text("The real thing.", encoding="utf-8")
    assert woken.wait()
    assert woken.count == 2  # the start's sync, then real.md's


def test_stopping_the_watch_stops_requests(kb: KnowledgeService, tmp_path: Path) -> None:
    folder = write_files(tmp_path / "notes", {"a.md": "The aardvark."})
    _base_id, _root_id, _watch, woken = _start(kb, folder)
    kb.stop_watching()
    assert kb.watching() == frozenset()
    (folder / "late.md").write_text("Too late.", encoding="utf-8")
    assert not woken.event.wait(1.5)
