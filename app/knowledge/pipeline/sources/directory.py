"""Expand a folder into the files to index: recursive, hidden entries skipped, loop-safe.

Symbolic links are not followed by default. A link whose target lies outside the folder
would copy that target into the base (`passwd.txt -> /etc/passwd`, `etc -> /etc`, planted
in a synced or shared folder by anyone who can write there); such links are left out and
listed (`links_outside`). A link to a place inside the folder is left out silently: its
target is walked under its own name. `follow_links` follows every link, as before (each
real folder is still entered once, so loops end).

`fenced` names folders that are never entered (Trove's own data folder: indexing it would
copy the base's copies into itself); those met are listed in `fenced_folders`.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(slots=True)
class DirectoryScan:
    files: list[Path] = field(default_factory=list)
    skipped_unsupported: int = 0
    skipped_excluded: int = 0
    errors: list[str] = field(default_factory=list)
    # Relative paths of links not followed because their target is outside the folder.
    links_outside: list[str] = field(default_factory=list)
    # Relative paths ("." for the folder itself) of folders left out as `fenced`.
    fenced_folders: list[str] = field(default_factory=list)


def _is_hidden(name: str) -> bool:
    return name.startswith(".")


def leads_inside(path: str, root_real: str) -> bool:
    """Whether a path, every link on the way resolved, ends below root (a real path)."""
    target = os.path.realpath(path)
    return target == root_real or target.startswith(root_real.rstrip(os.sep) + os.sep)


def _walk(
    root: Path,
    scan: DirectoryScan,
    follow_links: bool,
    fenced: Callable[[Path], bool] | None,
) -> Iterator[Path]:
    """Files below root in a stable order; each real directory is entered once."""
    root_real = os.path.realpath(root)
    seen: set[tuple[int, int]] = set()
    stack = [root]
    while stack:
        folder = stack.pop()
        try:
            st = folder.stat()
        except OSError as exc:
            scan.errors.append(f"{folder}: {exc.strerror or exc}")
            continue
        key = (st.st_dev, st.st_ino)
        if key in seen:  # a symlink loop or a second link to a folder already scanned
            continue
        seen.add(key)
        if fenced is not None and fenced(folder):
            scan.fenced_folders.append(folder.relative_to(root).as_posix())
            continue
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError as exc:
            scan.errors.append(f"{folder}: {exc.strerror or exc}")
            continue
        subdirs: list[Path] = []
        for entry in entries:
            if _is_hidden(entry.name):
                continue
            try:
                if entry.is_symlink() and not follow_links:
                    if not leads_inside(entry.path, root_real):
                        scan.links_outside.append(Path(entry.path).relative_to(root).as_posix())
                    continue
                if entry.is_dir():
                    subdirs.append(Path(entry.path))
                elif entry.is_file():
                    yield Path(entry.path)
            except OSError as exc:
                scan.errors.append(f"{entry.path}: {exc.strerror or exc}")
        stack.extend(reversed(subdirs))


def scan_directory(
    root: Path,
    *,
    extensions: Collection[str],
    include_globs: Collection[str] = (),
    exclude_globs: Collection[str] = (),
    follow_links: bool = False,
    fenced: Callable[[Path], bool] | None = None,
) -> DirectoryScan:
    """The supported files below root, filtered by extension and by glob on the relative path."""
    scan = DirectoryScan()
    wanted = {e.lower() for e in extensions}
    for path in _walk(root, scan, follow_links, fenced):
        rel = path.relative_to(root).as_posix()
        if exclude_globs and any(fnmatch.fnmatch(rel, g) for g in exclude_globs):
            scan.skipped_excluded += 1
            continue
        if include_globs and not any(fnmatch.fnmatch(rel, g) for g in include_globs):
            scan.skipped_excluded += 1
            continue
        if path.suffix.lower() not in wanted:
            scan.skipped_unsupported += 1
            continue
        scan.files.append(path)
    return scan
