"""The search view driven as a person would: type, press Enter, read the results, open one."""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QInputMethodEvent, QTextCursor
from PySide6.QtWidgets import QApplication, QLabel, QLineEdit, QPlainTextEdit, QProgressBar
from pytestqt.qtbot import QtBot

from app.knowledge.types import (
    Base,
    ErrorCode,
    ScoreKind,
    SearchResponse,
    SearchResult,
    TroveError,
)
from app.ui.context import UiContext
from app.ui.errors import headline
from app.ui.search import ResultRole, SearchResultsModel, SearchView, ViewState
from app.ui.search.debug_strip import DebugStrip
from app.ui.search.snippet import HIT_CLOSE, HIT_OPEN, hit_spans, make_snippet, query_terms
from tests.fakes import FakeModels

ANIMALS = [
    ("Quokkas", "The quokka lives on Rottnest Island and smiles at visitors."),
    ("Koalas", "Koalas sleep in eucalyptus trees for most of the day."),
    ("Wombats", "Wombats dig burrows; a wombat's droppings are cube shaped."),
]


def marked(term: str) -> str:
    return f"{HIT_OPEN}{term}{HIT_CLOSE}"


def make_base(ctx: UiContext, notes: Sequence[tuple[str, str]], **settings: object) -> Base:
    base = ctx.service.create_base("b", **settings)  # type: ignore[arg-type]
    for title, text in notes:
        ctx.service.add_note(base.id, title, text)
    ctx.service.run_pending_jobs()
    return ctx.service.get_base(base.id)


@pytest.fixture
def view(qtbot: QtBot, ui_ctx: UiContext) -> SearchView:
    widget = SearchView(ui_ctx)
    qtbot.addWidget(widget)
    widget.resize(800, 600)
    widget.show()
    return widget


def query_box(view: SearchView) -> QLineEdit:
    box = view.findChild(QLineEdit, "searchQuery")
    assert box is not None
    return box


def type_query(qtbot: QtBot, view: SearchView, text: str) -> None:
    box = query_box(view)
    box.clear()
    if text.isascii():
        qtbot.keyClicks(box, text)
    else:
        # Chinese arrives through an input method as one committed string (and QTest's
        # key clicks cannot type characters outside Latin-1).
        event = QInputMethodEvent()
        event.setCommitString(text)
        QApplication.sendEvent(box, event)
    assert box.text() == text
    qtbot.keyClick(box, Qt.Key.Key_Return)


def search(qtbot: QtBot, view: SearchView, text: str) -> SearchResponse:
    with qtbot.waitSignal(view.searchFinished, timeout=5000) as blocker:
        type_query(qtbot, view, text)
    response = blocker.args[0]
    assert isinstance(response, SearchResponse)
    return response


def tag(view: SearchView, name: str) -> QLabel:
    strip = view.findChild(DebugStrip, "searchDebugStrip")
    assert strip is not None
    label = strip.findChild(QLabel, f"searchTag{name}")
    assert label is not None
    return label


def shown_tags(view: SearchView) -> set[str]:
    names = ["Mode", "Embedding", "Vector", "Bm25", "Fusion", "Rerank", "Total"]
    return {n for n in names if not tag(view, n).isHidden()}


def document_text(editor: QPlainTextEdit, start: int, end: int) -> str:
    """Text between two Qt positions (UTF-16 units, not Python characters)."""
    cursor = QTextCursor(editor.document())
    cursor.setPosition(start)
    cursor.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
    return cursor.selectedText()


def message(view: SearchView) -> str:
    label = view.findChild(QLabel, "searchMessage")
    assert label is not None and label.isVisible()
    return label.text()


# -- pure parts ------------------------------------------------------------------------------


def test_terms_mark_words_case_insensitively_and_cjk_bigrams() -> None:
    text = "QUOKKAS and a quokka; 知识库里的知识 and 识"
    terms = query_terms("Quokkas 知识库")
    found = [text[s:e] for s, e in hit_spans(text, terms)]
    assert found == ["QUOKKAS", "quokka", "知识库", "知识"]
    assert query_terms("!!! ...").words == () and not query_terms("!!!")


def test_snippet_escapes_the_chunk_text() -> None:
    snippet = make_snippet('<script>alert("x")</script> & the <b>quokka</b>', query_terms("quokka"))
    assert "<script>" not in snippet.html and "<b>" not in snippet.html
    assert "&lt;script&gt;" in snippet.html and "&amp;" in snippet.html
    assert marked("quokka") in snippet.html


def test_long_chunk_snippet_is_cut_around_the_first_hit() -> None:
    text = "filler " * 200 + "the quokka smiles " + "tail " * 100
    snippet = make_snippet(text, query_terms("quokka"))
    assert len(snippet.text) <= 320
    assert snippet.html.startswith("\u2026") and snippet.html.endswith("\u2026")
    assert [snippet.text[s:e] for s, e in snippet.spans] == ["quokka"]


