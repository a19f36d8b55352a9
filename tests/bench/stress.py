"""Concurrency stress, the long version of tests/reliability/test_stress.py.

    python tests/bench/stress.py [--seconds S] [--seed N] [--mutators M] [--searchers K]
                                 [--workers W] [--workdir DIR]

Threads add, delete, reindex and search two bases (one with vectors, one BM25-only) while
the real JobExecutor runs the queue; then the queue is drained and the data dir judged
(tests/reliability/stress.py). Prints one JSON line: seconds, drain time, operations done
per kind, the legitimate race errors met, jobs run per kind and outcome, search errors,
violations and the final items; the first violations go to stderr. Exits 1 on any search
error or violation.
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
    from PySide6.QtCore import QCoreApplication

    from tests.reliability.stress import StressRun

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--mutators", type=int, default=2, help="mutating threads per base")
    parser.add_argument("--searchers", type=int, default=2)
    parser.add_argument("--workers", type=int, default=4, help="executor worker threads")
    parser.add_argument("--workdir", type=Path)
    args = parser.parse_args()
    logging.getLogger("app").setLevel(logging.ERROR)
    app = QCoreApplication.instance() or QCoreApplication(sys.argv[:1])

    with tempfile.TemporaryDirectory(dir=args.workdir) as tmp:
        run = StressRun(
            Path(tmp),
            seed=args.seed,
            mutators_per_base=args.mutators,
            searchers=args.searchers,
            max_workers=args.workers,
        )
        try:
            figures = run.run(args.seconds, drain_timeout=max(120.0, args.seconds * 2))
        finally:
            run.close()
    print(json.dumps(figures.to_json()))
    for line in [*figures.search_errors[:10], *figures.violations[:30]]:
        print(line, file=sys.stderr)
    del app
    return 1 if figures.search_errors or figures.violations else 0


if __name__ == "__main__":
    sys.exit(main())
