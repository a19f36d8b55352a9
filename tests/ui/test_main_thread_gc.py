"""Cyclic garbage is collected on the window's thread, never on a worker that happened to
fill a generation (a Qt object in the cycle would be destroyed off its thread)."""

from __future__ import annotations

import gc
import threading
import time
from collections.abc import Iterator

import pytest
from pytestqt.qtbot import QtBot

from app.runtime import main_thread_gc
from app.runtime.main_thread_gc import FULL_EVERY_S, MainThreadCollector, due_generation


class _Cycle:
    """Refers to itself, so only the cyclic collector frees it; says on which thread."""

    def __init__(self, seen: list[bool]) -> None:
        self.me = self
        self.seen = seen

    def __del__(self) -> None:
        self.seen.append(threading.current_thread() is threading.main_thread())


def _drop_a_cycle_then_allocate_on_a_worker(seen: list[bool]) -> list[list[object]]:
    """What the worker made is kept, so the collector's counts stay up, as in a job thread
    building a document."""
    _Cycle(seen)
    kept: list[list[object]] = []
    worker = threading.Thread(target=lambda: kept.extend([] for _ in range(300_000)))
    worker.start()
    worker.join(timeout=60)
    assert not worker.is_alive()
    return kept


@pytest.fixture
def automatic_gc_state() -> Iterator[None]:
    was = gc.isenabled()
    yield
    if was:
        gc.enable()
    else:
        gc.disable()


def test_without_it_a_worker_collects_the_cycle(automatic_gc_state: None) -> None:
    """The hazard itself, so the next test can fail: allocations on a worker run the
    automatic collector there."""
    gc.enable()
    gc.collect()
    seen: list[bool] = []
    _drop_a_cycle_then_allocate_on_a_worker(seen)
    assert seen == [False]


def test_a_cycle_is_collected_on_the_gui_thread(qtbot: QtBot, automatic_gc_state: None) -> None:
    gc.enable()
    gc.collect()
    collector = MainThreadCollector()
    collector.start()
    assert not gc.isenabled()
    seen: list[bool] = []
    kept = _drop_a_cycle_then_allocate_on_a_worker(seen)
    assert seen == [], "the worker collected nothing"
    qtbot.waitUntil(lambda: bool(seen), timeout=10_000)
    assert seen == [True]
    assert len(kept) == 300_000
    collector.stop()
    assert gc.isenabled(), "stop gives the automatic collector back"


def test_stop_leaves_a_collector_switched_off_before_off(qapp: object) -> None:
    was = gc.isenabled()
    gc.disable()
    try:
        collector = MainThreadCollector()
        collector.start()
        collector.stop()
        assert not gc.isenabled()
    finally:
        if was:
            gc.enable()


@pytest.mark.parametrize(
    ("counts", "due"),
    [
        ((10, 0, 0), None),
        ((701, 0, 0), 0),
        ((701, 11, 0), 1),
        ((701, 11, 11), 2),
        ((701, 5, 11), 0),  # an older generation is due only with the younger ones
        ((700, 11, 11), None),
    ],
)
def test_the_generation_due_follows_the_interpreters_thresholds(
    counts: tuple[int, int, int], due: int | None
) -> None:
    assert due_generation(counts, (700, 10, 10)) == due


@pytest.mark.parametrize(("full_ago_s", "collected"), [(FULL_EVERY_S + 1, True), (0.0, False)])
def test_stop_collects_the_old_generation_at_most_every_few_seconds(
    qapp: object,
    automatic_gc_state: None,
    monkeypatch: pytest.MonkeyPatch,
    full_ago_s: float,
    collected: bool,
) -> None:
    """A full walk of a test process's heap took 73 ms: paid at every stop, one per Qt
    test, it cost the suite 2.5 minutes. A stop right after a full collection collects the
    young generations only; the old one waits for the next full collection."""
    seen: list[bool] = []
    old = _Cycle(seen)
    gc.collect()  # it survives: into the oldest generation
    collector = MainThreadCollector()
    collector.start()
    del old  # garbage in the oldest generation
    monkeypatch.setattr(main_thread_gc, "_last_full", time.monotonic() - full_ago_s)
    collector.stop()
    assert seen == ([True] if collected else [])
    gc.collect()
    assert seen == [True]
