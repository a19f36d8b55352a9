"""The file in which text recognition (OCR) hands its pages over: one JSON line per page.

The recognition worker appends a line as soon as a page is read (so a crash loses at most
the page in hand, and a restarted worker resumes after the pages already there); the
reader that builds the material takes the pages from it by their number.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TextIO


def append_page(sink: TextIO, page: int, text: str) -> None:
    """Write one page's line and push it to the disk before the next page starts."""
    sink.write(json.dumps({"page": page, "text": text}, ensure_ascii=False) + "\n")
    sink.flush()


def read_pages(path: Path) -> dict[int, str]:
    """The pages recognised so far. A last line cut short by a crash is ignored."""
    pages: dict[int, str] = {}
    try:
        with path.open(encoding="utf-8") as handle:
            for line in handle:
                try:
                    entry = json.loads(line)
                    pages[int(entry["page"])] = str(entry["text"])
                except (ValueError, KeyError, TypeError):
                    continue
    except FileNotFoundError:
        pass
    return pages
