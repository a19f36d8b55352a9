from __future__ import annotations

import unicodedata
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.knowledge.path_safety import (
    MAX_SEGMENT_BYTES,
    RESERVED_SEGMENT,
    UnsafePathError,
    allocate_material_name,
    check_relative_path,
    md_product_name,
    resolve_below,
    sanitize_base_id,
    sanitize_file_name,
)


def _symlink(link: Path, target: Path, *, target_is_directory: bool = False) -> None:
    # Windows without developer mode cannot create symlinks; those tests are then moot.
    try:
        link.symlink_to(target, target_is_directory=target_is_directory)
    except (OSError, NotImplementedError) as exc:
        pytest.skip(f"symlinks unavailable: {exc}")


def _listing(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*"))


# --------------------------------------------------------------------------- base ids


def test_unsafe_path_error_is_value_error() -> None:
    assert issubclass(UnsafePathError, ValueError)


@pytest.mark.parametrize("value", ["a", "base_1", "my-base", "0", "_", "-", "a" * 64])
def test_sanitize_base_id_accepts_valid_ids(value: str) -> None:
    assert sanitize_base_id(value) == value


@pytest.mark.parametrize(
    "value",
    [
        "",
        "a" * 65,
        "Base",
        "a b",
        "a.b",
        "..",
        ".trove",
        "../x",
        "a/b",
        "a\\b",
        "a\n",  # `$` in a regex would let a trailing newline through
        "\u0661",  # non-ASCII digit
        "é",
        "a\x00",
    ],
)
def test_sanitize_base_id_refuses_instead_of_rewriting(value: str) -> None:
    with pytest.raises(UnsafePathError, match="base id"):
        sanitize_base_id(value)


# --------------------------------------------------------------------------- check_relative_path

TRAVERSALS = [
    "..",
    "../x",
    "a/../../x",
    "..\\x",
    "a\\..\\..\\x",
    "a\\..\\b",
    "/etc/passwd",
    "C:\\x",
    "C:/x",
    "C:x",
    "\\\\server\\share",
    "//server/share",
    "x\x00y",
    ".trove/index.sqlite",
    ".TROVE/x",
    ".trove",
    "",
]


@pytest.mark.parametrize("rel", TRAVERSALS)
def test_check_relative_path_refuses_traversal(rel: str) -> None:
    with pytest.raises(UnsafePathError, match="refused"):
        check_relative_path(rel)


@pytest.mark.parametrize(
    "rel",
    [
        ".",
        "./x",
        "a/./b",
        "a//b",
        "a/",
        "a\\b",
        "a/b:stream",
        "a/ ",
        "a/...",
        "a/.. ",  # Windows strips the trailing space and sees '..'
        "a/name.",
        "a/name ",
        "a/b\nc",
        "a/\u202eevil",
        "a/CON",
        "a/con.txt",
        "a/x?.txt",
    ],
)
def test_check_relative_path_refuses_non_canonical_or_unportable(rel: str) -> None:
    with pytest.raises(UnsafePathError):
        check_relative_path(rel)


@pytest.mark.parametrize(
    ("rel", "reason"),
    [
        ("../x", r"'\.\.'"),
        ("a\\..\\b", r"'\.\.'"),
        ("a\\b", "backslash"),
        ("/etc/passwd", "absolute"),
        ("C:/x", "drive"),
        ("x\x00y", "NUL"),
        (".trove/x", "reserved"),
        ("", "empty"),
    ],
)
def test_check_relative_path_message_says_why(rel: str, reason: str) -> None:
    with pytest.raises(UnsafePathError, match=reason):
        check_relative_path(rel)


@pytest.mark.parametrize(
    "rel",
    [
        "report.pdf",
        "a/b/report.pdf",
        "trove/x",
        ".trovex/x",
        "a/.trove",  # only the top level is the index folder
        "報告書/📄 notes.md",
        "CON_.txt",
        ".hidden",
    ],
)
def test_check_relative_path_accepts_and_returns_unchanged(rel: str) -> None:
    assert check_relative_path(rel) == rel


# --------------------------------------------------------------------------- resolve_below


def test_resolve_below_returns_resolved_path_inside(tmp_path: Path) -> None:
    raw = tmp_path / "raw"
    (raw / "a").mkdir(parents=True)
    (raw / "a" / "x.pdf").write_bytes(b"x")
    assert resolve_below(raw, "a/x.pdf") == (raw / "a" / "x.pdf").resolve()
    # Not existing yet is fine: callers resolve before creating.
    assert resolve_below(raw, "new/y.pdf") == raw.resolve() / "new" / "y.pdf"


@pytest.mark.parametrize("rel", TRAVERSALS)
def test_resolve_below_refuses_traversal(tmp_path: Path, rel: str) -> None:
    raw = tmp_path / "raw"
    raw.mkdir()
    with pytest.raises(UnsafePathError):
        resolve_below(raw, rel)


def test_resolve_below_refuses_symlinked_file_pointing_outside(tmp_path: Path) -> None:
    raw = tmp_path / "raw"
    raw.mkdir()
    secret = tmp_path / "secret.txt"
    secret.write_text("s")
    _symlink(raw / "link.txt", secret)
    with pytest.raises(UnsafePathError, match="not strictly below"):
        resolve_below(raw, "link.txt")


def test_resolve_below_refuses_symlinked_dir_pointing_outside(tmp_path: Path) -> None:
    raw = tmp_path / "raw"
    raw.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    _symlink(raw / "dir", outside, target_is_directory=True)
    with pytest.raises(UnsafePathError):
        resolve_below(raw, "dir/anything.pdf")


def test_resolve_below_refuses_dangling_symlink_pointing_outside(tmp_path: Path) -> None:
    raw = tmp_path / "raw"
    raw.mkdir()
    _symlink(raw / "later.txt", tmp_path / "not-yet-there.txt")
    with pytest.raises(UnsafePathError):
        resolve_below(raw, "later.txt")


def test_resolve_below_refuses_link_to_root_itself(tmp_path: Path) -> None:
    raw = tmp_path / "raw"
    raw.mkdir()
    _symlink(raw / "self", raw, target_is_directory=True)
    with pytest.raises(UnsafePathError, match="strictly below"):
        resolve_below(raw, "self")


def test_resolve_below_refuses_symlink_loop(tmp_path: Path) -> None:
    raw = tmp_path / "raw"
    raw.mkdir()
    _symlink(raw / "a", raw / "b")
    _symlink(raw / "b", raw / "a")
    with pytest.raises(UnsafePathError):
        resolve_below(raw, "a")


def test_resolve_below_allows_symlink_staying_inside(tmp_path: Path) -> None:
    raw = tmp_path / "raw"
    (raw / "real").mkdir(parents=True)
    (raw / "real" / "x.pdf").write_bytes(b"x")
    _symlink(raw / "alias", raw / "real", target_is_directory=True)
    assert resolve_below(raw, "alias/x.pdf") == (raw / "real" / "x.pdf").resolve()


def test_resolve_below_works_when_root_is_a_symlink(tmp_path: Path) -> None:
    real = tmp_path / "real_raw"
    real.mkdir()
    _symlink(tmp_path / "raw", real, target_is_directory=True)
    assert resolve_below(tmp_path / "raw", "x.pdf") == real.resolve() / "x.pdf"


# --------------------------------------------------------------------------- sanitize_file_name


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("report.pdf", "report.pdf"),
        ("a\x00b\x01c\x1bd\x7fe\x9f.txt", "abcde.txt"),
        ("line\nbreak\ttab\r\n", "line break tab"),
        ('a/b\\c:d*e?f"g<h>i|j', "a_b_c_d_e_f_g_h_i_j"),
        ("  many    spaces  ", "many spaces"),
        ("..hidden..", "hidden"),
        (" . name . ", "name"),
        ("evil\u202etxt.exe", "eviltxt.exe"),
        ("a\udc80b.txt", "a_b.txt"),
        ("full\u3000width", "full width"),
    ],
)
def test_sanitize_file_name_cleans_characters(name: str, expected: str) -> None:
    assert sanitize_file_name(name) == expected


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("con", "con_"),
        ("CON", "CON_"),
        ("CON.txt", "CON_.txt"),
        ("lpt1.md", "lpt1_.md"),
        ("Com9.tar.gz", "Com9_.tar.gz"),
        ("nul", "nul_"),
        ("aux.", "aux_"),
        ("CON .txt", "CON_ .txt"),
        ("prn", "prn_"),
        ("COM¹", "COM¹_"),
        ("conin$", "conin$_"),
        # Only exact device words are reserved.
        ("CONSOLE", "CONSOLE"),
        ("icon.png", "icon.png"),
        ("com10", "com10"),
        ("lpt", "lpt"),
    ],
)
def test_sanitize_file_name_avoids_windows_device_names(name: str, expected: str) -> None:
    assert sanitize_file_name(name) == expected


