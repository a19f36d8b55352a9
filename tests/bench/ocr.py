"""Text recognition (OCR) on a generated set: character error rate, pages per second, memory.

    python tests/bench/ocr.py [--latin-pages 6] [--cjk-pages 3]

Draws pages with Pillow (Latin with DejaVu Sans, Chinese with a CJK system font, 13-point
type at 150 dpi), saves them as pictures and image-only PDF pages (one turned by /Rotate 90,
one upside down, one scan between born-digital pages), and indexes them through the real
path: the reader, the recognition worker process, the check job, the index. The character
error rate (CER) compares each page's drawn text with the page of the material that Trove
built (edit distance over the drawn text's length, whitespace ignored). Memory is sampled
every 50 ms for the main process and its children (the worker) apart. Also prints the
text-layer rule's measure (letters per square inch) on born-digital pages (hand-written
PDF, QPdfWriter) and scans. Prints one JSON line.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import random
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import psutil

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from app.knowledge.jobs.reader_pool import InlineExtraction  # noqa: E402
from app.knowledge.material_paths import material_path  # noqa: E402
from app.knowledge.ocr.settings import ocr_installed  # noqa: E402
from app.knowledge.pipeline.readers.pdf import (  # noqa: E402
    MIN_LETTERS_PER_SQUARE_INCH,
    letters_per_square_inch,
)
from app.knowledge.service import KnowledgeService  # noqa: E402
from app.knowledge.types import ItemStatus  # noqa: E402
from tests.fakes import FakeModels  # noqa: E402
from tests.ocr_samples import (  # noqa: E402
    Line,
    cjk_font,
    mixed_pdf,
    page_image,
    save_image,
    scanned_pdf_bytes,
)
from tests.unit.make_files import pdf_bytes  # noqa: E402

FONT_PX = 28  # 13-point type at 150 dpi
WORDS = [
    "harbour", "ledger", "cargo", "tide", "winter", "vessel", "anchor", "quay", "freight",
    "manifest", "customs", "pilot", "storm", "berth", "crane", "timber", "grain", "salt",
    "copper", "wool", "barrel", "crate", "lantern", "rope", "canvas", "ferry", "beacon",
    "reef", "channel", "mooring", "dock", "schedule", "tonnage", "voyage", "captain", "clerk",
]  # fmt: skip
CJK_TEXT = (
    "知识库把文件变成可以搜索的文字。扫描的文件没有文字层，需要先识别图片中的文字。"
    "港口的账本记录了每一艘船的货物、重量和到达的日期。冬天的潮水比夏天更高。"
    "检索时，系统会同时比较关键词和语义，然后给出最相关的段落。"
)


def latin_lines(rng: random.Random, count: int) -> list[str]:
    return [" ".join(rng.choice(WORDS) for _ in range(7)).capitalize() for _ in range(count)]


def cjk_lines(start: int, count: int, width: int = 18) -> list[str]:
    text = CJK_TEXT * 4
    return [text[start + i * width : start + (i + 1) * width] for i in range(count)]


def edit_distance(a: str, b: str) -> int:
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


def squeeze(text: str) -> str:
    return "".join(text.split())


class MemorySampler:
    def __init__(self) -> None:
        self.main_peak = 0
        self.children_peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        me = psutil.Process()
        while not self._stop.is_set():
            self.main_peak = max(self.main_peak, me.memory_info().rss)
            for child in me.children(recursive=True):
                with contextlib.suppress(psutil.Error):
                    self.children_peak = max(self.children_peak, child.memory_info().rss)
            time.sleep(0.05)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


def qt_pdf_density(folder: Path) -> float | None:
    """Letters per square inch of a born-digital page written by QPdfWriter + QTextDocument."""
    try:
        from PySide6.QtGui import QGuiApplication, QPageSize, QPdfWriter, QTextDocument
    except ImportError:
        return None
    app = QGuiApplication.instance() or QGuiApplication(sys.argv[:1])
    path = folder / "qt.pdf"
    writer = QPdfWriter(str(path))
    writer.setPageSize(QPageSize(QPageSize.PageSizeId.A4))
    doc = QTextDocument()
    doc.setPlainText("\n".join(latin_lines(random.Random(7), 40)))
    doc.print_(writer)
    del writer, app
    from pypdf import PdfReader

    page = PdfReader(str(path)).pages[0]
    return letters_per_square_inch(
        page.extract_text(), float(page.mediabox.width), float(page.mediabox.height)
    )


def build(folder: Path, latin_pages: int, cjk_pages: int) -> dict[str, list[tuple[str, Any]]]:
    """The files, each with its pages: (drawn text, or None for a born-digital page)."""
    rng = random.Random(2026)
    sets: dict[str, list[tuple[str, Any]]] = {}
    latin = [latin_lines(rng, 12) for _ in range(latin_pages)]
    images = [page_image([Line(t) for t in lines], font_px=FONT_PX) for lines in latin]
    (folder / "latin.pdf").write_bytes(scanned_pdf_bytes(images))
    sets["latin.pdf"] = [("latin", "\n".join(lines)) for lines in latin]
    if cjk_font() is not None and cjk_pages:
        cjk = [cjk_lines(10 * n, 6) for n in range(cjk_pages)]
        pages = [page_image([Line(t, cjk=True) for t in ls], font_px=FONT_PX) for ls in cjk]
        (folder / "cjk.pdf").write_bytes(scanned_pdf_bytes(pages))
        sets["cjk.pdf"] = [("cjk", "\n".join(lines)) for lines in cjk]
    turned = latin_lines(rng, 8)
    upside = latin_lines(rng, 8)
    sideways = page_image([Line(t) for t in turned], font_px=FONT_PX).rotate(90, expand=True)
    flipped = page_image([Line(t) for t in upside], font_px=FONT_PX).rotate(180)
    (folder / "rotated.pdf").write_bytes(scanned_pdf_bytes([sideways, flipped], rotate=[90, 0]))
    sets["rotated.pdf"] = [("rotated", "\n".join(turned)), ("rotated", "\n".join(upside))]
    picture = latin_lines(rng, 6)
    save_image(page_image([Line(t) for t in picture], font_px=FONT_PX), folder / "photo.jpg")
    sets["photo.jpg"] = [("picture", "\n".join(picture))]
    scan = latin_lines(rng, 10)
    born = "\n".join(latin_lines(rng, 30))
    mixed_pdf(folder / "mixed.pdf", [born, page_image([Line(t) for t in scan], font_px=FONT_PX)])
    sets["mixed.pdf"] = [("born-digital", None), ("mixed", "\n".join(scan))]
    return sets


def run(latin_pages: int, cjk_pages: int) -> dict[str, object]:
    tmp = Path(tempfile.mkdtemp(prefix="trove-ocr-bench-"))
    files = tmp / "in"
    files.mkdir()
    sets = build(files, latin_pages, cjk_pages)
    service = KnowledgeService(tmp / "home", models=FakeModels(), extraction=InlineExtraction())
    base = service.create_base("ocr bench", ocr_enabled=True)
    service.add(base.id, [files / name for name in sets])
    sampler = MemorySampler()
    started = time.perf_counter()
    service.run_pending_jobs(base.id)
    seconds = time.perf_counter() - started
    sampler.stop()
    errors: dict[str, list[int]] = {}
    recognised_pages = 0
    for item in service.list_items(base.id):
        name = Path(item.source).name
        assert item.status is ItemStatus.COMPLETED, (name, item.error_code, item.error_message)
        material = service.layout.raw_dir(base.id) / (material_path(item) or "")
        info = service.parts.stores.get(base.id).material(item.id)
        assert info is not None
        body = material.read_text(encoding="utf-8")
        starts = list(info.page_starts) or [0]
        for index, (category, truth) in enumerate(sets[name]):
            if truth is None:
                continue
            recognised_pages += 1
            end = starts[index + 1] if index + 1 < len(starts) else len(body)
            got = squeeze(body[starts[index] : end])
            want = squeeze(truth)
            totals = errors.setdefault(category, [0, 0])
            totals[0] += edit_distance(want, got)
            totals[1] += len(want)
    scans = [
        letters_per_square_inch("", 612, 792),
        letters_per_square_inch("12", 612, 792),  # a scan whose page number is text
    ]
    prose = pdf_bytes(["\n".join(latin_lines(random.Random(3), 40))])
    from pypdf import PdfReader

    page = PdfReader(io.BytesIO(prose)).pages[0]
    hand_written = letters_per_square_inch(page.extract_text(), 612, 792)
    title_page = letters_per_square_inch("Harbour ledger, winter 2026", 612, 792)
    all_errors = sum(e for e, _ in errors.values())
    all_chars = sum(n for _, n in errors.values())
    service.close()
    return {
        "pages": recognised_pages,
        "seconds": round(seconds, 2),
        "pagesPerSecond": round(recognised_pages / seconds, 3),
        "documents": len(sets),
        "cer": round(all_errors / max(1, all_chars), 4),
        "cerByKind": {k: round(e / max(1, n), 4) for k, (e, n) in sorted(errors.items())},
        "mainPeakRssMb": round(sampler.main_peak / 2**20),
        "workerPeakRssMb": round(sampler.children_peak / 2**20),
        "textLayer": {
            "threshold": MIN_LETTERS_PER_SQUARE_INCH,
            "bornDigitalHandWritten": round(hand_written, 1),
            "bornDigitalQPdfWriter": round(qt_pdf_density(tmp) or 0.0, 1),
            "titleOnlyPage": round(title_page, 2),
            "scans": [round(s, 2) for s in scans],
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--latin-pages", type=int, default=6)
    parser.add_argument("--cjk-pages", type=int, default=3)
    args = parser.parse_args()
    if not ocr_installed():
        raise SystemExit("the `ocr` extra is not installed: pip install -e '.[ocr]'")
    print(json.dumps(run(args.latin_pages, args.cjk_pages), ensure_ascii=False))


if __name__ == "__main__":
    main()
