"""Waiting for the window to reach a state without freezing it (for the screenshot and
self-test modes, which drive the window from a script)."""

from __future__ import annotations

import time
from collections.abc import Callable

from PySide6.QtCore import QEventLoop, QTimer


class WaitTimeout(RuntimeError):
    pass


def wait_until(condition: Callable[[], bool], timeout_s: float, what: str) -> None:
    """Run the event loop until `condition()` holds; raise WaitTimeout after `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    loop = QEventLoop()
    timer = QTimer()
    timer.setInterval(20)

    def check() -> None:
        if condition() or time.monotonic() > deadline:
            loop.quit()

    timer.timeout.connect(check)
    timer.start()
    if not condition():
        loop.exec()
    timer.stop()
    if not condition():
        raise WaitTimeout(f"timed out after {timeout_s:.0f} s waiting for {what}")
