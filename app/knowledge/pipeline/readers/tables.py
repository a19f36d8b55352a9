"""Rows of cells -> a GitHub-flavoured Markdown table."""

from __future__ import annotations

from collections.abc import Sequence


def escape_cell(value: str) -> str:
    """A cell's text made safe inside a Markdown table row."""
    text = value.replace("|", "\\|")
    if "\n" in text or "\r" in text:
        lines = [
            line.strip() for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
        ]
        text = "<br>".join(line for line in lines if line)
    return text.strip()


def markdown_table(rows: Sequence[Sequence[str]]) -> str:
    """The first row is the header; short rows are padded; empty input gives ''."""
    if not rows:
        return ""
    width = max(len(row) for row in rows)
    if width == 0:
        return ""
    lines: list[str] = []
    for index, row in enumerate(rows):
        cells = [escape_cell(cell) for cell in row]
        cells.extend([""] * (width - len(cells)))
        lines.append("| " + " | ".join(cells) + " |")
        if index == 0:
            lines.append("|" + "---|" * width)
    return "\n".join(lines)
