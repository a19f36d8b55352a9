"""kb_read's pattern mode: the lines of one document that match a regular expression.

Patterns run on the `regex` module (the syntax and Unicode semantics of Python's `re`,
`VERSION0`) because it takes a `timeout`: `re` backtracks and cannot be interrupted, so a
pattern like (a+)+$ could hold a thread for hours. That timeout counts CPU time, so the
grep's budget is kept in wall-clock time by waiting for the scan on another thread (with
the GIL released while a pattern runs); every search gets what is left of the budget as
its timeout, which ends a scan nobody waits for any more. Running out ends the grep with
`timedOut`, never a hang.
"""

from __future__ import annotations

import io
import threading
import time
from dataclasses import dataclass, field
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
    """The first match in a line; TimeoutError once the deadline has passed. The GIL is
    released while the pattern runs (`concurrent`: the line is an immutable str), so the
    thread that waits on the grep wakes at its deadline even mid-match."""
    left = deadline - time.monotonic()
    if left <= 0:
        raise TimeoutError("grep time budget spent")
    m = pattern.compiled.search(line, timeout=left, concurrent=True)
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


@dataclass
class _Scan:
    """One grep's progress, shared by the thread that scans and the one that waits."""

    lines: list[str]
    context: int
    max_matches: int
    deadline: float
    matches: list[dict[str, Any]] = field(default_factory=list)
    scanned: int = 0
    truncated: bool = False
    timed_out: bool = False
    lock: threading.Lock = field(default_factory=threading.Lock)
    stopped: bool = False  # the waiter gave up: take nothing more
    done: threading.Event = field(default_factory=threading.Event)

    def run(self, pattern: GrepPattern, offsets: list[int]) -> None:
        try:
            self._scan(pattern, offsets)
        finally:
            self.done.set()

    def _scan(self, pattern: GrepPattern, offsets: list[int]) -> None:
        lines = self.lines
        for index, raw_line in enumerate(lines):
            line = _strip_eol(raw_line)
            try:
                span = _first_match(pattern, line, self.deadline)
            except TimeoutError:
                self.timed_out = True
                return
            with self.lock:
                if self.stopped:
                    return
                self.scanned = index + 1
                if span is None:
                    continue
                if len(self.matches) >= self.max_matches:
                    self.truncated = True
                    return
                self.matches.append(_match(lines, index, offsets[index], line, span, self.context))

    def stop(self) -> None:
        with self.lock:
            self.stopped = True
            self.timed_out = True


def _match(
    lines: list[str], index: int, offset: int, line: str, span: tuple[int, int], context: int
) -> dict[str, Any]:
    start, end = span
    return {
        "line": index + 1,
        "charStart": offset + start,
        "charEnd": offset + end,
        "text": _shown(line, start, end),
        "before": [_shown(_strip_eol(x)) for x in lines[max(0, index - context) : index]],
        "after": [_shown(_strip_eol(x)) for x in lines[index + 1 : index + 1 + context]],
    }


def grep_lines(
    text: str,
    pattern: GrepPattern,
    *,
    context: int = DEFAULT_CONTEXT_LINES,
    max_matches: int = DEFAULT_GREP_MATCHES,
    time_budget: float | None = None,
) -> dict[str, Any]:
    """Lines of `text` matching `pattern`: 1-based line numbers, absolute character offsets
    of the first match in each line, and `context` lines either side.

    The budget is wall-clock time: the lines are scanned on a thread of their own and this
    one waits at most the budget for it (regex's own timeout counts CPU time, which a busy
    machine hands out slowly: 5.27 s against a 2 s budget was seen). A scan still running
    then is left to end by itself: its current search stops at regex's timeout, and it
    takes no line after that."""
    lines = io.StringIO(text, newline="").readlines()
    offsets: list[int] = []
    position = 0
    for line in lines:
        offsets.append(position)
        position += len(line)
    budget = GREP_TIME_BUDGET if time_budget is None else time_budget
    scan = _Scan(lines, context, max_matches, time.monotonic() + budget)
    threading.Thread(target=scan.run, args=(pattern, offsets), name="kb-grep", daemon=True).start()
    if not scan.done.wait(max(0.0, budget)):
        scan.stop()
    with scan.lock:
        matches, scanned = list(scan.matches), scan.scanned
        truncated, timed_out = scan.truncated, scan.timed_out
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
