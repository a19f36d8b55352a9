"""kb_read's pattern mode: the lines of one document that match a regular expression.

Patterns run on the `regex` module (the syntax and Unicode semantics of Python's `re`,
`VERSION0`) because it takes a `timeout`: `re` backtracks and cannot be interrupted, so a
pattern like (a+)+$ could hold a thread for hours. Every search here gets what is left of
the grep's time budget; running out ends the grep with `timedOut`, never a hang.
"""

from __future__ import annotations

import io
import time
from dataclasses import dataclass
from typing import Any

import regex

from app.agent.errors import ToolError, ToolErrorCode
from app.agent.specs import DEFAULT_CONTEXT_LINES, DEFAULT_GREP_MATCHES, MAX_PATTERN_CHARS

GREP_TIME_BUDGET = 2.0  # seconds for one grep over one material
SHOWN_LINE_CHARS = 400  # a matching or context line is cut to this much around the match


@dataclass(frozen=True, slots=True)
class GrepPattern:
    """A compiled grep pattern."""

    compiled: regex.Pattern[str]

    @property
    def pattern(self) -> str:
        return self.compiled.pattern

    @property
    def ignore_case(self) -> bool:
        return bool(self.compiled.flags & regex.IGNORECASE)


def compile_pattern(pattern: str, *, ignore_case: bool = False) -> GrepPattern:
    """Compile a grep pattern; INVALID_PATTERN when it is too long or not a regex."""
    if len(pattern) > MAX_PATTERN_CHARS:
        raise ToolError(
            ToolErrorCode.INVALID_PATTERN,
            f"the pattern is longer than {MAX_PATTERN_CHARS} characters",
        )
    flags = regex.VERSION0 | (regex.IGNORECASE if ignore_case else 0)
    try:
        compiled = regex.compile(pattern, flags)
    except (regex.error, RecursionError, OverflowError, ValueError) as exc:
        raise ToolError(
            ToolErrorCode.INVALID_PATTERN, f"not a valid regular expression: {exc}"
        ) from exc
    return GrepPattern(compiled)


def _first_match(pattern: GrepPattern, line: str, deadline: float) -> tuple[int, int] | None:
    """The first match in a line; TimeoutError once the deadline has passed."""
    left = deadline - time.monotonic()
    if left <= 0:
        raise TimeoutError("grep time budget spent")
    m = pattern.compiled.search(line, timeout=left)
    return m.span() if m else None


def _shown(line: str, start: int = 0, end: int = 0) -> str:
    """A line cut to SHOWN_LINE_CHARS around [start, end)."""
    if len(line) <= SHOWN_LINE_CHARS:
        return line
    room = max(0, SHOWN_LINE_CHARS - (end - start)) // 2
    lo = max(0, start - room)
    hi = min(len(line), max(end + room, lo + SHOWN_LINE_CHARS))
    return ("…" if lo > 0 else "") + line[lo:hi] + ("…" if hi < len(line) else "")


def _strip_eol(line: str) -> str:
    return line.rstrip("\r\n")


def grep_lines(
    text: str,
    pattern: GrepPattern,
    *,
    context: int = DEFAULT_CONTEXT_LINES,
    max_matches: int = DEFAULT_GREP_MATCHES,
    time_budget: float | None = None,
) -> dict[str, Any]:
    """Lines of `text` matching `pattern`: 1-based line numbers, absolute character offsets
    of the first match in each line, and `context` lines either side."""
    lines = io.StringIO(text, newline="").readlines()
    offsets: list[int] = []
    position = 0
    for line in lines:
        offsets.append(position)
        position += len(line)
    budget = GREP_TIME_BUDGET if time_budget is None else time_budget
    deadline = time.monotonic() + budget
    matches: list[dict[str, Any]] = []
    truncated = timed_out = False
    scanned = 0
    for index, raw_line in enumerate(lines):
        line = _strip_eol(raw_line)
        try:
            span = _first_match(pattern, line, deadline)
        except TimeoutError:
            timed_out = True
            break
        scanned = index + 1
        if span is None:
            continue
        if len(matches) >= max_matches:
            truncated = True
            break
        start, end = span
        matches.append(
            {
                "line": index + 1,
                "charStart": offsets[index] + start,
                "charEnd": offsets[index] + end,
                "text": _shown(line, start, end),
                "before": [_shown(_strip_eol(x)) for x in lines[max(0, index - context) : index]],
                "after": [_shown(_strip_eol(x)) for x in lines[index + 1 : index + 1 + context]],
            }
        )
    result: dict[str, Any] = {
        "matches": matches,
        "matchCount": len(matches),
        "truncated": truncated,
        "timedOut": timed_out,
        "linesScanned": scanned,
        "totalLines": len(lines),
    }
    if timed_out:
        result["note"] = (
            f"the search stopped after {budget:g} s at line {scanned + 1}; use a simpler pattern"
        )
    return result
