"""Where the application's data files live: the source tree's folders, or a frozen bundle's."""

from __future__ import annotations

import sys
from pathlib import Path

import app


def _root() -> Path:
    frozen = getattr(sys, "_MEIPASS", None)
    if frozen:
        return Path(frozen)
    return Path(app.__file__).resolve().parent.parent


def resources_dir() -> Path:
    """`resources/`: icons, style sheets, the bundled tokenizer."""
    return _root() / "resources"


def i18n_dir() -> Path:
    """`i18n/`: Qt Linguist sources (.ts) and compiled catalogs (.qm)."""
    return _root() / "i18n"
