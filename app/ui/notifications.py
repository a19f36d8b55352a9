"""Non-modal notifications: failures and finished long operations, shown as toasts by the
main window and kept in a short history."""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass
from enum import StrEnum

from PySide6.QtCore import QObject, Signal

from app.ui import errors


class Level(StrEnum):
    INFO = "info"
    WARNING = "warning"
    ERROR = "error"


@dataclass(frozen=True, slots=True)
class Notice:
    level: Level
    title: str
    text: str
    at: float


class Notifier(QObject):
    posted = Signal(object)  # Notice

    def __init__(self, parent: QObject | None = None, *, history: int = 100) -> None:
        super().__init__(parent)
        self.history: deque[Notice] = deque(maxlen=history)

    def notify(self, title: str, text: str = "", level: Level = Level.INFO) -> Notice:
        notice = Notice(level, title, text, time.time())
        self.history.append(notice)
        self.posted.emit(notice)
        return notice

    def error(self, title: str, text: str = "") -> Notice:
        return self.notify(title, text, Level.ERROR)

    def failure(self, exc: BaseException) -> Notice:
        """An engine call failed: its translated headline, with the engine's words as detail."""
        title, detail = errors.describe(exc)
        return self.error(title, detail)
