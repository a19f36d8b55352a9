"""Bad input fails its own item with a clear code and message; nothing else stops
(DESIGN.md section 8): corrupt, encrypted, empty, binary and huge files, awkward names,
symlink loops, unsupported types, and bad URLs.
"""

from __future__ import annotations

import os
import random
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.knowledge import path_safety
from app.knowledge.pipeline.sources.web import FetchLimits
from app.knowledge.service import KnowledgeService
from app.knowledge.types import (
    AmbiguousBaseError,
    ErrorCode,
    Item,
    ItemStatus,
    ItemType,
    SearchMode,
)
from tests.conftest import write_files
from tests.httpserver import LoopbackServer, Response

TWO_GB = 2 * 1024**3


def found(service: KnowledgeService, base_id: str, word: str) -> set[str]:
    return {r.item_id for r in service.search(base_id, word, mode=SearchMode.BM25).results}


def encrypted_pdf(path: Path, password: str) -> Path:
    from pypdf import PdfWriter

    writer = PdfWriter()
    writer.add_blank_page(width=612, height=792)
    writer.encrypt(user_password=password, owner_password="owner-" + password)
    with path.open("wb") as fh:
        writer.write(fh)
    return path


def sparse(path: Path, size: int) -> Path:
    with path.open("wb") as fh:
        fh.truncate(size)
    return path


def never_accessed(path: Path) -> None:
    """Set the access time to the epoch, so any later read moves it (relatime or strict)."""
    st = path.stat()
    os.utime(path, ns=(0, st.st_mtime_ns))


def reads_update_atime(folder: Path) -> bool:
    """Whether this filesystem records reads in atime (not mounted noatime)."""
    probe = folder / "atime-probe.bin"
    probe.write_bytes(b"probe")
    never_accessed(probe)
    with probe.open("rb") as fh:
        fh.read()
    tracked = probe.stat().st_atime_ns != 0
    probe.unlink()
    return tracked


def was_read(path: Path) -> bool:
    return path.stat().st_atime_ns != 0


def assert_safe_material(service: KnowledgeService, item: Item) -> Path:
    """The item's material name passes the path guard and its file lies below raw/."""
    rel = item.relative_path
    assert rel is not None
    assert path_safety.check_relative_path(rel) == rel
    segments = rel.split("/")
    assert not any(s in ("", ".", "..") or s.startswith(".") for s in segments), rel
    raw = service.layout.raw_dir(item.base_id)
    target = path_safety.resolve_below(raw, rel)
    assert target.is_file() and target.resolve().is_relative_to(raw.resolve())
    return target


# -- files -------------------------------------------------------------------------------------

WEIRD = "weird..名前 🙂..md"
HIDDEN = "..hidden 名前 🙂..md"

# name -> (code, words the message must contain)
BAD_FILES: dict[str, tuple[ErrorCode, tuple[str, ...]]] = {
    "corrupt.pdf": (ErrorCode.READ_FAILED, ("PDF", "damaged")),
    "locked.pdf": (ErrorCode.READ_FAILED, ("password",)),
    "empty.txt": (ErrorCode.EMPTY_INDEXABLE_TEXT, ("no text",)),
    "binary.txt": (ErrorCode.READ_FAILED, ("binary",)),
    "big.txt": (ErrorCode.FILE_TOO_LARGE, ("GB", "limit")),
}
GOOD_FILES = {
    "good.md": ("# Good notes\n\nThe goodalpha word lives here.\n", "goodalpha"),
    "plain.txt": ("Plain text with the goodbravo word.\n", "goodbravo"),
    WEIRD: ("# Weird\n\nweirdcharlie in a strangely named file\n", "weirdcharlie"),
    "a..b.md": ("# Dots\n\ndotsdelta between the dots\n", "dotsdelta"),
}


