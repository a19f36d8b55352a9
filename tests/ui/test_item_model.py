"""The item tree model diffs catalog reads into row inserts, removals and changes."""

from __future__ import annotations

import dataclasses
from collections import Counter

import pytest
from PySide6.QtCore import QModelIndex, Qt
from pytestqt.modeltest import ModelTester
from pytestqt.qtbot import QtBot

from app.knowledge.types import Item, ItemPhase, ItemStatus, ItemType
from app.ui.eta import count_work
from app.ui.items.item_model import Column, ItemTreeModel, Role
from app.ui.items.status_delegate import _counts, aggregate_text, badge_text


def _item(item_id: str, parent: str | None = None, **changes: object) -> Item:
    base = Item(
        id=item_id,
        base_id="b",
        parent_id=parent,
        type=ItemType.DIRECTORY if item_id.startswith("dir") else ItemType.FILE,
        source=f"/data/{item_id}",
        title=item_id,
        relative_path=None,
        status=ItemStatus.PREPARING,
        phase=None,
        progress=None,
        error_code=None,
        error_message=None,
        chunk_count=0,
        size=100,
        content_hash=None,
        created_at=1.0,
        updated_at=1.0,
    )
    return dataclasses.replace(base, **changes)  # type: ignore[arg-type]


def test_model_follows_catalog_reads(qtmodeltester: ModelTester, qtbot: QtBot) -> None:
    model = ItemTreeModel()
    qtmodeltester.check(model)
    first = [_item("dir1"), _item("a", "dir1"), _item("b", "dir1"), _item("c")]
    changes, _ = model.apply_items(first)
    assert [new.id for old, new in changes if old is None] == ["dir1", "a", "b", "c"]
    assert model.rowCount() == 2
    assert model.rowCount(model.index_of("dir1")) == 2
    qtmodeltester.check(model)

    # One child completes: only its row (and its parent's aggregate) change.
    done = _item("a", "dir1", status=ItemStatus.COMPLETED, chunk_count=3)
    with qtbot.waitSignal(model.dataChanged) as changed:
        changes, _ = model.apply_items([first[0], done, first[2], first[3]])
    assert [(old.status if old else None, new.status) for old, new in changes] == [
        (ItemStatus.PREPARING, ItemStatus.COMPLETED)
    ]
    assert changed.args[0].row() == model.index_of("a").row()
    dir_index = model.index_of("dir1", Column.STATUS)
    assert model.data(dir_index, Role.AGGREGATE) == Counter(
        {ItemStatus.COMPLETED: 1, ItemStatus.PREPARING: 1}
    )
    # Through QVariant (what the delegate sees) the statuses arrive as plain strings.
    assert dir_index.data(Role.STATUS) == "preparing"
    assert _counts(dir_index.data(Role.AGGREGATE)) == Counter(
        {ItemStatus.COMPLETED: 1, ItemStatus.PREPARING: 1}
    )
    assert model.data(model.index_of("dir1", Column.CHUNKS)) == "3"

    # A child disappears (deleted) and a new root item arrives.
    with qtbot.waitSignal(model.rowsRemoved):
        model.apply_items([first[0], done, first[3], _item("d")])
    assert model.rowCount(model.index_of("dir1")) == 1
    assert model.rowCount() == 3
    qtmodeltester.check(model)

    # The folder goes: its children go with it.
    model.apply_items([first[3], _item("d")])
    assert not model.index_of("a").isValid()
    assert model.rowCount() == 2
    qtmodeltester.check(model)


def test_live_progress_only_for_running_items_and_the_vector_stage(qtbot: QtBot) -> None:
    model = ItemTreeModel()
    running = _item("a", status=ItemStatus.PROCESSING)
    model.apply_items([running, _item("b", status=ItemStatus.COMPLETED)])
    with qtbot.waitSignal(model.dataChanged):
        model.set_progress("a", "embedding", 42.0)
    status = model.index_of("a", Column.STATUS)
    assert model.data(status, Role.PHASE) == "embedding"
    assert model.data(status, Role.PROGRESS) == 42.0
    with qtbot.assertNotEmitted(model.dataChanged):
        model.set_progress("b", "reading", 10.0)  # a settled item is not read again
    # A completed document's vectors are computed after it became searchable.
    with qtbot.waitSignal(model.dataChanged):
        model.set_progress("b", "embedding", 10.0)
    vectors = model.index_of("b", Column.STATUS)
    assert model.data(vectors, Role.PHASE) == "embedding"
    assert badge_text(ItemStatus.COMPLETED, "embedding", 10.0) == "Searchable · vectors 10%"
    assert badge_text(ItemStatus.COMPLETED, "embedding", None) == "Searchable · vectors…"
    # Once the catalog says the item settled, the live figure is dropped.
    model.apply_items(
        [_item("a", status=ItemStatus.COMPLETED), _item("b", status=ItemStatus.COMPLETED)]
    )
    assert model.data(status, Role.PHASE) is None


