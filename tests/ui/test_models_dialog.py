"""The Models dialog against a real engine and a loopback model hub: its rows and their
states, a download with progress that turns the row installed, cancel mid-download (the
hub stalls) and resume, removal refused for a model a base uses, folder imports good and
bad, the mirror, a window that keeps responding while a download runs, and quitting that
keeps the downloaded part.

The catalog is swapped for entries describing the tiny real models of tests/tiny_models.py
(published on tests/providers/fake_hub.py, as tests/integration/test_downloaded_models.py
does), plus a larger one whose model file only starts like ONNX: downloads never run a
model, and 3 MB arrive in many chunks."""

from __future__ import annotations

import html
import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QCoreApplication, QSettings, Qt, QTimer
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from app.knowledge.jobs.reader_pool import InlineExtraction
from app.knowledge.service import KnowledgeService, ModelDownload, ModelListing
from app.knowledge.types import ErrorCode, TroveError
from app.providers.local_runtime import physical_cores
from app.providers.model_store import catalog
from app.providers.model_store.catalog import CatalogEntry, HubFile
from app.providers.model_store.hub import ENV_VARIABLES
from app.providers.model_store.manifest import ModelKind, load_manifest
from app.runtime.executor import JobExecutor
from app.ui import i18n
from app.ui.context import UiContext
from app.ui.errors import describe
from app.ui.main_window import MainWindow
from app.ui.models.downloads import DownloadPhase
from app.ui.models.models_dialog import ModelsDialog
from app.ui.models.models_model import Column, LocalModelsModel
from app.ui.notifications import Notifier
from app.ui.tasks import BackgroundTasks
from tests.httpserver import LoopbackServer
from tests.providers.fake_hub import FakeHub, onnx_bytes, tokenizer_bytes
from tests.tiny_models import install_model, write_embedding_model, write_rerank_model
from tests.ui.test_i18n import english_words, visible_texts

BIG = "big-embed"
BIG_ONNX = onnx_bytes(3_000_000)
BIG_TOKENIZER = tokenizer_bytes()
MODEL_PATH = "onnx/model_quantized.onnx"
TOKENIZER_PATH = "tokenizer.json"


def _entry(folder: Path, repo: str) -> CatalogEntry:
    """A catalog entry for a tiny model folder, as the real entries describe hub models."""
    m = load_manifest(folder)
    return CatalogEntry(
        id=m.id,
        kind=m.kind,
        name=m.name,
        license=m.license,
        languages=m.languages,
        max_tokens=m.max_tokens,
        approx_bytes=sum(p.stat().st_size for p in folder.iterdir()),
        repo=repo,
        revision="main",
        model_file=HubFile(MODEL_PATH, "model.onnx"),
        tokenizer_file=HubFile(TOKENIZER_PATH, "tokenizer.json"),
        dimensions=m.dimensions,
        pooling=m.pooling,
    )


BIG_ENTRY = CatalogEntry(
    id=BIG,
    kind=ModelKind.EMBEDDING,
    name="Big embed (int8)",
    license="CC-BY-NC-4.0",
    non_commercial=True,
    languages=("multilingual",),
    max_tokens=128,
    approx_bytes=len(BIG_ONNX) + len(BIG_TOKENIZER),
    repo="test-org/big-embed",
    revision="main",
    model_file=HubFile(MODEL_PATH, "model.onnx"),
    tokenizer_file=HubFile(TOKENIZER_PATH, "tokenizer.json"),
    dimensions=8,
    summary="small and fast; about 100 languages",
)


@dataclass
class Hub:
    """The loopback hub and what it publishes (a new hub can publish the same files)."""

    server: FakeHub
    entries: tuple[CatalogEntry, ...]
    files: dict[str, dict[str, bytes]] = field(default_factory=dict)  # repo -> path -> bytes

    def publish_on(self, server: FakeHub) -> None:
        for repo, files in self.files.items():
            server.publish(repo, files)

    def repo(self, model_id: str) -> str:
        return next(e.repo for e in self.entries if e.id == model_id)


