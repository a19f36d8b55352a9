"""Toasts float over the window: they never become splitter panes or change the window's size,
stack up to a few with a "+N more" count, expire, and an offer (Undo) shows at once."""

from __future__ import annotations

from collections.abc import Iterator
from itertools import pairwise

import pytest
from PySide6.QtCore import QEvent, QPointF, QRect, Qt
from PySide6.QtGui import QEnterEvent
from PySide6.QtWidgets import QApplication, QLabel
from pytestqt.qtbot import QtBot

from app.ui import toast as toast_module
from app.ui.context import UiContext
from app.ui.main_window import MainWindow
from app.ui.notifications import Level
from app.ui.toast import MAX_VISIBLE, Toast


@pytest.fixture
def window(qtbot: QtBot, ui_ctx: UiContext) -> Iterator[MainWindow]:
    win = MainWindow(ui_ctx)
    win.confirm_quit = lambda _running: True
    qtbot.addWidget(win)
    win.resize(780, 560)  # within the offscreen screen (800 x 600)
    win.show()
    win.start()
    qtbot.waitUntil(lambda: win.bases.loaded)
    yield win
    win.close()


def titles(window: MainWindow) -> list[str]:
    shown = []
    for toast in window.toasts.visible:
        label = toast.findChild(QLabel, "toastTitle")
        assert label is not None
        shown.append(label.text().removeprefix("<b>").removesuffix("</b>"))
    return shown


def content_rect(window: MainWindow) -> QRect:
    return QRect(
        window.splitter.mapTo(window, window.splitter.rect().topLeft()), window.splitter.size()
    )


def test_toasts_never_change_the_layout(
    qtbot: QtBot, window: MainWindow, ui_ctx: UiContext
) -> None:
    panes = window.splitter.count()
    width = window.width()
    sizes = window.splitter.sizes()
    for n in range(5):
        ui_ctx.notifier.error(f"Failure {n}", "A longer explanation of what went wrong here.")
    QApplication.processEvents()

    assert window.splitter.count() == panes
    assert window.splitter.sizes() == sizes
    assert window.width() == width
    toasts = window.toasts.visible
    assert len(toasts) == MAX_VISIBLE
    area = content_rect(window)
    for toast in toasts:
        assert toast.parent() is window
        assert area.contains(toast.geometry())
    # Stacked in the bottom-right corner, oldest on top, none over another.
    for upper, lower in pairwise(toasts):
        assert upper.geometry().bottom() < lower.geometry().top()
        assert upper.geometry().right() == lower.geometry().right()
    assert titles(window) == ["Failure 0", "Failure 1", "Failure 2"]
    more = window.toasts.more
    assert more.isVisible() and more.text() == "+2 more"
    assert toasts[-1].geometry().bottom() < more.geometry().top()

    window.close()  # saves the layout
    again = MainWindow(ui_ctx)
    qtbot.addWidget(again)
    again.show()
    assert again.width() == width  # the remembered width is the one the person chose


def test_toasts_expire_and_the_waiting_ones_follow(
    qtbot: QtBot, window: MainWindow, ui_ctx: UiContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(toast_module.LIFETIME_MS, Level.INFO, 300)
    seen: set[str] = set()
    for n in range(5):
        ui_ctx.notifier.notify(f"Done {n}")
    assert window.toasts.waiting == 2

    def all_gone() -> bool:
        seen.update(titles(window))
        return not window.toasts.visible and window.toasts.waiting == 0

    qtbot.waitUntil(all_gone, timeout=10_000)
    assert seen == {f"Done {n}" for n in range(5)}
    assert window.toasts.more.isHidden()
    assert window.findChildren(Toast) == [] or all(
        not t.isVisible() for t in window.findChildren(Toast)
    )


def test_toasts_follow_the_window_when_it_resizes(
    qtbot: QtBot, window: MainWindow, ui_ctx: UiContext
) -> None:
    ui_ctx.notifier.notify("Saved")
    window.resize(700, 500)
    qtbot.waitUntil(lambda: window.width() == 700)
    toast = window.toasts.visible[0]
    area = content_rect(window)
    assert area.contains(toast.geometry())
    assert area.right() - toast.geometry().right() == toast_module.MARGIN


def test_an_offer_shows_at_once_and_its_action_runs(
    qtbot: QtBot, window: MainWindow, ui_ctx: UiContext
) -> None:
    for n in range(3):
        ui_ctx.notifier.notify(f"Info {n}")
    used: list[bool] = []
    offer = ui_ctx.notifier.offer("Deleted “a.txt”", "Undo", lambda: used.append(True), 60_000)
    # The offer is shown now; the oldest plain toast waits again.
    assert titles(window) == ["Info 1", "Info 2", "Deleted “a.txt”"]
    assert window.toasts.waiting == 1 and window.toasts.more.text() == "+1 more"
    toast = window.toasts.visible[-1]
    button = toast.findChild(type(window.toasts.more), "toastAction")
    assert button is not None and button.isVisible() and button.text() == "Undo"
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    assert used == [True]
    qtbot.waitUntil(lambda: "Deleted “a.txt”" not in titles(window))
    # Its place went to the toast that waited.
    assert titles(window) == ["Info 1", "Info 2", "Info 0"]
    assert window.toasts.more.isHidden()
    ui_ctx.notifier.withdraw(offer)  # withdrawing a toast already gone changes nothing
    assert len(window.toasts.visible) == 3


def test_a_withdrawn_offer_goes(qtbot: QtBot, window: MainWindow, ui_ctx: UiContext) -> None:
    offer = ui_ctx.notifier.offer("Deleted 3 items", "Undo", lambda: None, 60_000)
    assert titles(window) == ["Deleted 3 items"]
    ui_ctx.notifier.withdraw(offer)
    qtbot.waitUntil(lambda: not window.toasts.visible)


def test_more_shows_the_next_ones(qtbot: QtBot, window: MainWindow, ui_ctx: UiContext) -> None:
    for n in range(7):
        ui_ctx.notifier.notify(f"Note {n}")
    assert window.toasts.more.text() == "+4 more"
    qtbot.mouseClick(window.toasts.more, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: titles(window) == ["Note 3", "Note 4", "Note 5"])
    assert window.toasts.more.text() == "+1 more"


def test_the_mouse_over_a_toast_holds_it(
    qtbot: QtBot, window: MainWindow, ui_ctx: UiContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(toast_module.LIFETIME_MS, Level.INFO, 200)
    monkeypatch.setattr(toast_module, "HOLD_AFTER_HOVER_MS", 200)
    ui_ctx.notifier.notify("Read me")
    toast = window.toasts.visible[0]
    QApplication.sendEvent(toast, QEnterEvent(QPointF(5, 5), QPointF(5, 5), QPointF(5, 5)))
    assert not toast._timer.isActive()
    QApplication.sendEvent(toast, QEvent(QEvent.Type.Leave))
    qtbot.waitUntil(lambda: not window.toasts.visible, timeout=5000)
