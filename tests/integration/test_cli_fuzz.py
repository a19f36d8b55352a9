"""The CLI under hostile input: `--queries` files and argv fragments never give a traceback.

Whatever the input, `trove` exits 0, 1 or 2, prints no "Traceback", and writes valid UTF-8
on stdout; every well-formed query is answered, every malformed line is reported. The
property tests call `app.cli.main()` in-process with byte-backed stdout/stderr (a process
start per example would cost seconds); a few checks run the real `python -m app` because
what they test only exists in a real process (a closed pipe, the interpreter's own flush at
exit, reader worker processes).
"""

from __future__ import annotations

import codecs
import io
import json
import logging
import os
import subprocess
import sys
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import keyring
import keyring.backend
import keyring.errors
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from keyring.backends import fail

from app.cli import main
from app.knowledge.logs import configure_logging, log_file_path, reset_logging
from tests.providers.conftest import KEY, MemoryKeyring
from tests.unit.make_files import pdf_bytes

FUZZ = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
EXIT_CODES = {0, 1, 2}
NOTE = "Tomatoes need full sun; the bar opens at noon. 知识库 alpha"


@dataclass(frozen=True)
class Run:
    code: int
    out: bytes
    err: bytes

    def check(self) -> None:
        """What holds for any input at all."""
        assert self.code in EXIT_CODES, (self.code, self.err[-2000:])
        assert b"Traceback" not in self.err, self.err[-4000:].decode("utf-8", "replace")
        self.out.decode("utf-8")  # strict: raises on anything that is not UTF-8

    def lines(self) -> list[Any]:
        return [json.loads(line) for line in self.out.split(b"\n") if line.strip()]


def run_cli(*argv: str, stdin: str = "") -> Run:
    """main() in this process, with stdout/stderr as text streams over bytes, like a real
    process's, so what reaches the "terminal" is checked as bytes."""
    out, err = io.BytesIO(), io.BytesIO()
    out_text = io.TextIOWrapper(out, encoding="utf-8", write_through=True)
    err_text = io.TextIOWrapper(err, encoding="utf-8", write_through=True)
    saved = sys.stdout, sys.stderr, sys.stdin
    sys.stdout, sys.stderr, sys.stdin = out_text, err_text, io.StringIO(stdin)
    try:
        try:
            code = main(list(argv))
        except SystemExit as exc:  # argparse: --help, --version, usage errors
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        out_text.flush()
        err_text.flush()
        return Run(code, out.getvalue(), err.getvalue())
    finally:
        sys.stdout, sys.stderr, sys.stdin = saved
        out_text.detach()
        err_text.detach()


