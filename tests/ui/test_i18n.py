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
import qasync
from PySide6.QtCore import QAbstractItemModel, QAbstractListModel, QCoreApplication, QModelIndex, Qt
from PySide6.QtGui import QAction
from PySide6.QtTest import QTest
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

from app.knowledge.jobs.recovery import INTERRUPTED_MESSAGE
from app.knowledge.types import ErrorCode, ItemStatus
from app.resources import i18n_dir
from app.ui import i18n
from app.ui.context import UiContext
from app.ui.items.add_dialogs import NoteDialog, UrlDialog
from app.ui.items.chunks_dialog import ChunksDialog
from app.ui.main_window import MainWindow
from app.ui.providers.provider_form import ProviderForm
from app.ui.search.chunk_viewer import ChunkViewer
from tests.httpserver import LoopbackServer
from tests.providers.fake_api import EMBEDDINGS, FakeApi, Fault
from tests.providers.fake_chat import FakeChat
from tests.providers.fake_chat import Fault as ChatFault
from tests.ui.test_providers_dialog import qloop  # noqa: F401  (a fixture)

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "i18n"))
import update as i18n_tool  # noqa: E402

# Names and units that stay as they are in every language.
ALLOWED = {
    "trove", "bm25", "ms", "mcp", "api", "id", "url", "openai", "ollama", "markdown",
    "claude", "desktop", "mcpservers", "asyncio", "model", "siliconflow", "ai", "v1",
    "rerank", "english", "localhost", "jina", "com", "fake", "bow", "local", "minilm",
    "all", "l6", "md", "txt", "https", "http", "json",
    "ocr", "pdf",  # written so in Chinese too (光学字符识别 is spelled out where it helps)
    "postgresql", "pgpassword", "pgpass",  # a product and libpq's own names for the password
    "cpu", "cuda", "directml", "coreml",  # a processor and onnxruntime's accelerators
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
            "askModel",  # model ids, as the providers name them
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
        window.open_models_dialog(),
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


def _probe_message(qtbot: QtBot, form: ProviderForm, kind: str, url: str, **typed: str) -> str:
    """Fill the form of a new provider, test the connection, return what the form says."""
    form.load(None)
    form.kind_combo.setCurrentIndex(form.kind_combo.findData(kind))
    form.name_edit.setText("测试服务")  # keyClicks types Latin-1 only
    QTest.keyClicks(form.url_edit, url)
    QTest.keyClicks(form.key_edit, typed.get("key", ""))
    if "model" in typed:
        form.new_model_edit.setText(typed["model"])
        QTest.keyClick(form.new_model_edit, Qt.Key.Key_Return)
    with qtbot.waitSignal(form.probeFinished, timeout=10_000) as finished:
        QTest.mouseClick(form.test_button, Qt.MouseButton.LeftButton)
    assert finished.args == [False]
    return form.message.text()


def test_zh_cn_errors_are_translated(
    chinese: None,
    qtbot: QtBot,
    ui_ctx: UiContext,
    tmp_path: Path,
    qloop: qasync.QEventLoop,  # noqa: F811
) -> None:
    """Failed and interrupted items' tooltips, an error toast, a search error and the
    provider form's test errors (refused, 401, unknown model) read fully in zh_CN."""
    service = ui_ctx.service
    base = service.create_base("错误", embedding_model="fake:bow")
    (tmp_path / "空白.txt").write_text("", encoding="utf-8")
    (tmp_path / "好.md").write_text("# 标题\n\n一些文字。", encoding="utf-8")
    service.add(base.id, [tmp_path / "空白.txt", tmp_path / "好.md"])
    service.run_pending_jobs()
    (tmp_path / "中断.md").write_text("# 中断\n\n文字。", encoding="utf-8")
    (cut,) = service.add(base.id, [tmp_path / "中断.md"]).added
    # What the next start's recovery records for an item a crash left processing.
    service.catalog.set_item_status(
        cut.id,
        ItemStatus.FAILED,
        error_code=ErrorCode.INDEXING_INTERRUPTED,
        error_message=INTERRUPTED_MESSAGE,
    )
    service.run_pending_jobs()
    window = MainWindow(ui_ctx)
    window.confirm_quit = lambda _running: True
    qtbot.addWidget(window)
    window.show()
    window.start()
    model = window.items.model
    qtbot.waitUntil(lambda: model.rowCount() == 3)
    failed = {i.error_code: i for i in model.items() if i.status is ItemStatus.FAILED}
    assert set(failed) == {ErrorCode.EMPTY_INDEXABLE_TEXT, ErrorCode.INDEXING_INTERRUPTED}
    tooltips = [
        str(model.index(row, 0).data(Qt.ItemDataRole.ToolTipRole))
        for row in range(model.rowCount())
    ]
    assert any(t.startswith("文件中没有可索引的文本\n") for t in tooltips)
    assert any(t.startswith("索引被中断\n") for t in tooltips)

    # A failure while the window watches: an error toast.
    (tmp_path / "又一个空白.txt").write_text("   ", encoding="utf-8")
    service.add(base.id, [tmp_path / "又一个空白.txt"])
    ui_ctx.executor.schedule()
    qtbot.waitUntil(lambda: len(window.toasts.visible) == 1, timeout=10_000)

    with qtbot.waitSignal(window.search.searchFailed):
        window.search.search("！？ …")

    dialog = window.open_providers_dialog()
    qtbot.waitUntil(lambda: ui_ctx.tasks.pending == 0)
    form = dialog.form
    with LoopbackServer() as gone:
        closed = gone.base_url
    probes = [_probe_message(qtbot, form, "openai", closed, model="向量")]
    with FakeApi(api_key="sk-right") as api:
        probes.append(_probe_message(qtbot, form, "openai", api.base_url, key="sk-wrong"))
        api.fail(EMBEDDINGS, Fault.http(404, body="The model does not exist"))
        probes.append(_probe_message(qtbot, form, "openai", api.base_url, key="sk-right"))
        probes.append(
            _probe_message(qtbot, form, "ollama", api.base_url, key="sk-right", model="没有的模型")
        )
    texts = [
        *tooltips,
        *(text for _, text in visible_texts(window)),
        *probes,
    ]
    leftovers = [text for text in texts if english_words(text)]
    assert leftovers == []
    # Each says what went wrong, not only that something did.
    assert any("没有可检索的词" in text for _, text in visible_texts(window.search))
    assert "127.0.0.1" in probes[0] and "401" in probes[1] and "404" in probes[2]
    assert "没有的模型" in probes[3]
    dialog.close()


def test_zh_cn_ask_view_reads_in_chinese(
    chinese: None,
    qtbot: QtBot,
    ui_ctx: UiContext,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    qloop: qasync.QEventLoop,  # noqa: F811
) -> None:
    """The Ask view after a rewritten, streamed answer with a citation that points nowhere,
    its sources, and then a stream that broke off and a rate limit: all in zh_CN."""
    monkeypatch.setenv("TROVE_KEY_CHAT", "sk-chat")
    service = ui_ctx.service
    base = service.create_base("问答")
    doc = tmp_path / "番茄.md"
    doc.write_text("# 番茄\n\n番茄需要充足的阳光和水。", encoding="utf-8")
    service.add(base.id, [doc])
    service.run_pending_jobs()
    service.set_ask_rewrite(base.id, True)

    def reply(messages: list[dict[str, str]]) -> str:
        return "番茄 阳光" if "standalone" in messages[-1]["content"] else "番茄需要阳光 [1][4]。"

    with FakeChat(reply=reply) as chat:
        service.save_provider("chat", "openai", base_url=chat.base_url, models=["小模型"])
        window = MainWindow(ui_ctx)
        window.confirm_quit = lambda _running: True
        qtbot.addWidget(window)
        window.show()
        window.start()
        qtbot.waitUntil(lambda: window.current_base() is not None)
        window.query_tabs.setCurrentWidget(window.ask)
        qtbot.waitUntil(lambda: window.ask.model_box().currentText() == "chat:小模型")
        with qtbot.waitSignal(window.ask.answerFinished, timeout=10_000):
            window.ask.ask("番茄需要什么？")
        texts = [text for _, text in visible_texts(window.ask)]
        sources = window.ask.sources_model()
        texts += [str(sources.index(r, 0).data()) for r in range(sources.rowCount())]
        assert any("改写为：番茄 阳光" in t for t in texts)
        assert any("1 处引用没有对应的段落" in t for t in texts)
        service.set_ask_rewrite(base.id, False)
        chat.fail(ChatFault.reset(2))
        with qtbot.waitSignal(window.ask.answerFinished, timeout=10_000):
            window.ask.ask("番茄需要什么？")
        texts += [text for _, text in visible_texts(window.ask)]
        texts.append(window.ask.conversation_view().toPlainText())
        chat.fail(ChatFault.rate_limited("30"))
        with qtbot.waitSignal(window.ask.askFailed, timeout=10_000):
            window.ask.ask("番茄需要什么？")
        texts.append(window.ask.status_label().text())
    assert "对话模型繁忙" in texts[-1] and "30" in texts[-1]
    assert any("回答在此中断" in t for t in texts)
    leftovers = [text for text in texts if english_words(text)]
    assert leftovers == []


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
