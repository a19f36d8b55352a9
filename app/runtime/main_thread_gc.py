"""Python's cyclic garbage collected on the main thread only, from its event loop: in the
window, the work process and a headless run (`trove add --wait`).

The collector runs on whichever thread happens to allocate when a generation fills up. In
a Qt process that is often a job or reader thread, and a cycle it collects may hold a Qt
object the main thread made (a model a test patched, a dialog whose slots capture it): the
object is then destroyed on a thread that does not own it, while the main thread may
hold a Qt lock and wait for the GIL that thread holds. That is a deadlock (the UI suite hung
that way once) or a crash.

It also runs inside Qt destructors. ~QObject holds one of Qt's pooled signal-slot mutexes
(picked by the object's address) while it calls disconnectNotify, whose Python override
lookup allocates; a collection started by that allocation destroys other QObjects of
garbage cycles, and one whose address picks the same mutex locks it again on the same
thread: a self-deadlock (seen with py-spy in the UI suite: gc_collect_main under
Sbk_GetPyOverride under ~QObject, the inner ~QObject waiting in QBasicMutex::lockInternal).

So the automatic collector is switched off while the event loop runs, and a timer on the
main thread collects instead, from the loop's top level, by the interpreter's own
thresholds.
"""

from __future__ import annotations

import gc
import time

from PySide6.QtCore import QObject, QTimer

# How often the main thread looks at the collector's counts.
CHECK_MS = 100
# A full collection walks every tracked object: at most this often (the interpreter itself
# waits until a quarter of the old objects are new; that count is not readable from Python).
FULL_EVERY_S = 5.0

# When this process last collected fully through a collector: shared by all of them, so a
# process that starts and stops many (the test suite: one per Qt test) pays for a full
# walk of its heap at most every FULL_EVERY_S, not at every stop (73 ms each, 2.5 min a run).
_last_full = time.monotonic()


def due_generation(counts: tuple[int, int, int], threshold: tuple[int, int, int]) -> int | None:
    """The oldest generation the interpreter would collect now, or None: a generation is due
    when its count is over its threshold and the younger ones are due too."""
    due: int | None = None
    for generation in range(3):
        if counts[generation] <= threshold[generation]:
            break
        due = generation
    return due


class MainThreadCollector(QObject):
    """Between start() and stop() the automatic collector is off and this object's timer,
    on the thread it lives in, collects what is due."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._threshold = gc.get_threshold()
        self._was_enabled = False
        self._timer = QTimer(self)
        self._timer.setInterval(CHECK_MS)
        self._timer.timeout.connect(self._on_tick)

    @property
    def active(self) -> bool:
        return self._timer.isActive()

    def start(self) -> None:
        if self.active:
            return
        threshold = gc.get_threshold()
        if threshold[0] > 0:  # 0 means someone switched collection off on purpose
            self._threshold = threshold
        self._was_enabled = gc.isenabled()
        gc.disable()
        self._timer.start()

    def stop(self) -> None:
        """Back to the automatic collector (as it was before start), after collecting here:
        switched back on with a generation over its threshold, it would run at the next
        allocation, maybe inside a Qt destructor (see the module's text). Fully when the
        last full collection is FULL_EVERY_S old, else the young generations."""
        if not self.active:
            return
        self._timer.stop()
        _collect(2)
        if self._was_enabled:
            gc.enable()

    def _on_tick(self) -> None:
        generation = due_generation(gc.get_count(), self._threshold)
        if generation is not None:
            _collect(generation)


def _collect(generation: int) -> None:
    """Collect up to `generation`; a full collection only once FULL_EVERY_S passed since
    the last one (the young generations instead)."""
    global _last_full
    if generation == 2 and time.monotonic() - _last_full < FULL_EVERY_S:
        generation = 1
    gc.collect(generation)
    if generation == 2:
        _last_full = time.monotonic()