@pytest.fixture
def hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Hub]:
    for name in ENV_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    made = tmp_path / "made"
    embed = write_embedding_model(made / "tiny-embed", languages=("en",))
    rerank = write_rerank_model(made / "tiny-rerank")
    entries = (
        _entry(made / embed.id, "test-org/tiny-embed-onnx"),
        _entry(made / rerank.id, "test-org/tiny-rerank-onnx"),
        BIG_ENTRY,
    )
    monkeypatch.setattr(catalog, "CATALOG", entries)
    import app.knowledge.model_manager as manager

    monkeypatch.setattr(manager, "CATALOG", entries)
    monkeypatch.setattr(
        manager, "catalog_entry", lambda i: next((e for e in entries if e.id == i), None)
    )
    files = {
        entry.repo: {
            MODEL_PATH: (made / entry.id / "model.onnx").read_bytes(),
            TOKENIZER_PATH: (made / entry.id / "tokenizer.json").read_bytes(),
        }
        for entry in entries[:2]
    }
    files[BIG_ENTRY.repo] = {MODEL_PATH: BIG_ONNX, TOKENIZER_PATH: BIG_TOKENIZER}
    with FakeHub() as server:
        found = Hub(server, entries, files)
        found.publish_on(server)
        yield found


@pytest.fixture
def models_ctx(qtbot: QtBot, tmp_path: Path, hub: Hub) -> Iterator[UiContext]:
    """A real engine (installed models run as local:<id>) downloading from the hub."""
    service = KnowledgeService(tmp_path / "home", extraction=InlineExtraction())
    service.set_model_mirror(hub.server.endpoint)
    executor = JobExecutor(service, max_workers=1)
    tasks = BackgroundTasks()
    ctx = UiContext(
        service=service,
        executor=executor,
        tasks=tasks,
        settings=QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat),
        notifier=Notifier(),
    )
    executor.start()
    yield ctx
    ctx.downloads.shutdown()
    executor.shutdown()
    tasks.wait()
    service.close()


def open_dialog(qtbot: QtBot, ctx: UiContext) -> ModelsDialog:
    dialog = ModelsDialog(ctx)
    qtbot.addWidget(dialog)
    with qtbot.waitSignal(dialog.modelsLoaded, timeout=10_000):
        dialog.show()
    return dialog


def status(dialog: ModelsDialog, model_id: str) -> str:
    row = dialog.model.row_of(model_id)
    return str(dialog.model.index(row, Column.STATUS).data())


def cell(dialog: ModelsDialog, model_id: str, column: Column) -> str:
    return str(dialog.model.index(dialog.model.row_of(model_id), column).data())


def listing(ctx: UiContext, model_id: str) -> ModelListing:
    return next(m for m in ctx.service.list_models() if m.id == model_id)


def cpu_only(model: ModelListing) -> bool:
    """The model runs on the CPU and no accelerator is waiting to be measured."""
    runs_on = model.runs_on
    return runs_on is not None and runs_on.placement.on_cpu and runs_on.pending is None


def cpu_text() -> str:
    threads = physical_cores()
    return "Runs on the CPU (1 thread)" if threads == 1 else f"Runs on the CPU ({threads} threads)"


def click(button: Any) -> None:
    assert button.isEnabled(), button.objectName()
    QTest.mouseClick(button, Qt.MouseButton.LeftButton)


def stalled_download(qtbot: QtBot, ctx: UiContext, hub: Hub, after: int) -> None:
    """Start a download of BIG that the hub stalls after `after` bytes; wait until the
    window has shown those bytes arrive."""
    hub.server.stall(BIG_ENTRY.repo, MODEL_PATH, after=after)
    ctx.downloads.start(BIG)

    def arrived() -> bool:
        progress = ctx.downloads.progress(BIG)
        return progress is not None and progress.done >= after

    qtbot.waitUntil(arrived, timeout=10_000)


