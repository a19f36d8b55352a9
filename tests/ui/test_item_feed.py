"""The item feed follows a base without reading every row at each change: a full read first
and every FULL_READ_S, the changed rows and all ids in between (item_feed.py)."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest
from pytestqt.modeltest import ModelTester
from pytestqt.qtbot import QtBot

from app.knowledge.types import ItemStatus
from app.ui.context import UiContext
from app.ui.items import item_feed
from app.ui.items.item_feed import FULL_READ_S, ItemFeed
from app.ui.items.item_model import ItemTreeModel

WAIT_MS = 15_000


def _counting(calls: Counter[str], name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    def counted(*args: Any) -> Any:
        result = fn(*args)
        calls[name] += 1
        calls[f"{name}:rows"] += len(result[0] if isinstance(result, tuple) else result)
        return result

    return counted


def _handed(model: ItemTreeModel) -> list[int]:
    """How many rows each apply_items call is handed, from now on."""
    applied: list[int] = []
    apply_items = model.apply_items

    def counting(items: Any, **kwargs: Any) -> Any:
        applied.append(len(items))
        return apply_items(items, **kwargs)

    model.apply_items = counting  # type: ignore[method-assign]
    return applied


def test_changes_between_full_reads_are_read_alone(
    qtbot: QtBot, ui_ctx: UiContext, qtmodeltester: ModelTester, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The rows were all written a moment ago: without the margin a partial read takes only
    # what changed after the full one.
    monkeypatch.setattr(item_feed, "CHANGE_MARGIN_S", 0.0)
    service = ui_ctx.service
    ui_ctx.executor.shutdown()  # the rows stay as written here: no job changes them
    base = service.create_base("feed")
    notes = [service.add_note(base.id, f"note {n}", f"Text of note {n}.") for n in range(30)]
    calls: Counter[str] = Counter()
    service.list_items = _counting(calls, "full", service.list_items)  # type: ignore[method-assign]
    service.item_changes = _counting(calls, "partial", service.item_changes)  # type: ignore[method-assign]
    model = ItemTreeModel()
    feed = ItemFeed(ui_ctx, model)
    offset = [0.0]
    feed.clock = lambda: time.time() + offset[0]
    with qtbot.waitSignal(feed.refreshed, timeout=WAIT_MS):
        feed.set_base(base.id)
    assert len(model.items()) == 30
    assert calls["full"] == 1

    # A new row, a renamed one and a removed one: one partial read shows them all.
    added = service.add_note(base.id, "late", "A late note.")
    service.catalog.update_item(notes[3].id, title="Renamed note")
    service.catalog.set_item_status(notes[7].id, ItemStatus.DELETING)
    service.catalog.delete_item_row(notes[7].id)
    with qtbot.waitSignal(feed.refreshed, timeout=WAIT_MS):
        feed.reload_now()
    shown = {item.id: item for item in model.items()}
    assert added.id in shown and notes[7].id not in shown
    assert shown[notes[3].id].title == "Renamed note"
    assert len(shown) == 30
    assert (calls["full"], calls["partial"]) == (1, 1)
    assert calls["partial:rows"] < 30  # the changed rows, not the base
    qtmodeltester.check(model)

    # A full read again once FULL_READ_S passed (what a partial read could miss).
    offset[0] += FULL_READ_S
    with qtbot.waitSignal(feed.refreshed, timeout=WAIT_MS):
        feed.reload_now()
    assert (calls["full"], calls["partial"]) == (2, 1)
    assert {item.id for item in model.items()} == set(shown)


def test_a_full_read_shows_what_partial_reads_missed_and_applies_only_that(
    qtbot: QtBot, ui_ctx: UiContext, qtmodeltester: ModelTester
) -> None:
    service = ui_ctx.service
    ui_ctx.executor.shutdown()
    base = service.create_base("feed")
    notes = [service.add_note(base.id, f"note {n}", f"Text of note {n}.") for n in range(20)]
    model = ItemTreeModel()
    feed = ItemFeed(ui_ctx, model)
    offset = [0.0]
    feed.clock = lambda: time.time() + offset[0]
    with qtbot.waitSignal(feed.refreshed, timeout=WAIT_MS):
        feed.set_base(base.id)
    applied = _handed(model)

    # A rename the partial reads never see (as when a writer's clock is far behind).
    real_changes = service.item_changes
    service.item_changes = lambda *args: ([], real_changes(*args)[1])  # type: ignore[method-assign]
    service.catalog.update_item(notes[5].id, title="Renamed behind the feed's back")
    with qtbot.waitSignal(feed.refreshed, timeout=WAIT_MS):
        feed.reload_now()
    assert {i.id: i for i in model.items()}[notes[5].id].title == "note 5"

    offset[0] += FULL_READ_S
    with qtbot.waitSignal(feed.refreshed, timeout=WAIT_MS):
        feed.reload_now()
    shown = {i.id: i for i in model.items()}
    assert shown[notes[5].id].title == "Renamed behind the feed's back"
    assert len(shown) == 20
    # The window was handed the one differing row, not the 20 read.
    assert applied == [0, 1]
    qtmodeltester.check(model)


def test_reads_are_spaced_by_what_they_cost(qtbot: QtBot, ui_ctx: UiContext) -> None:
    # A big base's read costs tens of ms: reading again 120 ms later, all the time, took a
    # core's worth of the window while a library was indexed.
    service = ui_ctx.service
    ui_ctx.executor.shutdown()
    base = service.create_base("feed")
    service.add_note(base.id, "note", "Text of a note.")
    model = ItemTreeModel()
    feed = ItemFeed(ui_ctx, model)
    with qtbot.waitSignal(feed.refreshed, timeout=WAIT_MS):
        feed.set_base(base.id)
    real_changes = service.item_changes

    def slow(*args: Any) -> Any:
        time.sleep(0.2)
        return real_changes(*args)

    service.item_changes = slow  # type: ignore[method-assign]
    with qtbot.waitSignal(feed.refreshed, timeout=WAIT_MS):
        feed.reload_now()
    assert feed._timer.interval() >= item_feed.READ_SPACING * 200
    assert feed._timer.interval() <= item_feed.MAX_RELOAD_DELAY_MS

    service.item_changes = real_changes  # type: ignore[method-assign]
    with qtbot.waitSignal(feed.refreshed, timeout=WAIT_MS):
        feed.reload_now()
    # Cheap again: back to the short delay (a loaded machine may make it a little longer).
    assert feed._timer.interval() < item_feed.READ_SPACING * 200


def test_the_ids_are_read_only_when_something_went(ui_ctx: UiContext) -> None:
    # A partial read of a 40,000-document base read every id to find the deleted ones;
    # when the base has exactly the ids shown plus the changed ones, nothing went.
    service = ui_ctx.service
    ui_ctx.executor.shutdown()
    base = service.create_base("feed")
    notes = [service.add_note(base.id, f"note {n}", f"Text of note {n}.") for n in range(5)]
    known = {n.id for n in notes}
    reads: list[str] = []
    real_ids = service.catalog.item_ids
    service.catalog.item_ids = lambda base_id: reads.append(base_id) or real_ids(base_id)  # type: ignore[method-assign]
    since = time.time() + 3600  # nothing changed since then

    assert service.item_changes(base.id, since, known) == ([], known)
    assert reads == []
    added = service.add_note(base.id, "late", "A late note.")
    changed, ids = service.item_changes(base.id, 0.0, known)
    assert added.id in {i.id for i in changed} and ids == known | {added.id}
    assert reads == []

    service.catalog.set_item_status(notes[2].id, ItemStatus.DELETING)
    service.catalog.delete_item_row(notes[2].id)
    _, ids = service.item_changes(base.id, since, known | {added.id})
    assert ids == (known | {added.id}) - {notes[2].id}
    assert reads == [base.id]


def test_a_partial_read_hands_the_window_only_rows_that_differ(
    qtbot: QtBot, ui_ctx: UiContext, qtmodeltester: ModelTester
) -> None:
    # A partial read takes every row written in the last seconds (CHANGE_MARGIN_S): during a
    # library's import that was 40,000 rows, and comparing them on the GUI thread stalled it
    # ~200 ms. The reading thread drops those the window shows already.
    service = ui_ctx.service
    ui_ctx.executor.shutdown()
    base = service.create_base("feed")
    notes = [service.add_note(base.id, f"note {n}", f"Text of note {n}.") for n in range(20)]
    model = ItemTreeModel()
    feed = ItemFeed(ui_ctx, model)
    with qtbot.waitSignal(feed.refreshed, timeout=WAIT_MS):
        feed.set_base(base.id)
    applied = _handed(model)
    calls: Counter[str] = Counter()
    service.item_changes = _counting(calls, "partial", service.item_changes)  # type: ignore[method-assign]
    service.catalog.update_item(notes[4].id, title="Renamed")
    with qtbot.waitSignal(feed.refreshed, timeout=WAIT_MS):
        feed.reload_now()
    assert (calls["partial"], calls["partial:rows"]) == (1, 20)  # all written within the margin
    assert applied == [1]
    assert {i.id: i for i in model.items()}[notes[4].id].title == "Renamed"
    qtmodeltester.check(model)
