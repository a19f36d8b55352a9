"""Where exports and imports work before their result becomes visible, and the cleanup of
what a killed one left.

An import unpacks into `$TROVE_HOME/staging/import-<token>/`, moves the finished base folder
to `bases/<id>/` with an `importing` marker in its `.trove/`, writes the catalog rows in one
transaction and only then drops the marker. An export snapshots the index into
`staging/export-<token>/`. Each staging folder and marker names its process (pid and start
time, as job owners do), so a cleanup never touches the work of a live process: what a dead
one left is removed by startup recovery, by the next export or import and by
`trove doctor --repair`.
"""

from __future__ import annotations

import secrets
import shutil
import time
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

from app.knowledge.data_layout import DataLayout
from app.knowledge.jobs.owner import current_owner, owner_alive
from app.knowledge.pipeline.store.index_store import INDEX_DIR

STAGING_DIR = "staging"
OWNER_FILE = "owner"
IMPORT_MARKER = "importing"
# A staging folder without its owner file yet is in its first moments, or was left by a
# crash right after it was made; after this long it is a leftover.
OWNERLESS_GRACE_S = 60.0


@dataclass(frozen=True, slots=True)
class Leftover:
    path: Path
    # "staging": a work folder; "import": a base folder an import moved in but never finished.
    kind: str
    base_id: str | None = None


def staging_root(layout: DataLayout) -> Path:
    return layout.home / STAGING_DIR


def make_staging(layout: DataLayout, kind: str) -> Path:
    """A fresh staging folder owned by this process."""
    folder = staging_root(layout) / f"{kind}-{secrets.token_hex(8)}"
    folder.mkdir(parents=True)
    (folder / OWNER_FILE).write_text(current_owner(), encoding="utf-8")
    return folder


def mark_importing(base_dir: Path) -> Path:
    marker = base_dir / INDEX_DIR / IMPORT_MARKER
    marker.parent.mkdir(parents=True, exist_ok=True)
    marker.write_text(current_owner(), encoding="utf-8")
    return marker


def import_marker(base_dir: Path) -> Path:
    return base_dir / INDEX_DIR / IMPORT_MARKER


def _owner_gone(owner_file: Path, folder: Path, now: float) -> bool:
    try:
        return not owner_alive(owner_file.read_text(encoding="utf-8").strip())
    except FileNotFoundError:
        try:
            return now - folder.stat().st_mtime > OWNERLESS_GRACE_S
        except FileNotFoundError:
            return False
    except OSError:
        return False


def find_leftovers(layout: DataLayout, *, now: float | None = None) -> list[Leftover]:
    """Staging folders and unfinished imported base folders whose process is gone."""
    now = time.time() if now is None else now
    found: list[Leftover] = []
    root = staging_root(layout)
    if root.is_dir():
        for folder in sorted(root.iterdir()):
            if folder.is_dir() and _owner_gone(folder / OWNER_FILE, folder, now):
                found.append(Leftover(folder, "staging"))
    if layout.bases_dir.is_dir():
        for base_dir in sorted(layout.bases_dir.iterdir()):
            marker = import_marker(base_dir)
            if marker.is_file() and _owner_gone(marker, base_dir, now):
                found.append(Leftover(base_dir, "import", base_dir.name))
    return found


def remove_leftover(leftover: Leftover, known_bases: Collection[str]) -> str:
    """Remove what a dead export or import left; what was done, in words."""
    if leftover.kind == "import" and leftover.base_id in known_bases:
        # The catalog rows were written: the import finished but for its marker.
        import_marker(leftover.path).unlink(missing_ok=True)
        return "finished the import's last step (its marker removed)"
    shutil.rmtree(leftover.path, ignore_errors=True)
    if leftover.kind == "import":
        return "removed a base folder an interrupted import left"
    return "removed the staging folder of an interrupted export or import"


def clean_leftovers(layout: DataLayout, known_bases: Collection[str]) -> list[str]:
    return [remove_leftover(left, known_bases) for left in find_leftovers(layout)]
