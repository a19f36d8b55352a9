"""Build the Trove installers: `python packaging/build.py` from the repository root.

1. A clean virtual environment (build/venv-packaging, made anew unless --reuse-venv) with the
   project and its runtime extras installed: `pip install ".[local,ocr,packaging]"`. PySide6 is
   the only Qt binding in it (checked).
2. Icons rendered from resources/icons/trove.svg into build/icons (png, .ico, .icns).
3. PyInstaller with packaging/trove.spec -> dist/Trove/ (one folder; dist/Trove.app on macOS);
   with --onefile also the portable dist/Trove-portable.
4. Per platform:
   - Linux: share/applications/trove.desktop, share/icons/hicolor/*/apps/trove.png,
     install.sh and uninstall.sh inside dist/Trove/, then
     dist/Trove-<version>-linux-<arch>.tar.gz.
   - Windows: dist/Trove-<version>-windows-<arch>.zip, and the Inno Setup installer
     dist/Trove-<version>-windows-x64-setup.exe when ISCC.exe is found.
   - macOS: dist/Trove-<version>-macos-<arch>.dmg via packaging/macos/make_dmg.sh.
5. A JSON summary on stdout (sizes, build seconds, artefacts); progress on stderr.

Then: `python packaging/smoke_test.py dist/Trove`.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tarfile
import time
import venv
import zipfile
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import manifest

ROOT = manifest.ROOT
PACKAGING = manifest.PACKAGING
BUILD = ROOT / "build"
DIST = ROOT / "dist"
ICONS = BUILD / "icons"
OTHER_QT_BINDINGS = ("PyQt5", "PyQt6", "PySide2")
HICOLOR_SIZES = (16, 24, 32, 48, 64, 128, 256, 512)


def log(message: str) -> None:
    print(f"build: {message}", file=sys.stderr, flush=True)


def call(
    argv: Sequence[str | Path], *, cwd: Path | None = None, env: dict[str, str] | None = None
) -> None:
    """Run a tool; its output goes to stderr, so stdout carries only the JSON summary."""
    log(" ".join(str(a) for a in argv))
    sys.stderr.flush()
    subprocess.run([str(a) for a in argv], check=True, cwd=cwd, env=env, stdout=sys.stderr)


def venv_python(folder: Path) -> Path:
    return folder / ("Scripts/python.exe" if sys.platform == "win32" else "bin/python")


def make_venv(folder: Path, *, reuse: bool, extras: str) -> Path:
    python = venv_python(folder)
    if reuse and python.is_file():
        log(f"reusing {folder}")
    else:
        if folder.exists():
            shutil.rmtree(folder)
        log(f"creating a clean virtual environment in {folder}")
        venv.EnvBuilder(with_pip=True, clear=True).create(folder)
    call(
        [python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", f".[{extras}]"],
        cwd=ROOT,
    )
    probe = (
        "import importlib.util, json; "
        f"print(json.dumps([n for n in {list(OTHER_QT_BINDINGS)!r} "
        "if importlib.util.find_spec(n)]))"
    )
    others = json.loads(subprocess.check_output([str(python), "-c", probe], text=True))
    if others:
        raise SystemExit(f"the build environment has other Qt bindings: {others}")
    return python


def compile_missing_catalogs(python: Path) -> list[str]:
    """Compile each i18n/*.ts that has no committed .qm into build/i18n (bundled instead)."""
    folder = ROOT / manifest.CATALOG_DIR
    missing = [ts for ts in sorted(folder.glob("*.ts")) if not ts.with_suffix(".qm").is_file()]
    if missing:
        out = ROOT / manifest.COMPILED_CATALOG_DIR
        out.mkdir(parents=True, exist_ok=True)
        scripts = python.parent
        lrelease = next(
            (
                p
                for p in (scripts / "pyside6-lrelease", scripts / "pyside6-lrelease.exe")
                if p.is_file()
            ),
            None,
        )
        if lrelease is None:
            raise SystemExit("pyside6-lrelease is missing from the build environment")
        for ts in missing:
            log(f"i18n: {ts.name} has no committed .qm; compiling it into {out}")
            call([lrelease, "-silent", ts, "-qm", out / f"{ts.stem}.qm"])
    bundled = [Path(src).name for src, _dest in manifest.catalog_datas()]
    absent = sorted(set(manifest.expected_catalogs()) - set(bundled))
    if absent:
        raise SystemExit(f"i18n: catalogs missing from the bundle: {absent}")
    log(f"catalogs: {bundled or 'none'}")
    return bundled


def run_pyinstaller(python: Path, *, onefile: bool) -> None:
    env = dict(os.environ, TROVE_ICON_DIR=str(ICONS), TROVE_ONEFILE="1" if onefile else "0")
    call(
        [
            python,
            "-m",
            "PyInstaller",
            "--noconfirm",
            "--clean",
            "--log-level",
            "WARN",
            "--distpath",
            DIST,
            "--workpath",
            BUILD / "pyinstaller",
            PACKAGING / "trove.spec",
        ],
        cwd=ROOT,
        env=env,
    )


def add_linux_desktop_files(bundle: Path) -> None:
    apps = bundle / "share" / "applications"
    apps.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(PACKAGING / "linux" / "trove.desktop", apps / "trove.desktop")
    for size in HICOLOR_SIZES:
        target = bundle / "share" / "icons" / "hicolor" / f"{size}x{size}" / "apps"
        target.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ICONS / "png" / f"trove-{size}.png", target / "trove.png")
    scalable = bundle / "share" / "icons" / "hicolor" / "scalable" / "apps"
    scalable.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(ICONS / "trove.svg", scalable / "trove.svg")
    for script in ("install.sh", "uninstall.sh"):
        shutil.copyfile(PACKAGING / "linux" / script, bundle / script)
        (bundle / script).chmod(0o755)


def tar_gz(folder: Path, archive: Path) -> None:
    log(f"writing {archive.name}")
    with tarfile.open(archive, "w:gz", compresslevel=6) as tar:
        tar.add(folder, arcname=folder.name)


def zip_folder(folder: Path, archive: Path) -> None:
    log(f"writing {archive.name}")
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED, compresslevel=6) as out:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                out.write(path, Path(folder.name) / path.relative_to(folder))


def find_iscc() -> Path | None:
    found = shutil.which("iscc") or shutil.which("ISCC.exe")
    if found:
        return Path(found)
    for base in (os.environ.get("PROGRAMFILES(X86)"), os.environ.get("PROGRAMFILES")):
        if base and (Path(base) / "Inno Setup 6" / "ISCC.exe").is_file():
            return Path(base) / "Inno Setup 6" / "ISCC.exe"
    return None


def folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file() and not p.is_symlink())


def package(version: str) -> list[Path]:
    tag = manifest.platform_tag()
    bundle = DIST / manifest.APP_NAME
    made: list[Path] = []
    if sys.platform.startswith("linux"):
        add_linux_desktop_files(bundle)
        archive = DIST / f"Trove-{version}-{tag}.tar.gz"
        tar_gz(bundle, archive)
        made.append(archive)
        log("AppImage: not built (appimagetool is not available from the package registries)")
    elif sys.platform == "win32":
        archive = DIST / f"Trove-{version}-{tag}.zip"
        zip_folder(bundle, archive)
        made.append(archive)
        iscc = find_iscc()
        if iscc is None:
            log("Inno Setup (ISCC.exe) not found: the setup.exe is not built")
        else:
            call(
                [
                    iscc,
                    f"/DAppVersion={version}",
                    f"/DSourceDir={bundle}",
                    f"/DOutputDir={DIST}",
                    f"/DIconFile={ICONS / 'trove.ico'}",
                    PACKAGING / "windows" / "trove.iss",
                ]
            )
            made.append(DIST / f"Trove-{version}-windows-x64-setup.exe")
    elif sys.platform == "darwin":
        dmg = DIST / f"Trove-{version}-{tag}.dmg"
        call(["sh", PACKAGING / "macos" / "make_dmg.sh", DIST / "Trove.app", dmg])
        made.append(dmg)
    return made


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Build the Trove bundle and installers.")
    parser.add_argument("--venv", type=Path, default=BUILD / "venv-packaging")
    parser.add_argument(
        "--reuse-venv", action="store_true", help="keep an existing venv (faster, less clean)"
    )
    parser.add_argument(
        "--extras", default="local,ocr,packaging", help="project extras to install (%(default)s)"
    )
    parser.add_argument("--onefile", action="store_true", help="also build the portable file")
    args = parser.parse_args(argv)

    started = time.perf_counter()
    version = manifest.version()
    python = make_venv(args.venv.resolve(), reuse=args.reuse_venv, extras=args.extras)
    catalogs = compile_missing_catalogs(python)
    installed = time.perf_counter()
    call(
        [python, PACKAGING / "make_icons.py", ICONS],
        env=dict(os.environ, QT_QPA_PLATFORM="offscreen"),
    )
    for stale in (DIST / manifest.APP_NAME, DIST / f"{manifest.APP_NAME}.app"):
        if stale.exists():
            shutil.rmtree(stale)
    run_pyinstaller(python, onefile=args.onefile)
    frozen = time.perf_counter()
    artefacts = package(version)
    bundle = DIST / (f"{manifest.APP_NAME}.app" if sys.platform == "darwin" else manifest.APP_NAME)
    portable = [p for p in DIST.glob(f"{manifest.EXE_NAME}-portable*") if p.is_file()]
    summary = {
        "version": version,
        "platform": manifest.platform_tag(),
        "bundle": str(bundle),
        "bundleSizeMB": round(folder_bytes(bundle) / 1e6, 1),
        "catalogs": catalogs,
        "artefacts": {str(p): round(p.stat().st_size / 1e6, 1) for p in artefacts + portable},
        "seconds": {
            "venv": round(installed - started, 1),
            "pyinstaller": round(frozen - installed, 1),
            "package": round(time.perf_counter() - frozen, 1),
            "total": round(time.perf_counter() - started, 1),
        },
    }
    print(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
