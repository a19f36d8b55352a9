"""Symbolic links in added and linked folders, and Trove's own data folder inside one.

A folder holding `passwd.txt -> <outside>/passwd`, `etc_link -> <outside dir>` and
`secret_link -> ../secret_dir` must not copy those targets into the base: by default such
links are not followed (counted on the folder item and in the summaries), with
`followLinks` they are. A link to a place inside the folder is left out too: its target is
indexed under its own name. Loops end. The same holds for linked folders (first link, later
syncs, the folder watch), and a file swapped for a link after the scan is not read.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.knowledge.folder_scan import scan_skipped
from app.knowledge.jobs.reader_pool import InlineExtraction
from app.knowledge.service import KnowledgeService
from app.knowledge.types import ErrorCode, Item, ItemStatus, OnConflict
from tests.conftest import write_files
from tests.fakes import FakeModels

REPO = Path(__file__).resolve().parents[2]
WAIT_S = 15.0
# broken.md leads outside too (to nothing, for now).
OUTSIDE_LINKS = [
    "broken.md",
    "chain.txt",
    "etc_link",
    "passwd.txt",
    "secret_link",
    "sub/deep_link.md",
]


@pytest.fixture
def kb(tmp_path: Path) -> Iterator[KnowledgeService]:
    service = KnowledgeService(
        tmp_path / "home", models=FakeModels(), extraction=InlineExtraction()
    )
    yield service
    service.close()


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """The reporter's folder, with stand-ins for /etc outside it."""
    write_files(tmp_path / "etc", {"passwd": "root:x:0:0:wombat:/root:/bin/bash\n"})
    write_files(tmp_path / "etc", {"hosts.txt": "127.0.0.1 platypus\n"})
    write_files(tmp_path / "secret_dir", {"keys.md": "the echidna key\n"})
    docs = write_files(
        tmp_path / "docs", {"a.md": "The aardvark.", "sub/b.md": "The badger.", "sub/c.txt": "x"}
    )
    (docs / "passwd.txt").symlink_to(tmp_path / "etc" / "passwd")  # a file outside
    (docs / "etc_link").symlink_to(tmp_path / "etc")  # a folder outside
    (docs / "secret_link").symlink_to(Path("..") / "secret_dir")  # a relative ../ link
    (docs / "chain.txt").symlink_to("passwd.txt")  # inside, to a link that leads out
    (docs / "sub" / "deep_link.md").symlink_to(Path("..") / ".." / "secret_dir" / "keys.md")
    (docs / "inside.md").symlink_to("a.md")  # inside: a.md is indexed under its own name
    (docs / "alias").symlink_to("sub")  # inside, a folder
    (docs / "loop").symlink_to(".")  # a loop
    (docs / "sub" / "up").symlink_to("..")  # another loop
    (docs / "broken.md").symlink_to(tmp_path / "nowhere.md")  # leads nowhere
    return docs


def children(kb: KnowledgeService, root: Item) -> list[Item]:
    return [i for i in kb.list_items(root.base_id) if i.parent_id == root.id]


def sources(kb: KnowledgeService, root: Item) -> set[str]:
    return {Path(i.source).relative_to(root.source).as_posix() for i in children(kb, root)}


def secrets_found(kb: KnowledgeService, base_id: str) -> int:
    return sum(len(kb.search(base_id, word).results) for word in ("wombat", "platypus", "echidna"))


def test_links_out_of_an_added_folder_are_followed_only_when_asked(
    kb: KnowledgeService, tree: Path
) -> None:
    base = kb.create_base("kb")
    (root,) = kb.add(base.id, [tree]).added
    kb.run_pending_jobs(base.id)
    assert sources(kb, root) == {"a.md", "sub/b.md", "sub/c.txt"}
    assert secrets_found(kb, base.id) == 0
    skipped = scan_skipped(kb.get_item(root.id))
    assert skipped.link_count == 6 and list(skipped.links) == OUTSIDE_LINKS
    assert kb.get_item(root.id).status is ItemStatus.COMPLETED

    followed = kb.create_base("followed")
    (root,) = kb.add(followed.id, [tree], folder_options={"followLinks": True}).added
    kb.run_pending_jobs(followed.id)
    assert {"passwd.txt", "etc_link/hosts.txt", "secret_link/keys.md"} <= sources(kb, root)
    assert kb.search(followed.id, "platypus").results
    assert kb.search(followed.id, "echidna").results
    assert scan_skipped(kb.get_item(root.id)).link_count == 0


