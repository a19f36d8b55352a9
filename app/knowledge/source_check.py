"""Can an item's original source be re-acquired, or the base's own copy of it? Asked before
a reindex or restore is admitted and again by the reindex job itself."""

from __future__ import annotations

import errno
import stat
from enum import StrEnum
from pathlib import Path

from app.knowledge import path_safety
from app.knowledge.imported_sources import is_imported
from app.knowledge.material_paths import CONTAINER_TYPES, in_place, material_path
from app.knowledge.types import Item, ItemType


class SourceCheck(StrEnum):
    OK = "ok"
    MISSING = "missing"
    UNVERIFIABLE = "unverifiable"


def check_source(item: Item) -> SourceCheck:
    """Can the item's original source be re-acquired? Files and folders are probed on disk
    (an imported item's source is never probed: check_reindex)."""
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


def check_copy(raw: Path, item: Item) -> SourceCheck:
    """Can the item be rebuilt from the base's own copy under `raw` (not the original)?
    A file indexed in place has no copy: its original is what a rebuild reads."""
    if item.type is ItemType.NOTE:
        return SourceCheck.OK  # the note's text is in the catalog
    if in_place(item) and not is_imported(item):
        return check_source(item)
    if in_place(item) and material_path(item) != item.relative_path:
        # Imported: its source is another computer's path, never probed (it is inert), and
        # only a plain text's material (its text) can stand in for the original.
        return SourceCheck.MISSING
    if item.relative_path is None:
        return SourceCheck.MISSING
    try:
        path = path_safety.resolve_below(raw, item.relative_path)
        return SourceCheck.OK if path.is_file() else SourceCheck.MISSING
    except path_safety.UnsafePathError:
        return SourceCheck.MISSING
    except OSError:
        return SourceCheck.UNVERIFIABLE


def check_reindex(raw: Path, item: Item) -> SourceCheck:
    """Can a reindex of the item run: from its source, or from the base's own copy when it
    was imported (its source names another computer's file; imported_sources.py)? An
    imported folder or sitemap is reindexed from its documents' copies, checked one by one."""
    if not is_imported(item):
        return check_source(item)
    if item.type in CONTAINER_TYPES:
        return SourceCheck.OK
    return check_copy(raw, item)
