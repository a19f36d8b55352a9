"""Non-modal notifications in the window's bottom-right corner: they never take focus, stack
up to a few, and fade away on their own (errors stay longer)."""

from __future__ import annotations

import html

import shiboken6
from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Slot
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QToolButton, QVBoxLayout, QWidget

from app.ui import theme
from app.ui.icons import icon
from app.ui.notifications import Level, Notice

MAX_VISIBLE = 3
LIFETIME_MS = {Level.INFO: 6000, Level.WARNING: 10000, Level.ERROR: 15000}


class Toast(QFrame):
    def __init__(self, notice: Notice, parent: QWidget) -> None:
        super().__init__(parent)
        self.setObjectName("toast")
        self.notice = notice
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground)
        border = theme.notice_colour(notice.level.value)  # readable on light and dark
        self.setStyleSheet(
            f"#toast {{ background: palette(base); border: 1px solid {border};"
            " border-left: 5px solid " + border + "; border-radius: 6px; }"
        )
        mark = QLabel(self)
        mark.setPixmap(icon(f"status-{notice.level.value}").pixmap(18, 18))
        title = QLabel(f"<b>{html.escape(notice.title)}</b>", self)
        title.setObjectName("toastTitle")
        title.setWordWrap(True)
        text = QLabel(html.escape(notice.text).replace("\n", "<br>"), self)
        text.setObjectName("toastText")
        text.setWordWrap(True)
        text.setVisible(bool(notice.text))
        text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        close = QToolButton(self)
        close.setObjectName("toastClose")
        close.setText("×")
        close.setAutoRaise(True)
        close.setToolTip(self.tr("Dismiss"))
        close.clicked.connect(self.close)
        words = QVBoxLayout()
        words.addWidget(title)
        words.addWidget(text)
        row = QHBoxLayout(self)
        row.addWidget(mark, 0, Qt.AlignmentFlag.AlignTop)
        row.addLayout(words, 1)
        row.addWidget(close, 0, Qt.AlignmentFlag.AlignTop)
        self.setFixedWidth(380)
        QTimer.singleShot(LIFETIME_MS[notice.level], self, self.close)


class ToastArea(QObject):
    """Places toasts over `host` and keeps them in its corner when it resizes."""

    def __init__(self, host: QWidget) -> None:
        super().__init__(host)
        self._host = host
        self._toasts: list[Toast] = []
        host.installEventFilter(self)

    @property
    def visible(self) -> list[Toast]:
        return [t for t in self._toasts if t.isVisible()]

    @Slot(object)
    def show_notice(self, notice: Notice) -> None:
        toast = Toast(notice, self._host)
        toast.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        toast.destroyed.connect(self._on_toast_destroyed)
        self._toasts.append(toast)
        while len(self._toasts) > MAX_VISIBLE:
            self._toasts.pop(0).close()
        toast.show()
        toast.raise_()
        self._place()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self._host and event.type() == QEvent.Type.Resize:
            self._place()
        return False

    @Slot(QObject)
    def _on_toast_destroyed(self, gone: QObject) -> None:
        self._toasts = [t for t in self._toasts if shiboken6.isValid(t) and t is not gone]
        self._place()

    def _place(self) -> None:
        if not shiboken6.isValid(self._host):
            return  # the window is being destroyed with its toasts
        bottom = self._host.height() - 12
        for toast in reversed(self._toasts):
            toast.adjustSize()
            bottom -= toast.height()
            toast.move(self._host.width() - toast.width() - 12, bottom)
            bottom -= 8
