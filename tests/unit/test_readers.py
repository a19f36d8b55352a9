"""File readers: every format from real generated files, and every way a file can be bad."""

from __future__ import annotations

import json
import time
import zipfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.knowledge.pipeline.readers import office, structured
from app.knowledge.pipeline.readers.archive import ZipLimits
from app.knowledge.pipeline.readers.errors import ReaderError
from app.knowledge.pipeline.readers.html import html_to_markdown, read_html_bytes
from app.knowledge.pipeline.readers.registry import (
    SUPPORTED_EXTENSIONS,
    Document,
    is_supported,
    page_at,
    read_document,
)
from app.knowledge.types import ErrorCode
from tests.unit.make_files import (
    Sample,
    make_csv,
    make_docx,
    make_epub,
    make_html,
    make_pdf,
    make_pptx,
    make_samples,
    make_sparse,
    make_text,
    make_xlsx,
    make_zip_bomb,
)


@pytest.fixture(scope="module")
def samples(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Sample]:
    return make_samples(tmp_path_factory.mktemp("samples"))


def _fails(path: Path, code: ErrorCode, **kwargs: object) -> ReaderError:
    with pytest.raises(ReaderError) as caught:
        read_document(path, **kwargs)  # type: ignore[arg-type]
    assert caught.value.code == code, caught.value.message
    assert "Traceback" not in caught.value.message
    return caught.value


# --- every format ------------------------------------------------------------------------

KINDS = [
    "pdf", "docx", "pptx", "xlsx", "epub", "html", "csv", "tsv", "json", "jsonl", "py", "md",
    "txt", "gbk_txt",
]  # fmt: skip


@pytest.mark.parametrize("kind", KINDS)
def test_each_format_yields_its_words_and_title(samples: dict[str, Sample], kind: str) -> None:
    sample = samples[kind]
    assert is_supported(sample.path)
    doc = read_document(sample.path)
    assert sample.word in doc.text
    assert doc.title == sample.title


def test_supported_extensions_cover_every_family() -> None:
    for ext in (".pdf", ".docx", ".pptx", ".xlsx", ".epub", ".html", ".htm", ".csv", ".tsv",
                ".json", ".jsonl", ".py", ".ts", ".tsx", ".go", ".rs", ".yaml", ".toml", ".sql",
                ".md", ".txt", ".xml", ".vue"):  # fmt: skip
        assert ext in SUPPORTED_EXTENSIONS, ext
    assert is_supported(Path("A.PDF"))
    assert is_supported(Path("photo.jpg"))  # pictures: their text is recognised (OCR)
    assert not is_supported(Path("song.mp3"))


def test_document_constructor_stays_compatible() -> None:
    doc = Document("text", "title")
    assert doc.page_starts == ()
    assert page_at(doc, 0) is None


# --- PDF -----------------------------------------------------------------------------------


def test_pdf_pages_and_page_at(samples: dict[str, Sample]) -> None:
    doc = read_document(samples["pdf"].path)
    assert len(doc.page_starts) == 2
    assert doc.page_starts[0] == 0
    assert doc.text[doc.page_starts[1] :].startswith("Second page")
    assert page_at(doc, doc.text.index("alphazebra")) == 1
    assert page_at(doc, doc.text.index("pdfquokka")) == 2
    assert page_at(doc.page_starts, doc.page_starts[1]) == 2
    assert page_at(doc, doc.page_starts[1] - 1) == 1
    assert page_at(doc, len(doc.text) + 50) == 2
    assert page_at(doc, -1) is None


def test_pdf_title_falls_back_to_first_line(tmp_path: Path) -> None:
    doc = read_document(make_pdf(tmp_path / "x.pdf", ["Opening Line\nbody", "more"]))
    assert doc.title == "Opening Line"


def test_image_only_pdf_gives_empty_text(tmp_path: Path) -> None:
    doc = read_document(make_pdf(tmp_path / "scan.pdf", ["", ""]))
    assert doc.text.strip() == ""


def test_password_protected_pdf_fails_clearly(tmp_path: Path) -> None:
    path = make_pdf(tmp_path / "locked.pdf", ["secret words"], password="hunter2")
    error = _fails(path, ErrorCode.READ_FAILED)
    assert "password" in error.message


