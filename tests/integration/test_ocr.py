"""Text recognition (OCR) end to end: pictures and scanned PDFs the tests draw become searchable,
out of process; cancel, delete and SIGKILL mid-recognition; image bombs and damaged pictures.

Every test here that recognises text skips when the `ocr` extra is not installed; the
Chinese ones also skip without a CJK font. Pages are small so the file stays well under a
minute of recognition in all.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import zlib
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from app.knowledge.catalog import Job
from app.knowledge.jobs import index_documents, runner
from app.knowledge.jobs.kinds import JobKind
from app.knowledge.jobs.owner import current_owner
from app.knowledge.jobs.reader_pool import InlineExtraction
from app.knowledge.ocr import tasks as ocr_tasks
from app.knowledge.ocr import worker as ocr_worker
from app.knowledge.service import KnowledgeService
from app.knowledge.types import ErrorCode, Item, ItemStatus
from tests.fakes import FakeModels
from tests.ocr_samples import (
    Line,
    mixed_pdf,
    page_image,
    require_cjk_font,
    require_ocr,
    save_image,
    scanned_pdf_bytes,
)

SMALL = (900, 260)  # a strip of a page: two or three lines, recognised in about a second


@pytest.fixture
def svc(tmp_path: Path) -> Iterator[KnowledgeService]:
    service = KnowledgeService(
        tmp_path / "home", models=FakeModels(), extraction=InlineExtraction()
    )
    yield service
    service.close()


def _item(svc: KnowledgeService, base_id: str, name: str) -> Item:
    return next(i for i in svc.list_items(base_id) if Path(i.source).name == name)


def _material(svc: KnowledgeService, base_id: str, concept_id: str) -> str:
    return (svc.layout.raw_dir(base_id) / concept_id).read_text(encoding="utf-8")


def _strip(words: str, *, cjk: bool = False, size: tuple[int, int] = SMALL) -> object:
    return page_image([Line(words, cjk=cjk)], size=size)


def test_pictures_scans_and_mixed_pdfs_are_found_by_their_words(
    svc: KnowledgeService, tmp_path: Path
) -> None:
    require_ocr()
    require_cjk_font()
    files = tmp_path / "in"
    png = save_image(
        page_image([Line("Marmalade recipe from Seville"), Line("光学字符识别的测试", cjk=True)]),
        files / "note.png",
    )
    # Page 1 was scanned sideways and turned upright by its /Rotate; page 2 is upside down.
    sideways = _strip("Lighthouse keeper logbook").rotate(90, expand=True)  # type: ignore[attr-defined]
    upside_down = _strip("Tangerine harvest tally").rotate(180)  # type: ignore[attr-defined]
    scanned = files / "scan.pdf"
    scanned.write_bytes(scanned_pdf_bytes([sideways, upside_down], rotate=[90, 0]))
    # Each page about one chunk long, so no chunk is mostly another page's.
    born = "Kumquat orchards line the southern terraces of the valley every spring. " * 2
    scan_lines = [
        "Pelican colony census taken at dawn",
        "by two wardens in a small boat",
        "on the northern lake",
    ]
    scan_page = page_image([Line(t) for t in scan_lines], size=(1000, 380))
    walrus = "Walrus sightings were logged along the rocky shore in late summer twice. " * 2
    mixed = mixed_pdf(files / "mixed.pdf", [born, scan_page, walrus])
    base = svc.create_base("scans", chunk_size=24, chunk_overlap=0)
    svc.add(base.id, [png, scanned, mixed])
    svc.run_pending_jobs(base.id)

    for name in ("note.png", "scan.pdf", "mixed.pdf"):
        item = _item(svc, base.id, name)
        assert item.status is ItemStatus.COMPLETED, (name, item.error_code, item.error_message)
    expected = {
        # word: (file, page, recognised)
        "marmalade": ("note.png", None, True),
        "识别": ("note.png", None, True),
        "lighthouse": ("scan.pdf", 1, True),
        "tangerine": ("scan.pdf", 2, True),
        "kumquat": ("mixed.pdf", 1, False),
        "pelican": ("mixed.pdf", 2, True),
        "walrus": ("mixed.pdf", 3, False),
    }
    for word, (name, page, recognised) in expected.items():
        results = svc.search(base.id, word).results
        assert results, f"nothing found for {word!r}"
        top = results[0]
        assert top.item_id == _item(svc, base.id, name).id, word
        assert word in top.text.lower(), (word, top.text)
        assert (top.page, top.ocr) == (page, recognised), word
        # Offsets stay exact: the hit is where it says in the material, page by page.
        assert _material(svc, base.id, top.concept_id)[top.char_start : top.char_end] == top.text
        assert top.to_json()["ocr"] is recognised
    assert svc.doctor(base.id).clean  # the index agrees with the catalog
    # The work folders are gone once the documents are indexed.
    assert not (svc.layout.base_dir(base.id) / ocr_tasks.OCR_DIR).exists() or not any(
        (svc.layout.base_dir(base.id) / ocr_tasks.OCR_DIR).iterdir()
    )


def _png_header(width: int, height: int) -> bytes:
    """A PNG that claims width x height pixels and holds almost none of them."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        crc = zlib.crc32(kind + data) & 0xFFFFFFFF
        return len(data).to_bytes(4, "big") + kind + data + crc.to_bytes(4, "big")

    ihdr = width.to_bytes(4, "big") + height.to_bytes(4, "big") + bytes([8, 0, 0, 0, 0])
    idat = zlib.compress(b"\x00" * 64)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", idat) + chunk(b"IEND", b"")


