"""Translations: the catalogs are complete and fresh, and with zh_CN loaded no visible text of
the main window or its dialogs is left in English (names and units excepted)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QAbstractItemModel, QAbstractListModel, QCoreApplication, QModelIndex, Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractItemView,
    QAbstractSpinBox,
    QApplication,
    QComboBox,
    QDialog,
    QGroupBox,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QSpinBox,
    QTabWidget,
    QTextEdit,
    QWidget,
)
from pytestqt.qtbot import QtBot

from app.resources import i18n_dir
from app.ui import i18n
from app.ui.context import UiContext
from app.ui.items.add_dialogs import NoteDialog, UrlDialog
from app.ui.items.chunks_dialog import ChunksDialog
from app.ui.main_window import MainWindow
from app.ui.search.chunk_viewer import ChunkViewer

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "i18n"))
import update as i18n_tool  # noqa: E402

# Names and units that stay as they are in every language.
ALLOWED = {
    "trove", "bm25", "ms", "mcp", "api", "id", "url", "openai", "ollama", "markdown",
    "claude", "desktop", "mcpservers", "asyncio", "model", "siliconflow", "ai", "v1",
    "rerank", "english", "localhost", "jina", "com", "fake", "bow", "local", "minilm",
    "all", "l6", "md", "txt", "https", "http",
}  # fmt: skip
WORD = re.compile(r"[A-Za-z][A-Za-z0-9]+")
TAG = re.compile(r"<[^>]+>")
URL = re.compile(r"\w+://\S*")
PATH = re.compile(r"(?:[A-Za-z]:\\|/)\S*")


def english_words(text: str) -> list[str]:
    text = PATH.sub(" ", URL.sub(" ", TAG.sub(" ", text.replace("&nbsp;", " "))))
    return [w for w in WORD.findall(text) if w.lower() not in ALLOWED]


def visible_texts(root: QWidget) -> list[tuple[str, str]]:
    """(where, text) for every text a person can see in `root` and its children."""
    found: list[tuple[str, str]] = []

    def add(widget: QWidget | QAction, what: str, text: str | None) -> None:
        if text and text.strip():
            found.append((f"{type(widget).__name__}({widget.objectName()}).{what}", text))

    for widget in [root, *root.findChildren(QWidget)]:
        add(widget, "windowTitle", widget.windowTitle() if widget.isWindow() else "")
        add(widget, "toolTip", widget.toolTip())
        if isinstance(widget, QLabel | QAbstractButton):
            add(widget, "text", widget.text())
        elif isinstance(widget, QLineEdit | QPlainTextEdit | QTextEdit):
            add(widget, "placeholder", widget.placeholderText())
        elif isinstance(widget, QGroupBox):
            add(widget, "title", widget.title())
        elif isinstance(widget, QTabWidget):
            for i in range(widget.count()):
                add(widget, f"tab{i}", widget.tabText(i))
        elif isinstance(widget, QComboBox) and widget.objectName() not in (
            "embeddingModel",
            "rerankModel",
        ):
            for i in range(widget.count()):
                add(widget, f"item{i}", widget.itemText(i))
        elif (
            isinstance(widget, QAbstractItemView)
            and isinstance(widget.model(), QAbstractItemModel)
            and not isinstance(widget.model(), QAbstractListModel)
        ):
            model = widget.model()
            for column in range(model.columnCount(QModelIndex())):
                header = model.headerData(column, Qt.Orientation.Horizontal)
                add(widget, f"header{column}", str(header) if header else "")
        if isinstance(widget, QSpinBox):
            add(widget, "suffix", widget.suffix())
        if isinstance(widget, QAbstractSpinBox):
            add(widget, "special", widget.specialValueText())
    for action in root.findChildren(QAction):
        if not action.isSeparator():
            add(action, "text", action.text())
            add(
                action,
                "toolTip",
                action.toolTip() if action.toolTip() != action.text().replace("&", "") else "",
            )
    return found


@pytest.fixture
def chinese(qapp: QApplication) -> Iterator[None]:
    translators = i18n.install_translators(qapp, "zh_CN")
    assert translators, "the zh_CN catalog did not load"
    yield
    i18n.remove_translators(qapp, translators)


def test_zh_cn_translates_everything(
    chinese: None, qtbot: QtBot, ui_ctx: UiContext, tmp_path: Path
) -> None:
    assert QCoreApplication.translate("MainWindow", "Content") == "内容"
    base = ui_ctx.service.create_base(
        "测试", embedding_model="fake:bow", rerank_model="fake:rerank"
    )
    doc = tmp_path / "文档.md"
    doc.write_text("# 混合检索\n\n混合检索结合全文与向量。", encoding="utf-8")
    ui_ctx.service.add(base.id, [doc])
    ui_ctx.service.run_pending_jobs()
    window = MainWindow(ui_ctx)
    window.confirm_quit = lambda _running: True
    qtbot.addWidget(window)
    window.show()
    window.start()
    qtbot.waitUntil(
        lambda: window.current_base() is not None and window.items.model.rowCount() == 1
    )
    with qtbot.waitSignal(window.search.searchFinished):
        window.search.search("混合检索")
    item = window.items.model.items()[0]
    viewer = window.search.open_result(0)
    qtbot.waitUntil(lambda: viewer.current_result() is not None)
    roots: list[QWidget] = [
        window,
        window.open_new_base_dialog(),
        window.open_providers_dialog(),
        window.open_mcp_dialog(),
        UrlDialog(False, window),
        UrlDialog(True, window),
        NoteDialog(window),
        ChunksDialog(ui_ctx, item, window),
        viewer,
        window.empty,
    ]
    assert isinstance(viewer, ChunkViewer)
    qtbot.waitUntil(lambda: ui_ctx.tasks.pending == 0)
    leftovers = [
        (where, text)
        for root in roots
        for where, text in visible_texts(root)
        if english_words(text)
    ]
    assert leftovers == []
    texts = [text for root in roots for _, text in visible_texts(root)]
    assert len(texts) > 150  # the walk really saw the window and its dialogs
    for dialog in roots[1:]:
        if isinstance(dialog, QDialog):
            dialog.close()


def test_item_states_and_columns_are_translated(chinese: None) -> None:
    from app.knowledge.types import ItemStatus
    from app.ui.items.item_model import Column, header_label, status_label

    assert [status_label(s) for s in ItemStatus] == ["准备中", "处理中", "已完成", "失败", "删除中"]
    assert not any(english_words(header_label(c)) for c in Column)


def test_english_plurals_come_from_the_catalog(qapp: QApplication) -> None:
    translators = i18n.install_translators(qapp, "en")
    try:
        assert QCoreApplication.translate("SearchView", "%n result(s)", "", 1) == "1 result"
        assert QCoreApplication.translate("SearchView", "%n result(s)", "", 3) == "3 results"
    finally:
        i18n.remove_translators(qapp, translators)


def _messages(ts: Path) -> dict[tuple[str, str], ET.Element]:
    root = ET.parse(ts).getroot()
    return {
        (ctx.findtext("name") or "", m.findtext("source") or ""): m
        for ctx in root.iter("context")
        for m in ctx.iter("message")
    }


def test_ts_sources_list_every_string_of_the_code(tmp_path: Path) -> None:
    """lupdate over today's code finds nothing the committed .ts files lack."""
    for language in i18n_tool.LANGUAGES:
        copy = tmp_path / f"trove_{language}.ts"
        shutil.copy(i18n_tool.ts_path(language), copy)
        subprocess.run(
            [i18n_tool.tool("lupdate"), "-no-obsolete", "-locations", "none", "-silent",
             *i18n_tool.python_sources(), "-ts", str(copy)],
            check=True,
        )  # fmt: skip
        assert set(_messages(copy)) == set(_messages(i18n_tool.ts_path(language))), language


def test_zh_cn_has_no_unfinished_message() -> None:
    unfinished = [
        key
        for key, message in _messages(i18n_tool.ts_path("zh_CN")).items()
        if (message.find("translation") is None)
        or message.find("translation").get("type") in ("unfinished", "vanished", "obsolete")  # type: ignore[union-attr]
    ]
    assert unfinished == []


@pytest.mark.parametrize("language", i18n_tool.LANGUAGES)
def test_committed_qm_matches_its_ts(language: str, tmp_path: Path) -> None:
    fresh = tmp_path / f"trove_{language}.qm"
    i18n_tool.release(language, fresh)
    committed = i18n_dir() / f"trove_{language}.qm"
    assert committed.read_bytes() == fresh.read_bytes(), "run: python i18n/update.py --release"
