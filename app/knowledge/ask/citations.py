"""Numbered markers in an answer: which passages it cites, and the markers that cite none.

A marker is `[n]`, or a group `[n, m]` (also with `、` `，` `;`); `[1][3]` is two markers.
A number with no passage behind it is dropped from the text and counted: a reader must never
click a citation that leads nowhere.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence

from app.knowledge.types import AskSource, Citation

_GROUP = re.compile(r" ?\[(\s*\d{1,4}\s*(?:[,，;、]\s*\d{1,4}\s*)*)\]")
_NUMBER = re.compile(r"\d+")


def clean(text: str, valid: Collection[int]) -> tuple[str, int]:
    """The text without numbers outside `valid`, and how many were dropped."""
    dropped = 0

    def keep(match: re.Match[str]) -> str:
        nonlocal dropped
        numbers = [int(n) for n in _NUMBER.findall(match.group(1))]
        kept = [n for n in numbers if n in valid]
        dropped += len(numbers) - len(kept)
        if len(kept) == len(numbers):
            return match.group(0)
        if not kept:
            return ""
        lead = " " if match.group(0).startswith(" ") else ""
        return lead + "[" + ", ".join(str(n) for n in kept) + "]"

    return _GROUP.sub(keep, text), dropped


def cited_numbers(text: str) -> list[int]:
    """The marker numbers in the text, each once, in order of first appearance."""
    seen: dict[int, None] = {}
    for match in _GROUP.finditer(text):
        for number in _NUMBER.findall(match.group(1)):
            seen.setdefault(int(number), None)
    return list(seen)


def resolve(text: str, sources: Sequence[AskSource]) -> list[Citation]:
    """The citations of the text, each resolved to its passage (unknown numbers skipped)."""
    by_number = {s.number: s for s in sources}
    return [Citation(n, by_number[n]) for n in cited_numbers(text) if n in by_number]


def spans(text: str) -> list[tuple[int, int, list[int]]]:
    """Where each marker group is in the text: (start, end, numbers), for making links."""
    found = []
    for match in _GROUP.finditer(text):
        start = match.start() + (1 if match.group(0).startswith(" ") else 0)
        found.append((start, match.end(), [int(n) for n in _NUMBER.findall(match.group(1))]))
    return found