def test_a_linked_folder_does_not_follow_links_at_link_time_or_in_later_syncs(
    kb: KnowledgeService, tree: Path, tmp_path: Path
) -> None:
    base = kb.create_base("kb")
    (root,) = kb.add_linked_folders(base.id, [tree]).added
    kb.run_pending_jobs(base.id)
    assert sources(kb, root) == {"a.md", "sub/b.md", "sub/c.txt"}
    assert scan_skipped(kb.get_item(root.id)).link_count == 6

    # Later: a new link out, and a new real file; then a sync.
    write_files(tmp_path / "elsewhere", {"diary.md": "the quokka diary"})
    (tree / "diary.md").symlink_to(tmp_path / "elsewhere" / "diary.md")
    (tree / "new.md").write_text("The narwhal.", encoding="utf-8")
    kb.request_sync(base.id, [root.id])
    kb.run_pending_jobs(base.id)
    assert sources(kb, root) == {"a.md", "new.md", "sub/b.md", "sub/c.txt"}
    assert not kb.search(base.id, "quokka").results
    skipped = scan_skipped(kb.get_item(root.id))
    assert skipped.link_count == 7 and "diary.md" in skipped.links
    assert secrets_found(kb, base.id) == 0

    # The same folder linked with followLinks follows them, in later syncs too.
    followed = kb.create_base("followed")
    options = {"followLinks": True}
    (root,) = kb.add_linked_folders(followed.id, [tree], folder_options=options).added
    kb.run_pending_jobs(followed.id)
    write_files(tmp_path / "elsewhere", {"later.md": "the numbat arrives"})
    (tree / "later.md").symlink_to(tmp_path / "elsewhere" / "later.md")
    kb.request_sync(followed.id, [root.id])
    kb.run_pending_jobs(followed.id)
    assert kb.search(followed.id, "numbat").results and kb.search(followed.id, "quokka").results
    assert kb.search(followed.id, "echidna").results


def test_a_file_swapped_for_a_link_after_it_was_indexed_is_not_read(
    kb: KnowledgeService, tree: Path, tmp_path: Path
) -> None:
    base = kb.create_base("kb")
    (root,) = kb.add_linked_folders(base.id, [tree]).added
    kb.run_pending_jobs(base.id)
    (child,) = [c for c in children(kb, root) if c.source.endswith("a.md")]
    # Someone with write access to the synced folder replaces a document by a link.
    (tree / "a.md").unlink()
    (tree / "a.md").symlink_to(tmp_path / "etc" / "passwd")
    kb.reindex(base.id, [child.id])
    kb.run_pending_jobs(base.id)
    failed = kb.get_item(child.id)
    assert failed.status is ItemStatus.FAILED and failed.error_code == ErrorCode.UNSAFE_PATH
    assert "outside the folder" in (failed.error_message or "")
    assert not kb.search(base.id, "wombat").results
    # The next sync sees a link, not a document: the item goes.
    kb.request_sync(base.id, [root.id])
    kb.run_pending_jobs(base.id)
    assert kb.find_item(child.id) is None
    assert "a.md" in scan_skipped(kb.get_item(root.id)).links


class Woken:
    def __init__(self) -> None:
        self.event = threading.Event()

    def __call__(self, base_id: str) -> None:
        self.event.set()

    def wait(self) -> bool:
        got = self.event.wait(WAIT_S)
        self.event.clear()
        return got