def test_failed_tooltip_and_badge_texts() -> None:
    model = ItemTreeModel()
    failed = _item("a", status=ItemStatus.FAILED, error_code="READ_FAILED", error_message="bad zip")
    model.apply_items([failed])
    tooltip = model.data(model.index_of("a", Column.NAME), Qt.ItemDataRole.ToolTipRole)
    assert "bad zip" in str(tooltip) and "could not be read" in str(tooltip)
    assert badge_text(ItemStatus.PROCESSING, "embedding", 42.4) == "Embedding 42%"
    assert badge_text(ItemStatus.COMPLETED, None, None) == "Completed"
    counts = Counter({ItemStatus.COMPLETED: 3, ItemStatus.FAILED: 1, ItemStatus.PROCESSING: 2})
    assert aggregate_text(counts) == "4/6 · 1 failed"
    assert not model.index(5, 0, QModelIndex()).isValid()


def test_column_count_constant_matches_the_enum() -> None:
    from app.ui.items.item_model import _COLUMNS

    assert len(Column) == _COLUMNS


def test_big_imports_are_shown_in_slices(qtmodeltester: ModelTester) -> None:
    model = ItemTreeModel()
    items = [_item("dir1")] + [_item(f"f{n:02d}", "dir1") for n in range(25)] + [_item("z")]
    changes, pending = model.apply_items(items, max_rows=10)
    assert (len(changes), len(pending)) == (10, 17)
    assert model.rowCount(model.index_of("dir1")) == 9
    while pending:
        # Each turn takes its slice off what is left (a turn never walks the whole read).
        left = len(pending)
        assert len(model.show_pending(pending, 10)) == left - len(pending) == min(10, left)
        qtmodeltester.check(model)
    assert len(model.items()) == 27
    # A child never arrives before its parent, even when it was read first.
    orphan_first = [_item("g1", "dir2"), _item("dir2"), _item("g2", "g1")]
    model = ItemTreeModel()
    changes, pending = model.apply_items(orphan_first, max_rows=1)
    assert [new.id for _, new in changes] == ["dir2"]
    assert [new.id for _, new in model.show_pending(pending)] == ["g1", "g2"]
    assert model.rowCount(model.index_of("dir2")) == 1
    assert model.rowCount(model.index_of("g1")) == 1
    qtmodeltester.check(model)


def test_status_counts_are_kept_row_by_row(qtmodeltester: ModelTester) -> None:
    # The status bar asks after every read; the model keeps the counts as rows come, change
    # and go (folders and their contents included) instead of walking every row.
    import random

    rng = random.Random(5)
    statuses = [
        ItemStatus.PREPARING,
        ItemStatus.PROCESSING,
        ItemStatus.COMPLETED,
        ItemStatus.FAILED,
    ]
    model = ItemTreeModel()
    shown: dict[str, Item] = {}
    for step in range(60):
        for _ in range(rng.randint(1, 6)):
            n = rng.randint(0, 40)
            item_id = f"dir{n % 5}" if n % 8 == 0 else f"f{n}"
            parent = None if item_id.startswith("dir") else rng.choice([None, f"dir{n % 5}"])
            if parent is not None and parent not in shown:
                parent = None
            old = shown.get(item_id)
            if old is not None and rng.random() < 0.3:
                gone = {item_id} | {i for i, it in shown.items() if it.parent_id == item_id}
                for key in gone:
                    shown.pop(key)
                continue
            shown[item_id] = _item(
                item_id,
                old.parent_id if old is not None else parent,
                status=rng.choice(statuses),
                size=rng.choice([None, 100, 2_000]),
                phase=rng.choice([None, ItemPhase.EMBEDDING, ItemPhase.WRITING]),
                progress=rng.choice([None, 40.0]),
                updated_at=float(step),
            )
        model.apply_items(list(shown.values()))
        expected = Counter(i.status for i in model.items() if i.type is not ItemType.DIRECTORY)
        assert model.status_counts() == expected, step
        assert set(model.shown_ids()) == set(shown)
        # The progress line's figures, kept the same way, are count_work's over every row.
        live = {i: ("embedding", 70.0) for i in rng.sample(sorted(shown), min(3, len(shown)))}
        kept, walked = model.work_counts(live), count_work(model.items(), live)
        assert kept == dataclasses.replace(walked, partial_bytes=kept.partial_bytes), step
        assert kept.partial_bytes == pytest.approx(walked.partial_bytes), step
        assert [c.id for c in model.containers()] == [
            i.id for i in model.items() if i.type is ItemType.DIRECTORY
        ]
        for container in model.containers():
            kids = [i for i in model.items() if i.parent_id == container.id]
            kept, walked = model.children_work(container.id, live), count_work(kids, live)
            assert kept == dataclasses.replace(walked, partial_bytes=kept.partial_bytes), step
            assert kept.partial_bytes == pytest.approx(walked.partial_bytes), step
    qtmodeltester.check(model)
