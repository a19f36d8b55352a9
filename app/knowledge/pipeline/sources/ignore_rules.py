"""Which files of a linked folder are left out: `.gitignore`-style patterns, hidden files,
and the temporary and lock files editors, office suites and browsers leave while they work."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pathspec

# Pattern files read from the folder's top level, in this order (later ones may re-include).
IGNORE_FILES = (".gitignore", ".troveignore")

# Names of files that are someone's work in progress, never a document:
# `~$x.docx` (Office owner file), `.~lock.x#` (LibreOffice), `#x#` (Emacs autosave),
# `x~` (backups), and partial downloads / swap / temp files by suffix.
_TEMP_NAME = re.compile(r"^(~\$.*|\.~lock\..*|#.*#|.*~)$")
_TEMP_SUFFIXES = frozenset(
    {".part", ".partial", ".crdownload", ".download", ".swp", ".swo", ".swx", ".tmp", ".temp"}
)


def is_temporary(name: str) -> bool:
    lower = name.lower()
    return bool(_TEMP_NAME.match(name)) or any(lower.endswith(s) for s in _TEMP_SUFFIXES)


def is_hidden(rel_path: str) -> bool:
    return any(part.startswith(".") for part in rel_path.split("/"))


@dataclass(frozen=True, slots=True)
class IgnoreRules:
    """Decides, for a path relative to the folder (POSIX separators), whether it is left out."""

    spec: pathspec.PathSpec[Any]

    @classmethod
    def for_folder(cls, folder: Path, patterns: Sequence[str] = ()) -> IgnoreRules:
        lines: list[str] = list(patterns)
        for name in IGNORE_FILES:
            try:
                lines.extend((folder / name).read_text(encoding="utf-8").splitlines())
            except (OSError, UnicodeDecodeError):
                continue
        return cls(pathspec.GitIgnoreSpec.from_lines(lines))

    def ignored(self, rel_path: str) -> bool:
        name = rel_path.rsplit("/", 1)[-1]
        return is_hidden(rel_path) or is_temporary(name) or self.spec.match_file(rel_path)
