"""Five writers on one base at once, many rounds (the long version of
tests/reliability/test_multiprocess.py).

    python tests/bench/multiprocess.py [--rounds N] [--seed S] [--workdir DIR]

Each round: three `trove add --wait` processes, an MCP `kb_manage add wait=true` session and
this process's own job runtime (as the window runs it) add overlapping folders to a fresh
base of one data folder. Prints one JSON line: rounds, documents, lockFailures, hangs,
violations, overlapSkips, round seconds (median, max), seconds; the first violations and
hangs are in the JSON too.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


def main() -> int:
    from PySide6.QtCore import QCoreApplication

    from tests.reliability.multiprocess import MultiWriterRun, Tally

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--workdir", type=Path)
    args = parser.parse_args()
    logging.getLogger("app").setLevel(logging.ERROR)
    app = QCoreApplication([])

    def wait_until(predicate: Callable[[], bool], timeout: float) -> bool:
        # The executor's signals and timers need this thread's event loop to turn.
        deadline = time.monotonic() + timeout
        while not predicate():
            if time.monotonic() >= deadline:
                return False
            app.processEvents()
            time.sleep(0.02)
        return True

    started = time.monotonic()
    with tempfile.TemporaryDirectory(dir=args.workdir) as tmp:
        run = MultiWriterRun(Path(tmp), wait_until, seed=args.seed)
        tally = Tally()
        try:
            for number in range(args.rounds):
                tally.add(run.round(number))
        finally:
            run.close()
    figures = {**tally.to_json(), "seconds": round(time.monotonic() - started, 1)}
    print(json.dumps(figures))
    return 0 if not tally.violations and not tally.hangs else 1


if __name__ == "__main__":
    sys.exit(main())