def trove(home: Path, *args: str, **kwargs: Any) -> subprocess.CompletedProcess[bytes]:
    env = {k: v for k, v in os.environ.items() if k != "TROVE_HOME"}
    env.update(kwargs.pop("env", {}))
    cmd = [sys.executable, "-m", "app", "--home", str(home), *args]
    return subprocess.run(cmd, env=env, timeout=120, check=False, **kwargs)


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A BM25 base "B" with one note, made by the real command line."""
    home = tmp_path_factory.mktemp("cli-fuzz") / "home"
    assert trove(home, "base", "create", "B", capture_output=True).returncode == 0
    noted = trove(home, "note", "B", "Garden", NOTE, capture_output=True)
    assert noted.returncode == 0, noted.stderr
    return home


def search_file(home: Path, tmp_path: Path, data: bytes) -> Run:
    path = tmp_path / "queries.jsonl"
    path.write_bytes(data)
    return run_cli("--home", str(home), "search", "B", "--queries", str(path))


# -- --queries files: structured lines ----------------------------------------------------------

SURROGATES = ["\ud800", "\udfff", "\udc80", "\udbff\udc00"]  # the last is a valid pair (U+10FC00)
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner),
    max_leaves=6,
)
query_texts = st.lists(
    st.text(max_size=12) | st.sampled_from([*SURROGATES, "bar", "-bar", "知识", "\u2028", "\r"]),
    max_size=5,
).map("".join)


@dataclass(frozen=True)
class Line:
    text: str
    answer: tuple[str, str] | None  # (query id, query) when the line is a well-formed query


def _record_line(record: dict[str, Any], ascii_only: bool) -> Line:
    query_id, text = record.get("_id"), record.get("text")
    id_ok = isinstance(query_id, str) or (
        isinstance(query_id, int) and not isinstance(query_id, bool)
    )
    # Through JSON: escaped surrogate pairs ("\\udbff\\udc00") come back as one character.
    answer = (
        (str(query_id), json.loads(json.dumps(text))) if id_ok and isinstance(text, str) else None
    )
    return Line(json.dumps(record, ensure_ascii=ascii_only), answer)


@st.composite
def good_lines(draw: st.DrawFn) -> Line:
    query_id = draw(st.text(max_size=6) | st.integers())
    text = draw(query_texts)
    # Raw surrogates cannot be written in any encoding: JSON escapes carry them.
    ascii_only = draw(st.booleans()) or any("\ud800" <= c <= "\udfff" for c in text)
    return _record_line({"_id": query_id, "text": text}, ascii_only)


@st.composite
def wrong_type_lines(draw: st.DrawFn) -> Line:
    record = {"_id": draw(JSON_VALUES), "text": draw(JSON_VALUES)}
    for key in draw(st.lists(st.sampled_from(["_id", "text"]), max_size=2)):
        record.pop(key, None)
    return _record_line(record, ascii_only=True)


DEEP = [
    "[" * 100_000,
    "{" * 100_000,
    '{"_id": 1, "text": ' + "[" * 100_000,
    '{"_id": 1, "text": ' + "[" * 50_000 + "]" * 50_000 + "}",
    '"' + "a" * 300_000,
    '{"_id": "big", "text": 7' + " " * 300_000 + "}",
    "[1]",
    '"just a string"',
    "null",
]
garbage = st.text(
    st.characters(exclude_characters="\n\r", exclude_categories=("Cs",)), max_size=30
).map(lambda t: "x" + t)
lines = (
    good_lines()
    | wrong_type_lines()
    | st.sampled_from(DEEP).map(lambda t: Line(t, None))
    | garbage.map(lambda t: Line(t, None))
)
ENCODINGS = {
    "utf-8": b"",
    "utf-8-sig": b"",  # the codec writes the BOM
    "utf-16-le": codecs.BOM_UTF16_LE,
    "utf-16-be": codecs.BOM_UTF16_BE,
}


@FUZZ
@given(
    content=st.lists(lines, max_size=6),
    encoding=st.sampled_from(sorted(ENCODINGS)),
    newline=st.sampled_from(["\n", "\r\n"]),
    blank=st.booleans(),
)
def test_any_queries_file_answers_every_query_and_reports_the_rest(
    home: Path, tmp_path: Path, content: list[Line], encoding: str, newline: str, blank: bool
) -> None:
    text = newline.join([*(["", "  "] if blank else []), *(line.text for line in content)])
    run = search_file(home, tmp_path, ENCODINGS[encoding] + text.encode(encoding))
    run.check()
    answers = [line.answer for line in content if line.answer is not None]
    malformed = len(content) - len(answers)
    assert run.code == (1 if malformed else 0), run.err[-2000:]
    out = run.lines()
    assert [(o["query_id"], o["query"]) for o in out] == answers
    assert run.err.count(b"error: ") == malformed


@FUZZ
@given(
    data=st.binary(max_size=300), bom=st.sampled_from([b"", *ENCODINGS.values(), b"\xef\xbb\xbf"])
)
def test_random_bytes_as_a_queries_file(
    home: Path, tmp_path: Path, data: bytes, bom: bytes
) -> None:
    search_file(home, tmp_path, bom + data).check()


# -- argv ---------------------------------------------------------------------------------------

FRAGMENTS = [
    "-bar",
    "--",
    "--json",
    "--debug",
    "--top-k",
    "3",
    "0",
    "-1",
    "99999999999999999999",
    "--top-k=2",
    "--queries",
    "-",
    "-x",
    "--nope",
    "-v",
    "--verbose",
    "-h",
    "bar",
    "é",
    "知识 库",
    "\udcff",
    "--queries=",
    "-é",
    "---",
    " -bar",
    "B",
]
COMMANDS = [["search", "B"], ["search"], ["status", "B"], ["item", "list", "B"], ["base", "list"]]
argv_text = st.text(st.characters(exclude_characters="\x00"), max_size=10)


@FUZZ
@given(
    command=st.sampled_from(COMMANDS),
    rest=st.lists(st.sampled_from(FRAGMENTS) | argv_text, max_size=5),
)
def test_any_argv(home: Path, command: list[str], rest: list[str]) -> None:
    run_cli("--home", str(home), *command, *rest).check()


@pytest.mark.parametrize(
    "argv", [["search", "\udcff", "query"], ["item", "list", "\udcff"], ["reindex", "\udcff"]]
)
def test_an_undecodable_argument_is_one_usage_line(home: Path, argv: list[str]) -> None:
    # What Python makes of argv bytes that are not UTF-8 (surrogateescape), e.g. a base
    # name typed in another encoding: found by hypothesis as a traceback.
    run = run_cli("--home", str(home), *argv)
    run.check()
    assert run.code == 2
    lines = run.err.decode("utf-8").strip().splitlines()
    assert len(lines) == 1 and "INVALID_ARGUMENT" in lines[0], lines


@pytest.mark.parametrize(
    "argv",
    [
        ["-bar", "--json"],
        ["--json", "-bar"],
        ["--json", "--", "-bar"],
        ["--json", "bar"],
        ["--", "-bar"],
        ["-bar"],
    ],
)
def test_a_query_may_start_with_a_dash(home: Path, argv: list[str]) -> None:
    run = run_cli("--home", str(home), "search", "B", *argv)
    run.check()
    assert run.code == 0, run.err
    if "--json" in argv:
        (answer,) = run.lines()
        assert answer["query"] in {"-bar", "bar"} and answer["results"], answer
    else:
        assert "the bar opens" in run.out.decode(), run.out


def test_unknown_options_are_still_refused(home: Path) -> None:
    for argv in (["search", "B", "bar", "-x"], ["status", "B", "-x"], ["search", "B", "-a", "-b"]):
        run = run_cli("--home", str(home), *argv)
        run.check()
        assert run.code == 2 and b"unrecognized arguments" in run.err, argv


# -- the regressions, one by one ---------------------------------------------------------------


def test_a_lone_surrogate_is_answered_as_a_json_escape(home: Path, tmp_path: Path) -> None:
    queries = '{"_id": "s", "text": "\\ud800 bar"}\n{"_id": "t", "text": "bar"}\n'
    run = search_file(home, tmp_path, queries.encode())
    run.check()
    assert run.code == 0, run.err
    first, second = run.lines()
    assert first["query"] == "\ud800 bar" and first["results"]
    assert b'"\\ud800 bar"' in run.out
    assert second["query_id"] == "t"


@pytest.mark.parametrize("encoding", sorted(ENCODINGS))
def test_queries_files_in_utf8_or_utf16_with_a_bom(
    home: Path, tmp_path: Path, encoding: str
) -> None:
    text = '{"_id": "1", "text": "知识"}\n{"_id": "2", "text": "bar \u2028 alpha"}\n'
    run = search_file(home, tmp_path, ENCODINGS[encoding] + text.encode(encoding))
    run.check()
    assert run.code == 0, run.err
    assert [(o["query_id"], o["query"]) for o in run.lines()] == [
        ("1", "知识"),
        ("2", "bar \u2028 alpha"),
    ]


def test_undecodable_lines_are_malformed_and_the_others_run(home: Path, tmp_path: Path) -> None:
    data = b'{"_id": "1", "text": "bar"}\n\xff\xfe\xfd not text\n{"_id": "2", "text": "alpha"}\n'
    run = search_file(home, tmp_path, data)
    run.check()
    assert run.code == 1
    assert [o["query_id"] for o in run.lines()] == ["1", "2"]
    assert b"queries.jsonl:2: the line is not valid UTF-8" in run.err


def test_deep_nesting_is_a_malformed_line(home: Path, tmp_path: Path) -> None:
    data = ("[" * 100_000 + '\n{"_id": "ok", "text": "bar"}\n').encode()
    run = search_file(home, tmp_path, data)
    run.check()
    assert run.code == 1
    assert [o["query_id"] for o in run.lines()] == ["ok"]
    assert b"queries.jsonl:1: expected a JSON object with _id and text" in run.err


@pytest.mark.parametrize(
    "record", ['{"_id": 5, "text": ["a"]}', '{"_id": 5, "text": 7}', '{"_id": [1], "text": "a"}']
)
def test_wrong_types_are_malformed(home: Path, tmp_path: Path, record: str) -> None:
    run = search_file(home, tmp_path, record.encode())
    run.check()
    assert run.code == 1 and run.out == b""
    assert b"must be" in run.err


# -- provider add --key-stdin: one outcome -------------------------------------------------------


class RefusingKeyring(keyring.backend.KeyringBackend):
    """A keychain that exists but refuses to store (locked, or the person said no)."""

    priority = 1

    def get_password(self, service: str, username: str) -> str | None:
        return None

    def set_password(self, service: str, username: str, password: str) -> None:
        raise keyring.errors.PasswordSetError("the keychain is locked")

    def delete_password(self, service: str, username: str) -> None:
        raise keyring.errors.PasswordDeleteError("not found")


@pytest.fixture
def restore_keyring() -> Iterator[None]:
    previous = keyring.get_keyring()
    yield
    keyring.set_keyring(previous)


def _provider_ids(home: Path) -> list[str]:
    run = run_cli("--home", str(home), "provider", "list", "--json")
    assert run.code == 0, run.err
    return [p["id"] for p in run.lines()[0]]


ADD_VENDOR = ("provider", "add", "vendor", "--kind", "openai", "--url", "http://127.0.0.1:9")


@pytest.mark.parametrize("backend", [fail.Keyring, RefusingKeyring])
def test_provider_add_without_a_usable_keychain_saves_nothing(
    tmp_path: Path, restore_keyring: None, backend: type[keyring.backend.KeyringBackend]
) -> None:
    keyring.set_keyring(backend())  # type: ignore[no-untyped-call]
    home = tmp_path / "home"
    run = run_cli("--home", str(home), *ADD_VENDOR, "--key-stdin", stdin=KEY + "\n")
    run.check()
    assert run.code == 1
    assert b"KEYCHAIN_UNAVAILABLE" in run.err and b"TROVE_KEY_VENDOR" in run.err
    assert KEY.encode() not in run.err + run.out
    assert "vendor" not in _provider_ids(home)


def test_provider_add_with_a_keychain_saves_the_provider_and_its_key(
    tmp_path: Path, restore_keyring: None
) -> None:
    memory = MemoryKeyring()
    keyring.set_keyring(memory)
    home = tmp_path / "home"
    run = run_cli("--home", str(home), *ADD_VENDOR, "--key-stdin", stdin=KEY + "\n")
    assert run.code == 0, run.err
    assert "vendor" in _provider_ids(home)
    assert memory.store == {("Trove", "vendor"): KEY}


# -- library warnings go to the log file ------------------------------------------------------


def test_library_warnings_and_records_go_to_the_log_file_not_stderr(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    home = tmp_path / "home"
    configure_logging(home)
    try:
        logging.getLogger("pypdf._reader").warning("EOF marker not found")
        warnings.warn("a library's DeprecationWarning", DeprecationWarning, stacklevel=1)
        logging.getLogger("app.cli_fuzz_test").warning("Trove's own words")
    finally:
        reset_logging()
    err = capsys.readouterr().err
    assert "EOF marker" not in err and "DeprecationWarning" not in err
    assert "Trove's own words" in err
    logged = log_file_path(home).read_text("utf-8")
    assert "EOF marker not found" in logged and "DeprecationWarning" in logged


def test_reader_workers_log_pdf_warnings_to_the_file(tmp_path: Path) -> None:
    """pypdf warns from a reader worker process; the terminal sees Trove's summary only."""
    data = pdf_bytes(["hello tomato world"])
    broken = tmp_path / "pdfs" / "no-eof.pdf"
    broken.parent.mkdir()
    broken.write_bytes(data[: data.rfind(b"%%EOF")])
    home = tmp_path / "home"
    assert trove(home, "base", "create", "P", capture_output=True).returncode == 0
    added = trove(home, "add", "P", str(broken.parent), "--wait", capture_output=True)
    assert added.returncode == 1  # the file is damaged: a failed item, said plainly
    assert b"EOF marker" not in added.stderr and b"Traceback" not in added.stderr
    assert b"READ_FAILED" in added.stderr
    assert "EOF marker not found" in log_file_path(home).read_text("utf-8")


