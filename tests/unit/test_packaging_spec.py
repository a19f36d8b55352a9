"""Static checks of the installer build (packaging/): fast, no PyInstaller needed.

The frozen app finds its data under sys._MEIPASS only if the spec bundles it: every resource
directory, every translation catalog, the sqlite-vec library where sqlite_vec looks for it,
the local model's package data and the modules it imports by name. A Qt module the app
imports must not be on the spec's exclude list.
"""

from __future__ import annotations

import ast
import importlib.util
import re
import struct
import sys
import tomllib
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGING = ROOT / "packaging"
SPEC = PACKAGING / "trove.spec"


def _load(name: str) -> ModuleType:
    # packaging/ is not a package (its name would shadow the `packaging` library).
    spec = importlib.util.spec_from_file_location(
        f"trove_packaging_{name}", PACKAGING / f"{name}.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def manifest() -> ModuleType:
    return _load("manifest")


def _data_files(folder: Path) -> list[Path]:
    return sorted(
        p
        for p in folder.rglob("*")
        if p.is_file()
        and "__pycache__" not in p.parts
        and not any(part.startswith(".") for part in p.relative_to(folder).parts)
        and p.suffix not in {".pyc", ".pyo"}
    )


def test_every_resource_directory_and_file_is_bundled(manifest: ModuleType) -> None:
    datas = manifest.resource_datas(ROOT)
    bundled = {(Path(src).resolve(), dest) for src, dest in datas}
    files = _data_files(ROOT / "resources")
    assert files, "resources/ is empty"
    for path in files:
        dest = path.parent.relative_to(ROOT).as_posix()
        assert (path.resolve(), dest) in bundled, f"{path} is not in the bundle at {dest}/"
    directories = {p.parent.relative_to(ROOT).as_posix() for p in files}
    assert directories <= {dest for _src, dest in datas}
    # The tokenizer the local model needs is one of them.
    assert "resources/models/all-MiniLM-L6-v2" in directories


def test_every_translation_catalog_is_bundled(manifest: ModuleType) -> None:
    datas = manifest.catalog_datas(ROOT)
    assert all(dest == "i18n" for _src, dest in datas)
    bundled = {Path(src).name for src, _dest in datas}
    committed = {p.name for p in (ROOT / "i18n").glob("*.qm")}
    assert committed <= bundled
    expected = set(manifest.expected_catalogs(ROOT))
    # A .ts without a committed .qm is compiled by build.py into build/i18n and bundled.
    assert {f"{p.stem}.qm" for p in (ROOT / "i18n").glob("*.ts")} <= expected
    assert committed <= expected


def test_spec_uses_the_manifest_and_never_upx() -> None:
    text = SPEC.read_text("utf-8")
    for needle in (
        "manifest.resource_datas()",
        "manifest.catalog_datas()",
        "manifest.sqlite_vec_binaries()",
        "manifest.excluded_modules()",
        "manifest.HIDDEN_IMPORTS",
        "manifest.DATA_PACKAGES",
        "manifest.SOURCE_ALONGSIDE",
        "datas=datas",
        "binaries=binaries",
        'collect_submodules("app")',
    ):
        assert needle in text, f"trove.spec does not use {needle}"
    assert "upx=True" not in text
    builders = len(re.findall(r"\b(?:EXE|COLLECT)\(", text))
    assert text.count("upx=False") >= builders
    assert 'str(HERE / "entry.py")' in text


def test_spec_is_valid_python() -> None:
    ast.parse(SPEC.read_text("utf-8"), filename=str(SPEC))


def _qt_modules_imported_by_app() -> set[str]:
    found: set[str] = set()
    for path in (ROOT / "app").rglob("*.py"):
        tree = ast.parse(path.read_text("utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module:
                parts = node.module.split(".")
                if parts[0] == "PySide6" and len(parts) > 1:
                    found.add(parts[1])
                elif node.module == "PySide6":
                    found.update(alias.name for alias in node.names)
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    parts = alias.name.split(".")
                    if parts[0] == "PySide6" and len(parts) > 1:
                        found.add(parts[1])
    return found


def test_no_qt_module_the_app_imports_is_excluded(manifest: ModuleType) -> None:
    used = _qt_modules_imported_by_app()
    assert "QtCore" in used
    clash = used & set(manifest.EXCLUDED_QT_MODULES)
    assert not clash, f"trove.spec excludes Qt modules the app imports: {sorted(clash)}"
    for heavy in ("QtWebEngineCore", "Qt3DCore", "QtQuick", "QtQml", "QtMultimedia", "QtPdf"):
        assert heavy in manifest.EXCLUDED_QT_MODULES
    excluded = manifest.excluded_modules()
    assert {"PyQt5", "PyQt6", "PySide2", "tkinter"} <= set(excluded)


def test_local_model_and_sqlite_vec_are_bundled_where_the_app_looks(manifest: ModuleType) -> None:
    from app.providers import local_model

    assert set(local_model._REQUIRED_MODULES) <= set(manifest.HIDDEN_IMPORTS)
    assert local_model.MODEL_PACKAGE in manifest.DATA_PACKAGES
    import sqlite_vec

    binaries = manifest.sqlite_vec_binaries()
    assert binaries, "no vec0 library found"
    expected_dir = Path(sqlite_vec.loadable_path()).parent.name
    for src, dest in binaries:
        assert dest == expected_dir == "sqlite_vec"
        assert Path(src).stem == Path(sqlite_vec.loadable_path()).name == "vec0"


def test_entry_script_starts_workers_before_the_app() -> None:
    text = (PACKAGING / "entry.py").read_text("utf-8")
    assert "from app.main import main" in text
    assert "app.cli" not in text
    assert text.index("multiprocessing.freeze_support()") < text.index("from app.main import")
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))
    assert pyproject["project"]["scripts"]["trove"] == "app.main:main"
    extra = pyproject["project"]["optional-dependencies"]["packaging"]
    assert any(req.replace(" ", "").startswith("pyinstaller>=6.10") for req in extra)


def test_dropped_qt_plugins_and_translations(manifest: ModuleType) -> None:
    assert manifest.is_dropped_qt_plugin("PySide6/Qt/plugins/platformthemes/libqgtk3.so")
    assert manifest.is_dropped_qt_plugin("PySide6/Qt/plugins/platforms/libqeglfs.so")
    for kept in ("xcb", "wayland", "offscreen", "minimal"):
        assert not manifest.is_dropped_qt_plugin(f"PySide6/Qt/plugins/platforms/libq{kept}.so")
    assert not manifest.is_dropped_qt_plugin("PySide6/Qt/plugins/platforms/qwindows.dll")
    assert not manifest.is_dropped_qt_plugin("PySide6/Qt/plugins/imageformats/libqsvg.so")
    assert manifest.is_unused_qt_translation("PySide6/Qt/translations/qtbase_de.qm")
    assert not manifest.is_unused_qt_translation("PySide6/Qt/translations/qtbase_zh_CN.qm")
    assert not manifest.is_unused_qt_translation("i18n/trove_de.qm")


def test_linux_desktop_entry() -> None:
    lines = (PACKAGING / "linux" / "trove.desktop").read_text("utf-8").splitlines()
    assert lines[0] == "[Desktop Entry]"
    entries = dict(line.split("=", 1) for line in lines[1:] if line and not line.startswith("#"))
    assert entries["Type"] == "Application"
    assert entries["Name"] == "Trove"
    assert entries["Icon"] == "trove"
    assert entries["Terminal"] == "false"
    assert entries["Categories"].endswith(";")
    assert "%" not in entries["Exec"]  # the launcher takes no file arguments
    for script in ("install.sh", "uninstall.sh"):
        data = (PACKAGING / "linux" / script).read_bytes()
        assert data.startswith(b"#!/bin/sh\n") and b"\r\n" not in data
        assert b"share/applications/trove.desktop" in data or script == "uninstall.sh"


def test_installer_scripts_name_the_bundle(manifest: ModuleType) -> None:
    iss = (PACKAGING / "windows" / "trove.iss").read_text("utf-8")
    assert '#define AppExe "Trove.exe"' in iss
    assert r'"..\..\dist\Trove"' in iss
    assert "PrivilegesRequired=lowest" in iss
    assert re.search(r"AppId=\{\{[0-9A-F-]{36}\}", iss)
    dmg = (PACKAGING / "macos" / "make_dmg.sh").read_text("utf-8")
    assert "hdiutil create" in dmg and "/Applications" in dmg
    assert manifest.EXE_NAME == "Trove" and manifest.APP_NAME == "Trove"


def test_icon_containers() -> None:
    icons = _load("make_icons")
    png = b"\x89PNG\r\n\x1a\nfake"
    ico = icons.ico_bytes({16: png, 256: png})
    assert struct.unpack("<HHH", ico[:6]) == (0, 1, 2)
    width, height = ico[6 + 16], ico[6 + 16 + 1]
    assert (width, height) == (0, 0)  # 256 px is written as 0
    icns = icons.icns_bytes({16: png, 1024: png})
    assert icns[:4] == b"icns" and struct.unpack(">I", icns[4:8])[0] == len(icns)
    assert b"icp4" in icns and b"ic10" in icns
    assert icons.SOURCE.is_file() and "<svg" in icons.SOURCE.read_text("utf-8")