def test_the_folder_watch_syncs_a_new_link_and_follows_it_only_with_the_option(
    kb: KnowledgeService, tmp_path: Path
) -> None:
    plain = write_files(tmp_path / "plain", {"a.md": "The aardvark."})
    following = write_files(tmp_path / "following", {"b.md": "The bison."})
    write_files(tmp_path / "elsewhere", {"diary.md": "the quokka diary"})
    base = kb.create_base("plain")
    other = kb.create_base("following")
    (root,) = kb.add_linked_folders(base.id, [plain]).added
    (root2,) = kb.add_linked_folders(
        other.id, [following], folder_options={"followLinks": True}
    ).added
    kb.run_pending_jobs()
    woken = Woken()
    kb.start_watching(woken)
    assert woken.wait()  # the syncs every linked folder gets at start
    kb.run_pending_jobs()
    for folder in (plain, following):
        (folder / "diary.md").symlink_to(tmp_path / "elsewhere" / "diary.md")
    deadline = time.monotonic() + WAIT_S
    while "diary.md" not in scan_skipped(kb.get_item(root.id)).links or not (
        kb.search(other.id, "quokka").results
    ):
        assert time.monotonic() < deadline, "the watch never synced the new links"
        woken.wait()
        kb.run_pending_jobs()
    assert not kb.search(base.id, "quokka").results
    assert "diary.md" not in scan_skipped(kb.get_item(root2.id)).links


def test_the_folder_watch_watches_inside_a_followed_link_only(
    kb: KnowledgeService, tmp_path: Path
) -> None:
    outside = write_files(tmp_path / "elsewhere", {"old.md": "an old note"})
    bases, roots = {}, {}
    for name, options in (("plain", None), ("following", {"followLinks": True})):
        folder = write_files(tmp_path / name, {"a.md": "The aardvark."})
        (folder / "linked_dir").symlink_to(outside)
        bases[name] = kb.create_base(name).id
        (root,) = kb.add_linked_folders(bases[name], [folder], folder_options=options).added
        roots[name] = root.id
    kb.run_pending_jobs()
    woken = Woken()
    watch = kb.start_watching(woken)
    watch.debounce_s = 0.1
    assert woken.wait()
    kb.run_pending_jobs()
    requested: list[str] = []
    ask = watch._request

    def recording(base_id: str, root_id: str) -> None:
        requested.append(root_id)
        ask(base_id, root_id)

    watch._request = recording  # type: ignore[method-assign]
    (outside / "new.md").write_text("the wallaby arrives", encoding="utf-8")
    deadline = time.monotonic() + WAIT_S
    while not kb.search(bases["following"], "wallaby").results:
        assert time.monotonic() < deadline, "a change under the followed link was never synced"
        woken.wait()
        kb.run_pending_jobs()
    assert roots["following"] in requested
    assert roots["plain"] not in requested  # its watch saw nothing under the link
    assert not kb.search(bases["plain"], "wallaby").results


# -- Trove's own data folder ------------------------------------------------------------------


def test_adding_the_parent_of_the_data_folder_skips_the_data_folder(tmp_path: Path) -> None:
    parent = write_files(tmp_path / "everything", {"notes/a.md": "The aardvark."})
    home = parent / "trove-home"
    kb = KnowledgeService(home, models=FakeModels(), extraction=InlineExtraction())
    try:
        base = kb.create_base("kb")
        kb.add_note(base.id, "Llamas", "The llama note, kept in raw/.")
        kb.run_pending_jobs(base.id)
        # A second Trove's data folder (another profile, a backup) is skipped too.
        other = KnowledgeService(parent / "backup" / "old-home", extraction=InlineExtraction())
        try:
            other.add_note(other.create_base("old").id, "Emus", "The emu note.")
            other.run_pending_jobs()
        finally:
            other.close()
        for _ in range(2):  # adding again must not copy raw/ into raw/ either
            (root,) = kb.add(base.id, [parent], on_conflict=OnConflict.REPLACE).added
            kb.run_pending_jobs(base.id)
        got = sources(kb, root)
        assert got == {"notes/a.md"}
        assert not any("bases/" in s for s in got)
        assert len(kb.search(base.id, "llama").results) == 1  # the note, not its copy
        assert not kb.search(base.id, "emu").results
        skipped = scan_skipped(kb.get_item(root.id))
        assert set(skipped.data_folders) == {"trove-home", "backup/old-home"}
        raw_files = [p for p in (home / "bases").rglob("*") if p.is_file() and "raw" in p.parts]
        assert not any("trove-home" in p.relative_to(home).as_posix() for p in raw_files)
    finally:
        kb.close()