def end_stall(hub: Hub) -> FakeHub:
    """Close the stalled hub (its connection is cut, as a network that drops it) and serve
    the same files from a new one, made the mirror; the caller exits it."""
    hub.server.__exit__(None, None, None)
    fresh = FakeHub().__enter__()
    hub.publish_on(fresh)
    return fresh


# -- the Qt model -------------------------------------------------------------------------------


def test_models_model_passes_the_model_tester(qtmodeltester: Any, models_ctx: UiContext) -> None:
    model = LocalModelsModel()
    qtmodeltester.check(model)
    listings = models_ctx.service.list_models()
    model.set_listings(listings)
    qtmodeltester.check(model)
    assert model.rowCount() == len(listings) == 4 and model.columnCount() == len(Column)
    assert model.headerData(Column.STATUS, Qt.Orientation.Horizontal) == "Status"


# -- rows and states ----------------------------------------------------------------------------


def test_rows_list_every_local_model_with_its_state(
    qtbot: QtBot, models_ctx: UiContext, tmp_path: Path
) -> None:
    home = models_ctx.service.layout.home
    install_model(home, write_embedding_model, model_id="own-embed", languages=("zh", "en"))
    partial = home / "models" / ".partial" / BIG
    partial.mkdir(parents=True)
    (partial / "model.onnx.part").write_bytes(BIG_ONNX[:500_000])
    models_ctx.service.download_model("tiny-rerank")

    dialog = open_dialog(qtbot, models_ctx)
    ids = [m.id for m in dialog.model.listings()]
    assert ids == ["all-MiniLM-L6-v2", "tiny-embed", "tiny-rerank", BIG, "own-embed"]
    assert status(dialog, "all-MiniLM-L6-v2") == "Built in"
    assert cell(dialog, "all-MiniLM-L6-v2", Column.NAME) == "all-MiniLM-L6-v2 (built in)"
    assert status(dialog, "tiny-embed") == "Not downloaded"
    assert status(dialog, "tiny-rerank") == "Installed"
    assert cell(dialog, "tiny-rerank", Column.KIND) == "Rerank"
    assert cell(dialog, "tiny-rerank", Column.DIMENSIONS) == "—"
    assert status(dialog, BIG) == "Paused, 500 KB kept"
    assert cell(dialog, BIG, Column.LICENCE) == "CC-BY-NC-4.0 (non-commercial use only)"
    assert cell(dialog, BIG, Column.LANGUAGES) == "Many languages"
    assert cell(dialog, BIG, Column.SIZE) == "about 3 MB"
    assert cell(dialog, BIG, Column.DIMENSIONS) == "8"
    assert status(dialog, "own-embed") == "Installed"
    assert cell(dialog, "own-embed", Column.LANGUAGES) == "Chinese, English"

    # The current row decides the actions; the summary and the languages show below.
    dialog.select(BIG)
    assert dialog.download_button.text() == "Resume download"
    assert dialog.download_button.isEnabled() and dialog.remove_button.isEnabled()
    assert dialog.details.text() == "small and fast; about 100 languages"
    dialog.select("all-MiniLM-L6-v2")
    assert not dialog.download_button.isEnabled() and not dialog.remove_button.isEnabled()
    # What runs it is said under the list (these machines' onnxruntime offers the CPU only).
    if cpu_only(listing(models_ctx, "all-MiniLM-L6-v2")):
        assert cpu_text() in dialog.details.text().splitlines()
    dialog.select("tiny-rerank")
    assert not dialog.download_button.isEnabled() and dialog.remove_button.isEnabled()
    assert not dialog.languages.isVisibleTo(dialog)  # a reranker's languages do not matter
    dialog.select("own-embed")
    qtbot.waitUntil(lambda: dialog.languages.current is not None)
    assert dialog.languages.summary.text() == ("Chinese, English (from the model's manifest)")


# -- downloading --------------------------------------------------------------------------------


