"""Linked folders in the window: linking from the add flow, the state on the folder's row,
Sync now and the change log; with the window's watch running, a file created in the folder
becomes searchable without a manual sync."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from pytestqt.modeltest import ModelTester
from pytestqt.qtbot import QtBot

from app.knowledge.types import ItemStatus, ItemType
from app.ui.context import UiContext
from app.ui.items.item_model import Column
from app.ui.main_window import MainWindow
from tests.conftest import write_files

WAIT_MS = 15_000


@pytest.fixture
def window(qtbot: QtBot, ui_ctx: UiContext) -> Iterator[MainWindow]:
    win = MainWindow(ui_ctx)
    win.confirm_quit = lambda _running: True
    qtbot.addWidget(win)
    win.show()
    win.start()
    qtbot.waitUntil(lambda: win.bases.loaded)
    yield win
    ui_ctx.watching.stop()
    win.close()


def _select(window: MainWindow, item_id: str) -> None:
    index = window.items.proxy.mapFromSource(window.items.model.index_of(item_id))
    window.items.view.setCurrentIndex(index)


def _root(window: MainWindow) -> str:
    roots = [i for i in window.items.model.items() if i.type is ItemType.DIRECTORY]
    assert len(roots) == 1
    return roots[0].id


def test_a_linked_folder_shows_its_state_syncs_and_logs_its_changes(
    qtbot: QtBot, window: MainWindow, ui_ctx: UiContext, tmp_path: Path, qtmodeltester: ModelTester
) -> None:
    folder = write_files(tmp_path / "notes", {"a.md": "The aardvark.", "b.md": "The bison."})
    base = ui_ctx.service.create_base("Linked")
    window.bases.reload(select=base.id)
    qtbot.waitUntil(lambda: window.items.base is not None, timeout=WAIT_MS)
    window.items.linked.add_linked(str(folder))
    qtbot.waitUntil(lambda: len(window.items.model.items()) == 3, timeout=WAIT_MS)
    root_id = _root(window)
    type_cell = window.items.model.index_of(root_id, Column.TYPE)
    qtbot.waitUntil(lambda: str(type_cell.data()).startswith("Linked"), timeout=WAIT_MS)
    qtbot.waitUntil(lambda: type_cell.data() == "Linked folder", timeout=WAIT_MS)
    assert "Last synced" in str(type_cell.data(0x03))  # ToolTipRole
    qtmodeltester.check(window.items.model)

    _select(window, root_id)
    assert window.items.linked.sync_action.isEnabled()
    assert window.items.linked.unlink_action.isVisible()
    assert not window.items.linked.link_action.isVisible()
    (folder / "b.md").unlink()
    (folder / "c.md").write_text("The capybara.", encoding="utf-8")
    window.items.linked.sync_action.trigger()
    qtbot.waitUntil(
        lambda: (
            sorted(
                Path(i.source).name for i in window.items.model.items() if i.type is ItemType.FILE
            )
            == ["a.md", "c.md"]
        ),
        timeout=WAIT_MS,
    )
    qtbot.waitUntil(
        lambda: all(i.status is ItemStatus.COMPLETED for i in window.items.model.items()),
        timeout=WAIT_MS,
    )
    qtbot.waitUntil(lambda: "1 added" in str(type_cell.data(0x03)), timeout=WAIT_MS)

    window.items.linked.changes_action.trigger()
    qtbot.waitUntil(lambda: window.items.linked.log_dialog is not None, timeout=WAIT_MS)
    dialog = window.items.linked.log_dialog
    assert dialog is not None
    text = dialog.text.toPlainText()
    assert "added: c.md" in text and "removed: b.md" in text
    dialog.close()

    window.items.linked.unlink_action.trigger()
    qtbot.waitUntil(lambda: type_cell.data() == "Folder", timeout=WAIT_MS)
    _select(window, root_id)
    assert window.items.linked.link_action.isVisible()


def test_with_the_window_watching_a_new_file_becomes_searchable(
    qtbot: QtBot, window: MainWindow, ui_ctx: UiContext, tmp_path: Path
) -> None:
    folder = write_files(tmp_path / "notes", {"a.md": "The aardvark."})
    base = ui_ctx.service.create_base("Watched")
    ui_ctx.service.add_linked_folders(base.id, [folder])
    ui_ctx.watching.start()  # as the launcher does at start
    window.bases.reload(select=base.id)
    qtbot.waitUntil(lambda: len(window.items.model.items()) == 2, timeout=WAIT_MS)
    root_id = _root(window)
    type_cell = window.items.model.index_of(root_id, Column.TYPE)
    qtbot.waitUntil(lambda: type_cell.data() == "Linked · watching", timeout=WAIT_MS)

    (folder / "new.md").write_text("The narwhal arrives.", encoding="utf-8")
    qtbot.waitUntil(lambda: len(window.items.model.items()) == 3, timeout=WAIT_MS)
    qtbot.waitUntil(
        lambda: bool(ui_ctx.service.search(base.id, "narwhal").results), timeout=WAIT_MS
    )


def test_the_short_state_says_what_a_linked_folder_is_doing(qtbot: QtBot) -> None:
    from app.knowledge.service import LinkedFolder, SyncChanges, SyncState
    from app.ui.items.sync_texts import short_state, tooltip_lines

    link = LinkedFolder("f", "b", last_synced_at=1_700_000_000.0)
    assert short_state(SyncState(link, watching=False, pending=False, last=None)) == "Linked folder"
    assert short_state(SyncState(link, True, False, None)) == "Linked · watching"
    assert short_state(SyncState(link, True, True, None)) == "Linked · sync queued"
    busy = LinkedFolder("f", "b", syncing=True, done=120, total=480)
    assert short_state(SyncState(busy, True, True, None)) == "Linked · syncing 120/480"
    broken = LinkedFolder("f", "b", last_error="the folder /x is not there")
    assert short_state(SyncState(broken, True, False, None)) == "Linked · sync problem"
    last = SyncChanges(1.0, ["a.md"], [], ["b.md"], [("c.md", "d/c.md")], ["e.md"])
    lines = tooltip_lines(SyncState(broken, True, False, last))
    assert "Last changes: 1 added, 0 changed, 1 removed, 1 renamed; 1 still being written" in lines
    assert "Sync problem: the folder /x is not there" in lines


def test_a_web_page_refreshes_now_or_on_a_schedule(
    qtbot: QtBot, window: MainWindow, ui_ctx: UiContext
) -> None:
    from tests.httpserver import LoopbackServer, Response

    with LoopbackServer() as server:
        server.route("/p", Response.text("<p>The pangolin.</p>", content_type="text/html"))
        base = ui_ctx.service.create_base("Web")
        (page,) = ui_ctx.service.add_urls(base.id, [server.url("/p")]).added
        ui_ctx.service.run_pending_jobs(base.id)
        window.bases.reload(select=base.id)
        qtbot.waitUntil(lambda: len(window.items.model.items()) == 1, timeout=WAIT_MS)
        _select(window, page.id)
        refresh = window.items.page_refresh
        assert refresh.refresh_now_action.isVisible() and refresh.menu_action.isVisible()
        assert not window.items.linked.sync_action.isVisible()
        qtbot.waitUntil(lambda: refresh.schedule_actions[None].isChecked(), timeout=WAIT_MS)

        refresh.schedule_actions[24 * 3600.0].trigger()
        qtbot.waitUntil(
            lambda: ui_ctx.service.refresh_interval(page.id) == 24 * 3600.0, timeout=WAIT_MS
        )
        before = server.hits("/p")
        refresh.refresh_now_action.trigger()
        qtbot.waitUntil(lambda: server.hits("/p") > before, timeout=WAIT_MS)