@pytest.mark.parametrize(
    "name",
    [
        "報告書 2024.pdf",
        "😀 party 🎉.png",
        "👨\u200d👩\u200d👧 family.jpg",  # ZWJ sequence must survive
        "❤\ufe0f.txt",  # variation selector must survive
        "Ελληνικά.docx",
        "مرحبا.txt",
        "café.md",
        "cafe\u0301.md",  # decomposed form is kept as given
    ],
)
def test_sanitize_file_name_keeps_unicode(name: str) -> None:
    assert sanitize_file_name(name) == name


@pytest.mark.parametrize(
    "name", ["", " ", "...", ".", "..", " . . ", "\x00", "\n\t", "\u202e", "\x00 . \x7f"]
)
def test_sanitize_file_name_never_returns_nothing(name: str) -> None:
    assert sanitize_file_name(name) == "untitled"


@pytest.mark.parametrize("name", [".trove", ".TROVE", "..trove", " .trove "])
def test_sanitize_file_name_never_returns_reserved_segment(name: str) -> None:
    result = sanitize_file_name(name)
    assert result.casefold() != RESERVED_SEGMENT
    assert not result.startswith(".")


@pytest.mark.parametrize(
    ("stem_char", "ext"),
    [("a", ".pdf"), ("字", ".pdf"), ("😀", ".txt"), ("é", ".docx"), ("b", ".verylongext")],
)
def test_sanitize_file_name_caps_bytes_and_keeps_extension(stem_char: str, ext: str) -> None:
    name = stem_char * (300 // len(stem_char.encode())) + ext
    assert len(name.encode()) > 300
    result = sanitize_file_name(name)
    encoded = result.encode("utf-8")  # raises if a code point were split into a surrogate
    assert len(encoded) <= MAX_SEGMENT_BYTES
    assert result.endswith(ext)
    stem = result[: -len(ext)]
    assert stem and set(stem) == {stem_char}
    # Nearly all of the budget is used; the cut only backs off to a code-point boundary.
    assert len(encoded) > MAX_SEGMENT_BYTES - len(stem_char.encode())


def test_sanitize_file_name_caps_name_without_usable_extension() -> None:
    title = "A very long article title. " * 20
    result = sanitize_file_name(title)
    assert len(result.encode()) <= MAX_SEGMENT_BYTES
    assert title.startswith(result)
    assert not result.endswith((" ", "."))


def test_sanitize_file_name_extension_like_title_is_not_an_extension() -> None:
    # "0 release notes" is not a file type; preserving it would be arbitrary.
    assert md_product_name(sanitize_file_name("Version 2.0 release notes")) == (
        "Version 2.0 release notes.md"
    )


def _assert_safe_segment(result: str) -> None:
    assert result
    assert result not in (".", "..")
    assert result.casefold() != RESERVED_SEGMENT
    assert "/" not in result and "\\" not in result and "\x00" not in result
    assert not result.startswith((".", " ")) and not result.endswith((".", " "))
    assert not any(unicodedata.category(ch) in ("Cc", "Cs") for ch in result)
    assert len(result.encode("utf-8")) <= MAX_SEGMENT_BYTES
    assert check_relative_path(result) == result


# Characters that hit the interesting branches far more often than uniform text does.
_NASTY = st.sampled_from(
    list('./\\ :*?"<>|\x00\t\n\u202e\u200dCONconLPTlpt1¹$.md.trove字😀é\udc80')
)


@given(st.text())
def test_sanitize_file_name_property_arbitrary_text(name: str) -> None:
    result = sanitize_file_name(name)
    _assert_safe_segment(result)
    assert sanitize_file_name(result) == result


@given(st.text(alphabet=st.characters(exclude_categories=()), max_size=400))
def test_sanitize_file_name_property_including_surrogates(name: str) -> None:
    _assert_safe_segment(sanitize_file_name(name))


@given(st.text(alphabet=_NASTY, max_size=300))
def test_sanitize_file_name_property_nasty_alphabet(name: str) -> None:
    result = sanitize_file_name(name)
    _assert_safe_segment(result)
    assert sanitize_file_name(result) == result


@given(st.lists(st.text(alphabet=_NASTY, max_size=20), min_size=1, max_size=5))
def test_sanitized_segments_form_valid_relative_path(segments: list[str]) -> None:
    rel = "/".join(sanitize_file_name(s) for s in segments)
    assert check_relative_path(rel) == rel


@given(st.text(alphabet=_NASTY, max_size=60))
def test_check_relative_path_only_raises_unsafe_path_error(rel: str) -> None:
    try:
        result = check_relative_path(rel)
    except UnsafePathError:
        return
    segments = result.split("/")
    assert ".." not in segments and "." not in segments and "" not in segments
    assert segments[0].casefold() != RESERVED_SEGMENT


# --------------------------------------------------------------------------- md_product_name


@pytest.mark.parametrize(
    ("rel", "expected"),
    [
        ("a/report.pdf", "a/report.md"),
        ("report.pdf", "report.md"),
        ("README", "README.md"),
        ("archive.tar.gz", "archive.tar.md"),
        ("notes.md", "notes.md"),
        ("a/NOTES.MD", "a/NOTES.MD"),
        ("report_1.pdf", "report_1.md"),
    ],
)
def test_md_product_name(rel: str, expected: str) -> None:
    assert md_product_name(rel) == expected


def test_md_product_name_refuses_unsafe_path() -> None:
    with pytest.raises(UnsafePathError):
        md_product_name("../report.pdf")


# --------------------------------------------------------------------------- allocation


@pytest.fixture
def raw(tmp_path: Path) -> Path:
    d = tmp_path / "raw"
    d.mkdir()
    return d


def test_allocate_free_name_is_unchanged(raw: Path) -> None:
    assert allocate_material_name(raw, "report.pdf") == "report.pdf"
    assert allocate_material_name(raw, "a/b/report.pdf") == "a/b/report.pdf"


def test_allocate_collisions_add_counter_before_extension(raw: Path) -> None:
    (raw / "report.pdf").write_bytes(b"")
    assert allocate_material_name(raw, "report.pdf") == "report_1.pdf"
    (raw / "report_1.pdf").write_bytes(b"")
    assert allocate_material_name(raw, "report.pdf") == "report_2.pdf"


def test_allocate_picks_smallest_free_counter(raw: Path) -> None:
    for name in ("report.pdf", "report_1.pdf", "report_3.pdf"):
        (raw / name).write_bytes(b"")
    assert allocate_material_name(raw, "report.pdf") == "report_2.pdf"


def test_allocate_collisions_are_case_insensitive_on_disk(raw: Path) -> None:
    (raw / "Report.PDF").write_bytes(b"")
    assert allocate_material_name(raw, "report.pdf") == "report_1.pdf"


def test_allocate_collisions_ignore_unicode_normalisation(raw: Path) -> None:
    (raw / "cafe\u0301.pdf").write_bytes(b"")
    assert allocate_material_name(raw, "CAFÉ.pdf") == "CAFÉ_1.pdf"


def test_allocate_collisions_are_case_insensitive_in_reserved(raw: Path) -> None:
    reserved = {"REPORT.pdf"}
    assert allocate_material_name(raw, "report.pdf", reserved=reserved) == "report_1.pdf"


def test_allocate_reserved_set_prevents_duplicates(raw: Path) -> None:
    reserved: set[str] = set()
    first = allocate_material_name(raw, "report.pdf", reserved=reserved)
    second = allocate_material_name(raw, "Report.pdf", reserved=reserved)
    third = allocate_material_name(raw, "a/report.pdf", reserved=reserved)
    assert (first, second, third) == ("report.pdf", "Report_1.pdf", "a/report.pdf")
    assert reserved == {"report.pdf", "Report_1.pdf", "a/report.pdf"}
    assert _listing(raw) == []  # nothing is created


def test_allocate_without_reserved_set_does_not_remember(raw: Path) -> None:
    assert allocate_material_name(raw, "report.pdf") == "report.pdf"
    assert allocate_material_name(raw, "report.pdf") == "report.pdf"


def test_allocate_with_md_product_requires_both_free(raw: Path) -> None:
    (raw / "report.md").write_bytes(b"")
    (raw / "report_1.pdf").write_bytes(b"")
    (raw / "report_2.MD").write_bytes(b"")
    reserved: set[str] = set()
    name = allocate_material_name(raw, "report.pdf", with_md_product=True, reserved=reserved)
    assert name == "report_3.pdf"
    assert reserved == {"report_3.pdf", "report_3.md"}


def test_allocate_with_md_product_reserves_both(raw: Path) -> None:
    reserved: set[str] = set()
    assert (
        allocate_material_name(raw, "a/report.pdf", with_md_product=True, reserved=reserved)
        == "a/report.pdf"
    )
    assert reserved == {"a/report.pdf", "a/report.md"}
    # The product blocks a later material that wants that name...
    assert allocate_material_name(raw, "a/report.md", reserved=reserved) == "a/report_1.md"
    # ...and a later material whose product would clash.
    assert (
        allocate_material_name(raw, "a/report.docx", with_md_product=True, reserved=reserved)
        == "a/report_2.docx"
    )


def test_allocate_md_product_ignored_for_markdown(raw: Path) -> None:
    reserved: set[str] = set()
    assert (
        allocate_material_name(raw, "notes.md", with_md_product=True, reserved=reserved)
        == "notes.md"
    )
    assert reserved == {"notes.md"}


def test_allocate_without_md_product_ignores_product_clash(raw: Path) -> None:
    (raw / "report.md").write_bytes(b"")
    assert allocate_material_name(raw, "report.pdf") == "report.pdf"


def test_allocate_nested_collision(raw: Path) -> None:
    (raw / "a" / "b").mkdir(parents=True)
    (raw / "a" / "b" / "report.pdf").write_bytes(b"")
    assert allocate_material_name(raw, "a/b/report.pdf") == "a/b/report_1.pdf"


def test_allocate_reuses_existing_folder_spelling(raw: Path) -> None:
    (raw / "Docs").mkdir()
    (raw / "Docs" / "x.pdf").write_bytes(b"")
    assert allocate_material_name(raw, "docs/x.pdf") == "Docs/x_1.pdf"
    assert allocate_material_name(raw, "DOCS/y.pdf") == "Docs/y.pdf"


def test_allocate_reuses_reserved_folder_spelling(raw: Path) -> None:
    reserved = {"Docs/x.pdf"}
    assert allocate_material_name(raw, "docs/y.pdf", reserved=reserved) == "Docs/y.pdf"


def test_allocate_folder_clashing_with_file_is_renamed(raw: Path) -> None:
    (raw / "a").write_bytes(b"")
    assert allocate_material_name(raw, "a/x.pdf") == "a_1/x.pdf"


def test_allocate_reserved_entry_can_be_a_folder(raw: Path) -> None:
    # Directory items are allocated with this function too; their children must land
    # inside them, not in a renamed sibling.
    reserved: set[str] = set()
    root = allocate_material_name(raw, "Docs", reserved=reserved)
    child = allocate_material_name(raw, "docs/sub/x.pdf", reserved=reserved)
    assert (root, child) == ("Docs", "Docs/sub/x.pdf")
    # But a reserved folder's name is never handed out again as a new root.
    assert allocate_material_name(raw, "DOCS", reserved=reserved) == "DOCS_1"


def test_allocate_file_clashing_with_folder_is_renamed(raw: Path) -> None:
    (raw / "report.pdf").mkdir()
    assert allocate_material_name(raw, "report.pdf") == "report_1.pdf"
    reserved = {"notes/x.pdf"}
    assert allocate_material_name(raw, "Notes", reserved=reserved) == "Notes_1"


def test_allocate_does_not_reuse_symlinked_folder(raw: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    _symlink(raw / "docs", outside, target_is_directory=True)
    name = allocate_material_name(raw, "docs/x.pdf")
    assert name == "docs_1/x.pdf"
    assert resolve_below(raw, name).is_relative_to(raw.resolve())


def test_allocate_dangling_symlink_counts_as_taken(raw: Path, tmp_path: Path) -> None:
    _symlink(raw / "report.pdf", tmp_path / "elsewhere.pdf")
    assert allocate_material_name(raw, "report.pdf") == "report_1.pdf"


@pytest.mark.parametrize(
    ("desired", "expected"),
    [
        ("../../etc/passwd", "etc/passwd"),
        ("/abs/x.pdf", "abs/x.pdf"),
        ("a//./b/report.pdf", "a/b/report.pdf"),
        (".trove/index.sqlite", "trove/index.sqlite"),
        ("a/CON/x?.txt", "a/CON_/x_.txt"),
        ("a\\..\\..\\x.pdf", "a_.._.._x.pdf"),
        ("C:\\Users\\me\\x.pdf", "C__Users_me_x.pdf"),
        ("", "untitled"),
        ("a/", "a/untitled"),
        ("..", "untitled"),
        ("報告/📄.pdf", "報告/📄.pdf"),
    ],
)
def test_allocate_sanitises_every_segment(raw: Path, desired: str, expected: str) -> None:
    result = allocate_material_name(raw, desired)
    assert result == expected
    assert check_relative_path(result) == result
    assert resolve_below(raw, result).is_relative_to(raw.resolve())


def test_allocate_counter_keeps_long_names_within_cap(raw: Path) -> None:
    desired = "字" * 100 + ".pdf"
    first = allocate_material_name(raw, desired)
    assert len(first.encode()) <= MAX_SEGMENT_BYTES
    (raw / first).write_bytes(b"")
    second = allocate_material_name(raw, desired)
    assert second.endswith("_1.pdf")
    assert len(second.encode()) <= MAX_SEGMENT_BYTES


def test_allocate_long_name_with_md_product_both_fit(raw: Path) -> None:
    reserved: set[str] = set()
    allocate_material_name(raw, "x" * 300 + ".c", with_md_product=True, reserved=reserved)
    assert len(reserved) == 2
    assert all(len(n.encode()) <= MAX_SEGMENT_BYTES for n in reserved)


def test_allocate_missing_raw_dir_is_fine(tmp_path: Path) -> None:
    assert allocate_material_name(tmp_path / "nope", "a/x.pdf") == "a/x.pdf"


@given(
    st.lists(st.text(alphabet=_NASTY, max_size=15), min_size=1, max_size=4).map("/".join),
    st.booleans(),
)
def test_allocate_property_always_valid_and_unique(
    tmp_path_factory: pytest.TempPathFactory, desired: str, with_md: bool
) -> None:
    # tmp_path would be shared across examples anyway (Hypothesis rejects function-scoped
    # fixtures); nothing is written, so one empty directory serves every example.
    raw_dir = tmp_path_factory.getbasetemp() / "allocation-property-raw"
    reserved: set[str] = set()
    first = allocate_material_name(raw_dir, desired, with_md_product=with_md, reserved=reserved)
    second = allocate_material_name(raw_dir, desired, with_md_product=with_md, reserved=reserved)
    for name in (first, second):
        assert check_relative_path(name) == name
        assert all(len(seg.encode()) <= MAX_SEGMENT_BYTES for seg in name.split("/"))
    assert first.casefold() != second.casefold()
    assert first in reserved and second in reserved
