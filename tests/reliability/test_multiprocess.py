"""Three CLI `add` processes, an MCP agent's `kb_manage add` and the window's job runtime
write overlapping folders into one base at once, round after round (see multiprocess.py):
no item fails with a lock error, no writer hangs, the doctor is clean and every document is
found by its own word. `python tests/bench/multiprocess.py --rounds 200` runs it longer."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from tests.reliability.multiprocess import OVERLAPS, MultiWriterRun, Tally

ROUNDS = 20


@pytest.fixture
def run(tmp_path: Path, qtbot: QtBot) -> Iterator[MultiWriterRun]:
    def wait_until(predicate: Callable[[], bool], timeout: float) -> bool:
        try:
            qtbot.waitUntil(predicate, timeout=int(timeout * 1000))
        except AssertionError:  # pytest-qt's timeout: the round reports what is still busy
            return False
        return True

    writers = MultiWriterRun(tmp_path, wait_until, seed=13)
    yield writers
    writers.close()


def test_five_writers_on_one_base_lose_nothing(run: MultiWriterRun) -> None:
    tally = Tally()
    for number in range(ROUNDS):
        tally.add(run.round(number))
    print(json.dumps(tally.to_json()))
    assert tally.rounds == ROUNDS
    assert tally.lock_failures == 0, tally.violations[:5]
    assert tally.hangs == []
    assert tally.violations == []
    # The writers did overlap: each folder added twice was admitted once and skipped once.
    assert tally.skipped == OVERLAPS * ROUNDS, tally.skipped
