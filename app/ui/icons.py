"""Icons from resources/icons (SVG; Qt scales them for every screen density)."""

from __future__ import annotations

from functools import cache

from PySide6.QtGui import QIcon

from app.resources import resources_dir


@cache
def icon(name: str) -> QIcon:
    """`name` without extension, e.g. "trove" or "status-failed"; an empty icon if missing."""
    folder = resources_dir() / "icons"
    for candidate in (folder / f"{name}.svg", folder / f"{name}.png"):
        if candidate.is_file():
            return QIcon(str(candidate))
    return QIcon()


def app_icon() -> QIcon:
    app = QIcon(str(resources_dir() / "icons" / "trove.svg"))
    for size in (48, 256):
        png = resources_dir() / "icons" / f"trove-{size}.png"
        if png.is_file():
            app.addFile(str(png))
    return app
