"""Background calls for the window: run a slow engine call on a worker thread and deliver its
result (or its exception) back on the GUI thread, Anki-style.

Widgets never call KnowledgeService methods that touch disk or network on the GUI thread;
they go through `BackgroundTasks.run`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import shiboken6
from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal, Slot

log = logging.getLogger(__name__)

OnDone = Callable[[Any], None]
OnError = Callable[[BaseException], None]


class _Signals(QObject):
    # task id, result, exception (one of the two is None)
    finished = Signal(int, object, object)


class _Call(QRunnable):
    def __init__(self, task_id: int, fn: Callable[[], Any], signals: _Signals) -> None:
        super().__init__()
        self._task_id = task_id
        self._fn = fn
        self._signals = signals

    def run(self) -> None:
        try:
            result = self._fn()
        except BaseException as exc:  # delivered to the caller's on_error on the GUI thread
            self._signals.finished.emit(self._task_id, None, exc)
        else:
            self._signals.finished.emit(self._task_id, result, None)


class BackgroundTasks(QObject):
    """A small pool for the window's own calls, apart from the job executor's pool."""

    # emitted on the GUI thread when no call is pending (tests wait on it)
    idle = Signal()
    # a call without its own error handler failed
    failed = Signal(object)
    # the first call started (True) / the last one finished (False)
    activeChanged = Signal(bool)

    def __init__(self, parent: QObject | None = None, *, max_threads: int = 2) -> None:
        super().__init__(parent)
        self._pool = QThreadPool(self)
        self._pool.setMaxThreadCount(max_threads)
        self._signals = _Signals()
        self._signals.finished.connect(self._on_finished)
        self._pending: dict[int, tuple[OnDone | None, OnError | None, QObject | None]] = {}
        self._next_id = 0

    @property
    def pending(self) -> int:
        return len(self._pending)

    def run(
        self,
        fn: Callable[[], Any],
        on_done: OnDone | None = None,
        on_error: OnError | None = None,
        *,
        owner: QObject | None = None,
    ) -> int:
        """Start `fn()` off the GUI thread; callbacks run on the GUI thread. Returns a task id.

        With an `owner`, the callbacks are dropped if the owner was deleted meanwhile (a window
        closed while its read ran): they would touch a dead widget's signals and children.
        """
        self._next_id += 1
        self._pending[self._next_id] = (on_done, on_error, owner)
        if len(self._pending) == 1:
            self.activeChanged.emit(True)
        self._pool.start(_Call(self._next_id, fn, self._signals))
        return self._next_id

    def wait(self, timeout_ms: int = 30_000) -> bool:
        """Block until running calls end (shutdown only; their callbacks are dropped)."""
        done = bool(self._pool.waitForDone(timeout_ms))
        self._pending.clear()
        return done

    @Slot(int, object, object)
    def _on_finished(self, task_id: int, result: Any, error: BaseException | None) -> None:
        callbacks = self._pending.pop(task_id, None)
        if callbacks is None:
            return
        on_done, on_error, owner = callbacks
        try:
            if owner is not None and not shiboken6.isValid(owner):
                log.debug("dropped the result of task %d: its owner was deleted", task_id)
            elif error is None:
                if on_done is not None:
                    on_done(result)
            elif on_error is not None:
                on_error(error)
            else:
                log.error("background call failed", exc_info=error)
                self.failed.emit(error)
        finally:
            if not self._pending:
                self.activeChanged.emit(False)
                self.idle.emit()
