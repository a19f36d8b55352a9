"""Reader workers leave when their Trove is SIGKILLed, even while they are still starting.

A worker that started after its parent died used to take init for its parent and wait for
init to die (with the resource tracker it kept alive): both stayed at ppid 1 for good.
"""

from __future__ import annotations

import subprocess
import sys
import time

import psutil

from tests.reliability.harness import ORPHAN_DEADLINE, ROOT, _is_reader_worker, kill_and_check

# A Trove-like parent: the shared pool, started as the window starts it, then idle.
PARENT = """
import time
from app.knowledge.jobs.reader_pool import ExtractionPool
pool = ExtractionPool(workers=2)
pool.warm()
time.sleep(120)
"""


def _starting_workers(pid: int) -> int:
    try:
        return sum(1 for p in psutil.Process(pid).children() if _is_reader_worker(p))
    except psutil.Error:
        return 0


def test_workers_killed_during_start_up_leave_with_their_parent() -> None:
    parent = subprocess.Popen(
        [sys.executable, "-c", PARENT], cwd=ROOT, stdin=subprocess.DEVNULL, start_new_session=True
    )
    try:
        deadline = time.monotonic() + 60
        # Kill as soon as a worker exists: it is still importing, before its initializer.
        while _starting_workers(parent.pid) == 0:
            assert parent.poll() is None and time.monotonic() < deadline, "no worker started"
            time.sleep(0.005)  # polling another process's children
        check = kill_and_check(parent)
    finally:
        if parent.poll() is None:
            parent.kill()
        parent.wait(timeout=30)
    print(f"{check.descendants} descendants, the last gone {check.worst_s:.2f} s after the kill")
    assert check.workers >= 1
    assert check.survivors == [], f"alive {ORPHAN_DEADLINE:.0f} s after the kill"
