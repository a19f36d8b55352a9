"""The Qt binding itself must be sound: the runtime emits a signal per job and per progress tick."""

from __future__ import annotations

import sys

from PySide6.QtCore import QObject, Signal


class _Emitter(QObject):
    plain = Signal(str, list)
    boxed = Signal(object, str)


def test_signal_emission_keeps_reference_counts(qapp: object) -> None:
    # PySide6 6.12.0 dropped a reference to True on every emit; after a few hundred emits
    # the interpreter aborted ("bool_dealloc"), killing long ingestions.
    emitter = _Emitter()
    emitter.plain.connect(lambda a, b: None)
    emitter.boxed.connect(lambda a, b: None)
    before = sys.getrefcount(True), sys.getrefcount(False)
    for _ in range(100):
        emitter.plain.emit("base", ["item"])
        emitter.boxed.emit({"reacquire": True}, "done")
    after = sys.getrefcount(True), sys.getrefcount(False)
    assert after == before
