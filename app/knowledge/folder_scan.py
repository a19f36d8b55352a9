"""What a folder's scan leaves out to keep the base to the folder, and where that is told.

An added or linked folder is scanned (jobs/prepare_root.py, jobs/sync_folder.py) without
following symbolic links that lead out of it, unless the person asked for it (the folder
option `followLinks`, `trove add --follow-links`), and never into Trove's own data folder
(or another Trove's: a folder holding a catalog and `bases/`), whose copies would be
indexed again on every add. What was left out is kept on the folder item's options under
`skipped` for the add and sync summaries to tell (`trove add`, `trove sync`).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from app.knowledge.catalog import Catalog
from app.knowledge.data_layout import BASES_DIR, CATALOG_FILE, DataLayout
from app.knowledge.pipeline.sources.directory import DirectoryScan, leads_inside
from app.knowledge.types import Item, ItemType

FOLLOW_LINKS_KEY = "followLinks"
SKIPPED_KEY = "skipped"
# The summary keeps this many paths of each kind (and the full count).
MAX_LISTED = 200


def follow_links(options: object) -> bool:
    return isinstance(options, dict) and options.get(FOLLOW_LINKS_KEY) is True


def led_outside(catalog: Catalog, item: Item) -> str | None:
    """Where a folder's file now leads, when that is outside the folder: a file swapped for a
    symbolic link to elsewhere since the scan (`notes.txt -> /etc/shadow`) is neither read
    nor exported, unless the folder follows links. None when it may be read."""
    if item.parent_id is None:
        return None
    folder = catalog.get_item(item.parent_id)
    if folder is None or folder.type is not ItemType.DIRECTORY or follow_links(folder.options):
        return None
    if leads_inside(item.source, os.path.realpath(folder.source)):
        return None
    return os.path.realpath(item.source)


def data_fence(layout: DataLayout) -> Callable[[Path], bool]:
    """Whether a folder met in a scan is this Trove's data folder, or any Trove's."""
    try:
        st = os.stat(layout.home)
        home: tuple[int, int] | None = (st.st_dev, st.st_ino)
    except OSError:
        home = None

    def fenced(folder: Path) -> bool:
        try:
            st = os.stat(folder)
        except OSError:
            return False
        if (st.st_dev, st.st_ino) == home:
            return True
        return (folder / CATALOG_FILE).is_file() and (folder / BASES_DIR).is_dir()

    return fenced


def inside_data_folder(layout: DataLayout, path: Path) -> bool:
    """Whether a path to add is Trove's own data folder or something inside it."""
    home = Path(os.path.realpath(layout.home))
    return path == home or path.is_relative_to(home)


@dataclass(frozen=True, slots=True)
class ScanSkipped:
    """What the last scan of a folder item left out."""

    link_count: int = 0
    links: tuple[str, ...] = ()  # the first MAX_LISTED
    data_folders: tuple[str, ...] = ()


def record_skipped(
    catalog: Catalog,
    root: Item,
    scan: DirectoryScan,
    ignored: Callable[[str], bool] | None = None,
) -> None:
    """Keep what the scan left out on the folder item (written only when it changed). The
    caller holds the write transaction `root` was read in."""
    links = [rel for rel in scan.links_outside if ignored is None or not ignored(rel)]
    wanted: dict[str, object] | None = None
    if links or scan.fenced_folders:
        wanted = {
            "linkCount": len(links),
            "links": links[:MAX_LISTED],
            "dataFolders": scan.fenced_folders[:MAX_LISTED],
        }
    options = dict(root.options) if isinstance(root.options, dict) else {}
    if options.get(SKIPPED_KEY) == wanted:
        return
    if wanted is None:
        options.pop(SKIPPED_KEY, None)
    else:
        options[SKIPPED_KEY] = wanted
    catalog.update_item(root.id, options=options or None)


def scan_skipped(item: Item) -> ScanSkipped:
    raw = item.options.get(SKIPPED_KEY) if isinstance(item.options, dict) else None
    if not isinstance(raw, dict):
        return ScanSkipped()

    def strings(key: str) -> tuple[str, ...]:
        value = raw.get(key)
        return tuple(str(v) for v in value) if isinstance(value, list) else ()

    count = raw.get("linkCount")
    links = strings("links")
    return ScanSkipped(
        count if isinstance(count, int) else len(links), links, strings("dataFolders")
    )