@pytest.fixture
def inbox(tmp_path: Path) -> Iterator[Path]:
    folder = tmp_path / "inbox"
    write_files(folder, {name: text for name, (text, _) in GOOD_FILES.items()})
    (folder / "corrupt.pdf").write_bytes(random.Random(7).randbytes(8192))
    encrypted_pdf(folder / "locked.pdf", "secret")
    (folder / "empty.txt").write_bytes(b"")
    (folder / "binary.txt").write_bytes(bytes(range(256)) * 64)
    sparse(folder / "big.txt", TWO_GB)
    never_accessed(folder / "big.txt")
    (folder / "program.exe").write_bytes(b"MZ\x90\x00" + bytes(512))
    (folder / HIDDEN).write_text("# Hidden\n\nhiddenecho word\n", encoding="utf-8")
    os.symlink(folder, folder / "loop")  # a symlink loop inside the folder
    (folder / "sub").mkdir()
    (folder / "sub" / "nested.md").write_text("# Nested\n\nnestedfoxtrot\n", encoding="utf-8")
    os.symlink(folder, folder / "sub" / "back-to-top")
    yield folder


def test_bad_files_fail_their_own_items_in_one_batch(
    service: KnowledgeService, inbox: Path
) -> None:
    base = service.create_base("kb")
    atime_works = reads_update_atime(inbox.parent)
    # One batch: the folder, plus two files the folder scan leaves out (hidden, unsupported).
    report = service.add(base.id, [inbox, inbox / HIDDEN, inbox / "program.exe"])
    assert report.errors == [] and report.skipped == []
    assert len(report.added) == 3
    service.run_pending_jobs(base.id)  # nothing raises

    root = next(i for i in report.added if i.type is ItemType.DIRECTORY)
    children = service.catalog.list_items(base.id, parent_id=root.id)
    names = Counter(Path(c.source).name for c in children)
    # The symlink loops end the scan: every file exactly once, none reached through a link;
    # the .exe is skipped silently and the hidden file is not scanned.
    assert names == Counter([*BAD_FILES, *GOOD_FILES, "nested.md"])
    assert not [c.source for c in children if "loop" in c.source or "back-to-top" in c.source]
    everything = service.list_items(base.id)
    assert len({i.source for i in everything}) == len(everything) == len(children) + 3
    by_name = {Path(c.source).name: c for c in children}

    for name, (code, words) in BAD_FILES.items():
        item = by_name[name]
        assert item.status is ItemStatus.FAILED, (name, item.error_code, item.error_message)
        assert item.error_code == code, (name, item.error_code, item.error_message)
        message = item.error_message or ""
        for word in words:
            assert word.lower() in message.lower(), (name, message)
        assert service.parts.stores.get(base.id).material(item.id) is None

    for name, (_, word) in GOOD_FILES.items():
        item = by_name[name]
        assert item.status is ItemStatus.COMPLETED, (name, item.error_message)
        assert found(service, base.id, word) == {item.id}
        assert_safe_material(service, item)
    assert by_name["nested.md"].status is ItemStatus.COMPLETED
    weird_rel = by_name[WEIRD].relative_path or ""
    assert "名前" in weird_rel and "🙂" in weird_rel

    # Added explicitly, the hidden file is indexed under a name that is not hidden.
    hidden = next(i for i in report.added if i.source.endswith(HIDDEN))
    hidden = service.get_item(hidden.id)
    assert hidden.status is ItemStatus.COMPLETED
    assert found(service, base.id, "hiddenecho") == {hidden.id}
    assert_safe_material(service, hidden)

    # Added explicitly, the .exe fails with a clear code instead of being skipped.
    exe = service.get_item(next(i.id for i in report.added if i.source.endswith(".exe")))
    assert exe.status is ItemStatus.FAILED
    assert exe.error_code == ErrorCode.UNSUPPORTED_FILE_TYPE
    assert exe.error_message and ".exe" in exe.error_message

    # The folder shows its children's aggregate; nothing is left running or queued.
    assert service.get_item(root.id).status is ItemStatus.COMPLETED
    assert not service.catalog.list_jobs(base.id, ("queued", "running"))
    # The 2 GB file was refused from its size alone, never read.
    if atime_works:
        assert not was_read(inbox / "big.txt")


def test_huge_file_fails_without_being_read(service: KnowledgeService, tmp_path: Path) -> None:
    """The same refusal for a file on its own, with the size limit lowered."""
    base = service.create_base("kb")
    folder = tmp_path / "drop"
    folder.mkdir()
    big = sparse(folder / "big.md", 4096)
    service.parts.max_file_bytes = 1024
    never_accessed(big)
    atime_works = reads_update_atime(tmp_path)
    service.add(base.id, [folder])
    service.run_pending_jobs(base.id)
    (item,) = [i for i in service.list_items(base.id) if i.type is ItemType.FILE]
    assert item.status is ItemStatus.FAILED
    assert item.error_code == ErrorCode.FILE_TOO_LARGE
    assert item.error_message and "limit" in item.error_message
    if atime_works:
        assert not was_read(big)