def test_results_model_roles(qtmodeltester: object) -> None:
    model = SearchResultsModel()
    results = [
        SearchResult(
            1,
            0.91234,
            ScoreKind.RELEVANCE,
            "i1",
            "/docs/a.pdf",
            "A",
            "a.pdf.md",
            0,
            5,
            "alpha <x>",
            page=3,
        ),
        SearchResult(
            2, 0.0163, ScoreKind.RANKING, "i2", "the whole note", "N", "notes/N.md", 0, 4, "beta"
        ),
    ]
    model.set_results(results, "alpha")
    qtmodeltester.check(model)  # type: ignore[attr-defined]
    first, second = model.index(0, 0), model.index(1, 0)
    assert first.data(ResultRole.SCORE_TEXT) == "0.912"
    assert first.data(ResultRole.SCORE_KIND_TEXT) == "relevance"
    assert second.data(ResultRole.SCORE_KIND_TEXT) == "ranking"
    assert first.data(ResultRole.PAGE) == 3 and second.data(ResultRole.PAGE) is None
    assert first.data(ResultRole.ORIGIN) == "/docs/a.pdf"
    assert second.data(ResultRole.ORIGIN) == ""  # a note's source is its text
    assert first.data(ResultRole.SNIPPET_HTML) == f"{marked('alpha')} &lt;x&gt;"
    assert first.data(ResultRole.RESULT) is results[0]
    model.clear()
    assert model.rowCount() == 0


# -- the widget ------------------------------------------------------------------------------


def test_disabled_without_a_base_then_hints(view: SearchView, ui_ctx: UiContext) -> None:
    assert not query_box(view).isEnabled()
    assert view.state() is ViewState.NO_BASE
    view.set_base(make_base(ui_ctx, []))
    assert query_box(view).isEnabled()
    assert view.state() is ViewState.HINT
    assert message(view) == "Type a query and press Enter"


def test_search_lists_ranked_results_with_highlighted_snippets(
    qtbot: QtBot, view: SearchView, ui_ctx: UiContext, qtmodeltester: object
) -> None:
    view.set_base(make_base(ui_ctx, ANIMALS, embedding_model="fake:bow"))
    response = search(qtbot, view, "quokka")

    model = view.model()
    qtmodeltester.check(model)  # type: ignore[attr-defined]
    assert view.state() is ViewState.RESULTS
    assert view.results_view().isVisible()
    assert model.rowCount() == len(response.results) >= 1
    top = model.index(0, 0)
    assert top.data(ResultRole.TITLE) == "Quokkas"
    assert [model.index(r, 0).data(ResultRole.RANK) for r in range(model.rowCount())] == list(
        range(1, model.rowCount() + 1)
    )
    assert re.fullmatch(r"\d[.,]\d{3}", top.data(ResultRole.SCORE_TEXT))
    assert top.data(ResultRole.SCORE_KIND_TEXT) == "ranking"  # hybrid: RRF
    assert marked("quokka") in top.data(ResultRole.SNIPPET_HTML)
    # The delegate lays rows out from the rich text: a row is taller than one line.
    rect = view.results_view().visualRect(top)
    assert rect.height() > view.fontMetrics().height()
    assert not view.results_view().viewport().grab().isNull()

    assert shown_tags(view) == {"Mode", "Embedding", "Vector", "Bm25", "Fusion", "Total"}
    m = response.metrics
    assert f"{m.bm25_hit_count} hit" in tag(view, "Bm25").text()
    assert f"{m.vector_hit_count} hit" in tag(view, "Vector").text()
    assert tag(view, "Mode").text() == "Hybrid"


def test_rerank_tag_only_with_a_rerank_model(
    qtbot: QtBot, view: SearchView, ui_ctx: UiContext
) -> None:
    base = make_base(ui_ctx, ANIMALS, embedding_model="fake:bow", rerank_model="fake:rerank")
    view.set_base(base)
    response = search(qtbot, view, "koalas sleep")
    assert response.reranked
    assert "Rerank" in shown_tags(view)
    top = view.model().index(0, 0)
    assert top.data(ResultRole.TITLE) == "Koalas"
    assert top.data(ResultRole.SCORE_KIND_TEXT) == "relevance"

    view.set_base(ui_ctx.service.update_base(base.id, rerank_model=None))
    search(qtbot, view, "koalas sleep")
    assert "Rerank" not in shown_tags(view)


def test_bm25_only_base_hides_vector_tags(
    qtbot: QtBot, view: SearchView, ui_ctx: UiContext
) -> None:
    view.set_base(make_base(ui_ctx, ANIMALS))
    search(qtbot, view, "wombat")
    assert shown_tags(view) == {"Mode", "Bm25", "Total"}
    assert tag(view, "Mode").text() == "Full text"
    assert view.model().index(0, 0).data(ResultRole.TITLE) == "Wombats"
    assert marked("wombat") in view.model().index(0, 0).data(ResultRole.SNIPPET_HTML)


