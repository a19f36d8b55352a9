"""A base's name is one line of sane length (base_names.py), whoever gives it: `trove base
create`, a rename, an import; and the CLI prints names, titles and messages it did not write
with their control characters escaped, so no name can drive the terminal that lists it."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.knowledge.jobs.reader_pool import InlineExtraction
from app.knowledge.service import KnowledgeService
from app.knowledge.types import ErrorCode, TroveError
from tests.integration.test_cli import trove

ESCAPES = "\u001b[31mred\u0007"


@pytest.mark.parametrize(
    "name",
    ["two\nlines", "tab\tbed", ESCAPES, "right\u202eto left", "x" * 5000],
    ids=["newline", "tab", "terminal-escape", "bidi-override", "5000-characters"],
)
def test_create_and_rename_refuse_a_name_that_is_not_one_sane_line(
    tmp_path: Path, name: str
) -> None:
    svc = KnowledgeService(tmp_path / "home", extraction=InlineExtraction())
    try:
        with pytest.raises(TroveError) as created:
            svc.create_base(name)
        assert created.value.code is ErrorCode.INVALID_ARGUMENT
        assert svc.list_bases() == []
        base = svc.create_base("fine")
        with pytest.raises(TroveError) as renamed:
            svc.update_base(base.id, name=name)
        assert renamed.value.code is ErrorCode.INVALID_ARGUMENT
        assert svc.list_bases()[0].name == "fine"
    finally:
        svc.close()


def test_the_cli_refuses_such_a_name_in_one_line(tmp_path: Path) -> None:
    said = trove(tmp_path / "home", "base", "create", "two\nlines")
    assert said.returncode == 1
    assert said.stderr.startswith("error: INVALID_ARGUMENT: ") and "Traceback" not in said.stderr
    assert said.stderr.count("\n") == 1, "the refusal is one line too"
    assert trove(tmp_path / "home", "base", "create", "Ünïcode 知识 🙂").returncode == 0


def test_names_from_before_the_rule_are_printed_escaped(tmp_path: Path) -> None:
    """A name already in the catalog (written before names were checked) is listed, and
    its status shown, with its control characters as escapes."""
    home = tmp_path / "home"
    svc = KnowledgeService(home, extraction=InlineExtraction())
    try:
        base = svc.create_base("plain")
        svc.catalog.update_base(base.id, name=ESCAPES + "\nforged line")
    finally:
        svc.close()
    for args in (("base", "list"), ("status", base.id)):
        said = trove(home, *args)
        assert said.returncode == 0, said.stderr
        assert "\x1b" not in said.stdout and "\x07" not in said.stdout
        assert "\\x1b[31mred\\x07\\nforged line" in said.stdout


def test_shown_escapes_controls_and_keeps_text() -> None:
    from app.cli.output import shown, shown_text, table

    assert shown(ESCAPES) == "\\x1b[31mred\\x07"
    assert shown("a\r\nb\u2028c\u202ed") == "a\\r\\nb\\u2028c\\u202ed"
    assert shown("知识 🙂 naïve") == "知识 🙂 naïve"
    assert shown_text("line one\nline two\t\x1b[2J") == "line one\nline two\t\\x1b[2J"
    assert "\x1b" not in table([("id", ESCAPES)], ("ID", "NAME"))