def test_explicitly_added_huge_file_is_not_read_at_add_time(
    service: KnowledgeService, tmp_path: Path
) -> None:
    base = service.create_base("kb")
    if not reads_update_atime(tmp_path):
        pytest.fail("this filesystem does not record reads; the check cannot run")
    big = sparse(tmp_path / "big.txt", 64 * 1024)
    service.parts.max_file_bytes = 1024
    never_accessed(big)
    report = service.add(base.id, [big])
    assert len(report.added) == 1
    assert not was_read(big)


# -- URLs --------------------------------------------------------------------------------------


def test_bad_urls_fail_their_own_items(service: KnowledgeService) -> None:
    def fifty_megabytes() -> Iterator[bytes]:
        yield b"<!doctype html><html><head><title>Huge</title></head><body>"
        block = b"<p>" + b"hugeword " * 7000 + b"</p>\n"
        for _ in range((50 * 1024 * 1024) // len(block) + 1):
            yield block

    with LoopbackServer() as server:
        server.route(
            "/good",
            Response.text(
                "<html><head><title>Good Page</title></head><body><p>urlgolf is here</p>"
                "</body></html>",
                content_type="text/html",
            ),
        )
        server.redirect("/loop-a", "/loop-b")
        server.redirect("/loop-b", "/loop-a")
        server.route(
            "/huge",
            Response(body=fifty_megabytes, content_type="text/html; charset=utf-8"),
        )
        service.parts.fetch_limits = FetchLimits(max_bytes=1_000_000)
        base = service.create_base("kb")
        urls = {
            "good": server.url("/good"),
            "missing": server.url("/missing"),
            "loop": server.url("/loop-a"),
            "huge": server.url("/huge"),
        }
        report = service.add_urls(base.id, [*urls.values(), "file:///etc/passwd"])
        ((refused, why),) = report.errors
        assert refused == "file:///etc/passwd"
        assert "file" in why and "http" in why
        assert len(report.added) == 4
        service.run_pending_jobs(base.id)

        items = {i.source: i for i in service.list_items(base.id)}
        assert set(items) == set(urls.values())  # no item for the refused URL

        good = items[urls["good"]]
        assert good.status is ItemStatus.COMPLETED, good.error_message
        assert good.title == "Good Page"
        assert found(service, base.id, "urlgolf") == {good.id}

        missing = items[urls["missing"]]
        assert missing.status is ItemStatus.FAILED
        assert missing.error_code == ErrorCode.FETCH_FAILED
        assert missing.error_message and "404" in missing.error_message
        assert server.hits("/missing") == 1  # a 404 is not retried

        loop = items[urls["loop"]]
        assert loop.status is ItemStatus.FAILED
        assert loop.error_code == ErrorCode.FETCH_FAILED
        assert loop.error_message and "redirects" in loop.error_message
        limit = service.parts.fetch_limits.max_redirects
        assert server.hits("/loop-a") + server.hits("/loop-b") == limit + 1  # one try only

        huge = items[urls["huge"]]
        assert huge.status is ItemStatus.FAILED
        assert huge.error_code == ErrorCode.FILE_TOO_LARGE
        assert huge.error_message and "limit" in huge.error_message
        (exchange,) = server.wait_for("/huge")
        assert exchange.bytes_sent < 50 * 1024 * 1024  # the client stopped reading early
        assert found(service, base.id, "hugeword") == set()
        assert not service.catalog.list_jobs(base.id, ("queued", "running"))


def test_a_name_two_bases_share_lists_both_as_choices(service: KnowledgeService) -> None:
    # Names may hold commas and brackets: the choices are data, not text to parse.
    twins = [service.create_base("Notes, 2026 (draft)") for _ in range(2)]
    with pytest.raises(AmbiguousBaseError) as raised:
        service.resolve_base("Notes, 2026 (draft)")
    assert raised.value.code == ErrorCode.BASE_AMBIGUOUS
    assert sorted(raised.value.choices) == sorted((b.id, b.name) for b in twins)
    assert service.resolve_base(twins[1].id) == twins[1]
