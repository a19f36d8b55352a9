"""An offscreen Trove window on a data folder, measuring how long its GUI thread stalls.

    python tests/bench/window_probe.py HOME

Opens the main window as `trove` does (its heap settled, its own job executor included, in the job process the
window starts: a window open while a terminal indexes runs the queue too), ticks a QTimer every 10 ms on the GUI thread, and on
SIGTERM closes the window and prints one JSON line: the longest stall, the p99 gap, and the
longest stall during which a separate idle process was not held up as well (the machine's
own pauses left out; tests/bench/responsiveness.py MachineControl). Used by library.py.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from PySide6.QtCore import QSettings, QTimer  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from app.knowledge.service import KnowledgeService  # noqa: E402
from app.runtime.process_executor import window_executor  # noqa: E402
from app.ui.context import UiContext  # noqa: E402
from app.ui.launcher import settle_heap  # noqa: E402
from app.ui.main_window import MainWindow  # noqa: E402
from app.ui.notifications import Notifier  # noqa: E402
from app.ui.tasks import BackgroundTasks  # noqa: E402
from tests.bench.responsiveness import TICK_MS, MachineControl  # noqa: E402


def main() -> None:
    home = Path(sys.argv[1])
    app = QApplication.instance() or QApplication(sys.argv[:1])
    settings = Path(tempfile.mkdtemp(prefix="trove-probe-")) / "settings.ini"
    service = KnowledgeService(home)
    ctx = UiContext(
        service=service,
        executor=window_executor(home, service),
        tasks=BackgroundTasks(),
        settings=QSettings(str(settings), QSettings.Format.IniFormat),
        notifier=Notifier(),
    )
    ctx.executor.start()
    window = MainWindow(ctx)
    window.confirm_quit = lambda _running: True
    window.show()
    window.start()
    settle_heap(window)  # as launcher.run_window does
    opened = time.monotonic()
    gaps: list[tuple[float, float]] = []
    last: list[float | None] = [None]

    def tick() -> None:
        now = time.monotonic()
        if last[0] is not None:
            gaps.append((last[0], now))
        last[0] = now

    timer = QTimer()
    timer.setInterval(TICK_MS)
    timer.timeout.connect(tick)
    control = MachineControl()
    timer.start()
    signal.signal(signal.SIGTERM, lambda *_: app.quit())
    ticker = QTimer()  # lets Python run the signal handler
    ticker.timeout.connect(lambda: None)
    ticker.start(100)
    print("ready", flush=True)
    app.exec()
    timer.stop()
    machine = control.stop()
    ctx.executor.shutdown()
    ctx.tasks.wait()
    window.close()
    service.close()
    ordered = sorted((end - start) * 1000 for start, end in gaps) or [float(TICK_MS)]
    own = [
        (end - start) * 1000
        for start, end in gaps
        if not any(m_start < end and start < m_end for m_start, m_end in machine)
    ]
    print(
        json.dumps(
            {
                "ticks": len(gaps),
                "p99GapMs": round(ordered[int(len(ordered) * 0.99)], 1),
                "maxStallMs": round(max(0.0, ordered[-1] - TICK_MS), 1),
                "machineStalls": len(machine),
                "maxAppStallMs": round(max(0.0, max(own, default=TICK_MS) - TICK_MS), 1),
                # The five longest, each with when it started (s after the window opened),
                # to line them up with what the window did then.
                "longestStalls": [
                    [round(start - opened, 1), round((end - start) * 1000 - TICK_MS, 1)]
                    for start, end in sorted(gaps, key=lambda g: g[0] - g[1])[:5]
                ],
            }
        ),
        flush=True,
    )


if __name__ == "__main__":
    main()