def test_an_image_bomb_is_refused_and_a_damaged_picture_fails_with_a_code(
    svc: KnowledgeService, tmp_path: Path
) -> None:
    pytest.importorskip("PIL", reason="the `ocr` extra is not installed (pip install .[ocr])")
    bomb = tmp_path / "bomb.png"
    bomb.write_bytes(_png_header(100_000, 100_000))  # 10 gigapixels in 80 bytes
    good = save_image(_strip("Intact picture"), tmp_path / "whole.jpg")
    damaged = tmp_path / "damaged.jpg"
    damaged.write_bytes(good.read_bytes()[: good.stat().st_size // 3])  # cut off mid-scan
    garbage = tmp_path / "garbage.webp"
    garbage.write_bytes(b"RIFF\x10\x00\x00\x00WEBPVP8 not really an image at all")
    base = svc.create_base("bad pictures", ocr_enabled=True)
    svc.add(base.id, [bomb, damaged, garbage])
    started = time.monotonic()
    svc.run_pending_jobs(base.id)
    assert time.monotonic() - started < 20  # nothing was decoded, nothing recognised
    codes = {Path(i.source).name: (i.status, i.error_code) for i in svc.list_items(base.id)}
    assert codes == {
        "bomb.png": (ItemStatus.FAILED, ErrorCode.IMAGE_TOO_LARGE),
        "damaged.jpg": (ItemStatus.FAILED, ErrorCode.READ_FAILED),
        "garbage.webp": (ItemStatus.FAILED, ErrorCode.READ_FAILED),
    }
    assert "100000 x 100000" in (_item(svc, base.id, "bomb.png").error_message or "")


def test_without_ocr_a_picture_says_why_it_has_no_text(
    svc: KnowledgeService, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("PIL", reason="the `ocr` extra is not installed (pip install .[ocr])")
    png = save_image(_strip("Nobody reads this"), tmp_path / "off.png")
    scan = tmp_path / "off.pdf"
    scan.write_bytes(scanned_pdf_bytes([_strip("Nor this")]))
    off = svc.create_base("ocr off", ocr_enabled=False)
    svc.add(off.id, [png, scan])
    svc.run_pending_jobs(off.id)
    for item in svc.list_items(off.id):
        assert (item.status, item.error_code) == (ItemStatus.FAILED, ErrorCode.EMPTY_INDEXABLE_TEXT)
        assert "text recognition (OCR) is off" in (item.error_message or "")
    # The extra missing: the item names what to install.
    monkeypatch.setattr(index_documents, "ocr_installed", lambda: False)
    missing = svc.create_base("no extra")
    svc.add(missing.id, [png])
    svc.run_pending_jobs(missing.id)
    (item,) = svc.list_items(missing.id)
    assert (item.status, item.error_code) == (ItemStatus.FAILED, ErrorCode.OCR_UNAVAILABLE)
    assert "trove[ocr]" in (item.error_message or "")


def _run_one(svc: KnowledgeService, kind: JobKind) -> Job:
    job = svc.catalog.claim_next_job(owner=current_owner())
    assert job is not None and job.kind == kind, job
    runner.run_job(svc.jobs.context(progress=lambda *_: None, cancelled=lambda: None), job)
    return job


def _wait_for(condition: object, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def _worker_pid(folder: Path) -> int:
    _wait_for(lambda: (folder / ocr_worker.WORKER).exists())
    owner = json.loads((folder / ocr_worker.WORKER).read_text(encoding="utf-8"))["owner"]
    return int(owner.partition(":")[0])


def _gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def test_deleting_a_document_or_its_base_mid_recognition_kills_the_worker(
    svc: KnowledgeService, tmp_path: Path
) -> None:
    require_ocr()
    scan = tmp_path / "long.pdf"
    scan.write_bytes(scanned_pdf_bytes([_strip(f"Page number {n}") for n in range(12)]))
    base = svc.create_base("delete mid-OCR")
    (item,) = svc.add(base.id, [scan]).added
    _run_one(svc, JobKind.INDEX_DOCUMENTS)  # submits the pages and queues the poll
    folder = ocr_tasks.work_dir(svc.layout, base.id, item.id)
    pid = _worker_pid(folder)
    current = svc.find_item(item.id)
    assert current is not None and current.status is ItemStatus.PROCESSING
    assert current.options == {"ocr_pages": 12}
    svc.delete_items(base.id, [item.id])
    svc.run_pending_jobs(base.id)
    _wait_for(lambda: _gone(pid), timeout=5)
    assert svc.find_item(item.id) is None
    assert not folder.exists()
    assert not svc.search(base.id, "page").results
    assert svc.doctor(base.id).clean
    # Deleting the whole base stops its recognitions too.
    (again,) = svc.add(base.id, [scan]).added
    _run_one(svc, JobKind.INDEX_DOCUMENTS)
    pid = _worker_pid(ocr_tasks.work_dir(svc.layout, base.id, again.id))
    svc.delete_base(base.id)
    _wait_for(lambda: _gone(pid), timeout=5)
    assert not svc.layout.base_dir(base.id).exists()


def test_a_worker_that_dies_is_started_again_and_resumes(
    svc: KnowledgeService, tmp_path: Path
) -> None:
    require_ocr()
    scan = tmp_path / "three.pdf"
    scan.write_bytes(
        scanned_pdf_bytes([_strip(w) for w in ("Albatross", "Barracuda", "Cormorant")])
    )
    base = svc.create_base("resume")
    (item,) = svc.add(base.id, [scan]).added
    _run_one(svc, JobKind.INDEX_DOCUMENTS)
    folder = ocr_tasks.work_dir(svc.layout, base.id, item.id)
    pid = _worker_pid(folder)
    pages = folder / ocr_worker.PAGES
    _wait_for(lambda: pages.exists() and pages.read_text(encoding="utf-8").count("\n") >= 1)
    os.kill(pid, signal.SIGKILL)  # as the kernel's OOM killer would
    _wait_for(lambda: _gone(pid), timeout=5)
    read_before = pages.read_text(encoding="utf-8").count("\n")
    svc.run_pending_jobs(base.id)
    done = svc.find_item(item.id)
    assert done is not None and done.status is ItemStatus.COMPLETED, done
    for word in ("albatross", "barracuda", "cormorant"):
        assert svc.search(base.id, word).results, word
    assert read_before >= 1  # the second worker did not read those pages again


def _trove(home: Path, *args: str) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if k != "TROVE_HOME"}
    return subprocess.Popen(
        [sys.executable, "-m", "app", "--home", str(home), *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def test_sigkill_of_trove_during_recognition_ends_the_worker_and_the_next_run_resumes(
    tmp_path: Path,
) -> None:
    require_ocr()
    home = tmp_path / "home"
    scan = tmp_path / "killed.pdf"
    scan.write_bytes(scanned_pdf_bytes([_strip(w) for w in ("Flamingo", "Gannet", "Heron")]))
    service = KnowledgeService(home, models=FakeModels(), extraction=InlineExtraction())
    base = service.create_base("killed")
    service.close()
    cli = _trove(home, "add", "killed", str(scan), "--wait")
    try:
        ocr_root = home / "bases" / base.id / ocr_tasks.OCR_DIR
        _wait_for(lambda: ocr_root.is_dir() and any(ocr_root.iterdir()))
        folder = next(ocr_root.iterdir())
        pid = _worker_pid(folder)
        cli.send_signal(signal.SIGKILL)
        cli.wait(10)
    finally:
        if cli.poll() is None:
            cli.kill()
            cli.wait()
    # The worker leaves with its Trove (it would hold ~0.6 GB for nothing).
    _wait_for(lambda: _gone(pid), timeout=5)
    service = KnowledgeService(home, models=FakeModels(), extraction=InlineExtraction())
    try:
        service.recover()
        service.run_pending_jobs(base.id)
        (item,) = service.list_items(base.id)
        # Never left spinning: resumed to the end, or failed by the policy of the job that
        # was running at the kill (abandon).
        assert item.status in (ItemStatus.COMPLETED, ItemStatus.FAILED), item
        if item.status is ItemStatus.FAILED:
            assert item.error_code == ErrorCode.INDEXING_INTERRUPTED
        else:
            for word in ("flamingo", "gannet", "heron"):
                assert service.search(base.id, word).results, word
    finally:
        service.close()
