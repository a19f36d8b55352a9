"""The seeded linked-folder sync simulation, long (tests/reliability/sync_simulation.py).

    python tests/bench/sync_simulation.py [--seeds 500] [--first 1] [--workdir DIR]

Each seed: random create / edit / rename / move / delete in a real folder, `trove sync`
runs SIGKILLed at random moments and restarted, then the linked base is compared with a
fresh index of the folder. Prints one JSON line: seeds, rounds, kills (and at which
moment), changes made, violations, failed seeds, seconds; the first violations go to
stderr too.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


def main() -> int:
    from tests.providers.fake_api import FakeApi
    from tests.reliability.cli_zygote import Zygote
    from tests.reliability.sync_simulation import KEY, KEY_ENV, SyncSimulation, run_seeds

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=500)
    parser.add_argument("--first", type=int, default=1)
    parser.add_argument("--workdir", type=Path, default=None)
    args = parser.parse_args()
    os.environ[KEY_ENV] = KEY
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="trove-sync-sim-"))
    with FakeApi(api_key=KEY, dims=8) as api:
        zygote = Zygote()
        try:
            tally = run_seeds(
                SyncSimulation(workdir, api, zygote), range(args.first, args.first + args.seeds)
            )
        finally:
            zygote.close()
    summary = tally.to_json()
    summary["workdir"] = str(workdir)
    print(json.dumps(summary))
    for violation in tally.violations[:20]:
        print(violation, file=sys.stderr)
    return 1 if tally.violations else 0


if __name__ == "__main__":
    sys.exit(main())
