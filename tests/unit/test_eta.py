"""The progress arithmetic: runs, rates, ETAs, sizes and durations (app/ui/eta.py, Qt-free)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from app.knowledge.types import Item, ItemPhase, ItemStatus, ItemType, WorkCounts
from app.ui.eta import (
    Duration,
    RateEstimator,
    RunTracker,
    add_counts,
    approx_duration,
    count_work,
    format_size,
    partial_share,
)

MIB = 1024 * 1024


def item(
    item_id: str,
    status: ItemStatus,
    *,
    size: int | None = 1000,
    kind: ItemType = ItemType.FILE,
    parent: str | None = None,
    phase: ItemPhase | None = None,
    progress: float | None = None,
) -> Item:
    return Item(
        id=item_id,
        base_id="b",
        parent_id=parent,
        type=kind,
        source=f"/docs/{item_id}",
        title=item_id,
        relative_path=None,
        status=status,
        phase=phase,
        progress=progress,
        error_code=None,
        error_message=None,
        chunk_count=0,
        size=size,
        content_hash=None,
        created_at=0.0,
        updated_at=0.0,
    )


def counts(settled: int, pending: int, *, size: int = 100, unsized: int = 0) -> WorkCounts:
    return WorkCounts(
        settled=settled,
        settled_bytes=settled * size,
        pending=pending,
        pending_bytes=(pending - unsized) * size,
        unsized=unsized,
    )


def test_the_module_is_qt_free() -> None:
    code = "import sys, app.ui.eta; print(any(m.startswith('PySide6') for m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# -- sizes and durations ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("size", "text"),
    [
        (-5, "0 B"),
        (0, "0 B"),
        (980, "980 B"),
        (1536, "1.5 KiB"),
        (2048, "2 KiB"),
        (35 * MIB, "35 MiB"),
        (140 * MIB + 300_000, "140 MiB"),
        (int(2.1 * 1024 * MIB), "2.1 GiB"),
        (5 * 1024**4, "5 TiB"),
        (5 * 1024**5, "5120 TiB"),
    ],
)
def test_sizes_read_like_the_size_column(size: int, text: str) -> None:
    assert format_size(size) == text


@pytest.mark.parametrize(
    ("seconds", "rounded"),
    [
        (-3, Duration(0, 0, 5)),
        (0, Duration(0, 0, 5)),
        (12, Duration(0, 0, 15)),
        (54, Duration(0, 0, 55)),
        (58, Duration(0, 1, 0)),
        (100, Duration(0, 2, 0)),
        (59 * 60, Duration(0, 59, 0)),
        (3600 + 7 * 60, Duration(1, 5, 0)),
        (2 * 3600 + 11 * 60, Duration(2, 10, 0)),
        (11.4 * 3600, Duration(11, 0, 0)),
    ],
)
def test_durations_are_rounded_for_reading(seconds: float, rounded: Duration) -> None:
    assert approx_duration(seconds) == rounded


# -- the rate and the ETA --------------------------------------------------------------------


def feed(
    estimator: RateEstimator, start: float, seconds: int, rate: float, done: float = 0.0
) -> float:
    """One sample a second at a steady rate; returns the amount done at the end."""
    for s in range(seconds + 1):
        estimator.add(start + s, done + rate * s)
    return done + rate * seconds


def test_no_eta_in_the_first_seconds_nor_with_few_samples() -> None:
    estimator = RateEstimator()
    estimator.add(0.0, 0)
    estimator.add(1.0, 50)
    assert estimator.rate() == pytest.approx(50)
    assert estimator.eta(1.0, 1000) is None  # one second in
    estimator.add(6.0, 300)
    assert estimator.eta(6.0, 1000) is not None  # five seconds, three samples
    sparse = RateEstimator()
    sparse.add(0.0, 0)
    sparse.add(8.0, 80)
    assert sparse.eta(8.0, 100) is None  # only two samples, however long ago


def test_a_steady_rate_gives_the_remaining_time() -> None:
    estimator = RateEstimator()
    done = feed(estimator, 0.0, 20, rate=10.0)
    assert estimator.rate() == pytest.approx(10.0)
    assert estimator.eta(20.0, 1000 - done) == pytest.approx(80.0)


def test_a_burst_is_smoothed() -> None:
    estimator = RateEstimator()
    done = feed(estimator, 0.0, 30, rate=10.0)
    before = estimator.eta(30.0, 1000 - done)
    estimator.add(31.0, done + 10 + 100)  # a big batch lands at once
    after = estimator.eta(31.0, 1000 - done - 110)
    assert before is not None and after is not None
    # Measured over the window the rate went from 10/s to ~13.5/s; smoothed it moves
    # only a tenth of the way, so the ETA shrinks by little more than what was done.
    assert estimator.rate() == pytest.approx(10.0 + (1 - 2.718281828 ** (-0.1)) * 3.5, rel=0.05)
    assert before - after < 20


def test_looking_again_at_the_same_moment_changes_nothing() -> None:
    # The display samples on every tick and every signal: a look just before a batch lands
    # and one just after, at the same moment, must give what one look after it gives.
    once, often = RateEstimator(), RateEstimator()
    for s in range(0, 150, 30):
        once.add(float(s), s * 10.0)
        often.add(float(s), max(0, s - 30) * 10.0)
        often.add(float(s), s * 10.0)
    assert often.rate() == pytest.approx(once.rate())
    assert often.eta(120.0, 600) == pytest.approx(60.0)


def test_a_stall_slows_the_rate_down_and_the_eta_up() -> None:
    estimator = RateEstimator()
    done = feed(estimator, 0.0, 20, rate=10.0)
    moving = estimator.eta(20.0, 500)
    for s in range(21, 41):
        estimator.add(float(s), done)  # nothing finishes for 20 s
    stalled = estimator.eta(40.0, 500)
    assert moving is not None and stalled is not None and stalled > moving * 1.5


def test_the_eta_is_never_negative_and_resets_when_work_goes_back() -> None:
    estimator = RateEstimator()
    done = feed(estimator, 0.0, 10, rate=10.0)
    assert estimator.eta(10.0, -50) == 0.0
    estimator.add(11.0, done - 30)  # documents were removed: measure afresh
    assert estimator.rate() is None
    assert estimator.eta(11.0, 100) is None


def test_nothing_moving_has_no_eta() -> None:
    estimator = RateEstimator()
    for s in range(10):
        estimator.add(float(s), 0)
    assert estimator.eta(9.0, 100) is None


# -- runs ------------------------------------------------------------------------------------


def test_a_run_counts_what_was_added_not_what_the_base_held() -> None:
    tracker = RunTracker()
    assert tracker.update(0.0, counts(10_000, 0), running=False) is None
    run = tracker.update(1.0, counts(10_000, 480), running=True)
    assert run is not None and (run.done, run.total) == (0, 480)
    assert (run.done_bytes, run.total_bytes) == (0, 48_000)
    run = tracker.update(2.0, counts(10_120, 360), running=True)
    assert run is not None and (run.done, run.total) == (120, 480)
    assert (run.done_bytes, run.total_bytes) == (12_000, 48_000)
    assert run.fraction == pytest.approx(0.25)
    assert tracker.update(3.0, counts(10_480, 0), running=False) is None
    again = tracker.update(4.0, counts(10_480, 5), running=True)
    assert again is not None and (again.done, again.total) == (0, 5)


def test_partial_sizes_count_and_unknown_sizes_hide_bytes() -> None:
    tracker = RunTracker()
    half = WorkCounts(pending=2, pending_bytes=2000, partial_bytes=500.0)
    run = tracker.update(0.0, half, running=True)
    assert run is not None and run.done_bytes == 500 and run.fraction == pytest.approx(0.25)
    run = tracker.update(1.0, counts(0, 3, size=1000, unsized=1), running=True)
    assert run is not None and run.done_bytes is None and run.total_bytes is None
    assert run.fraction == 0.0
    # Once a size was unknown the run stays counted in documents.
    run = tracker.update(2.0, counts(1, 2, size=1000), running=True)
    assert run is not None and run.done_bytes is None and run.fraction == pytest.approx(1 / 3)


def test_deleting_old_documents_or_reindexing_them_keeps_what_was_done() -> None:
    tracker = RunTracker()
    tracker.update(0.0, counts(100, 50), running=True)
    run = tracker.update(1.0, counts(120, 30), running=True)
    assert run is not None and (run.done, run.total) == (20, 50)
    run = tracker.update(2.0, counts(90, 30), running=True)  # 30 old ones deleted
    assert run is not None and (run.done, run.total) == (20, 50)
    run = tracker.update(3.0, counts(80, 40), running=True)  # 10 old ones reindexed
    assert run is not None and (run.done, run.total) == (20, 60)


def test_a_folder_counts_all_its_children() -> None:
    tracker = RunTracker(whole=True)
    run = tracker.update(0.0, counts(120, 360), running=True)
    assert run is not None and (run.done, run.total) == (120, 480)


def test_the_eta_waits_for_samples_and_hides_while_nothing_runs() -> None:
    tracker = RunTracker()
    tracker.update(0.0, counts(0, 100), running=True)
    early = tracker.update(2.0, counts(10, 90), running=True)
    assert early is not None and early.eta is None
    for s in range(3, 11):
        run = tracker.update(float(s), counts(5 * s, 100 - 5 * s), running=True)
    assert run is not None and run.eta == pytest.approx(50 * 100 / (5 * 100), rel=0.01)
    paused = tracker.update(11.0, counts(50, 50), running=False)
    assert paused is not None and paused.eta is None and paused.rate is None
    resumed = tracker.update(12.0, counts(55, 45), running=True)
    assert resumed is not None and resumed.eta is None  # measured afresh after the pause


def test_preparing_and_deleting_alone_keep_a_run_open() -> None:
    tracker = RunTracker()
    run = tracker.update(0.0, WorkCounts(preparing=1), running=True)
    assert run is not None and run.total == 0 and run.preparing == 1
    run = tracker.update(1.0, WorkCounts(settled=5, deleting=3), running=True)
    assert run is not None and run.deleting == 3 and run.eta is None


# -- counting items --------------------------------------------------------------------------


def test_partial_share_follows_the_phases() -> None:
    assert partial_share("reading", None) == 0.0
    assert partial_share("embedding", 0.0) == 0.0
    assert partial_share("embedding", 40.0) == pytest.approx(0.4)
    assert partial_share("embedding", 140.0) == 1.0
    assert partial_share("writing", -1.0) == 1.0
    assert partial_share(None, None) == 0.0


def test_count_work_over_items_with_live_progress() -> None:
    items = [
        item("folder", ItemStatus.PROCESSING, kind=ItemType.DIRECTORY, size=None),
        item("sitemap", ItemStatus.PREPARING, kind=ItemType.SITEMAP, size=None),
        item("a", ItemStatus.COMPLETED, size=300, parent="folder"),
        item("b", ItemStatus.FAILED, size=200, parent="folder"),
        item("c", ItemStatus.PROCESSING, size=1000, phase=ItemPhase.EMBEDDING, progress=20.0),
        item("d", ItemStatus.PROCESSING, size=400),
        item("e", ItemStatus.PROCESSING, size=None, kind=ItemType.URL),
        item("f", ItemStatus.DELETING, size=50),
    ]
    work = count_work(items, {"d": ("embedding", 50.0)})
    assert work == WorkCounts(
        settled=2,
        settled_bytes=500,
        pending=3,
        pending_bytes=1400,
        unsized=1,
        partial_bytes=1000 * 0.2 + 400 * 0.5,
        preparing=1,
        deleting=1,
    )
    assert add_counts([work, work]).pending == 6
    assert add_counts([]) == WorkCounts()
