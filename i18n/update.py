"""Extract the window's strings into the .ts sources and compile the .qm catalogs.

    python i18n/update.py            # lupdate: refresh i18n/trove_en.ts and trove_zh_CN.ts
    python i18n/update.py --release  # lrelease: compile .qm next to them

Translate new strings in trove_zh_CN.ts (Qt Linguist: `pyside6-linguist`), then --release.
The .qm files are committed; tests/ui/test_i18n.py checks they match the .ts sources.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOURCES = HERE.parent / "app" / "ui"
LANGUAGES = ("en", "zh_CN")


def tool(name: str) -> str:
    """PySide6's copy of a Linguist tool (next to the interpreter, or on PATH)."""
    suffix = ".exe" if sys.platform == "win32" else ""
    beside = Path(sys.executable).parent / f"pyside6-{name}{suffix}"
    found = str(beside) if beside.exists() else shutil.which(f"pyside6-{name}")
    if not found:
        raise SystemExit(f"pyside6-{name} not found; install PySide6")
    return found


def ts_path(language: str) -> Path:
    return HERE / f"trove_{language}.ts"


def qm_path(language: str) -> Path:
    return HERE / f"trove_{language}.qm"


def python_sources() -> list[str]:
    return sorted(str(p) for p in SOURCES.rglob("*.py"))


def update() -> None:
    for language in LANGUAGES:
        subprocess.run(
            [
                tool("lupdate"),
                "-no-obsolete",
                "-locations",
                "none",
                *python_sources(),
                "-target-language",
                language,
                "-ts",
                str(ts_path(language)),
            ],
            check=True,
        )


def release(language: str, target: Path) -> None:
    subprocess.run(
        [tool("lrelease"), "-silent", str(ts_path(language)), "-qm", str(target)], check=True
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--release", action="store_true", help="compile the .qm catalogs")
    args = parser.parse_args()
    if args.release:
        for language in LANGUAGES:
            release(language, qm_path(language))
    else:
        update()


if __name__ == "__main__":
    main()
