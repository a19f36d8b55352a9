"""`trove base export --strip-sources` (and the window's checkbox) leaves out where the files
and folders are on the exporting computer: the file holds none of their paths, and it
imports into the same base, results and all."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.portable import hostile
from tests.portable.world import KEY, World, build, queries, search_all, trove
from tests.providers.fake_api import FakeApi


@pytest.fixture
def api() -> Iterator[FakeApi]:
    with FakeApi(api_key=KEY, dims=8) as server:
        yield server


@pytest.fixture
def world(tmp_path: Path, api: FakeApi) -> World:
    return build(tmp_path, api, docs=12)


def test_an_export_can_leave_out_the_paths_of_this_computer(tmp_path: Path, world: World) -> None:
    where = str(world.docs).encode()
    kept = tmp_path / "kept.trovebase"
    said = trove(world.home, "base", "export", "garden", str(kept))
    assert said.returncode == 0, said.stderr
    assert "--strip-sources" in said.stderr, "an export that keeps paths says so"
    assert where in kept.read_bytes()

    stripped = tmp_path / "stripped.trovebase"
    said = trove(world.home, "base", "export", "garden", str(stripped), "--strip-sources")
    assert said.returncode == 0, said.stderr
    assert where not in stripped.read_bytes()
    assert str(tmp_path).encode() not in stripped.read_bytes()
    rows = hostile.item_rows(stripped)
    assert all(not r["source"].startswith("/") for r in rows if r["type"] in ("file", "directory"))
    assert {r["source"] for r in rows} == {r["relativePath"] for r in rows}

    asked = queries(30)
    before = search_all(world.home, world.base_id, asked)
    imported = trove(world.home, "base", "import", str(stripped), "--json")
    assert imported.returncode == 0, imported.stderr
    assert search_all(world.home, json.loads(imported.stdout)["id"], asked) == before
    doctor = trove(world.home, "doctor")
    assert doctor.returncode == 0, doctor.stdout
