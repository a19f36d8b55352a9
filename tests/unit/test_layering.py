"""Dependency arrows point down only (DESIGN.md section 1)."""

from __future__ import annotations

import ast
import re
import shutil
from collections.abc import Mapping, Sequence
from itertools import pairwise
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
    "app.knowledge.path_safety",
    # The one wall-clock deadline under every HTTP call, URL fetches' and providers' alike.
    "app.providers.deadline",
)
QT_FREE = ("knowledge", "providers")
# The job handlers sit below the facades that admit work and answer searches.
JOBS_FORBIDDEN = (
    "app.knowledge.ingestion",
    "app.knowledge.admin",
    "app.knowledge.service",
    "app.knowledge.query",
    "app.agent",
)


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


# What the window may take from the engine: the facade and the public value types, plus the
# few start-up helpers a launcher needs before there is a service.
UI_ENGINE_ALLOWED = (
    "app.knowledge.service.",
    "app.knowledge.types.",
    "app.knowledge.logs.configure_logging",
    "app.knowledge.data_layout.resolve_home",
    "app.knowledge.providers_config.EMBEDDING_KINDS",
    "app.knowledge.providers_config.RERANK_KINDS",
    # Where a query's words are in a text: the engine places pages by it, the window
    # highlights by it; one matcher, so the page named is the page of the words shown.
    "app.knowledge.term_spans.",
    # A server base's address: the password joined in for the one create/attach call (the
    # engine moves it to the keychain) and host:port/database for labels; pure parsing.
    "app.knowledge.server_index.with_password",
    "app.knowledge.server_index.address",
)


def ui_engine_leaks(imports: list[str]) -> list[str]:
    """The engine names imported past the facade (value types from internal modules, ...)."""
    return [
        name
        for name in imports
        if name.startswith("app.knowledge.") and not name.startswith(UI_ENGINE_ALLOWED)
    ]


def test_the_window_uses_the_facade_and_public_types_only() -> None:
    bad = [
        f"{f.relative_to(APP)} imports {name}"
        for f in _files("ui")
        for name in ui_engine_leaks(_imports(f))
    ]
    assert bad == []


def test_a_value_type_taken_from_an_internal_module_is_a_leak(tmp_path: Path) -> None:
    planted = tmp_path / "widget.py"
    planted.write_text(
        "from app.knowledge.pipeline.store.index_store import StoredChunk\n"
        "from app.knowledge.types import StoredChunk as Fine\n",
        encoding="utf-8",
    )
    assert ui_engine_leaks(_imports(planted)) == [
        "app.knowledge.pipeline.store.index_store.StoredChunk"
    ]


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


# -- the engine's parts stay behind its facade -----------------------------------------------

# Attributes that hand out the engine's insides: the catalog (app database) and EngineParts.
ENGINE_INSIDES = ("catalog", "parts")


def _reaches_inside(node: ast.Attribute) -> bool:
    if node.attr == "catalog":
        return True
    # `.parts` is also a path's segments (PurePath.parts): only a service's is the engine's.
    receiver = ast.unparse(node.value).lower()
    return node.attr == "parts" and ("service" in receiver or "svc" in receiver)


def insides_used(paths: Sequence[Path], root: Path) -> list[str]:
    """`file:line .attr` for each use of the engine's insides on an object in these files."""
    found: list[str] = []
    for path in paths:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        uses = [
            node
            for node in ast.walk(tree)
            if isinstance(node, ast.Attribute)
            and node.attr in ENGINE_INSIDES
            and _reaches_inside(node)
        ]
        uses.sort(key=lambda node: node.lineno)
        found.extend(f"{path.relative_to(root)}:{node.lineno} .{node.attr}" for node in uses)
    return found


def test_callers_outside_the_engine_use_the_service_not_its_catalog() -> None:
    outside = [f for f in sorted(APP.rglob("*.py")) if APP / "knowledge" not in f.parents]
    assert insides_used(outside, APP) == []


def test_a_planted_use_of_the_catalog_is_reported(tmp_path: Path) -> None:
    # Guards the check above: a scan that never finds anything would always pass.
    caller = tmp_path / "caller.py"
    caller.write_text(
        "from pathlib import PurePosixPath\n"
        "def f(svc, service):\n"
        "    PurePosixPath('a/b').parts\n"
        "    svc.catalog.get_item('x')\n"
        "    return service.parts\n",
        encoding="utf-8",
    )
    assert insides_used([caller], tmp_path) == ["caller.py:4 .catalog", "caller.py:5 .parts"]


