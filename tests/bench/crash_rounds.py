"""Crash-injection rounds against the real CLI (the long version of
tests/reliability/test_crash_recovery.py).

    python tests/bench/crash_rounds.py [--rounds N] [--seed S] [--pair-share F] [--workdir DIR]

Each round SIGKILLs `trove add|reindex|delete` at a random moment, recovers in a fresh
service and checks the data dir (doctor, stuck items, searches); `--pair-share` runs that
share of rounds as `add` + `delete --all` in two processes at once. At the end everything
is reindexed unkilled and checked once more (temporary files of any age count then).
Each kill hits the CLI process alone; its reader workers must end by themselves within
5 s (a survivor is a violation). Prints one JSON line: rounds, kills, violations, hangs (a
CLI that never returned), stuck_items, kills_by_phase, rounds_by_action, what recovery
did, leftover temp files, kills that left reader workers / any descendant behind, the
worst time a descendant outlived its killed parent, typical run times, seconds; and the
first violations and hangs on stderr.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


def main() -> int:
    from tests.providers.fake_api import FakeApi
    from tests.reliability.harness import KEY, CrashHarness, run_rounds

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--pair-share", type=float, default=0.0)
    parser.add_argument("--workdir", type=Path)
    args = parser.parse_args()
    # Each round's recovery logs what it did; the JSON line counts it instead.
    logging.getLogger("app").setLevel(logging.ERROR)

    with tempfile.TemporaryDirectory(dir=args.workdir) as tmp, FakeApi(api_key=KEY, dims=8) as api:
        harness = CrashHarness(Path(tmp), api, seed=args.seed, pair_share=args.pair_share)
        harness.calibrate()
        tally = run_rounds(harness, args.rounds)
        leftover = harness.leftover_temp_files()
        settled = harness.settle()
        violations = tally.violations + [f"settle: {v}" for v in settled]
        print(
            json.dumps(
                {
                    "rounds": tally.rounds,
                    "kills": tally.kills,
                    "violations": len(violations),
                    "hangs": len(tally.hangs),
                    "stuck_items": tally.stuck_items,
                    "kills_by_phase": dict(sorted(tally.kills_by_phase.items())),
                    "rounds_by_action": dict(sorted(tally.rounds_by_action.items())),
                    "recovery": dict(sorted(tally.recovered.items())),
                    "leftover_temp_files": leftover,
                    "kills_with_workers": tally.kills_with_workers,
                    "kills_with_descendants": tally.kills_with_descendants,
                    "worst_orphan_s": round(tally.worst_orphan_s, 2),
                    "typical_run_s": {k: round(v, 2) for k, v in harness.typical.items()},
                    "seconds": round(tally.seconds, 1),
                }
            )
        )
        for line in [*violations[:30], *tally.hangs[:10]]:
            print(line, file=sys.stderr)
    return 1 if violations or tally.hangs else 0


if __name__ == "__main__":
    sys.exit(main())
