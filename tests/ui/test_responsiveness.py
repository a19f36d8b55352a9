"""The GUI thread never stalls while the real runtime indexes 300 files.

A QTimer on the GUI thread ticks every 10 ms; the longest gap between ticks, minus the
interval, is the longest stall the person could have felt. Everything is the app's own
(tests/bench/responsiveness.py does the measuring): the main window, documents read in the
reader worker processes, embedded by the built-in offline model (when the `local` extra is
installed; otherwise the base is BM25-only) and indexed by the real JobExecutor with its
default worker count. Gaps during which a separate idle process also woke 50 ms late are the
machine pausing (these are shared VMs), and are reported but not held against Trove.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from app.providers.local_model import local_model_available

ROOT = Path(__file__).resolve().parents[2]
FILES = 300
MAX_STALL_MS = 100


def test_gui_thread_never_stalls_while_300_files_index() -> None:
    # In its own process, as the app runs: the test process carries a thousand tests' worth
    # of threads, pools and memory that a person's Trove never has (inside the full suite a
    # 120-180 ms gap appeared that the same run alone never shows).
    model = "local" if local_model_available() else "bm25"
    done = subprocess.run(
        [sys.executable, str(ROOT / "tests" / "bench" / "responsiveness.py"),
         "--files", str(FILES), "--model", model],
        cwd=ROOT,
        env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
        capture_output=True,
        text=True,
        timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    print(json.dumps({"responsiveness": figures}))
    assert figures["ticks"] > 100  # the probe really ran during the import
    # A stall counts against Trove unless an idle process outside it was held up at the same
    # moment (a pause of the shared machine); the raw figure is printed and in the README.
    assert float(figures["maxAppStallMs"]) < MAX_STALL_MS, figures


def test_the_machine_control_sees_a_pause() -> None:
    import os
    import signal
    import time

    from tests.bench.responsiveness import MachineControl

    control = MachineControl()
    time.sleep(0.3)
    os.kill(control._process.pid, signal.SIGSTOP)  # the machine "pauses" for this process
    time.sleep(0.2)
    os.kill(control._process.pid, signal.SIGCONT)
    time.sleep(0.1)
    stalls = control.stop()
    assert any(0.15 < end - start < 1.0 for start, end in stalls), stalls