# -- no import cycles between the engine's units ---------------------------------------------

Graph = dict[str, dict[str, list[str]]]  # unit -> unit it imports -> files that do


def _unit_of(root: Path, name: str) -> str | None:
    """The engine unit a dotted name lands in: a top-level module, or a sub-package as a whole."""
    parts = name.split(".")
    if parts[:2] != ["app", "knowledge"] or len(parts) < 3:
        return None
    head = parts[2]
    if (root / head).is_dir() or (root / f"{head}.py").is_file():
        return head
    return None


def unit_graph(root: Path) -> Graph:
    """Imports between the units of the engine package at `root` (app/knowledge)."""
    graph: Graph = {}
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root)
        unit = rel.parts[0].removesuffix(".py")
        if unit == "__init__":
            continue
        edges = graph.setdefault(unit, {})
        for name in _imports(path):
            target = _unit_of(root, name)
            if target is not None and target != unit:
                edges.setdefault(target, []).append(str(rel))
    return graph


def find_cycle(graph: Mapping[str, Mapping[str, object]]) -> list[str] | None:
    """One import cycle as [a, b, ..., a], or None when the graph has none."""
    done: set[str] = set()
    path: list[str] = []
    on_path: set[str] = set()

    def visit(node: str) -> list[str] | None:
        path.append(node)
        on_path.add(node)
        for nxt in sorted(graph.get(node, {})):
            if nxt in on_path:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in done:
                found = visit(nxt)
                if found is not None:
                    return found
        path.pop()
        on_path.discard(node)
        done.add(node)
        return None

    for start in sorted(graph):
        if start not in done:
            found = visit(start)
            if found is not None:
                return found
    return None


def _describe(graph: Graph, cycle: list[str]) -> str:
    steps = [f"  {a} -> {b} ({', '.join(sorted(set(graph[a][b])))})" for a, b in pairwise(cycle)]
    return "import cycle " + " -> ".join(cycle) + ":\n" + "\n".join(steps)


def test_engine_units_import_each_other_without_cycles() -> None:
    graph = unit_graph(APP / "knowledge")
    cycle = find_cycle(graph)
    assert cycle is None, _describe(graph, cycle)


def test_jobs_never_import_the_facades_above_them() -> None:
    bad = [
        f"{f.relative_to(APP)} imports {name}"
        for f in _files("knowledge/jobs")
        for name in _imports(f)
        if name.startswith(JOBS_FORBIDDEN)
    ]
    assert bad == []


def test_the_cycle_finder_reports_a_planted_cycle() -> None:
    # Guards the check above: a finder that never finds anything would always pass.
    assert find_cycle({"a": {"b": []}, "b": {"c": []}, "c": {"a": []}, "d": {"a": []}}) == [
        "a",
        "b",
        "c",
        "a",
    ]
    assert find_cycle({"a": {"b": []}, "b": {}, "c": {"a": [], "b": []}}) is None


def test_an_import_planted_in_a_copy_of_the_engine_is_reported(tmp_path: Path) -> None:
    copy = tmp_path / "knowledge"
    shutil.copytree(APP / "knowledge", copy, ignore=shutil.ignore_patterns("__pycache__"))
    assert find_cycle(unit_graph(copy)) is None
    queue = copy / "jobs" / "queue.py"
    queue.write_text(
        queue.read_text(encoding="utf-8") + "\nfrom app.knowledge.ingestion import reindex\n",
        encoding="utf-8",
    )
    graph = unit_graph(copy)
    cycle = find_cycle(graph)
    assert cycle is not None and {"ingestion", "jobs"} <= set(cycle)
    assert "jobs/queue.py" in _describe(graph, cycle)


# -- the package map (docs/design.md) ----------------------------------------------------------------

README = APP.parent / "docs" / "design.md"
MAP_ENTRY = re.compile(r"^- `(app(?:/[a-z_]+)*)/` — ", re.MULTILINE)


def test_the_readme_package_map_matches_the_tree() -> None:
    text = README.read_text(encoding="utf-8")
    section = text.split("### Package map", 1)[1].split("\n### ", 1)[0]
    mapped = MAP_ENTRY.findall(section)
    packages = sorted(
        str(init.parent.relative_to(APP.parent)).replace("\\", "/")
        for init in APP.rglob("__init__.py")
        if "__pycache__" not in init.parts
    )
    assert len(mapped) == len(set(mapped)), "a package is named twice"
    assert sorted(mapped) == packages
