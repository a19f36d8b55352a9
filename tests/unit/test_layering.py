"""Dependency arrows point down only (DESIGN.md section 1)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

APP = Path(__file__).resolve().parents[2] / "app"

# package -> packages of app it must never import
# The agent tools and `trove mcp` sit above the engine like the CLI: agent -> runtime ->
# knowledge. The agent package uses QtCore for the job executor's thread, so it is not in
# QT_FREE.
FORBIDDEN = {
    "knowledge": ("app.ui", "app.runtime", "app.cli", "app.agent"),
    "providers": ("app.ui", "app.runtime", "app.cli", "app.knowledge", "app.agent"),
    "runtime": ("app.ui", "app.cli", "app.agent"),
    "agent": ("app.ui", "app.cli"),
    "ui": ("app.cli",),
}
# The pure pipeline may use only these modules of the engine above it.
PIPELINE_ALLOWED = (
    "app.knowledge.pipeline",
    "app.knowledge.types",
    "app.knowledge.db",
    "app.knowledge.paths",
)
QT_FREE = ("knowledge", "providers")


def _imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.extend(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            # `from app.knowledge import db` imports app.knowledge.db: record the full name.
            names.extend(f"{node.module}.{a.name}" for a in node.names)
    return names


def _files(package: str) -> list[Path]:
    return sorted((APP / package).rglob("*.py"))


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_no_upward_imports(package: str) -> None:
    bad = [
        f"{f.relative_to(APP)} imports {name}"
        for f in _files(package)
        for name in _imports(f)
        if name.startswith(FORBIDDEN[package])
    ]
    assert bad == []


@pytest.mark.parametrize("package", QT_FREE)
def test_engine_is_qt_free(package: str) -> None:
    bad = [
        f"{f.relative_to(APP)} imports {name}"
        for f in _files(package)
        for name in _imports(f)
        if name.split(".")[0] in {"PySide6", "shiboken6", "qasync"}
    ]
    assert bad == []


def test_pipeline_imports_nothing_above_it() -> None:
    bad = [
        f"{f.relative_to(APP)} imports {name}"
        for f in _files("knowledge/pipeline")
        for name in _imports(f)
        if name.startswith("app.") and not name.startswith(PIPELINE_ALLOWED)
    ]
    assert bad == []


def test_widgets_never_open_sqlite() -> None:
    bad = [
        f"{f.relative_to(APP)} imports {name}"
        for f in _files("ui")
        for name in _imports(f)
        if name.split(".")[0] in {"sqlite3", "apsw"} or name.startswith("app.providers")
    ]
    assert bad == []


def test_only_the_agent_job_host_uses_qt() -> None:
    # The tools themselves stay Qt-free: any caller can use them without an event loop.
    bad = [
        f"{f.relative_to(APP)} imports {name}"
        for f in _files("agent")
        if f.name != "jobs.py"
        for name in _imports(f)
        if name.split(".")[0] in {"PySide6", "shiboken6", "qasync"}
        or name.startswith("app.runtime")
    ]
    assert bad == []


def test_the_scan_sees_real_imports() -> None:
    # Guards the test itself: if parsing silently found nothing, every check above would pass.
    assert "app.knowledge.types.SearchMode" in _imports(APP / "knowledge" / "query.py")
    assert "app.knowledge.db" in _imports(
        APP / "knowledge" / "pipeline" / "store" / "index_store.py"
    )
