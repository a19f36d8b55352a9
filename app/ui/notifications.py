"""Non-modal notifications: failures and finished long operations, shown as toasts by the
main window and kept in a short history."""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
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
    # A button on the toast (e.g. Undo) and what it does; "" when there is none.
    action_label: str = ""
    on_action: Callable[[], None] | None = field(default=None, compare=False, repr=False)
    # How long the toast stays; None: the level's usual time.
    timeout_ms: int | None = None


class Notifier(QObject):
    posted = Signal(object)  # Notice
    # the offer of a posted notice ended (acted on elsewhere, or its time ran out)
    withdrawn = Signal(object)  # Notice

    def __init__(self, parent: QObject | None = None, *, history: int = 100) -> None:
        super().__init__(parent)
        self.history: deque[Notice] = deque(maxlen=history)

    def notify(self, title: str, text: str = "", level: Level = Level.INFO) -> Notice:
        notice = Notice(level, title, text, time.time())
        self.history.append(notice)
        self.posted.emit(notice)
        return notice

    def offer(
        self,
        title: str,
        action_label: str,
        on_action: Callable[[], None],
        timeout_ms: int,
        text: str = "",
    ) -> Notice:
        """A notice with a button (Undo...) offered for `timeout_ms`; `withdraw` it when the
        offer ends before its toast does."""
        notice = Notice(Level.INFO, title, text, time.time(), action_label, on_action, timeout_ms)
        self.history.append(notice)
        self.posted.emit(notice)
        return notice

    def withdraw(self, notice: Notice) -> None:
        self.withdrawn.emit(notice)

    def error(self, title: str, text: str = "") -> Notice:
        return self.notify(title, text, Level.ERROR)

    def failure(self, exc: BaseException) -> Notice:
        """An engine call failed: its translated headline, with the engine's words as detail."""
        title, detail = errors.describe(exc)
        return self.error(title, detail)
