"""Delimited tables (CSV, TSV) -> a Markdown table; JSON -> pretty-printed JSON text."""

from __future__ import annotations

import csv
import io
import json

from app.knowledge.pipeline.readers.document import describe
from app.knowledge.pipeline.readers.errors import ReaderError
from app.knowledge.pipeline.readers.tables import markdown_table
from app.knowledge.types import ErrorCode

MAX_TABLE_ROWS = 10_000
MAX_TABLE_COLUMNS = 100
_SNIFF_CHARS = 16_384
_DELIMITERS = ",;\t|"


def delimited_to_markdown(text: str, *, delimiter: str | None = None) -> str:
    """A CSV/TSV text as a Markdown table (first row as header), capped in rows and columns.

    The delimiter is sniffed from the start of the text unless given.
    """
    if not text.strip():
        return ""
    if delimiter is None:
        delimiter = sniff_delimiter(text[:_SNIFF_CHARS])
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    rows: list[list[str]] = []
    extra_rows = 0
    wide = False
    try:
        for row in reader:
            if not any(cell.strip() for cell in row):
                continue
            if len(rows) >= MAX_TABLE_ROWS:
                extra_rows += 1
                continue
            if len(row) > MAX_TABLE_COLUMNS:
                wide = True
                row = row[:MAX_TABLE_COLUMNS]
            rows.append(row)
    except csv.Error as exc:
        raise ReaderError(
            ErrorCode.READ_FAILED,
            f"the table could not be parsed at line {reader.line_num}: {describe(exc)}",
        ) from exc
    parts = [markdown_table(rows)]
    if extra_rows:
        total = len(rows) + extra_rows
        parts.append(f"_Only the first {len(rows):,} of {total:,} rows are included._")
    if wide:
        parts.append(f"_Only the first {MAX_TABLE_COLUMNS} columns are included._")
    return "\n\n".join(part for part in parts if part)


def sniff_delimiter(sample: str) -> str:
    cut = sample.rfind("\n")
    if cut > 0:
        sample = sample[:cut]
    try:
        return csv.Sniffer().sniff(sample, delimiters=_DELIMITERS).delimiter
    except csv.Error:
        counts = {d: sample.count(d) for d in _DELIMITERS}
        best = max(counts, key=lambda d: counts[d])
        return best if counts[best] else ","


def json_to_text(text: str, *, lines: bool = False) -> str:
    """Pretty-printed JSON; JSON Lines (or a .json holding one value per line) kept as lines.

    Invalid JSON raises READ_FAILED with the parser's message.
    """
    if not text.strip():
        return ""
    if not lines:
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            if exc.msg != "Extra data" or not _is_json_lines(text):
                raise ReaderError(ErrorCode.READ_FAILED, f"the JSON is invalid: {exc}") from exc
        except RecursionError as exc:
            raise ReaderError(ErrorCode.READ_FAILED, "the JSON is nested too deeply") from exc
        else:
            return json.dumps(value, indent=2, ensure_ascii=False)
    kept: list[str] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            json.loads(line)
        except json.JSONDecodeError as exc:
            raise ReaderError(
                ErrorCode.READ_FAILED, f"the JSON Lines file is invalid at line {number}: {exc}"
            ) from exc
        except RecursionError as exc:
            raise ReaderError(
                ErrorCode.READ_FAILED, f"line {number} of the JSON Lines file is nested too deeply"
            ) from exc
        kept.append(line.rstrip())
    return "\n".join(kept)


def _is_json_lines(text: str) -> bool:
    try:
        for line in text.splitlines():
            if line.strip():
                json.loads(line)
    except (json.JSONDecodeError, RecursionError):
        return False
    return True
