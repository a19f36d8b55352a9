"""Real sample files of every format the readers handle, made on the spot for tests.

Each `make_*` writes one file and returns its path. `make_samples(directory)` writes one
file of every supported family, each holding a word found nowhere else, and returns them
by kind. No network, no fixtures from elsewhere: PDFs are written by hand (pypdf cannot
draw text) and encrypted with pypdf; DOCX/PPTX/XLSX come from python-docx, python-pptx and
openpyxl; EPUBs are zipped by hand.
"""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from xml.sax.saxutils import escape

__all__ = [
    "Sample",
    "make_csv",
    "make_docx",
    "make_epub",
    "make_html",
    "make_json",
    "make_pdf",
    "make_pptx",
    "make_samples",
    "make_sparse",
    "make_text",
    "make_xlsx",
    "make_zip_bomb",
    "pdf_bytes",
]


# --- PDF ------------------------------------------------------------------------------------


def _pdf_string(text: str) -> bytes:
    raw = text.encode("cp1252", errors="replace")
    return b"(" + raw.replace(b"\\", b"\\\\").replace(b"(", b"\\(").replace(b")", b"\\)") + b")"


def pdf_bytes(pages: Sequence[str], *, title: str | None = None) -> bytes:
    """A valid PDF (Helvetica text, one line per text line) with one page per string.

    An empty string gives a page without text, as in a scanned, image-only PDF.
    """
    count = len(pages)
    page_ids = [4 + 2 * i for i in range(count)]
    info_id = 4 + 2 * count
    objects: dict[int, bytes] = {
        1: b"<< /Type /Catalog /Pages 2 0 R >>",
        2: (
            "<< /Type /Pages /Kids ["
            + " ".join(f"{p} 0 R" for p in page_ids)
            + f"] /Count {count} >>"
        ).encode(),
        3: b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
    }
    for index, text in enumerate(pages):
        page_id, content_id = page_ids[index], page_ids[index] + 1
        objects[page_id] = (
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
            f"/Resources << /Font << /F1 3 0 R >> >> /Contents {content_id} 0 R >>"
        ).encode()
        lines = text.split("\n")
        stream = b""
        if text:
            stream = (
                b"BT /F1 12 Tf 14 TL 72 720 Td "
                + b" T* ".join(_pdf_string(line) + b" Tj" for line in lines)
                + b" ET"
            )
        objects[content_id] = (
            b"<< /Length " + str(len(stream)).encode() + b" >>\nstream\n" + stream + b"\nendstream"
        )
    info = b"<< /Producer (trove tests)"
    if title is not None:
        info += b" /Title " + _pdf_string(title)
    objects[info_id] = info + b" >>"

    out = io.BytesIO()
    out.write(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets: dict[int, int] = {}
    for number in sorted(objects):
        offsets[number] = out.tell()
        out.write(f"{number} 0 obj\n".encode() + objects[number] + b"\nendobj\n")
    xref = out.tell()
    size = max(objects) + 1
    out.write(f"xref\n0 {size}\n0000000000 65535 f \n".encode())
    for number in range(1, size):
        out.write(f"{offsets[number]:010d} 00000 n \n".encode())
    out.write(
        f"trailer\n<< /Size {size} /Root 1 0 R /Info {info_id} 0 R >>\n"
        f"startxref\n{xref}\n%%EOF\n".encode()
    )
    return out.getvalue()


def make_pdf(
    path: Path,
    pages: Sequence[str],
    *,
    title: str | None = None,
    password: str | None = None,
    owner_password: str = "owner-secret",
    algorithm: str = "AES-128",
) -> Path:
    """A PDF with text on each page. With `password` it is encrypted with pypdf; an empty
    password makes the common "encrypted but opens without asking" kind."""
    data = pdf_bytes(pages, title=title)
    if password is not None:
        from pypdf import PdfReader, PdfWriter

        writer = PdfWriter(clone_from=PdfReader(io.BytesIO(data)))
        writer.encrypt(user_password=password, owner_password=owner_password, algorithm=algorithm)
        buffer = io.BytesIO()
        writer.write(buffer)
        data = buffer.getvalue()
    path.write_bytes(data)
    return path


# --- Office -----------------------------------------------------------------------------------


def make_docx(
    path: Path,
    paragraphs: Sequence[str],
    table: Sequence[Sequence[str]] | None = None,
    *,
    heading: str | None = None,
    subheading: str | None = None,
    bullets: Sequence[str] = (),
    title: str | None = None,
) -> Path:
    """A Word document: optional Heading 1, paragraphs, Heading 2, bullets, then a table."""
    import docx

    document = docx.Document()
    if title is not None:
        document.core_properties.title = title
    if heading is not None:
        document.add_heading(heading, level=1)
    for text in paragraphs:
        document.add_paragraph(text)
    if subheading is not None:
        document.add_heading(subheading, level=2)
    for text in bullets:
        document.add_paragraph(text, style="List Bullet")
    if table:
        width = max(len(row) for row in table)
        grid = document.add_table(rows=len(table), cols=width)
        for r, row in enumerate(table):
            for c, value in enumerate(row):
                grid.cell(r, c).text = value
    document.save(str(path))
    return path


def make_pptx(
    path: Path,
    slides: Sequence[tuple[str, str] | tuple[str, str, str]],
    *,
    title: str | None = None,
) -> Path:
    """A presentation: one "Title and Content" slide per (title, body[, notes])."""
    import pptx

    presentation = pptx.Presentation()
    if title is not None:
        presentation.core_properties.title = title
    layout = presentation.slide_layouts[1]
    for spec in slides:
        slide = presentation.slides.add_slide(layout)
        assert slide.shapes.title is not None
        slide.shapes.title.text = spec[0]
        slide.placeholders[1].text_frame.text = spec[1]
        if len(spec) > 2:
            frame = slide.notes_slide.notes_text_frame
            assert frame is not None
            frame.text = spec[2]
    presentation.save(str(path))
    return path


def make_xlsx(
    path: Path,
    sheets: Mapping[str, Sequence[Sequence[object]]],
    *,
    title: str | None = None,
) -> Path:
    """A workbook with one worksheet per entry, rows as given."""
    import openpyxl

    workbook = openpyxl.Workbook()
    default = workbook.active
    if default is not None:
        workbook.remove(default)
    for name, rows in sheets.items():
        sheet = workbook.create_sheet(name)
        for row in rows:
            sheet.append(list(row))
    if title is not None:
        workbook.properties.title = title
    workbook.save(str(path))
    return path


# --- EPUB ----------------------------------------------------------------------------------

_CONTAINER_XML = """<?xml version="1.0" encoding="UTF-8"?>
<container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">
  <rootfiles>
    <rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/>
  </rootfiles>
</container>
"""


def make_epub(
    path: Path,
    chapters: Sequence[tuple[str, str]],
    *,
    title: str | None = "A Sample Book",
    author: str = "Trove Tests",
) -> Path:
    """An EPUB 3 book: one XHTML file per (heading, body) chapter, paragraphs split on blank
    lines. File names and manifest order run backwards, so only the spine gives the order."""
    count = len(chapters)
    names = [f"text/c{count - index:02d}.xhtml" for index in range(count)]
    manifest = "\n".join(
        f'    <item id="ch{i}" href="{names[i - 1]}" media-type="application/xhtml+xml"/>'
        for i in range(count, 0, -1)
    )
    spine = "\n".join(f'    <itemref idref="ch{i}"/>' for i in range(1, len(chapters) + 1))
    title_xml = f"    <dc:title>{escape(title)}</dc:title>\n" if title is not None else ""
    opf = f"""<?xml version="1.0" encoding="UTF-8"?>
<package xmlns="http://www.idpf.org/2007/opf" version="3.0" unique-identifier="uid">
  <metadata xmlns:dc="http://purl.org/dc/elements/1.1/">
    <dc:identifier id="uid">urn:uuid:00000000-0000-4000-8000-000000000000</dc:identifier>
{title_xml}    <dc:creator>{escape(author)}</dc:creator>
    <dc:language>en</dc:language>
  </metadata>
  <manifest>
    <item id="nav" href="nav.xhtml" media-type="application/xhtml+xml" properties="nav"/>
{manifest}
  </manifest>
  <spine>
    <itemref idref="nav"/>
{spine}
  </spine>
</package>
"""
    nav_items = "".join(
        f'<li><a href="{name}">{escape(heading)}</a></li>'
        for name, (heading, _) in zip(names, chapters, strict=True)
    )
    nav = (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<html xmlns="http://www.w3.org/1999/xhtml" xmlns:epub="http://www.idpf.org/2007/ops">'
        f'<head><title>Contents</title></head><body><nav epub:type="toc"><ol>{nav_items}</ol>'
        "</nav></body></html>"
    )
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("mimetype", "application/epub+zip", compress_type=zipfile.ZIP_STORED)
        archive.writestr("META-INF/container.xml", _CONTAINER_XML, zipfile.ZIP_DEFLATED)
        archive.writestr("OEBPS/content.opf", opf, zipfile.ZIP_DEFLATED)
        archive.writestr("OEBPS/nav.xhtml", nav, zipfile.ZIP_DEFLATED)
        for name, (heading, body) in zip(names, chapters, strict=True):
            paragraphs = "".join(
                f"<p>{escape(part.strip())}</p>" for part in body.split("\n\n") if part.strip()
            )
            xhtml = (
                '<?xml version="1.0" encoding="UTF-8"?>\n'
                '<html xmlns="http://www.w3.org/1999/xhtml"><head>'
                f"<title>{escape(heading)}</title></head><body><section>"
                f"<h1>{escape(heading)}</h1>{paragraphs}</section></body></html>"
            )
            archive.writestr(f"OEBPS/{name}", xhtml, zipfile.ZIP_DEFLATED)
    return path


# --- text formats --------------------------------------------------------------------------


def make_text(path: Path, text: str, *, encoding: str = "utf-8") -> Path:
    path.write_bytes(text.encode(encoding))
    return path


def make_html(path: Path, *, title: str | None, body: str, encoding: str = "utf-8") -> Path:
    """A full HTML page around `body` (raw HTML), with a site header, nav and footer."""
    head = f"<title>{escape(title)}</title>" if title is not None else ""
    page = (
        f'<!DOCTYPE html><html><head><meta charset="{encoding}">{head}'
        "<style>body { color: red }</style><script>var tracking = 'scriptword';</script>"
        "</head><body><header><a href='/'>Sitename</a></header>"
        "<nav><ul><li><a href='/a'>Navword</a></li></ul></nav>"
        f"<main>{body}</main><footer>Footerword (c) 2024</footer></body></html>"
    )
    path.write_bytes(page.encode(encoding))
    return path


def make_csv(
    path: Path, rows: Sequence[Sequence[str]], *, delimiter: str = ",", encoding: str = "utf-8"
) -> Path:
    import csv

    buffer = io.StringIO()
    csv.writer(buffer, delimiter=delimiter, lineterminator="\n").writerows(rows)
    path.write_bytes(buffer.getvalue().encode(encoding))
    return path


def make_json(path: Path, value: object) -> Path:
    path.write_text(json.dumps(value, ensure_ascii=False, separators=(",", ":")), encoding="utf-8")
    return path


# --- hostile files ---------------------------------------------------------------------------


def make_zip_bomb(path: Path, uncompressed_bytes: int, *, entry: str = "word/document.xml") -> Path:
    """A zip whose one entry inflates to `uncompressed_bytes` of zeros, written in 1 MiB
    steps so the whole never sits in memory."""
    chunk = bytes(1024 * 1024)
    with (
        zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as archive,
        archive.open(entry, "w", force_zip64=True) as handle,
    ):
        left = uncompressed_bytes
        while left > 0:
            step = min(left, len(chunk))
            handle.write(chunk[:step])
            left -= step
    return path


def make_sparse(path: Path, size: int) -> Path:
    """A file of `size` bytes that takes no disk space (a hole)."""
    with path.open("wb") as handle:
        handle.truncate(size)
    return path


# --- one of everything ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Sample:
    path: Path
    word: str  # a word that occurs in this file only
    title: str  # the title a reader should give it


def make_samples(directory: Path) -> dict[str, Sample]:
    """One file of every family, keyed by kind: pdf, docx, pptx, xlsx, epub, html, csv, tsv,
    json, jsonl, py, md, txt, gbk_txt."""
    directory.mkdir(parents=True, exist_ok=True)
    samples: dict[str, Sample] = {}

    def add(kind: str, path: Path, word: str, title: str) -> None:
        samples[kind] = Sample(path=path, word=word, title=title)

    add(
        "pdf",
        make_pdf(
            directory / "report.pdf",
            ["Quarterly report\nThe alphazebra figures are up.", "Second page mentions pdfquokka."],
            title="Quarterly Report",
        ),
        "pdfquokka",
        "Quarterly Report",
    )
    add(
        "docx",
        make_docx(
            directory / "memo.docx",
            ["Intro paragraph about docxwombat habits."],
            [["Name", "Value"], ["pipe|cell", "42"], ["multi\nline", "7"]],
            heading="Wombat Memo",
            subheading="Details",
            bullets=["first bullet", "second bullet"],
        ),
        "docxwombat",
        "Wombat Memo",
    )
    add(
        "pptx",
        make_pptx(
            directory / "deck.pptx",
            [
                ("Opening Slide", "Welcome to the pptxlemur talk", "Speaker notes say notesyak"),
                ("Closing Slide", "Thanks for listening"),
            ],
        ),
        "pptxlemur",
        "Opening Slide",
    )
    add(
        "xlsx",
        make_xlsx(
            directory / "book.xlsx",
            {
                "Animals": [["Name", "Legs"], ["xlsxokapi", 4], ["bird", 2]],
                "Prices": [["Item", "Price"], ["tea", 2.5]],
            },
            title="Animal Book",
        ),
        "xlsxokapi",
        "Animal Book",
    )
    add(
        "epub",
        make_epub(
            directory / "novel.epub",
            [
                ("Chapter One", "It began with an epubnarwhal.\n\nThen more happened."),
                ("Chapter Two", "The end of the epubmarmot story."),
            ],
            title="The Narwhal Novel",
        ),
        "epubnarwhal",
        "The Narwhal Novel",
    )
    add(
        "html",
        make_html(
            directory / "page.html",
            title="Page About Tapirs",
            body=(
                "<h1>Tapirs</h1><p>The htmltapir lives in forests.</p>"
                "<ul><li>snout</li><li>hooves</li></ul>"
                "<table><tr><th>Kind</th><th>Weight</th></tr><tr><td>Malayan</td>"
                "<td>300</td></tr></table>"
            ),
        ),
        "htmltapir",
        "Page About Tapirs",
    )
    add(
        "csv",
        make_csv(directory / "data.csv", [["city", "note"], ["Oslo", "csvpuffin, cold"]]),
        "csvpuffin",
        "data",
    )
    add(
        "tsv",
        make_csv(
            directory / "data2.tsv", [["city", "note"], ["Lima", "tsvalpaca"]], delimiter="\t"
        ),
        "tsvalpaca",
        "data2",
    )
    add(
        "json",
        make_json(directory / "config.json", {"name": "jsonibex", "items": [1, 2, 3]}),
        "jsonibex",
        "config",
    )
    jsonl = directory / "events.jsonl"
    jsonl.write_text('{"event": "jsonlgecko"}\n{"event": "other"}\n', encoding="utf-8")
    add("jsonl", jsonl, "jsonlgecko", "events")
    add(
        "py",
        make_text(directory / "script.py", 'def pyaxolotl():\n    return "ok"\n'),
        "pyaxolotl",
        "script",
    )
    add(
        "md",
        make_text(directory / "notes.md", "# Markdown Notes\n\nAbout the mdcapybara.\n"),
        "mdcapybara",
        "Markdown Notes",
    )
    add(
        "txt", make_text(directory / "plain.txt", "Plain txtmeerkat text.\n"), "txtmeerkat", "plain"
    )
    add(
        "gbk_txt",
        make_text(
            directory / "chinese.txt",
            "知识库是一个桌面应用程序，用于管理文档和笔记。" * 4 + "独角兽关键词出现在这里。\n",
            encoding="gbk",
        ),
        "独角兽关键词",
        "chinese",
    )
    return samples
