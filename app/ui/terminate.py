"""SIGTERM (a logout, `kill`) closes the window as its close button would, minus the
questions: the layout is saved, pending deletions carried out, running jobs handed back
to the queue and the reading processes stopped, instead of dying as from SIGKILL.

Python runs a signal handler only between bytecodes of the main thread, which may sit in
Qt's C++ event loop for as long as nothing happens; so the signal's wake-up byte goes to a
socket that a QSocketNotifier watches, and the slot runs in the event loop like any other.
"""

from __future__ import annotations

import signal
import socket
from collections.abc import Callable

from PySide6.QtCore import QObject, QSocketNotifier


class TerminateWatch(QObject):
    """Calls `on_terminate` in the event loop when the process receives SIGTERM."""

    def __init__(self, on_terminate: Callable[[], None], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._on_terminate = on_terminate
        self._read, self._write = socket.socketpair()
        self._read.setblocking(False)
        self._write.setblocking(False)
        # The handler itself does nothing: the byte the interpreter writes is the message.
        self._previous_handler = signal.signal(signal.SIGTERM, lambda _sig, _frame: None)
        self._previous_fd = signal.set_wakeup_fd(self._write.fileno(), warn_on_full_buffer=False)
        self._notifier = QSocketNotifier(self._read.fileno(), QSocketNotifier.Type.Read, self)
        self._notifier.activated.connect(self._on_readable)

    def _on_readable(self) -> None:
        try:
            received = self._read.recv(64)
        except BlockingIOError:
            return
        if signal.SIGTERM in received:  # one byte per signal, its number
            self._on_terminate()

    def stop(self) -> None:
        """Give SIGTERM its previous meaning back and close the socket pair."""
        self._notifier.setEnabled(False)
        signal.set_wakeup_fd(self._previous_fd)
        signal.signal(signal.SIGTERM, self._previous_handler)
        self._read.close()
        self._write.close()
