"""Progress a person can read: badges without a misleading 0 %, a status bar that tells what
indexing really does (in this window, in other bases, in another Trove process), and
running folders' rows with counts, sizes and an ETA."""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeVar

import pytest
from PySide6.QtCore import QObject, QSettings, Signal
from PySide6.QtWidgets import QApplication
from pytestqt.modeltest import ModelTester
from pytestqt.qtbot import QtBot

from app.knowledge.engine import Extraction
from app.knowledge.jobs.reader_pool import InlineExtraction
from app.knowledge.service import KnowledgeService
from app.knowledge.types import Base, Item, ItemPhase, ItemStatus, ItemType
from app.runtime.executor import JobExecutor
from app.ui import i18n, progress
from app.ui.context import UiContext
from app.ui.eta import RunProgress, count_work
from app.ui.items.item_model import Column, ItemTreeModel, Role
from app.ui.items.items_panel import ItemsPanel
from app.ui.items.status_delegate import badge_text
from app.ui.main_window import MainWindow
from app.ui.notifications import Notifier
from app.ui.progress_texts import WorkReport, texts
from app.ui.tasks import BackgroundTasks
from tests.fakes import FakeEmbedder, FakeModels

T = TypeVar("T")

WAIT_MS = 20_000


class Gate:
    """Holds every embedding call (`embedder`) or every document's reading (`reading`, a
    service whose extraction it wraps) until the test lets calls through, one at a time."""

    def __init__(
        self, embedder: FakeEmbedder | None = None, *, reading: KnowledgeService | None = None
    ) -> None:
        self._slots = threading.Semaphore(0)
        self._open = threading.Event()
        if embedder is not None:
            embedder.before_embed = self._wait
        if reading is not None:
            reading.parts.extraction = _GatedExtraction(reading.parts.extraction, self)

    def _wait(self, _texts: object = None) -> None:
        if not self._open.is_set():
            assert self._slots.acquire(timeout=WAIT_MS / 1000), "the test never let it through"

    def let_through(self, calls: int = 1) -> None:
        for _ in range(calls):
            self._slots.release()

    def open(self) -> None:
        self._open.set()
        self.let_through(100)


class _GatedExtraction:
    """A service's reading, each document held at the gate first. Documents become
    searchable (completed) when read; their vectors come after, so the pace of indexing
    is set by reading."""

    def __init__(self, inner: Extraction, gate: Gate) -> None:
        self._inner = inner
        self._gate = gate

    def run(self, fn: Callable[..., T], *args: Any, cancelled: Callable[[], Any]) -> T:
        self._gate._wait()
        return self._inner.run(fn, *args, cancelled=cancelled)

    def shutdown(self) -> None:
        self._inner.shutdown()

    def warm(self) -> list[Any]:
        return self._inner.warm()


def embedder_of(service: KnowledgeService) -> FakeEmbedder:
    models = service.parts.models
    assert isinstance(models, FakeModels)
    return models.embedder_instance


@pytest.fixture(autouse=True)
def english(qapp: QApplication) -> Iterator[None]:
    """The English catalog, as the window loads it: it holds the plural forms."""
    translators = i18n.install_translators(qapp, "en")
    assert translators, "the en catalog did not load"
    yield
    i18n.remove_translators(qapp, translators)


@pytest.fixture
def fast_timers(monkeypatch: pytest.MonkeyPatch) -> None:
    """The watcher's delays, shortened so the tests do not sit through seconds of them."""
    monkeypatch.setattr(progress, "PROBE_IDLE_MS", 150)
    monkeypatch.setattr(progress, "PROBE_ACTIVE_MS", 150)
    monkeypatch.setattr(progress, "SUMMARY_DELAY_MS", 30)
    monkeypatch.setattr(progress, "RECOMPUTE_DELAY_MS", 20)
    monkeypatch.setattr(progress, "TICK_MS", 200)


@pytest.fixture
def quiet_ctx(qtbot: QtBot, tmp_path: Path) -> Iterator[UiContext]:
    """Like `ui_ctx`, but the window's own executor never runs: whatever gets indexed is
    indexed by someone else, as when a `trove add` in a terminal does the work."""
    service = KnowledgeService(
        tmp_path / "home", models=FakeModels(), extraction=InlineExtraction()
    )
    executor = JobExecutor(service, max_workers=1)
    tasks = BackgroundTasks()
    ctx = UiContext(
        service=service,
        executor=executor,
        tasks=tasks,
        settings=QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat),
        notifier=Notifier(),
    )
    yield ctx
    executor.shutdown()
    tasks.wait()
    service.close()


