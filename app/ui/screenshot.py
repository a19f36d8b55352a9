"""`--screenshot PATH`: the main window with a demo base (items in every state and a search
with results), rendered to a PNG."""

from __future__ import annotations

import atexit
import logging
import shutil
import tempfile
from pathlib import Path

from PySide6.QtWidgets import QApplication

from app.knowledge.types import TroveError
from app.ui.context import UiContext
from app.ui.main_window import MainWindow
from app.ui.screenshot_demo import Demo, create_demo, stage_conversation
from app.ui.waiting import wait_until

log = logging.getLogger(__name__)


def build_demo(ctx: UiContext, language: str) -> Demo:
    # Outside the data folder: Trove never takes in files from inside its own data folder.
    folder = Path(tempfile.mkdtemp(prefix="trove-demo-files-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    model = ctx.service.offline_model()
    try:
        return create_demo(ctx.service, folder, language=language, embedding_model=model)
    except TroveError as exc:  # the offline model failed to load: show a BM25 base instead
        log.warning("demo without embeddings: %s", exc)
        return create_demo(ctx.service, folder, language=language)


def show_demo(ctx: UiContext, language: str, *, ask: bool = False) -> MainWindow:
    """The window showing the demo base with a finished search (the executor stays stopped,
    so waiting items keep waiting); with `ask`, the Ask view with a conversation instead."""
    demo = build_demo(ctx, language)
    if ask:
        stage_conversation(ctx.service, demo.base, language)
    window = MainWindow(ctx)
    window.confirm_quit = lambda _running: True  # scripted: nobody to answer
    window.resize(1280, 820)
    window.show()
    window.start()
    wait_until(lambda: window.current_base() is not None, 30, "the demo base")
    wait_until(
        lambda: window.items.model.rowCount() > 0 and not window.items.feed.loading, 30, "the items"
    )
    window.items.view.expandAll()
    window.right.setSizes([400, 420])
    finished: list[object] = []
    window.search.searchFinished.connect(finished.append)
    window.search.search(demo.query)
    wait_until(lambda: bool(finished), 60, "the demo search")
    if ask:
        window.query_tabs.setCurrentWidget(window.ask)
        window.right.setSizes([300, 520])
        wait_until(lambda: bool(window.ask.turns()), 30, "the demo conversation")
        wait_until(lambda: bool(window.ask.model_box().currentText()), 30, "the chat models")
    window.progress.refresh()  # the status bar's line, without waiting for its next tick
    return window


def render_demo(ctx: UiContext, path: Path, language: str, *, ask: bool = False) -> int:
    window = show_demo(ctx, language, ask=ask)
    QApplication.processEvents()
    path.parent.mkdir(parents=True, exist_ok=True)
    if not window.grab().save(str(path)):
        log.error("could not write %s", path)
        return 1
    print(path)
    window.close()
    return 0
