"""Expand a folder into the files to index: recursive, hidden entries skipped, loop-safe."""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Collection, Iterator
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(slots=True)
class DirectoryScan:
    files: list[Path] = field(default_factory=list)
    skipped_unsupported: int = 0
    skipped_excluded: int = 0
    errors: list[str] = field(default_factory=list)


def _is_hidden(name: str) -> bool:
    return name.startswith(".")


def _walk(root: Path, errors: list[str]) -> Iterator[Path]:
    """Files below root in a stable order; each real directory is entered once."""
    seen: set[tuple[int, int]] = set()
    stack = [root]
    while stack:
        folder = stack.pop()
        try:
            st = folder.stat()
        except OSError as exc:
            errors.append(f"{folder}: {exc.strerror or exc}")
            continue
        key = (st.st_dev, st.st_ino)
        if key in seen:  # a symlink loop or a second link to a folder already scanned
            continue
        seen.add(key)
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError as exc:
            errors.append(f"{folder}: {exc.strerror or exc}")
            continue
        subdirs: list[Path] = []
        for entry in entries:
            if _is_hidden(entry.name):
                continue
            try:
                if entry.is_dir():
                    subdirs.append(Path(entry.path))
                elif entry.is_file():
                    yield Path(entry.path)
            except OSError as exc:
                errors.append(f"{entry.path}: {exc.strerror or exc}")
        stack.extend(reversed(subdirs))


def scan_directory(
    root: Path,
    *,
    extensions: Collection[str],
    include_globs: Collection[str] = (),
    exclude_globs: Collection[str] = (),
) -> DirectoryScan:
    """The supported files below root, filtered by extension and by glob on the relative path."""
    scan = DirectoryScan()
    wanted = {e.lower() for e in extensions}
    for path in _walk(root, scan.errors):
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
