"""Non-modal notifications floating over the bottom-right corner of the window's content.

A toast is a child of the window placed by hand, in no layout and no splitter: showing one
never moves or resizes anything else. A few stack up; more wait behind a "+N more" count and
follow as the ones shown go. Each goes away on its own (errors stay longer, and the mouse
over a toast holds it); a toast never takes the keyboard focus."""

from __future__ import annotations

import html
from collections import deque

import shiboken6
from PySide6.QtCore import QEvent, QObject, QPoint, QRect, Qt, QTimer, Signal, Slot
from PySide6.QtGui import QCloseEvent, QEnterEvent
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QToolButton, QVBoxLayout, QWidget

from app.ui import theme
from app.ui.icons import icon
from app.ui.notifications import Level, Notice

MAX_VISIBLE = 3
LIFETIME_MS = {Level.INFO: 6000, Level.WARNING: 10000, Level.ERROR: 15000}
# After the mouse leaves a held toast it stays at least this long, to be read to the end.
HOLD_AFTER_HOVER_MS = 2000
WIDTH = 380
MIN_WIDTH = 200
MARGIN = 12
GAP = 8


class Toast(QFrame):
    # the toast closed: its time ran out, or it was dismissed or its action used
    dismissed = Signal(object)  # the Toast

    def __init__(self, notice: Notice, parent: QWidget) -> None:
        super().__init__(parent)
        self.setObjectName("toast")
        self.notice = notice
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground)
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        border = theme.notice_colour(notice.level.value)  # readable on light and dark
        self.setStyleSheet(
            f"#toast {{ background: palette(base); border: 1px solid {border};"
            " border-left: 5px solid " + border + "; border-radius: 6px; }"
        )
        self._action = QToolButton(self)
        self._action.setObjectName("toastAction")
        self._action.setText(notice.action_label)
        self._action.setVisible(notice.on_action is not None)
        self._close = QToolButton(self)
        self._close.setObjectName("toastClose")
        self._close.setText("×")
        self._close.setAutoRaise(True)
        self._close.setToolTip(self.tr("Dismiss"))
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(notice.timeout_ms or LIFETIME_MS[notice.level])
        self._held_left = 0
        self._build(notice)
        self._connect_signals()
        self._timer.start()

    def _build(self, notice: Notice) -> None:
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
        words = QVBoxLayout()
        words.addWidget(title)
        words.addWidget(text)
        row = QHBoxLayout(self)
        row.addWidget(mark, 0, Qt.AlignmentFlag.AlignTop)
        row.addLayout(words, 1)
        row.addWidget(self._action, 0, Qt.AlignmentFlag.AlignVCenter)
        row.addWidget(self._close, 0, Qt.AlignmentFlag.AlignTop)

    def _connect_signals(self) -> None:
        self._timer.timeout.connect(self.close)
        self._close.clicked.connect(self.close)
        self._action.clicked.connect(self._on_action_clicked)

    @Slot()
    def _on_action_clicked(self) -> None:
        if self.notice.on_action is not None:
            self.notice.on_action()
        self.close()

    def enterEvent(self, event: QEnterEvent) -> None:
        if self._timer.isActive():
            self._held_left = self._timer.remainingTime()
            self._timer.stop()
        super().enterEvent(event)

    def leaveEvent(self, event: QEvent) -> None:
        self._timer.start(max(self._held_left, HOLD_AFTER_HOVER_MS))
        super().leaveEvent(event)

    def closeEvent(self, event: QCloseEvent) -> None:
        super().closeEvent(event)
        self.dismissed.emit(self)


class ToastArea(QObject):
    """Shows notices as toasts over `anchor`'s bottom-right corner. The toasts are children
    of `host` (the window), outside every layout, and follow the anchor when it moves or
    resizes."""

    def __init__(self, host: QWidget, anchor: QWidget) -> None:
        super().__init__(host)
        self._host = host
        self._anchor = anchor
        self._shown: list[Toast] = []
        self._waiting: deque[Notice] = deque()
        self.more = QToolButton(host)
        self.more.setObjectName("toastMore")
        self.more.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.more.setToolTip(self.tr("Dismiss these notifications to see the next ones"))
        self.more.hide()
        self._connect_signals()

    def _connect_signals(self) -> None:
        self._anchor.installEventFilter(self)
        self.more.clicked.connect(self._on_more_clicked)

    @property
    def visible(self) -> list[Toast]:
        """The toasts shown, oldest first (the newest is nearest the corner)."""
        return list(self._shown)

    @property
    def waiting(self) -> int:
        return len(self._waiting)

    @Slot(object)
    def show_notice(self, notice: Notice) -> None:
        # An offer (Undo) is shown at once: it would run out while waiting.
        if notice.on_action is not None or len(self._shown) < MAX_VISIBLE:
            self._show(notice)
            self._make_room()
        else:
            self._waiting.append(notice)
        self._place()

    @Slot(object)
    def withdraw(self, notice: Notice) -> None:
        """Take a notice away, shown or waiting (its offer ended)."""
        self._waiting = deque(n for n in self._waiting if n is not notice)
        for toast in [t for t in self._shown if t.notice is notice]:
            toast.close()
        self._place()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        # While the window is torn down, the anchor can still send events after this
        # object's Python attributes are gone: then there is nothing to place.
        anchor = getattr(self, "_anchor", None)
        moved = event.type() in (QEvent.Type.Resize, QEvent.Type.Move)
        if anchor is not None and watched is anchor and moved:
            self._place()
        return False

    def _show(self, notice: Notice) -> None:
        toast = Toast(notice, self._host)
        toast.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        toast.dismissed.connect(self._on_toast_dismissed)
        self._shown.append(toast)

    def _make_room(self) -> None:
        """Past the limit, the oldest toasts without an offer go back to the head of the line."""
        while len(self._shown) > MAX_VISIBLE:
            plain = next((t for t in self._shown if t.notice.on_action is None), None)
            if plain is None:
                return
            self._shown.remove(plain)
            self._waiting.appendleft(plain.notice)
            plain.close()

    @Slot(object)
    def _on_toast_dismissed(self, toast: Toast) -> None:
        if toast not in self._shown:
            return  # sent back to wait, or withdrawn while waiting
        self._shown.remove(toast)
        while self._waiting and len(self._shown) < MAX_VISIBLE:
            self._show(self._waiting.popleft())
        self._place()

    @Slot()
    def _on_more_clicked(self) -> None:
        for toast in [t for t in self._shown if t.notice.on_action is None]:
            toast.close()

    def _place(self) -> None:
        if not (shiboken6.isValid(self._host) and shiboken6.isValid(self._anchor)):
            return  # the window is being destroyed with its toasts
        area = QRect(self._anchor.mapTo(self._host, QPoint(0, 0)), self._anchor.size())
        right = area.x() + area.width() - MARGIN
        bottom = area.y() + area.height() - MARGIN
        waiting = len(self._waiting)
        self.more.setVisible(waiting > 0)
        if waiting:
            self.more.setText(self.tr("+%n more", "", waiting))
            self.more.adjustSize()
            self.more.move(right - self.more.width(), bottom - self.more.height())
            self.more.raise_()
            bottom -= self.more.height() + GAP
        width = max(MIN_WIDTH, min(WIDTH, area.width() - 2 * MARGIN))
        for toast in reversed(self._shown):
            toast.setFixedWidth(width)
            toast.adjustSize()
            bottom -= toast.height()
            toast.move(right - width, bottom)
            toast.show()
            toast.raise_()
            bottom -= GAP