def open_window(qtbot: QtBot, ctx: UiContext, base: Base) -> MainWindow:
    window = MainWindow(ctx)
    window.confirm_quit = lambda _running: True
    qtbot.addWidget(window)
    window.show()
    window.start()
    qtbot.waitUntil(lambda: window.current_base() is not None, timeout=WAIT_MS)
    assert window.current_base() == base
    return window


def write_files(folder: Path, count: int) -> list[Path]:
    """`count` text files of one size each."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(count):
        path = folder / f"note-{i}.txt"
        path.write_text(f"note {i} " + "lorem ipsum dolor " * 60, encoding="utf-8")
        paths.append(path)
    return paths


def statuses(model: ItemTreeModel) -> list[ItemStatus]:
    return sorted(i.status for i in model.items() if i.type is ItemType.FILE)


# -- badges --------------------------------------------------------------------------------


def test_a_phase_without_a_real_percentage_says_so_instead_of_zero() -> None:
    assert badge_text(ItemStatus.PROCESSING, "embedding", 0.0) == "Embedding…"
    assert badge_text(ItemStatus.PROCESSING, "embedding", 0.4) == "Embedding…"
    assert badge_text(ItemStatus.PROCESSING, "embedding", -1.0) == "Embedding…"
    assert badge_text(ItemStatus.PROCESSING, "embedding", 1.0) == "Embedding 1%"
    assert badge_text(ItemStatus.PROCESSING, "reading", None) == "Reading…"
    assert badge_text(ItemStatus.PROCESSING, "embedding", 100.0) == "Embedding 100%"


def test_a_small_file_whose_vectors_are_computed_never_shows_zero_percent(
    qtbot: QtBot, qtmodeltester: ModelTester, ui_ctx: UiContext, tmp_path: Path
) -> None:
    base = ui_ctx.service.create_base("Docs", embedding_model="fake:bow")
    gate = Gate(embedder_of(ui_ctx.service))
    panel = ItemsPanel(ui_ctx)
    qtbot.addWidget(panel)
    qtmodeltester.check(panel.model)
    panel.set_base(base)
    try:
        (path,) = write_files(tmp_path / "docs", 1)
        panel.add_paths([str(path)])

        def shown() -> tuple[object, object, object]:
            if not panel.model.items():
                return None, None, None
            index = panel.model.index_of(panel.model.items()[0].id, Column.STATUS)
            return index.data(Role.STATUS), index.data(Role.PHASE), index.data(Role.PROGRESS)

        # Searchable, its one batch of vectors held: "embedding, 0 %" and nothing since.
        qtbot.waitUntil(
            lambda: shown()[:2] == (ItemStatus.COMPLETED.value, "embedding"), timeout=WAIT_MS
        )
        status, phase, percent = shown()
        assert percent == 0.0
        text = badge_text(ItemStatus(str(status)), str(phase), 0.0)
        assert text == "Searchable · vectors…" and "0%" not in text
    finally:
        gate.open()
    qtbot.waitUntil(lambda: statuses(panel.model) == [ItemStatus.COMPLETED], timeout=WAIT_MS)


# -- the catalog's counts --------------------------------------------------------------------


def test_the_catalog_counts_every_bases_work(quiet_ctx: UiContext, tmp_path: Path) -> None:
    service = quiet_ctx.service
    base = service.create_base("Docs", embedding_model="fake:bow")
    other = service.create_base("Other")
    a, b = write_files(tmp_path / "docs", 2)
    added = service.add(base.id, [a, b]).added
    service.add_note(base.id, "Note", "a note has no size until it is indexed")
    service.jobs.set_item_phase(added[0].id, ItemPhase.EMBEDDING, 40.0)
    counts = service.work_counts()
    assert other.id not in counts  # nothing there
    work = counts[base.id]
    size = a.stat().st_size
    assert (work.settled, work.pending, work.unsized, work.deleting) == (0, 3, 1, 0)
    assert work.pending_bytes == 2 * size
    assert work.partial_bytes == pytest.approx(0.4 * size)
    assert (work.queued_jobs, work.running_jobs) == (3, 0)
    # The same counts as the window makes from the items it shows.
    assert count_work(service.list_items(base.id), {}) == replace(
        work, queued_jobs=0, running_jobs=0
    )

    service.run_pending_jobs()
    folder = tmp_path / "more"
    write_files(folder, 2)
    service.add(other.id, [folder])  # a folder waiting to be expanded
    service.delete_items(base.id, [added[1].id])
    counts = service.work_counts()
    work = counts[base.id]
    assert (work.settled, work.pending, work.deleting) == (2, 0, 1)
    assert work.settled_bytes >= size
    assert (counts[other.id].preparing, counts[other.id].pending) == (1, 0)


# -- the status bar ------------------------------------------------------------------------


def test_work_of_another_process_shows_in_the_status_bar_and_the_tree(
    qtbot: QtBot, fast_timers: None, quiet_ctx: UiContext, tmp_path: Path
) -> None:
    base = quiet_ctx.service.create_base("Docs", embedding_model="fake:bow")
    window = open_window(qtbot, quiet_ctx, base)
    label = window.queue_label
    qtbot.waitUntil(lambda: label.text() == "Idle", timeout=WAIT_MS)

    # A second Trove on the same data folder (a terminal) adds three files...
    other = KnowledgeService(
        quiet_ctx.service.layout.home, models=FakeModels(), extraction=InlineExtraction()
    )
    gate = Gate(reading=other)
    other_executor = JobExecutor(other, max_workers=1)
    try:
        other.add(base.id, write_files(tmp_path / "docs", 3))
        # ...which wait in the catalog: not idle, and the tree shows them.
        qtbot.waitUntil(lambda: label.text() == "3 documents waiting", timeout=WAIT_MS)
        qtbot.waitUntil(lambda: len(window.items.model.items()) == 3, timeout=WAIT_MS)
        assert not window.work.bar.isHidden()

        # Then it indexes them, one at a time.
        other_executor.start(recover=False)
        qtbot.waitUntil(lambda: "Indexing 0 of 3 documents" in label.text(), timeout=WAIT_MS)
        gate.let_through()
        qtbot.waitUntil(lambda: "Indexing 1 of 3 documents" in label.text(), timeout=WAIT_MS)
        assert re.search(r"\d+(\.\d)? KiB of \d+(\.\d)? KiB", label.text()), label.text()
        qtbot.waitUntil(
            lambda: statuses(window.items.model).count(ItemStatus.COMPLETED) == 1, timeout=WAIT_MS
        )
        gate.open()
        qtbot.waitUntil(lambda: label.text() == "Idle", timeout=WAIT_MS)
        qtbot.waitUntil(
            lambda: statuses(window.items.model) == [ItemStatus.COMPLETED] * 3, timeout=WAIT_MS
        )
        assert window.work.bar.isHidden()
    finally:
        gate.open()
        other_executor.shutdown()
        other.close()


def test_other_bases_work_shows_beside_the_selected_one(
    qtbot: QtBot, fast_timers: None, ui_ctx: UiContext, tmp_path: Path
) -> None:
    shown = ui_ctx.service.create_base("A shown", embedding_model="fake:bow")
    busy = ui_ctx.service.create_base("B busy", embedding_model="fake:bow")
    window = open_window(qtbot, ui_ctx, shown)
    label = window.queue_label
    gate = Gate(reading=ui_ctx.service)
    try:
        ui_ctx.service.add(busy.id, write_files(tmp_path / "b", 2))
        ui_ctx.executor.schedule()
        qtbot.waitUntil(
            lambda: label.text().startswith("All bases: Indexing 0 of 2 documents"), timeout=WAIT_MS
        )
        assert window.work.toolTip().startswith("All bases:")
        gate.open()
        qtbot.waitUntil(lambda: label.text() == "Idle", timeout=WAIT_MS)
    finally:
        gate.open()


def test_a_folder_row_and_the_status_bar_count_down_to_the_end(
    qtbot: QtBot,
    qtmodeltester: ModelTester,
    fast_timers: None,
    ui_ctx: UiContext,
    tmp_path: Path,
) -> None:
    base = ui_ctx.service.create_base("Docs", embedding_model="fake:bow")
    window = open_window(qtbot, ui_ctx, base)
    model = window.items.model
    now = [1000.0]
    window.progress.clock = lambda: now[0]
    gate = Gate(reading=ui_ctx.service)
    folder = tmp_path / "papers"
    size = write_files(folder, 6)[0].stat().st_size
    label = window.queue_label

    def folder_run() -> dict[str, object] | None:
        folders = [i for i in model.items() if i.type is ItemType.DIRECTORY]
        if not folders:
            return None
        run = model.index_of(folders[0].id, Column.STATUS).data(Role.RUN)
        return run if isinstance(run, dict) else None

    def completed() -> int:
        return statuses(model).count(ItemStatus.COMPLETED)

    try:
        window.items.add_paths([str(folder)])
        qtbot.waitUntil(lambda: (folder_run() or {}).get("short") == "0/6", timeout=WAIT_MS)
        qtmodeltester.check(model)  # with a folder's progress line in it
        run = folder_run()
        assert run is not None and run["text"] == f"0 of 6 files · 0 B of {6 * size / 1024:.1f} KiB"
        texts: list[str] = []
        # One file finishes every 30 s of the watcher's clock.
        for finished in range(1, 6):
            now[0] += 30
            gate.let_through()
            qtbot.waitUntil(lambda n=finished: completed() == n, timeout=WAIT_MS)  # type: ignore[misc]
            window.progress.refresh()
            run = folder_run()
            assert run is not None
            texts.append(str(run["text"]))
            assert run["fraction"] == pytest.approx(finished / 6)
            assert f"Indexing {finished} of 6 documents" in label.text()
        # Two samples are too few for an ETA; from the third on, 1 file per 30 s.
        assert "left" not in texts[0]
        assert texts[1].endswith("~2 min left") and texts[1].startswith("2 of 6 files · ")
        assert texts[3].endswith("~1 min left")
        assert texts[4].endswith("~30 s left")
        assert label.text().endswith("~30 s left")
        assert "Speed:" in window.work.toolTip()
        gate.open()
        qtbot.waitUntil(lambda: completed() == 6, timeout=WAIT_MS)
        qtbot.waitUntil(lambda: label.text() == "Idle", timeout=WAIT_MS)
        assert folder_run() is None  # the badge goes back to "6/6"
    finally:
        gate.open()


# -- words ---------------------------------------------------------------------------------


def run(done: int, total: int, **fields: object) -> RunProgress:
    values: dict[str, object] = {
        "done": done,
        "total": total,
        "done_bytes": None,
        "total_bytes": None,
        "running": True,
        "eta": None,
        "rate": None,
        "preparing": 0,
        "deleting": 0,
    }
    values.update(fields)
    return RunProgress(**values)  # type: ignore[arg-type]


def test_the_words_around_the_numbers() -> None:
    mib = 1024 * 1024
    big = run(120, 480, done_bytes=35 * mib, total_bytes=140 * mib, eta=110.0)
    assert texts().run_line(big, ItemType.DIRECTORY) == (
        "120 of 480 files · 35 MiB of 140 MiB · ~2 min left"
    )
    assert texts().run_line(big, ItemType.SITEMAP).startswith("120 of 480 pages")
    assert texts().short_line(big) == "120/480 · ~2 min left"
    assert texts().scope(run(0, 1, running=False)) == "1 document waiting"
    assert texts().scope(run(2, 5, running=False)) == "Indexing 2 of 5 documents · waiting"
    assert texts().scope(run(0, 0, preparing=1, deleting=2)) == (
        "Preparing 1 folder or sitemap · Deleting 2 documents"
    )
    assert texts().eta(4) == "a few seconds left"
    assert texts().eta(2 * 3600 + 600) == "~2 h 10 min left"
    assert texts().eta(3 * 3600) == "~3 h left"
    report = WorkReport(run(1, 2), run(3, 9))
    assert texts().report(report) == (
        "Indexing 1 of 2 documents  |  All bases: Indexing 3 of 9 documents"
    )
    assert texts().report(WorkReport(None, None)) == "Idle"


def test_the_words_are_translated(qapp: QApplication, english: None) -> None:
    translators = i18n.install_translators(qapp, "zh_CN")
    assert translators
    try:
        mib = 1024 * 1024
        shown = [
            texts().run_line(
                run(120, 480, done_bytes=35 * mib, total_bytes=140 * mib, eta=100.0),
                ItemType.DIRECTORY,
            ),
            texts().run_line(run(1, 4, eta=3 * 3600 + 900), ItemType.SITEMAP),
            texts().scope(run(0, 3, running=False, preparing=1, deleting=1)),
            texts().scope(run(3, 9, running=False)),
            texts().report(WorkReport(run(1, 2, eta=30.0), run(3, 9, eta=5.0))),
            texts().report(WorkReport(None, None)),
            texts().speed(run(1, 2), 3.5),
            badge_text(ItemStatus.PROCESSING, "embedding", 0.0),
        ]
    finally:
        i18n.remove_translators(qapp, translators)
    units = {"B", "KiB", "MiB", "GiB", "TiB"}
    english = [w for t in shown for w in re.findall(r"[A-Za-z]+", t) if w not in units]
    assert english == [], shown


class _Feed(QObject):
    """What the watcher reads of an ItemFeed: the shown base and its refreshed signal."""

    refreshed = Signal()

    def __init__(self, base_id: str) -> None:
        super().__init__()
        self.base_id = base_id


def _entry(item_id: str, parent: str | None, **fields: Any) -> Item:
    kind = ItemType.DIRECTORY if item_id.startswith("dir") else ItemType.FILE
    return Item(
        id=item_id,
        base_id="b",
        parent_id=parent,
        type=kind,
        source=f"/library/{item_id}",
        title=item_id,
        relative_path=None,
        status=fields.get("status", ItemStatus.PROCESSING),
        phase=fields.get("phase"),
        progress=fields.get("progress"),
        error_code=None,
        error_message=None,
        chunk_count=0,
        size=fields.get("size", 1_000),
        content_hash=None,
        created_at=1.0,
        updated_at=1.0,
    )


def test_running_folders_are_counted_without_walking_their_children(
    quiet_ctx: UiContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A linked folder of a library has all its files as children: counting them at each
    # refresh walked every row of the base, several times a second.
    walked: list[int] = []

    def walking(items: Any, live: Any) -> Any:
        items = list(items)
        walked.append(len(items))
        return count_work(items, live)

    monkeypatch.setattr(progress, "count_work", walking)
    model = ItemTreeModel()
    rows = [_entry(f"dir{d}", None) for d in range(3)]
    rows += [_entry(f"f{d}-{n}", f"dir{d}", size=100 * (n + 1)) for d in range(3) for n in range(4)]
    model.apply_items(rows)
    watcher = progress.ProgressWatcher(quiet_ctx, model, _Feed("b"))  # type: ignore[arg-type]

    def folder_counts() -> dict[str, progress.WorkCounts]:
        watcher._dirty = True
        watcher.refresh()
        return {f.id: c for f, c in watcher._folder_counts}

    def fresh(folder: str) -> progress.WorkCounts:
        return count_work([i for i in model.items() if i.parent_id == folder], watcher._live)

    first = folder_counts()
    assert set(first) == {"dir0", "dir1", "dir2"}
    assert all(first[f] == fresh(f) for f in first)

    # A file of dir1 completes, another is read part way, one of dir2 moves live.
    rows = [
        replace(r, status=ItemStatus.COMPLETED)
        if r.id == "f1-2"
        else replace(r, phase=ItemPhase.EMBEDDING, progress=25.0)
        if r.id == "f1-3"
        else r
        for r in rows
    ]
    model.apply_items(rows)
    watcher._on_item_progress("b", "f2-0", "embedding", 50.0)
    second = folder_counts()
    assert all(second[f] == fresh(f) for f in second)
    assert second["dir1"].settled == 1 and second["dir1"].partial_bytes == 100
    assert second["dir2"].partial_bytes == 50
    # dir1 done: it is no longer a running folder.
    model.apply_items(
        [replace(r, status=ItemStatus.COMPLETED) if r.id == "dir1" else r for r in rows]
    )
    assert set(folder_counts()) == {"dir0", "dir2"}
    assert walked == []
