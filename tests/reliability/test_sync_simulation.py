"""50 seeds of the linked-folder sync simulation (tests/reliability/sync_simulation.py):
random changes to a real folder, `trove sync` runs SIGKILLed at random moments and
restarted, and after each seed the base equals a fresh index of the folder, file by file
and chunk by chunk. `python tests/bench/sync_simulation.py --seeds 500` runs it longer.

What it found, fixed in jobs/sync_folder.py (each also an exact test in
tests/integration/test_linked_folders.py), and the seeds that fail with the fix undone:
- a renamed file kept its old title in the index, so results named it by its old name and
  its new name found nothing: 32 of these 50 seeds (5, 6, 7, 8, 9, 10, ...);
- a longer name takes more room from chunks as long as the model reads, so a fresh index
  cuts them elsewhere: seeds 26, 27 and 31;
- a sync killed before it took its lease swallowed the next request, so the last sync
  changed nothing: seeds 1 and 27 in one run (the kill moment's timing is not seeded).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.providers.fake_api import FakeApi
from tests.reliability.cli_zygote import Zygote
from tests.reliability.sync_simulation import KEY, KEY_ENV, SyncSimulation, run_seeds

SEEDS = range(1, 51)
REGRESSION_SEEDS = (1, 5, 6, 26, 27, 31)


@pytest.fixture
def simulation(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[SyncSimulation]:
    monkeypatch.setenv(KEY_ENV, KEY)
    monkeypatch.setenv("QT_QPA_PLATFORM", "offscreen")
    with FakeApi(api_key=KEY, dims=8) as api:
        zygote = Zygote()
        try:
            yield SyncSimulation(tmp_path, api, zygote)
        finally:
            zygote.close()


def test_fifty_seeds_of_killed_syncs_end_equal_to_a_fresh_index(
    simulation: SyncSimulation,
) -> None:
    assert set(REGRESSION_SEEDS) <= set(SEEDS)
    tally = run_seeds(simulation, SEEDS)
    summary = tally.to_json()
    print(json.dumps(summary))
    assert tally.seeds == len(SEEDS)
    assert tally.violations == [], "\n".join(tally.violations[:20])
    # The kills landed where the work is, not only at start-up.
    assert tally.kills >= len(SEEDS), summary
    assert tally.kill_moments["looking"] >= 5 and tally.kill_moments["indexing"] >= 5, summary
    assert min(tally.changes[c] for c in ("create", "edit", "rename", "move", "delete")) >= 10
