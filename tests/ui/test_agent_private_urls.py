"""The base list's switch for what agents' web pages may reach (source_origin.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from pytestqt.qtbot import QtBot

from app.ui.context import UiContext
from app.ui.main_window import MainWindow


@pytest.fixture
def window(qtbot: QtBot, ui_ctx: UiContext) -> Iterator[MainWindow]:
    win = MainWindow(ui_ctx)
    win.confirm_quit = lambda _running: True
    qtbot.addWidget(win)
    win.show()
    win.start()
    qtbot.waitUntil(lambda: win.bases.loaded)
    yield win
    win.close()


def test_private_urls_toggle_is_off_by_default_and_saved(
    qtbot: QtBot, window: MainWindow, ui_ctx: UiContext
) -> None:
    base = ui_ctx.service.create_base("Agents")
    window.bases.reload(select=base.id)
    qtbot.waitUntil(lambda: window.current_base() is not None)
    action = window.bases.private_urls_action
    assert action in window.bases.view.actions()
    assert action.isEnabled() and not action.isChecked()
    action.trigger()
    qtbot.waitUntil(lambda: ui_ctx.service.get_base(base.id).agent_private_urls)
    qtbot.waitUntil(lambda: window.current_base().agent_private_urls)  # type: ignore[union-attr]
    assert action.isChecked()
    assert not ui_ctx.service.get_base(base.id).agent_writes  # a setting of its own
    action.trigger()
    qtbot.waitUntil(lambda: not ui_ctx.service.get_base(base.id).agent_private_urls)