@pytest.mark.parametrize("algorithm", ["RC4-128", "AES-128", "AES-256"])
def test_pdf_encrypted_with_empty_password_reads(tmp_path: Path, algorithm: str) -> None:
    path = make_pdf(
        tmp_path / "open.pdf", ["readable emptypass words"], password="", algorithm=algorithm
    )
    assert "emptypass" in read_document(path).text


@pytest.mark.parametrize(
    "data", [b"%PDF-1.4\n1 0 obj garbage", b"not a pdf at all", b"%PDF-1.7\n" + bytes(300)]
)
def test_corrupt_pdf_fails_as_damaged(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "bad.pdf"
    path.write_bytes(data)
    error = _fails(path, ErrorCode.READ_FAILED)
    assert error.message.startswith("the PDF is damaged")


def test_truncated_pdf_never_escapes(tmp_path: Path, samples: dict[str, Sample]) -> None:
    data = samples["pdf"].path.read_bytes()
    path = tmp_path / "cut.pdf"
    path.write_bytes(data[: len(data) // 2])
    try:
        read_document(path)
    except ReaderError as exc:
        assert exc.code is ErrorCode.READ_FAILED


# --- DOCX / PPTX / XLSX -----------------------------------------------------------------------


def test_docx_becomes_markdown(samples: dict[str, Sample]) -> None:
    text = read_document(samples["docx"].path).text
    assert text.startswith("# Wombat Memo\n\nIntro paragraph about docxwombat habits.")
    assert "\n## Details\n" in text
    assert "- first bullet\n- second bullet" in text
    assert "| Name | Value |\n|---|---|\n| pipe\\|cell | 42 |\n| multi<br>line | 7 |" in text


def test_docx_title_prefers_metadata(tmp_path: Path) -> None:
    path = make_docx(tmp_path / "t.docx", ["body"], heading="Heading", title="Meta Title")
    assert read_document(path).title == "Meta Title"
    plain = make_docx(tmp_path / "plain.docx", ["only a paragraph"])
    assert read_document(plain).title == "plain"


def test_pptx_has_a_section_per_slide(samples: dict[str, Sample]) -> None:
    doc = read_document(samples["pptx"].path)
    assert doc.text.startswith("## Slide 1: Opening Slide\n\nWelcome to the pptxlemur talk")
    assert "### Notes\n\nSpeaker notes say notesyak" in doc.text
    assert len(doc.page_starts) == 2
    assert doc.text[doc.page_starts[1] :].startswith("## Slide 2: Closing Slide")
    assert page_at(doc, doc.text.index("Thanks for listening")) == 2


def test_xlsx_has_a_section_per_sheet(samples: dict[str, Sample]) -> None:
    text = read_document(samples["xlsx"].path).text
    assert "## Animals\n\n| Name | Legs |\n|---|---|\n| xlsxokapi | 4 |\n| bird | 2 |" in text
    assert "## Prices\n\n| Item | Price |\n|---|---|\n| tea | 2.5 |" in text


def test_xlsx_rows_and_columns_are_capped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(office, "MAX_SHEET_ROWS", 5)
    monkeypatch.setattr(office, "MAX_SHEET_COLUMNS", 3)
    rows = [[f"r{i}c{j}" for j in range(5)] for i in range(20)]
    text = read_document(make_xlsx(tmp_path / "big.xlsx", {"S": rows})).text
    assert "r4c0" in text and "r5c0" not in text
    assert "r0c2" in text and "r0c3" not in text
    assert "Only the first 5 rows" in text
    assert "Only the first 3 columns" in text


def test_pptx_title_prefers_metadata(tmp_path: Path) -> None:
    path = make_pptx(tmp_path / "d.pptx", [("", "untitled slide body")], title="Deck Title")
    doc = read_document(path)
    assert doc.title == "Deck Title"
    assert doc.text.startswith("## Slide 1\n\nuntitled slide body")


# --- EPUB ----------------------------------------------------------------------------------


def test_epub_chapters_follow_the_spine(samples: dict[str, Sample]) -> None:
    doc = read_document(samples["epub"].path)
    assert doc.text.index("# Chapter One") < doc.text.index("# Chapter Two")
    assert "epubmarmot" in doc.text
    assert "Contents" not in doc.text  # the navigation document is not a chapter


def test_epub_without_metadata_title_uses_first_heading(tmp_path: Path) -> None:
    path = make_epub(tmp_path / "b.epub", [("First Heading", "text")], title=None)
    assert read_document(path).title == "First Heading"


def test_drm_protected_epub_fails(tmp_path: Path) -> None:
    path = make_epub(tmp_path / "drm.epub", [("Locked", "cipher text")])
    encryption = (
        '<encryption xmlns="urn:oasis:names:tc:opendocument:xmlns:container" '
        'xmlns:enc="http://www.w3.org/2001/04/xmlenc#"><enc:EncryptedData>'
        '<enc:EncryptionMethod Algorithm="http://www.w3.org/2001/04/xmlenc#aes128-cbc"/>'
        '<enc:CipherData><enc:CipherReference URI="OEBPS/text/c01.xhtml"/></enc:CipherData>'
        "</enc:EncryptedData></encryption>"
    )
    with zipfile.ZipFile(path, "a") as archive:
        archive.writestr("META-INF/encryption.xml", encryption)
    assert "DRM" in _fails(path, ErrorCode.READ_FAILED).message


# --- HTML ----------------------------------------------------------------------------------


def test_html_file_keeps_content_and_drops_boilerplate(samples: dict[str, Sample]) -> None:
    text = read_document(samples["html"].path).text
    assert text.startswith("# Tapirs\n\nThe htmltapir lives in forests.")
    assert "- snout\n- hooves" in text
    assert "| Kind | Weight |\n|---|---|\n| Malayan | 300 |" in text
    for boilerplate in ("scriptword", "Navword", "Footerword", "Sitename", "color: red"):
        assert boilerplate not in text


def test_html_title_falls_back_to_h1_then_stem(tmp_path: Path) -> None:
    page = make_html(tmp_path / "p.html", title=None, body="<h1>Only Heading</h1><p>x</p>")
    assert read_document(page).title == "Only Heading"
    bare = make_html(tmp_path / "bare.htm", title=None, body="<p>no heading</p>")
    assert read_document(bare).title == "bare"


def test_html_to_markdown_api() -> None:
    html = (
        "<html><head><title> The  Title </title></head><body>"
        "<nav>menu</nav><article><header><h1>Head</h1></header>"
        "<p>See <a href='/docs/x'>the docs</a> and <code>a_b</code>.</p>"
        "<ol><li>one</li><li>two<ul><li>inner</li></ul></li></ol>"
        "<table><tr><td>a|b</td><td>c<br>d</td></tr></table>"
        "<pre>x = 1\n  y = 2</pre><blockquote>quoted</blockquote></article>"
        "<footer>foot</footer></body></html>"
    )
    markdown, title = html_to_markdown(html)
    assert title == "The Title"
    assert markdown.startswith("# Head\n\nSee the docs and `a_b`.")
    assert "1. one\n2. two\n   - inner" in markdown
    assert "| a\\|b | c<br>d |" in markdown
    assert "```\nx = 1\n  y = 2\n```" in markdown
    assert "> quoted" in markdown
    assert "menu" not in markdown and "foot" not in markdown
    linked, _ = html_to_markdown(html, "https://example.org/a/", keep_links=True)
    assert "[the docs](https://example.org/docs/x)" in linked
    assert html_to_markdown("") == ("", None)


def test_read_html_bytes_honours_the_charset() -> None:
    page = "<html><body><h2>标题</h2><p>中文内容</p></body></html>".encode("gbk")
    doc = read_html_bytes(page, "gbk", fallback_title="fallback")
    assert "中文内容" in doc.text
    assert doc.title == "标题"
    meta = '<meta charset="gb2312"><title>网页</title><p>正文</p>'.encode("gb2312")
    assert read_html_bytes(meta).title == "网页"


@pytest.mark.parametrize("depth", [1000, 3000])
def test_deeply_nested_html_still_reads(tmp_path: Path, depth: int) -> None:
    # 1000 levels: past the renderer's recursion cap; 3000: past libxml2's own depth limit.
    path = tmp_path / "deep.html"
    html = "<title>Deep</title>" + "<div>" * depth + "deep<b>word</b>" + "</div>" * depth
    path.write_text(html + "<p>after</p>", encoding="utf-8")
    doc = read_document(path)
    assert "deepword" in doc.text and "after" in doc.text
    assert doc.title == "Deep"


# --- CSV / TSV / JSON / text ------------------------------------------------------------------


def test_csv_delimiter_is_sniffed(tmp_path: Path) -> None:
    path = make_csv(tmp_path / "semi.csv", [["a", "b"], ["1", "x|y"], ["2", "z"]], delimiter=";")
    assert read_document(path).text == "| a | b |\n|---|---|\n| 1 | x\\|y |\n| 2 | z |"


def test_csv_rows_are_capped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(structured, "MAX_TABLE_ROWS", 10)
    path = make_csv(tmp_path / "long.csv", [["n"], *([str(i)] for i in range(50))])
    text = read_document(path).text
    assert "| 8 |" in text and "| 9 |" not in text
    assert "Only the first 10 of 51 rows" in text


def test_csv_in_a_legacy_encoding(tmp_path: Path) -> None:
    rows = [["城市", "说明"], ["北京", "首都城市，历史悠久，文化名城"]] * 5
    path = make_csv(tmp_path / "gbk.csv", rows, encoding="gbk")
    assert "历史悠久" in read_document(path).text


def test_json_is_pretty_printed(samples: dict[str, Sample]) -> None:
    text = read_document(samples["json"].path).text
    assert json.loads(text) == {"name": "jsonibex", "items": [1, 2, 3]}
    assert '\n  "name": "jsonibex"' in text


def test_invalid_json_reports_the_parser_message(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text('{"a": 1,}', encoding="utf-8")
    error = _fails(path, ErrorCode.READ_FAILED)
    assert "line 1 column 9" in error.message
    lines = tmp_path / "bad.jsonl"
    lines.write_text('{"a": 1}\n{oops}\n', encoding="utf-8")
    assert "line 2" in _fails(lines, ErrorCode.READ_FAILED).message


def test_json_lines_inside_a_json_file_are_kept_as_lines(tmp_path: Path) -> None:
    path = tmp_path / "log.json"
    path.write_text('{"a": 1}\n{"b": 2}\n', encoding="utf-8")
    assert read_document(path).text == '{"a": 1}\n{"b": 2}'


def test_absurdly_nested_json_fails_cleanly(tmp_path: Path) -> None:
    path = tmp_path / "deep.json"
    path.write_text("[" * 200_000 + "]" * 200_000, encoding="utf-8")
    _fails(path, ErrorCode.READ_FAILED)


def test_source_code_is_kept_verbatim(tmp_path: Path) -> None:
    source = 'fn main() {\n    println!("rustword");\n}\n'
    assert read_document(make_text(tmp_path / "main.rs", source)).text == source


# --- failures ------------------------------------------------------------------------------


def test_unsupported_extension(tmp_path: Path) -> None:
    path = tmp_path / "song.mp3"
    path.write_bytes(b"ID3\x03")
    _fails(path, ErrorCode.UNSUPPORTED_FILE_TYPE)
    _fails(tmp_path / "README", ErrorCode.UNSUPPORTED_FILE_TYPE)


def test_missing_file(tmp_path: Path) -> None:
    _fails(tmp_path / "gone.pdf", ErrorCode.SOURCE_MISSING)
    _fails(tmp_path / "gone" / "deeper.txt", ErrorCode.SOURCE_MISSING)


def test_folder_named_like_a_file(tmp_path: Path) -> None:
    (tmp_path / "folder.txt").mkdir()
    _fails(tmp_path / "folder.txt", ErrorCode.READ_FAILED)


def test_too_large_by_max_bytes(samples: dict[str, Sample]) -> None:
    error = _fails(samples["docx"].path, ErrorCode.FILE_TOO_LARGE, max_bytes=1000)
    assert "1000 bytes" in error.message


@pytest.mark.parametrize("name", ["huge.txt", "huge.pdf", "huge.docx", "huge.csv"])
def test_huge_sparse_file_fails_without_being_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    path = make_sparse(tmp_path / name, 2 * 1024**3)

    def no_reading(*args: object, **kwargs: object) -> None:
        raise AssertionError("the file was opened")

    monkeypatch.setattr(Path, "open", no_reading)
    monkeypatch.setattr(Path, "read_bytes", no_reading)
    started = time.perf_counter()
    _fails(path, ErrorCode.FILE_TOO_LARGE)
    assert time.perf_counter() - started < 1.0


@pytest.mark.parametrize("name", ["empty.txt", "empty.pdf", "empty.docx", "empty.json"])
def test_zero_byte_file_gives_empty_text(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    path.write_bytes(b"")
    doc = read_document(path)
    assert doc.text == ""
    assert doc.title == "empty"


def test_binary_data_named_txt(tmp_path: Path) -> None:
    path = tmp_path / "binary.txt"
    path.write_bytes(bytes(range(256)) * 64)
    _fails(path, ErrorCode.READ_FAILED)


@pytest.mark.parametrize("kind", ["docx", "epub", "xlsx", "pptx"])
def test_truncated_zip_documents_fail(
    tmp_path: Path, samples: dict[str, Sample], kind: str
) -> None:
    data = samples[kind].path.read_bytes()
    path = tmp_path / f"cut.{kind}"
    path.write_bytes(data[: len(data) * 2 // 3])
    assert "damaged" in _fails(path, ErrorCode.READ_FAILED).message


def test_real_zip_bomb_is_refused(tmp_path: Path) -> None:
    path = make_zip_bomb(tmp_path / "bomb.docx", 600 * 1024 * 1024)
    assert path.stat().st_size < 5 * 1024 * 1024
    assert "zip bomb" in _fails(path, ErrorCode.READ_FAILED).message


@pytest.mark.parametrize(
    ("limits", "why"),
    [
        (ZipLimits(max_total_bytes=10_000), "expands to more than"),
        (ZipLimits(max_entries=3), "entries"),
        (ZipLimits(max_ratio=50, ratio_min_bytes=1024 * 1024), "compressed"),
    ],
)
@pytest.mark.parametrize("suffix", [".docx", ".xlsx", ".epub", ".pptx"])
def test_zip_limits_apply_to_every_container(
    tmp_path: Path, limits: ZipLimits, why: str, suffix: str
) -> None:
    path = make_zip_bomb(tmp_path / f"bomb{suffix}", 2 * 1024 * 1024, entry="content.xml")
    with zipfile.ZipFile(path, "a") as archive:
        for index in range(4):
            archive.writestr(f"extra{index}.xml", "<x/>")
    error = _fails(path, ErrorCode.READ_FAILED, zip_limits=limits)
    assert "zip bomb" in error.message and why in error.message


def test_unexpected_parser_errors_become_read_failed(
    samples: dict[str, Sample], monkeypatch: pytest.MonkeyPatch
) -> None:
    def explode(*args: object, **kwargs: object) -> None:
        raise RuntimeError("internal parser bug")

    monkeypatch.setattr("app.knowledge.pipeline.readers.office.docx.Document", explode)
    error = _fails(samples["docx"].path, ErrorCode.READ_FAILED)
    assert error.message == "the Word document is damaged: internal parser bug"


# --- fuzzing ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def fuzz_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz")


@pytest.mark.parametrize("kind", ["docx", "pdf", "epub", "xlsx", "pptx"])
@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    truncate=st.none() | st.floats(min_value=0.0, max_value=1.0),
    flips=st.lists(
        st.tuples(st.floats(min_value=0.0, max_value=1.0), st.integers(0, 255)), max_size=12
    ),
)
def test_mutated_files_read_or_fail_cleanly(
    samples: dict[str, Sample],
    fuzz_dir: Path,
    kind: str,
    truncate: float | None,
    flips: list[tuple[float, int]],
) -> None:
    data = bytearray(samples[kind].path.read_bytes())
    for where, value in flips:
        data[min(len(data) - 1, int(where * len(data)))] = value
    if truncate is not None:
        data = data[: int(truncate * len(data))]
    path = fuzz_dir / f"mutant.{kind}"
    path.write_bytes(bytes(data))
    try:
        doc = read_document(path)
    except ReaderError as exc:
        assert exc.code in (ErrorCode.READ_FAILED, ErrorCode.FILE_TOO_LARGE)
        assert exc.message
    else:
        assert isinstance(doc.text, str) and isinstance(doc.title, str)
