"""Crash injection against the real CLI: 50+ SIGKILLs during add, reindex and delete, each
followed by recovery in a fresh service. Nothing may be left inconsistent or stuck,
searches keep working, and no reader worker outlives its killed CLI by more than 5 s
(tests/reliability/harness.py has the details)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.providers.fake_api import FakeApi
from tests.reliability.harness import KEY, KEY_ENV, CrashHarness, run_rounds

ROUNDS = 52


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeApi]:
    monkeypatch.setenv(KEY_ENV, KEY)
    with FakeApi(api_key=KEY, dims=8) as server:
        yield server


def test_killed_cli_runs_always_recover(tmp_path: Path, api: FakeApi) -> None:
    started = time.monotonic()
    harness = CrashHarness(tmp_path, api, seed=20240611)
    harness.calibrate()
    tally = run_rounds(harness, ROUNDS)
    settled = harness.settle()
    stray = harness.stray_processes()

    summary = (
        f"{tally.rounds} rounds, {tally.kills} kills by phase {dict(tally.kills_by_phase)}, "
        f"actions {dict(tally.rounds_by_action)}, recovery {dict(tally.recovered)}, "
        f"typical runs {harness.typical}, kills with reader workers {tally.kills_with_workers}, "
        f"worst survival after a kill {tally.worst_orphan_s:.2f} s, "
        f"{time.monotonic() - started:.0f} s"
    )
    print(summary)
    assert tally.violations == [], "\n".join([summary, *tally.violations[:20]])
    assert tally.stuck_items == 0
    assert settled == [], settled
    assert stray == [], stray  # no reader worker of a killed CLI is left
    # Enough kills landed while work was running, not only during start-up.
    working = sum(
        n for phase, n in tally.kills_by_phase.items() if phase not in {"idle", "finished"}
    )
    assert tally.kills >= ROUNDS // 2 and working >= ROUNDS // 4, summary
    # Enough kills left reader workers behind for the survival check to mean something.
    assert tally.kills_with_workers >= ROUNDS // 5, summary
