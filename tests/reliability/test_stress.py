"""Concurrency stress (a few seconds; tests/bench/stress.py runs longer): threads add,
delete, reindex and search two bases at once while the real JobExecutor runs the queue.
Zero search errors, zero invariant violations (doctor clean once the queue drains,
nothing left running), and every kind of operation ran often enough to mean something.
The figures are printed as one JSON line (visible with -s)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from tests.reliability.stress import KINDS, StressRun

SECONDS = 4.0
AT_LEAST = 5  # of every mutation kind
AT_LEAST_SEARCHES = 50


@pytest.fixture
def stress(qtbot: QtBot, tmp_path: Path) -> Iterator[StressRun]:
    run = StressRun(tmp_path, seed=20240612)
    yield run
    run.close()


def test_concurrent_adds_deletes_reindexes_and_searches_keep_every_invariant(
    stress: StressRun,
) -> None:
    figures = stress.run(SECONDS)
    print(json.dumps(figures.to_json()))

    assert figures.search_errors == [], figures.search_errors[:10]
    assert figures.violations == [], figures.violations[:20]
    for kind in KINDS:
        assert figures.ops[kind] >= AT_LEAST, (kind, figures.to_json())
    assert figures.ops["search"] >= AT_LEAST_SEARCHES, figures.to_json()
    # The executor really ran every kind of job the mutations queue.
    for kind in ("index-documents", "prepare-root", "delete-subtree", "reindex-subtree"):
        assert figures.jobs[f"{kind}:done"] >= 1, (kind, figures.to_json())
    # Something survived the deletions, and was judged (found by its own word).
    assert figures.final_items["note:completed"] >= AT_LEAST, figures.to_json()