# -- real processes: pipes, the interpreter's flush, encodings --------------------------------


def test_a_closed_pipe_ends_quietly(home: Path) -> None:
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before the first byte: every write is EPIPE
    try:
        status = trove(home, "status", "B", stdout=write_end, stderr=subprocess.PIPE)
    finally:
        os.close(write_end)
    assert status.returncode == 1
    assert status.stderr == b""


def test_head_minus_one_on_a_long_output(home: Path, tmp_path: Path) -> None:
    queries = tmp_path / "many.jsonl"
    queries.write_text(
        "".join(json.dumps({"_id": str(i), "text": "bar alpha"}) + "\n" for i in range(400))
    )
    cmd = [
        sys.executable,
        "-m",
        "app",
        "--home",
        str(home),
        "search",
        "B",
        "--queries",
        str(queries),
    ]
    search = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert search.stdout is not None and search.stderr is not None
    head = subprocess.run(["head", "-1"], stdin=search.stdout, capture_output=True, timeout=120)
    search.stdout.close()  # only head holds the read end now
    err = search.stderr.read()
    assert search.wait(timeout=120) in (0, 1)
    assert json.loads(head.stdout)["query_id"] == "0"
    assert err == b"", err.decode("utf-8", "replace")


def test_surrogates_and_utf16_in_a_real_process(home: Path, tmp_path: Path) -> None:
    queries = tmp_path / "q16.jsonl"
    text = '{"_id": "s", "text": "\\udfff bar"}\n{"_id": "z", "text": "知识"}\n'
    queries.write_bytes(codecs.BOM_UTF16_BE + text.encode("utf-16-be"))
    run = trove(home, "search", "B", "--queries", str(queries), capture_output=True)
    assert run.returncode == 0, run.stderr
    assert b"Traceback" not in run.stderr
    out = [json.loads(line) for line in run.stdout.decode("utf-8").splitlines()]
    assert [(o["query_id"], o["query"]) for o in out] == [("s", "\udfff bar"), ("z", "知识")]
