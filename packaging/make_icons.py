"""Render resources/icons/trove.svg (the window icon) into the icon files the installers need:

    OUT/png/trove-<N>.png   N = 16 .. 1024 (Linux hicolor theme, .desktop)
    OUT/trove.ico           Windows executable and installer (PNG entries, Vista and later)
    OUT/trove.icns          macOS app bundle (PNG entries ic07..ic10, icp4..icp6)
    OUT/trove.svg           the scalable source (hicolor/scalable)

Run with a Python that has PySide6 (build.py uses the packaging venv):
`python packaging/make_icons.py build/icons`. The .ico and .icns containers are written
by hand: both are a small header plus the PNG images.
"""

from __future__ import annotations

import os
import shutil
import struct
import sys
from pathlib import Path

SOURCE = Path(__file__).resolve().parents[1] / "resources" / "icons" / "trove.svg"
SIZES = (16, 24, 32, 48, 64, 128, 256, 512, 1024)
ICO_SIZES = (16, 24, 32, 48, 64, 128, 256)
# ICNS element types holding PNG data, by pixel size.
ICNS_TYPES = {
    16: b"icp4",
    32: b"icp5",
    64: b"icp6",
    128: b"ic07",
    256: b"ic08",
    512: b"ic09",
    1024: b"ic10",
}


def render_pngs(source: Path, sizes: tuple[int, ...], out: Path) -> dict[int, bytes]:
    """Write out/trove-<N>.png for each size; returns their bytes."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QGuiApplication, QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    _app = QGuiApplication.instance() or QGuiApplication([])
    renderer = QSvgRenderer(str(source))
    if not renderer.isValid():
        raise SystemExit(f"{source} is not a valid SVG")
    images: dict[int, bytes] = {}
    for size in sizes:
        image = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
        image.fill(Qt.GlobalColor.transparent)
        painter = QPainter(image)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
        renderer.render(painter)
        painter.end()
        target = out / f"trove-{size}.png"
        if not image.save(str(target)):
            raise SystemExit(f"could not write {target}")
        images[size] = target.read_bytes()
    return images


def ico_bytes(pngs: dict[int, bytes]) -> bytes:
    """ICONDIR + one ICONDIRENTRY per image + the PNG data (a width/height of 0 means 256)."""
    sizes = sorted(pngs)
    header = struct.pack("<HHH", 0, 1, len(sizes))
    offset = len(header) + 16 * len(sizes)
    entries, blobs = b"", b""
    for size in sizes:
        data = pngs[size]
        side = 0 if size >= 256 else size
        entries += struct.pack("<BBBBHHII", side, side, 0, 0, 1, 32, len(data), offset)
        blobs += data
        offset += len(data)
    return header + entries + blobs


def icns_bytes(pngs: dict[int, bytes]) -> bytes:
    """'icns' + total length, then (type, length, PNG) elements; lengths include headers."""
    body = b"".join(
        ICNS_TYPES[size] + struct.pack(">I", len(pngs[size]) + 8) + pngs[size]
        for size in sorted(pngs)
        if size in ICNS_TYPES
    )
    return b"icns" + struct.pack(">I", len(body) + 8) + body


def main(argv: list[str]) -> int:
    out = Path(argv[1] if len(argv) > 1 else "build/icons")
    (out / "png").mkdir(parents=True, exist_ok=True)
    pngs = render_pngs(SOURCE, SIZES, out / "png")
    (out / "trove.ico").write_bytes(ico_bytes({s: pngs[s] for s in ICO_SIZES}))
    (out / "trove.icns").write_bytes(icns_bytes(pngs))
    shutil.copyfile(SOURCE, out / "trove.svg")
    print(f"icons written to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