def test_no_results_is_said_inline(qtbot: QtBot, view: SearchView, ui_ctx: UiContext) -> None:
    view.set_base(make_base(ui_ctx, ANIMALS))
    search(qtbot, view, "platypus")
    assert view.state() is ViewState.EMPTY
    assert message(view) == "No results"
    assert view.model().rowCount() == 0


def test_an_error_is_shown_inline_not_in_a_dialog(
    qtbot: QtBot, view: SearchView, ui_ctx: UiContext
) -> None:
    view.set_base(make_base(ui_ctx, ANIMALS))
    search(qtbot, view, "quokka")
    with qtbot.waitSignal(view.searchFailed, timeout=5000) as blocker:
        type_query(qtbot, view, "!!! ???")
    error = blocker.args[0]
    assert isinstance(error, TroveError) and error.code is ErrorCode.NO_SEARCHABLE_TOKEN
    assert view.state() is ViewState.ERROR
    assert message(view) == headline(ErrorCode.NO_SEARCHABLE_TOKEN)
    assert view.model().rowCount() == 0  # the previous results are gone
    assert shown_tags(view) == set()
    assert QApplication.activeModalWidget() is None


def test_a_newer_query_wins_over_a_slower_older_one(
    qtbot: QtBot, view: SearchView, ui_ctx: UiContext
) -> None:
    view.set_base(make_base(ui_ctx, ANIMALS, embedding_model="fake:bow"))
    models = ui_ctx.service.parts.models
    assert isinstance(models, FakeModels)
    blocked, release = threading.Event(), threading.Event()

    def hold_first_query(texts: Sequence[str]) -> None:
        if list(texts) == ["quokka"]:
            blocked.set()
            release.wait(10)

    models.embedder_instance.before_embed = hold_first_query
    shown: list[str] = []
    view.searchFinished.connect(lambda r: shown.append(r.query))
    busy = view.findChild(QProgressBar, "searchBusy")
    assert busy is not None
    try:
        type_query(qtbot, view, "quokka")
        assert not busy.isVisible()  # not before the delay, so fast searches never flicker
        qtbot.waitUntil(blocked.is_set, timeout=5000)
        qtbot.waitUntil(busy.isVisible, timeout=5000)
        with qtbot.waitSignal(view.searchFinished, timeout=5000) as blocker:
            type_query(qtbot, view, "koalas")
        assert blocker.args[0].query == "koalas"
        assert not busy.isVisible()
    finally:
        release.set()
    qtbot.waitUntil(lambda: ui_ctx.tasks.pending == 0, timeout=5000)
    assert shown == ["koalas"]  # the late "quokka" reply was dropped
    assert view.model().index(0, 0).data(ResultRole.TITLE) == "Koalas"


def test_cjk_query_highlights_its_characters(
    qtbot: QtBot, view: SearchView, ui_ctx: UiContext
) -> None:
    notes = [
        ("知识", "知识库是一个好东西。我们用知识库存储文档。"),
        ("天气", "今天的天气很好，我们去公园散步。"),
    ]
    view.set_base(make_base(ui_ctx, notes))
    search(qtbot, view, "知识库")
    assert view.model().rowCount() == 1
    snippet = view.model().index(0, 0).data(ResultRole.SNIPPET_HTML)
    assert snippet.count(marked("知识库")) == 2
    assert not view.results_view().viewport().grab().isNull()


def test_opening_a_result_shows_it_highlighted_in_its_document(
    qtbot: QtBot, view: SearchView, ui_ctx: UiContext
) -> None:
    # An emoji (two UTF-16 units) and CRLF line ends before the hit: Qt counts both
    # differently from the engine's offsets.
    filler = "\r\n\r\n".join(
        f"😀 Paragraph {i} talks about nothing in particular." for i in range(30)
    )
    text = f"{filler}\r\n\r\nThe quokka of Rottnest Island smiles.\r\nIt is small.\r\n\r\n{filler}"
    view.set_base(make_base(ui_ctx, [("Long", text)], chunk_size=40, chunk_overlap=0))
    response = search(qtbot, view, "quokka")
    hit = response.results[0]
    assert hit.char_start > 0 and "quokka" in hit.text

    results = view.results_view()
    results.setFocus()
    results.setCurrentIndex(view.model().index(0, 0))
    qtbot.keyClick(results, Qt.Key.Key_Return)
    viewer = view.chunk_viewer()
    assert viewer is not None
    qtbot.waitUntil(lambda: viewer.highlighted_range() is not None, timeout=5000)

    assert viewer.isVisible() and not viewer.isModal()
    assert viewer.highlighted_text() == hit.text.replace("\r\n", "\n")
    start, end = viewer.highlighted_range() or (0, 0)
    editor = viewer.text_view()
    selections = editor.extraSelections()  # keep the list alive while its cursors are read
    ranges = [(sel.cursor.selectionStart(), sel.cursor.selectionEnd()) for sel in selections]
    assert ranges[0] == (start, end)
    # The query term inside the passage stands out too.
    assert [document_text(editor, a, b) for a, b in ranges[1:]] == ["quokka"]
    assert editor.textCursor().position() == start
