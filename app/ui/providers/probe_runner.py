"""Runs one network probe at a time as an asyncio task on the window's qasync event loop.

Starting a probe cancels the one before it (its answer would describe settings the person
has since changed), and `cancel()` drops the running one, e.g. when the dialog closes. The
callbacks run on the GUI thread, since the loop is Qt's own, and only for the current probe.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

import shiboken6
from PySide6.QtCore import QObject, Signal

log = logging.getLogger(__name__)

T = TypeVar("T")


class NoEventLoop(RuntimeError):
    """The window runs without a qasync event loop, so coroutines cannot be scheduled."""


class ProbeRunner(QObject):
    # True when a probe starts, False when it ends or is cancelled
    busyChanged = Signal(bool)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._task: asyncio.Task[None] | None = None

    @property
    def busy(self) -> bool:
        return self._task is not None

    def start(
        self,
        work: Coroutine[Any, Any, T],
        on_done: Callable[[T], None],
        on_error: Callable[[BaseException], None],
    ) -> None:
        """Run `work` on the running event loop; exactly one callback follows unless a newer
        probe or `cancel()` supersedes it."""
        self.cancel()
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            work.close()  # never awaited: close it so Python does not warn about it
            on_error(NoEventLoop("no running asyncio event loop"))
            return
        task = loop.create_task(self._run(work, on_done, on_error))
        task.add_done_callback(_log_failure)
        self._task = task
        self.busyChanged.emit(True)

    def cancel(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            self.busyChanged.emit(False)

    async def _run(
        self,
        work: Coroutine[Any, Any, T],
        on_done: Callable[[T], None],
        on_error: Callable[[BaseException], None],
    ) -> None:
        try:
            result = await work
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            if self._finish():
                on_error(exc)
        else:
            if self._finish():
                on_done(result)

    def _finish(self) -> bool:
        """Marks the current task done; False when this task was superseded meanwhile."""
        if not shiboken6.isValid(self) or self._task is not asyncio.current_task():
            return False
        self._task = None
        self.busyChanged.emit(False)
        return True


def _log_failure(task: asyncio.Task[None]) -> None:
    # A callback that raised: log it rather than leave "exception never retrieved" to the GC.
    if not task.cancelled() and task.exception() is not None:
        log.error("a provider probe callback failed", exc_info=task.exception())