def test_a_download_shows_its_progress_throttled_and_the_row_turns_installed(
    qtbot: QtBot, models_ctx: UiContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    service = models_ctx.service
    engine_reports: list[int] = []
    threads: set[int] = set()
    download = service.download_model

    def counted(model_id: str, **kw: Any) -> ModelDownload:
        progress = kw["progress"]

        def report(done: int, total: int) -> None:
            threads.add(threading.get_ident())
            engine_reports.append(done)
            progress(done, total)

        return download(model_id, **{**kw, "progress": report})

    monkeypatch.setattr(service, "download_model", counted)
    dialog = open_dialog(qtbot, models_ctx)
    shown: list[str] = []
    models_ctx.downloads.changed.connect(lambda _id: shown.append(status(dialog, BIG)))
    dialog.select(BIG)
    started = time.monotonic()
    with qtbot.waitSignal(models_ctx.downloads.finished, timeout=30_000):
        click(dialog.download_button)
    elapsed = time.monotonic() - started
    qtbot.waitUntil(lambda: status(dialog, BIG) == "Installed", timeout=10_000)

    assert threads and threading.get_ident() not in threads  # the engine ran on a worker
    # Every 64 KiB chunk reached the engine's callback; the window redrew the row at most
    # four times a second (plus the start, the running phase, the last figures and the end).
    assert len(engine_reports) > 40
    assert len(shown) <= elapsed / 0.25 + 5
    assert len(shown) < len(engine_reports) / 2
    assert dialog.message.text() == "Big embed (int8) is installed."
    assert listing(models_ctx, BIG).state == "installed"
    assert not dialog.download_button.isEnabled() and dialog.remove_button.isEnabled()


def test_cancel_mid_download_keeps_the_part_and_a_resume_finishes_it(
    qtbot: QtBot, models_ctx: UiContext, hub: Hub
) -> None:
    dialog = open_dialog(qtbot, models_ctx)
    dialog.select(BIG)
    hub.server.stall(BIG_ENTRY.repo, MODEL_PATH, after=1_000_000)
    click(dialog.download_button)
    qtbot.waitUntil(lambda: status(dialog, BIG).startswith("1 MB of 3 MB"), timeout=10_000)
    fraction = dialog.model.index(dialog.model.row_of(BIG), Column.STATUS).data(
        LocalModelsModel.FRACTION_ROLE
    )
    assert 0.3 < fraction < 0.4  # the delegate draws a third of a bar
    assert not dialog.download_button.isEnabled()

    click(dialog.cancel_button)
    assert status(dialog, BIG) == "Stopping…"
    assert not dialog.cancel_button.isEnabled()
    with qtbot.waitSignal(models_ctx.downloads.cancelled, timeout=30_000) as stopped:
        fresh = end_stall(hub)  # the engine hears the cancel once the stalled read ends
    try:
        assert stopped.args[0] == BIG and stopped.args[1] == 1_000_000
        qtbot.waitUntil(lambda: status(dialog, BIG) == "Paused, 1 MB kept", timeout=10_000)
        part = models_ctx.service.layout.home / "models" / ".partial" / BIG / "model.onnx.part"
        assert part.read_bytes() == BIG_ONNX[:1_000_000]

        models_ctx.service.set_model_mirror(fresh.endpoint)
        qtbot.waitUntil(lambda: dialog.download_button.text() == "Resume download")
        with qtbot.waitSignal(models_ctx.downloads.finished, timeout=30_000):
            click(dialog.download_button)
        qtbot.waitUntil(lambda: status(dialog, BIG) == "Installed", timeout=10_000)
        resumed = fresh.server.requests(fresh.cdn_path(BIG_ENTRY.repo, MODEL_PATH))
        assert resumed[-1].headers["range"] == "bytes=1000000-"
        installed = models_ctx.service.layout.home / "models" / BIG / "model.onnx"
        assert installed.read_bytes() == BIG_ONNX
    finally:
        fresh.__exit__(None, None, None)


def test_a_failed_download_says_why_in_the_dialog(
    qtbot: QtBot, models_ctx: UiContext, hub: Hub
) -> None:
    hub.server.corrupt(BIG_ENTRY.repo, MODEL_PATH)
    dialog = open_dialog(qtbot, models_ctx)
    dialog.select(BIG)
    with qtbot.waitSignal(models_ctx.downloads.failed, timeout=30_000):
        click(dialog.download_button)
    text = dialog.message.text()
    assert "The download of big-embed failed" in text
    assert "does not match the checksum the model hub publishes" in text
    qtbot.waitUntil(lambda: status(dialog, BIG) == "Not downloaded")


def test_the_window_keeps_responding_during_a_download_and_quitting_keeps_the_part(
    qtbot: QtBot, models_ctx: UiContext, hub: Hub
) -> None:
    window = MainWindow(models_ctx)
    asked: list[int] = []
    window.confirm_quit_downloads = lambda count: asked.append(count) or True
    qtbot.addWidget(window)
    window.show()
    stalled_download(qtbot, models_ctx, hub, after=700_000)
    # The status bar follows the download that no dialog shows.
    assert window.download_strip.isVisible()
    assert window.download_strip.label.text().startswith("Downloading big-embed: 700 KB of 3")

    ticks: list[int] = []
    timer = QTimer()
    timer.setInterval(10)
    timer.timeout.connect(lambda: ticks.append(1))
    timer.start()
    qtbot.wait(500)  # the download holds its worker thread all along
    timer.stop()
    assert models_ctx.downloads.progress(BIG) is not None
    assert len(ticks) >= 20  # the GUI thread went on serving its timer

    assert window.close()
    assert asked == [1]
    progress = models_ctx.downloads.progress(BIG)
    assert progress is not None and progress.phase is DownloadPhase.STOPPING
    with qtbot.waitSignal(models_ctx.downloads.cancelled, timeout=30_000):
        end_stall(hub).__exit__(None, None, None)
    assert listing(models_ctx, BIG).partial_bytes == 700_000  # kept for the next start
    assert not models_ctx.downloads.is_active()


# -- removing -----------------------------------------------------------------------------------


def test_remove_is_refused_for_a_model_a_base_uses_and_done_otherwise(
    qtbot: QtBot, models_ctx: UiContext
) -> None:
    service = models_ctx.service
    service.download_model("tiny-embed")
    service.download_model("tiny-rerank")
    service.create_base("Garden", embedding_model="local:tiny-embed")
    dialog = open_dialog(qtbot, models_ctx)
    asked: list[str] = []
    dialog.confirm_remove = lambda listing: asked.append(listing.id) or True

    dialog.select("tiny-embed")
    used_by = "Used by “Garden”"
    if cpu_only(listing(models_ctx, "tiny-embed")):
        assert dialog.details.text() == f"{cpu_text()}\n{used_by}"
    else:
        assert dialog.details.text().endswith(used_by)
    with qtbot.waitSignal(dialog.actionFinished, timeout=10_000):
        click(dialog.remove_button)
    assert asked == ["tiny-embed"]
    assert "“tiny-embed” is used by these knowledge bases: Garden." in dialog.message.text()
    assert listing(models_ctx, "tiny-embed").state == "installed"

    dialog.confirm_remove = lambda listing: False  # the person said no: nothing happens
    dialog.select("tiny-rerank")
    click(dialog.remove_button)
    assert listing(models_ctx, "tiny-rerank").state == "installed"

    dialog.confirm_remove = lambda listing: True
    with qtbot.waitSignal(dialog.actionFinished, timeout=10_000):
        click(dialog.remove_button)
    qtbot.waitUntil(lambda: status(dialog, "tiny-rerank") == "Not downloaded")
    assert dialog.message.text() == "Tiny test reranker (tiny-rerank) was removed."
    assert listing(models_ctx, "tiny-rerank").state == "available"


# -- importing ----------------------------------------------------------------------------------


def import_folder(qtbot: QtBot, dialog: ModelsDialog, folder: Path) -> str:
    dialog.choose_folder = lambda: str(folder)
    with qtbot.waitSignal(dialog.actionFinished, timeout=10_000):
        click(dialog.import_button)
    return dialog.message.text()


def test_importing_a_folder_installs_it_and_a_bad_folder_says_why(
    qtbot: QtBot, models_ctx: UiContext, tmp_path: Path
) -> None:
    dialog = open_dialog(qtbot, models_ctx)
    good = tmp_path / "usb" / "own-embed"
    write_embedding_model(good, model_id="own-embed")
    name = load_manifest(good).name
    assert import_folder(qtbot, dialog, good) == f"{name} was imported."
    qtbot.waitUntil(lambda: dialog.model.row_of("own-embed") >= 0)
    assert status(dialog, "own-embed") == "Installed"

    empty = tmp_path / "usb" / "empty"
    empty.mkdir()
    assert "has no trove-model.json" in import_folder(qtbot, dialog, empty)
    broken = tmp_path / "usb" / "broken"
    broken.mkdir()
    (broken / "trove-model.json").write_text(json.dumps({"id": "x"}), encoding="utf-8")
    assert "trove-model.json cannot be used" in import_folder(qtbot, dialog, broken)
    lacking = tmp_path / "usb" / "lacking"
    write_embedding_model(lacking, model_id="lacking")
    (lacking / "tokenizer.json").unlink()
    assert "lacks files its trove-model.json names: tokenizer.json" in import_folder(
        qtbot, dialog, lacking
    )
    assert dialog.model.row_of("lacking") < 0


# -- the mirror ---------------------------------------------------------------------------------


def test_the_mirror_is_shown_set_and_cleared(
    qtbot: QtBot, models_ctx: UiContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    models_ctx.service.set_model_mirror(None)
    dialog = open_dialog(qtbot, models_ctx)
    assert dialog.mirror_edit.text() == ""
    assert dialog.mirror_origin.text() == (
        "Downloads come from https://huggingface.co, the default."
    )

    dialog.select(BIG)  # Enter in the field saves the mirror and presses nothing else
    dialog.mirror_edit.setFocus()
    dialog.mirror_edit.setText("https://hf-mirror.com/")
    with qtbot.waitSignal(dialog.actionFinished, timeout=10_000):
        QTest.keyClick(dialog.mirror_edit, Qt.Key.Key_Return)
    assert dialog.isVisible() and not models_ctx.downloads.is_active()
    assert models_ctx.service.model_mirror().stored == "https://hf-mirror.com"
    assert dialog.mirror_origin.text() == "Downloads come from https://hf-mirror.com, your setting."

    dialog.mirror_edit.setText("ftp://example.org")
    with qtbot.waitSignal(dialog.actionFinished, timeout=10_000):
        click(dialog.mirror_save)
    assert "must start with http:// or https://" in dialog.message.text()
    assert models_ctx.service.model_mirror().stored == "https://hf-mirror.com"

    monkeypatch.setenv("HF_ENDPOINT", "https://mirror.example.org")
    with qtbot.waitSignal(dialog.modelsLoaded, timeout=10_000):
        dialog.reload()
    assert "set by the environment variable HF_ENDPOINT" in dialog.mirror_origin.text()
    monkeypatch.delenv("HF_ENDPOINT")

    with qtbot.waitSignal(dialog.actionFinished, timeout=10_000):
        click(dialog.mirror_clear)
    assert models_ctx.service.model_mirror().stored is None
    assert dialog.mirror_edit.text() == ""
    assert dialog.mirror_origin.text().endswith("the default.")


# -- in Chinese ---------------------------------------------------------------------------------

UNITS = {"kb", "mb", "gb"}


def chinese_leftovers(texts: list[str], names: list[str]) -> list[str]:
    """Texts with English words left once model names, ids and licences are taken out."""
    found = []
    for text in map(html.unescape, texts):
        # File and folder names a message names stay as they are on the disk.
        for name in sorted([*names, "trove-model.json", "models/"], key=len, reverse=True):
            text = text.replace(name, " ")
        if [w for w in english_words(text) if w.lower() not in UNITS]:
            found.append(text)
    return found


def test_the_dialog_reads_in_chinese(
    qapp: QApplication, qtbot: QtBot, models_ctx: UiContext, tmp_path: Path
) -> None:
    translators = i18n.install_translators(qapp, "zh_CN")
    try:
        models_ctx.service.download_model("tiny-rerank")
        partial = models_ctx.service.layout.home / "models" / ".partial" / BIG
        partial.mkdir(parents=True)
        (partial / "model.onnx.part").write_bytes(BIG_ONNX[:500_000])
        dialog = open_dialog(qtbot, models_ctx)
        model = dialog.model
        names = [n for m in model.listings() for n in (m.name, m.id, m.license, f"local:{m.id}")]
        texts: list[str] = []
        for row in range(model.rowCount()):
            dialog.select(model.listings()[row].id)
            qtbot.waitUntil(lambda: models_ctx.tasks.pending == 0)
            texts += [text for _, text in visible_texts(dialog)]
            texts += [
                str(model.index(row, column).data(role) or "")
                for column in Column
                for role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole)
                if not (column is Column.NAME and role == Qt.ItemDataRole.ToolTipRole)
            ]
        assert QCoreApplication.translate("LocalModelsModel", "Status") == "状态"
        empty = tmp_path / "空"
        empty.mkdir()
        texts.append(import_folder(qtbot, dialog, empty))
        assert chinese_leftovers(texts, names) == []
        assert "trove-model.json" in texts[-1]  # the file it lacks, named
    finally:
        i18n.remove_translators(qapp, translators)


def test_a_running_download_row_reads_in_chinese(
    qapp: QApplication, qtbot: QtBot, models_ctx: UiContext, hub: Hub
) -> None:
    translators = i18n.install_translators(qapp, "zh_CN")
    try:
        dialog = open_dialog(qtbot, models_ctx)
        stalled_download(qtbot, models_ctx, hub, after=600_000)
        texts = [status(dialog, BIG)]
        models_ctx.downloads.cancel(BIG)
        texts.append(status(dialog, BIG))
        with qtbot.waitSignal(models_ctx.downloads.cancelled, timeout=30_000):
            end_stall(hub).__exit__(None, None, None)
        qtbot.waitUntil(lambda: "600" in status(dialog, BIG))
        texts.append(status(dialog, BIG))
        assert chinese_leftovers(texts, []) == [], texts
        assert "600 KB" in texts[0] and "3 MB" in texts[0]
    finally:
        i18n.remove_translators(qapp, translators)


def test_download_failures_are_said_in_the_persons_language(
    qapp: QApplication, qtbot: QtBot, models_ctx: UiContext
) -> None:
    """Offline (nothing answers at the mirror), a checksum mismatch and a full disk."""
    with LoopbackServer() as gone:
        closed = gone.base_url
    models_ctx.service.set_model_mirror(closed)
    translators = i18n.install_translators(qapp, "zh_CN")
    try:
        dialog = open_dialog(qtbot, models_ctx)
        dialog.select("tiny-embed")
        with qtbot.waitSignal(models_ctx.downloads.failed, timeout=30_000):
            click(dialog.download_button)
        offline = dialog.message.text()
        assert "无法连接 127.0.0.1" in offline and "镜像" in offline
        full = TroveError(
            ErrorCode.STORAGE_FULL,
            "not enough free disk space ...",
            {"reason": "disk_full", "needed": 1_500_000_000, "free": 200_000_000},
        )
        _, said = describe(full)
        assert "1,500 MB" in said and "200 MB" in said
        mismatch = TroveError(
            ErrorCode.FETCH_FAILED,
            "model.onnx from x does not match the sha256 ...",
            {"reason": "checksum_mismatch", "file": "onnx/model.onnx"},
        )
        _, checksum = describe(mismatch)
        assert "onnx/model.onnx" in checksum and "校验和" in checksum
        assert chinese_leftovers([offline, said, checksum], ["tiny-embed", "onnx/model.onnx"]) == []
    finally:
        i18n.remove_translators(qapp, translators)
