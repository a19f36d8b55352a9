"""BackgroundTasks: results reach their callbacks on the GUI thread, unless the owner died."""

from __future__ import annotations

import threading

import shiboken6
from PySide6.QtCore import QObject
from pytestqt.qtbot import QtBot

from app.ui.tasks import BackgroundTasks


def test_a_result_reaches_its_callback(qtbot: QtBot) -> None:
    tasks = BackgroundTasks()
    got: list[int] = []
    with qtbot.waitSignal(tasks.idle, timeout=5000):
        tasks.run(lambda: 41 + 1, got.append)
    assert got == [42]


def test_an_error_reaches_its_handler(qtbot: QtBot) -> None:
    tasks = BackgroundTasks()
    errors: list[BaseException] = []

    def boom() -> None:
        raise ValueError("no")

    with qtbot.waitSignal(tasks.idle, timeout=5000):
        tasks.run(boom, None, errors.append)
    assert [str(e) for e in errors] == ["no"]


def test_callbacks_of_a_deleted_owner_are_dropped(qtbot: QtBot) -> None:
    """A window closed while its read ran: the read's result must not touch the dead object."""
    tasks = BackgroundTasks()
    owner = QObject()
    release = threading.Event()
    called: list[object] = []

    def slow_read() -> int:
        release.wait(5)
        return 1

    tasks.run(slow_read, called.append, called.append, owner=owner)
    shiboken6.delete(owner)  # the C++ side dies, the Python wrapper lives on in the closure
    with qtbot.waitSignal(tasks.idle, timeout=5000):
        release.set()
    assert called == []
    assert tasks.pending == 0


def test_callbacks_of_a_live_owner_still_run(qtbot: QtBot) -> None:
    tasks = BackgroundTasks()
    owner = QObject()
    got: list[int] = []
    with qtbot.waitSignal(tasks.idle, timeout=5000):
        tasks.run(lambda: 7, got.append, owner=owner)
    assert got == [7]
