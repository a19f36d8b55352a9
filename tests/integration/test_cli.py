"""`trove add` + `trove search --queries` end to end, in a subprocess like a user runs it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import write_files

NOTES = {
    "garden/tomatoes.md": "# Tomatoes\n\nTomatoes need full sun and regular watering in summer.\n",
    "garden/roses.md": "# Roses\n\nPrune roses in late winter; feed them compost in spring.\n",
    "kitchen/bread.md": "# Sourdough\n\nA sourdough starter needs flour, water and patience.\n",
    "kitchen/中文.md": "# 笔记\n\n我们的知识库很大，包含很多文档。\n",
}


def trove(
    home: Path | None, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    full_env = {k: v for k, v in os.environ.items() if k != "TROVE_HOME"}
    full_env.update(env or {})
    cmd = [sys.executable, "-m", "app", *(["--home", str(home)] if home is not None else []), *args]
    return subprocess.run(
        cmd, capture_output=True, text=True, env=full_env, timeout=120, check=False
    )


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    return write_files(tmp_path / "notes", NOTES)


def test_add_and_batch_search(tmp_path: Path, corpus: Path) -> None:
    home = tmp_path / "home"
    created = trove(home, "base", "create", "Notes", "--top-k", "3", "--json")
    assert created.returncode == 0, created.stderr
    base_id = json.loads(created.stdout)["id"]

    added = trove(home, "add", "Notes", str(corpus), "--wait")
    assert added.returncode == 0, added.stderr
    assert "indexed 4 document(s), 0 failed" in added.stderr

    items = json.loads(trove(home, "item", "list", base_id, "--json").stdout)
    assert {i["status"] for i in items} == {"completed"}
    assert len(items) == 5  # the folder root and its four files

    queries = tmp_path / "queries.jsonl"
    queries.write_text(
        "\n".join(
            json.dumps(q, ensure_ascii=False)
            for q in [
                {"_id": "q1", "text": "how much sun do tomatoes need"},
                {"_id": "q2", "text": "sourdough starter"},
                {"_id": "q3", "text": "知识"},
                {"_id": "q4", "text": "🙂"},
            ]
        ),
        encoding="utf-8",
    )
    out = trove(home, "search", "Notes", "--queries", str(queries))
    assert out.returncode == 0, out.stderr
    lines = [json.loads(line) for line in out.stdout.splitlines()]
    assert [line["query_id"] for line in lines] == ["q1", "q2", "q3", "q4"]
    first = lines[0]
    assert first["mode"] == "bm25" and first["query"] == "how much sun do tomatoes need"
    top = first["results"][0]
    assert set(top) >= {
        "rank",
        "score",
        "scoreKind",
        "itemId",
        "source",
        "title",
        "conceptId",
        "charStart",
        "charEnd",
        "text",
    }
    assert top["source"] == str(corpus / "garden" / "tomatoes.md")
    assert top["rank"] == 1 and top["scoreKind"] == "ranking"
    assert len(first["results"]) <= 3
    assert set(first["metrics"]) >= {"bm25SearchMs", "bm25HitCount", "totalMs", "finalCount"}
    assert lines[1]["results"][0]["title"] == "Sourdough"
    assert lines[2]["results"][0]["source"].endswith("中文.md")
    assert lines[3]["error"]["code"] == "NO_SEARCHABLE_TOKEN"

    material = home / "bases" / base_id / "raw" / top["conceptId"]
    assert material.read_text(encoding="utf-8")[top["charStart"] : top["charEnd"]] == top["text"]


def test_single_search_and_home_from_environment(tmp_path: Path, corpus: Path) -> None:
    home = tmp_path / "envhome"
    env = {"TROVE_HOME": str(home)}
    assert trove(None, "base", "create", "Env", env=env).returncode == 0
    assert trove(None, "add", "Env", str(corpus / "garden"), "--wait", env=env).returncode == 0
    assert (home / "trove.sqlite").is_file()
    out = trove(None, "search", "Env", "prune roses", "--json", "--debug", env=env)
    data = json.loads(out.stdout)
    assert data["results"][0]["title"] == "Roses" and "metrics" in data
    text = trove(None, "search", "Env", "prune roses", env=env)
    assert "Roses" in text.stdout


def test_errors_are_clear_and_exit_non_zero(tmp_path: Path, corpus: Path) -> None:
    home = tmp_path / "home"
    missing = trove(home, "search", "Nope", "x")
    assert missing.returncode == 1 and "BASE_NOT_FOUND" in missing.stderr
    trove(home, "base", "create", "Twin")
    trove(home, "base", "create", "Twin")
    ambiguous = trove(home, "item", "list", "Twin")
    assert ambiguous.returncode == 1 and "BASE_AMBIGUOUS" in ambiguous.stderr
    trove(home, "base", "create", "One")
    (corpus / "garden" / "broken.txt").write_bytes(b"\x00\x01\x02binary\x00")
    (corpus / "garden" / "empty.md").write_text("   \n", encoding="utf-8")
    failed = trove(home, "add", "One", str(corpus / "garden"), "--wait")
    assert failed.returncode == 1
    assert "READ_FAILED" in failed.stderr and "EMPTY_INDEXABLE_TEXT" in failed.stderr
    assert "indexed 2 document(s), 2 failed" in failed.stderr
    no_model = trove(home, "base", "create", "Vec", "--embedding", "nowhere:model")
    assert no_model.returncode == 1 and "MODEL_NOT_AVAILABLE" in no_model.stderr
    assert "Vec" not in trove(home, "base", "list").stdout


def test_version_and_help(tmp_path: Path) -> None:
    # Without a command `trove` opens the window (tests/ui/test_launcher.py); --help lists
    # the commands.
    out = trove(tmp_path / "h", "--version")
    assert out.returncode == 0 and out.stdout.startswith("trove ")
    helped = trove(tmp_path / "h", "--help")
    assert helped.returncode == 0 and "search" in helped.stdout
