"""SIGKILL a `trove base export` and a `trove base import` in the middle: no truncated
export file, no half base; `doctor --repair` leaves the data folder clean, the original base
still answers, and a retry works."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.portable.world import (
    KEY,
    REPO,
    World,
    build,
    cli_env,
    queries,
    search_all,
    service,
    trove,
)
from tests.providers.fake_api import FakeApi

HOOK = Path(__file__).parent / "slow_hook"


@pytest.fixture
def api() -> Iterator[FakeApi]:
    with FakeApi(api_key=KEY, dims=8) as server:
        yield server


@pytest.fixture
def world(tmp_path: Path, api: FakeApi) -> World:
    return build(tmp_path, api, docs=24)


def _spawn(home: Path, args: list[str], extra: dict[str, str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "app", "--home", str(home), *args],
        env=cli_env(hook=HOOK, extra=extra),
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def _kill_when(proc: subprocess.Popen[bytes], ready: Callable[[], bool], after: float) -> None:
    deadline = time.monotonic() + 60
    while not ready():
        assert proc.poll() is None, "the command ended before the moment to kill it"
        assert time.monotonic() < deadline, "the moment to kill never came"
        time.sleep(0.01)
    time.sleep(after)
    assert proc.poll() is None, "the command ended before it was killed"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)


def _doctor_repairs_to_clean(home: Path) -> str:
    repaired = trove(home, "doctor", "--repair")
    assert "after repair: 0 problem(s)" in repaired.stdout, repaired.stdout
    checked = trove(home, "doctor")
    assert checked.returncode == 0, checked.stdout
    return repaired.stdout


@pytest.mark.parametrize("after", [0.0, 0.5, 1.5])
def test_a_killed_export_leaves_no_file_and_a_retry_works(
    tmp_path: Path, world: World, after: float
) -> None:
    asked = queries(20)
    before = search_all(world.home, world.base_id, asked)
    target = tmp_path / "out.trovebase"
    part = target.with_name(target.name + ".part")
    proc = _spawn(
        world.home,
        ["base", "export", world.base_id, str(target)],
        {"TROVE_TEST_PORTABLE_DELAY": "0.1"},
    )
    _kill_when(proc, part.exists, after)
    assert not target.exists(), "a killed export must not leave the file it was writing"
    _doctor_repairs_to_clean(world.home)
    assert search_all(world.home, world.base_id, asked) == before

    again = trove(world.home, "base", "export", world.base_id, str(target))
    assert again.returncode == 0, again.stderr
    assert not part.exists()
    svc = service(world.home)
    try:
        report = svc.import_base(target)
        assert report.items == len(svc.list_items(world.base_id))
    finally:
        svc.close()


def _staged(home: Path) -> Callable[[], bool]:
    def ready() -> bool:
        staging = home / "staging"
        return staging.is_dir() and any(p.name.startswith("import-") for p in staging.iterdir())

    return ready


def _moved_in(home: Path) -> Callable[[], bool]:
    return lambda: any((home / "bases").glob("*/.trove/importing"))


@pytest.mark.parametrize(
    ("moment", "after", "extra"),
    [
        ("unpacking", 0.2, {"TROVE_TEST_PORTABLE_DELAY": "0.1"}),
        ("unpacking-late", 1.5, {"TROVE_TEST_PORTABLE_DELAY": "0.1"}),
        ("before-catalog", 0.1, {"TROVE_TEST_PORTABLE_STALL": "catalog"}),
    ],
)
def test_a_killed_import_leaves_no_half_base_and_a_retry_works(
    tmp_path: Path, world: World, moment: str, after: float, extra: dict[str, str]
) -> None:
    asked = queries(20)
    before = search_all(world.home, world.base_id, asked)
    target = tmp_path / "in.trovebase"
    assert trove(world.home, "base", "export", world.base_id, str(target)).returncode == 0
    folders = sorted(p.name for p in (world.home / "bases").iterdir())

    proc = _spawn(world.home, ["base", "import", str(target)], extra)
    ready = _moved_in(world.home) if moment == "before-catalog" else _staged(world.home)
    _kill_when(proc, ready, after)

    svc = service(world.home)
    try:
        assert [b.id for b in svc.list_bases()] == [world.base_id], "no half base is visible"
    finally:
        svc.close()
    repaired = _doctor_repairs_to_clean(world.home)
    assert "PORTABLE_LEFTOVER" in repaired
    assert sorted(p.name for p in (world.home / "bases").iterdir()) == folders
    assert not any((world.home / "staging").iterdir())
    assert search_all(world.home, world.base_id, asked) == before

    again = trove(world.home, "base", "import", str(target), "--json")
    assert again.returncode == 0, again.stderr
    svc = service(world.home)
    try:
        imported = [b for b in svc.list_bases() if b.id != world.base_id]
        assert [b.name for b in imported] == ["garden (2)"]
        assert search_all(world.home, imported[0].id, asked) == before
        assert svc.doctor().clean
    finally:
        svc.close()