def test_a_path_inside_the_data_folder_or_an_empty_path_is_refused(kb: KnowledgeService) -> None:
    base = kb.create_base("kb")
    kb.add_note(base.id, "n", "text")
    kb.run_pending_jobs(base.id)
    home = kb.layout.home
    report = kb.add(base.id, [home, home / "bases", "", "   "])
    assert report.added == []
    messages = [m for _, m in report.errors]
    assert len(messages) == 4
    assert all(m.startswith(f"{ErrorCode.INVALID_ARGUMENT}: ") for m in messages)
    assert "inside Trove's data folder" in messages[0]
    assert "empty path" in messages[2] and "empty path" in messages[3]


# -- the command line --------------------------------------------------------------------------


def trove(home: Path, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "TROVE_HOME"}
    return subprocess.run(
        [sys.executable, "-m", "app", "--home", str(home), *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd or REPO,
        timeout=120,
        check=False,
    )


def test_cli_add_refuses_an_empty_path_with_exit_2(tmp_path: Path) -> None:
    home = tmp_path / "home"
    cwd = write_files(tmp_path / "cwd", {"private.md": "what an unset $DIR would add"})
    assert trove(home, "base", "create", "kb").returncode == 0
    for empty in ("", "   "):
        for extra in ((), ("--link",)):
            done = trove(home, "add", "kb", empty, *extra, cwd=cwd)
            assert done.returncode == 2, done.stderr
            assert "empty path" in done.stderr and "nothing was added" in done.stderr
    listed = trove(home, "item", "list", "kb")
    assert listed.stdout.strip() == "no items"


def test_cli_add_and_sync_summaries_count_and_list_links_not_followed(
    tmp_path: Path, tree: Path
) -> None:
    home = tmp_path / "home"
    assert trove(home, "base", "create", "kb").returncode == 0
    added = trove(home, "add", "kb", str(tree), "--link", "--wait")
    assert added.returncode == 0, added.stderr
    assert "indexed 3 document(s), 0 failed" in added.stderr
    assert "6 symbolic link(s) lead outside the folder and were not followed" in added.stderr
    assert "-v lists them" in added.stderr and "not followed: passwd.txt" not in added.stderr

    synced = trove(home, "-v", "sync", "kb")
    assert synced.returncode == 0, synced.stderr
    assert "6 symbolic link(s) lead outside the folder" in synced.stdout
    assert f"not followed: passwd.txt -> {tmp_path / 'etc' / 'passwd'}" in synced.stdout
    assert "not followed: secret_link -> ../secret_dir" in synced.stdout

    followed = trove(home, "add", "kb", str(tree), "--follow-links", "--on-conflict", "replace")
    assert followed.returncode == 0, followed.stderr
    assert "lead outside the folder" not in followed.stderr
    listed = trove(home, "item", "list", "kb")
    assert "etc_link/hosts.txt" in listed.stdout


def test_cli_add_notes_the_skipped_data_folder(tmp_path: Path) -> None:
    parent = write_files(tmp_path / "all", {"a.md": "The aardvark."})
    home = parent / "home"
    assert trove(home, "base", "create", "kb").returncode == 0
    added = trove(home, "add", "kb", str(parent), "--wait")
    assert added.returncode == 0, added.stderr
    assert "indexed 1 document(s)" in added.stderr
    assert f"skipped {home}: it is a Trove data folder" in added.stderr
