"""Where Trove keeps its data: `$TROVE_HOME` (else the platform data dir) and below it."""

from __future__ import annotations

import os
from pathlib import Path

from platformdirs import user_data_dir

HOME_ENV = "TROVE_HOME"
CATALOG_FILE = "trove.sqlite"
BASES_DIR = "bases"
RAW_DIR = "raw"


def resolve_home(explicit: str | os.PathLike[str] | None = None) -> Path:
    """--home wins, then TROVE_HOME, then the per-OS user data dir."""
    if explicit:
        return Path(explicit).expanduser().resolve()
    env = os.environ.get(HOME_ENV)
    if env:
        return Path(env).expanduser().resolve()
    return Path(user_data_dir("Trove", appauthor=False))


class DataLayout:
    def __init__(self, home: Path) -> None:
        self.home = home

    def read_only(self) -> bool:
        """Whether Trove may read but not write its existing data folder (a read-only
        mount, or permissions), checked with the ids and capabilities a write would meet."""
        if not self.home.is_dir():
            return False
        effective = os.access in os.supports_effective_ids
        if not os.access(self.home, os.W_OK | os.X_OK, effective_ids=effective):
            return True
        catalog = self.catalog_path
        return catalog.exists() and not os.access(catalog, os.W_OK, effective_ids=effective)

    @property
    def catalog_path(self) -> Path:
        return self.home / CATALOG_FILE

    @property
    def bases_dir(self) -> Path:
        return self.home / BASES_DIR

    def base_dir(self, base_id: str) -> Path:
        return self.bases_dir / base_id

    def raw_dir(self, base_id: str) -> Path:
        return self.base_dir(base_id) / RAW_DIR
