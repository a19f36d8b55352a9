"""Every legal and illegal item status change, through the catalog (the one place)."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from app.knowledge import states
from app.knowledge.catalog import Catalog
from app.knowledge.types import IllegalTransitionError, ItemPhase, ItemStatus, ItemType

S = ItemStatus
LEGAL = {
    (None, S.PREPARING),
    (None, S.PROCESSING),
    (S.PREPARING, S.PROCESSING),
    (S.PREPARING, S.COMPLETED),
    (S.PREPARING, S.FAILED),
    (S.PREPARING, S.DELETING),
    (S.PROCESSING, S.COMPLETED),
    (S.PROCESSING, S.FAILED),
    (S.PROCESSING, S.DELETING),
    (S.COMPLETED, S.PREPARING),
    (S.COMPLETED, S.PROCESSING),
    (S.COMPLETED, S.DELETING),
    (S.FAILED, S.PREPARING),
    (S.FAILED, S.PROCESSING),
    (S.FAILED, S.DELETING),
}
ALL_PAIRS = list(itertools.product([None, *S], list(S)))

# How to reach each status from creation, through legal steps only.
PATH_TO = {
    S.PREPARING: [S.PREPARING],
    S.PROCESSING: [S.PROCESSING],
    S.COMPLETED: [S.PROCESSING, S.COMPLETED],
    S.FAILED: [S.PROCESSING, S.FAILED],
    S.DELETING: [S.PROCESSING, S.DELETING],
}


@pytest.fixture
def catalog(tmp_path: Path) -> Catalog:
    cat = Catalog(tmp_path / "trove.sqlite")
    cat.create_base("b", base_id="b1")
    return cat


def _item_in(catalog: Catalog, status: S) -> str:
    first, *rest = PATH_TO[status]
    item = catalog.create_item("b1", ItemType.FILE, "/x", "x", status=first)
    for step in rest:
        catalog.set_item_status(item.id, step)
    return item.id


def test_table_matches_the_design() -> None:
    table = {(old, new) for old, news in states.LEGAL_TRANSITIONS.items() for new in news}
    assert table == LEGAL


@pytest.mark.parametrize(("old", "new"), ALL_PAIRS, ids=lambda s: str(s))
def test_transition_through_catalog(catalog: Catalog, old: S | None, new: S) -> None:
    legal = (old, new) in LEGAL
    if old is None:
        if legal:
            assert catalog.create_item("b1", ItemType.FILE, "/x", "x", status=new).status is new
        else:
            with pytest.raises(IllegalTransitionError):
                catalog.create_item("b1", ItemType.FILE, "/x", "x", status=new)
            assert catalog.list_items("b1") == []
        return
    item_id = _item_in(catalog, old)
    if legal:
        assert catalog.set_item_status(item_id, new).status is new
    else:
        with pytest.raises(IllegalTransitionError):
            catalog.set_item_status(item_id, new)
        assert catalog.require_item(item_id).status is old


def test_row_removal_only_after_deleting(catalog: Catalog) -> None:
    item_id = _item_in(catalog, S.COMPLETED)
    with pytest.raises(Exception, match="deleting"):
        catalog.delete_item_row(item_id)
    catalog.set_item_status(item_id, S.DELETING)
    catalog.delete_item_row(item_id)
    assert catalog.get_item(item_id) is None


def test_phase_only_while_working(catalog: Catalog) -> None:
    working = _item_in(catalog, S.PROCESSING)
    catalog.set_item_phase(working, ItemPhase.EMBEDDING, 40.0)
    item = catalog.require_item(working)
    assert (item.phase, item.progress) == (ItemPhase.EMBEDDING, 40.0)
    catalog.set_item_status(working, S.COMPLETED)
    assert catalog.require_item(working).phase is None
    with pytest.raises(IllegalTransitionError):
        catalog.set_item_phase(working, ItemPhase.READING)


def test_failed_keeps_error_and_restart_clears_it(catalog: Catalog) -> None:
    item_id = _item_in(catalog, S.PROCESSING)
    failed = catalog.set_item_status(
        item_id, S.FAILED, error_code="READ_FAILED", error_message="boom"
    )
    assert (failed.error_code, failed.error_message) == ("READ_FAILED", "boom")
    again = catalog.set_item_status(item_id, S.PROCESSING)
    assert again.error_code is None and again.error_message is None


@pytest.mark.parametrize(
    ("children", "expected"),
    [
        ([], S.COMPLETED),
        ([S.COMPLETED, S.FAILED], S.COMPLETED),
        ([S.FAILED, S.FAILED], S.FAILED),
        ([S.COMPLETED, S.PROCESSING], S.PROCESSING),
        ([S.PREPARING], S.PROCESSING),
        ([S.COMPLETED, S.DELETING], S.COMPLETED),
        ([S.FAILED, S.DELETING], S.FAILED),
        ([S.DELETING], S.COMPLETED),
    ],
)
def test_aggregate_status(children: list[S], expected: S) -> None:
    assert states.aggregate_status(children) is expected
