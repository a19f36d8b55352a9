"""Can an item's original source be re-acquired? Asked before a reindex is admitted and
again by the reindex job itself."""

from __future__ import annotations

import errno
import stat
from enum import StrEnum
from pathlib import Path

from app.knowledge.types import Item, ItemType


class SourceCheck(StrEnum):
    OK = "ok"
    MISSING = "missing"
    UNVERIFIABLE = "unverifiable"


def check_source(item: Item) -> SourceCheck:
    """Can the item's original source be re-acquired? Files and folders are probed on disk."""
    if item.type not in (ItemType.FILE, ItemType.DIRECTORY):
        return SourceCheck.OK  # notes carry their text; URLs are checked when fetched
    path = Path(item.source)
    if not path.is_absolute():
        return SourceCheck.MISSING
    try:
        mode = path.stat().st_mode
    except (FileNotFoundError, NotADirectoryError):
        return SourceCheck.MISSING
    except OSError as exc:
        return SourceCheck.MISSING if exc.errno == errno.ENOENT else SourceCheck.UNVERIFIABLE
    kind_ok = stat.S_ISDIR(mode) if item.type is ItemType.DIRECTORY else stat.S_ISREG(mode)
    return SourceCheck.OK if kind_ok else SourceCheck.MISSING
