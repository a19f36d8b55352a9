"""The search view searching one base or all of them, saying when results are only loosely
related, leaving room for its results, and taking a PDF hit to its page."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
from PySide6.QtCore import Qt, QUrl
from PySide6.QtWidgets import QComboBox, QLabel, QLineEdit, QPushButton
from pytestqt.qtbot import QtBot

from app.knowledge.types import Base, BaseStatus, MultiSearchResponse, SearchResponse
from app.ui.context import UiContext
from app.ui.main_window import MainWindow
from app.ui.search import ResultRole, SearchView, ViewState
from app.ui.search.chunk_viewer import ChunkViewer
from app.ui.search.open_original import launch, page_url
from app.ui.search.room import MIN_VISIBLE_ROWS, visible_rows
from app.ui.search.search_view import SCOPE_SETTING, Scope
from tests.fakes import FakeModels
from tests.unit.make_files import pdf_bytes

GARDEN = [
    ("Roses", "Prune roses in late winter and water the roses in summer."),
    ("Beans", "Runner beans climb poles; water them every summer evening."),
]
KITCHEN = [
    ("Jam", "Rose petal jam needs sugar, lemon and water boiled together."),
    ("Soup", "Bean soup simmers for an hour with water, onion and thyme."),
]


def make_base(ctx: UiContext, name: str, notes: Sequence[tuple[str, str]], **kw: object) -> Base:
    base = ctx.service.create_base(name, **kw)  # type: ignore[arg-type]
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


def scope_box(view: SearchView) -> QComboBox:
    box = view.findChild(QComboBox, "searchScope")
    assert box is not None
    return box


def query_box(view: SearchView) -> QLineEdit:
    box = view.findChild(QLineEdit, "searchQuery")
    assert box is not None
    return box


def cue(view: SearchView) -> QLabel:
    label = view.findChild(QLabel, "searchLowRelevance")
    assert label is not None
    return label


def search(qtbot: QtBot, view: SearchView, text: str) -> object:
    with qtbot.waitSignal(view.searchFinished, timeout=10_000) as blocker:
        view.search(text)
    return blocker.args[0]


def base_names(view: SearchView) -> list[str]:
    model = view.model()
    return [model.index(r, 0).data(ResultRole.BASE_NAME) for r in range(model.rowCount())]


# -- scope -----------------------------------------------------------------------------------


def test_all_bases_names_each_result_base_and_opens_a_hit_of_another_base(
    qtbot: QtBot, view: SearchView, ui_ctx: UiContext, qtmodeltester: object
) -> None:
    garden = make_base(ui_ctx, "Garden", GARDEN)
    make_base(ui_ctx, "Kitchen", KITCHEN)
    view.set_base(garden)
    assert view.scope() is Scope.BASE
    assert query_box(view).placeholderText() == "Search this knowledge base"
    one = search(qtbot, view, "water")
    assert isinstance(one, SearchResponse)
    assert base_names(view) == ["", ""]  # one base: nothing to tell apart

    box = scope_box(view)
    with qtbot.waitSignal(view.searchFinished, timeout=10_000) as blocker:
        box.setCurrentIndex(box.findData(Scope.ALL.value))  # the same words, every base
    many = blocker.args[0]
    assert isinstance(many, MultiSearchResponse)
    assert query_box(view).placeholderText() == "Search all knowledge bases"
    qtmodeltester.check(view.model())  # type: ignore[attr-defined]
    assert base_names(view) == ["Garden", "Kitchen", "Garden", "Kitchen"]
    assert [view.model().index(r, 0).data(ResultRole.RANK) for r in range(4)] == [1, 2, 3, 4]
    delegate = view.results_view().itemDelegate()
    html = delegate.row_html(view.model().index(1, 0), "#777777")  # type: ignore[attr-defined]
    assert "in Kitchen" in html

    # Opening a Kitchen hit while Garden is selected reads it from the Kitchen base.
    viewer = view.open_result(1)
    with qtbot.waitSignal(viewer.loaded, timeout=10_000):
        pass
    hit = view.model().result(1)
    assert ui_ctx.service.get_item(hit.item_id).base_id != garden.id
    assert viewer.highlighted_text() == hit.text

    # Choosing another base keeps the answer of all bases on screen.
    view.set_base(ui_ctx.service.list_bases()[1])
    assert view.model().rowCount() == 4


def test_changing_the_scope_during_a_search_asks_the_new_scope(
    qtbot: QtBot, view: SearchView, ui_ctx: UiContext
) -> None:
    garden = make_base(ui_ctx, "Garden", GARDEN, embedding_model="fake:bow")
    make_base(ui_ctx, "Kitchen", KITCHEN)
    view.set_base(garden)
    box = scope_box(view)
    box.setCurrentIndex(box.findData(Scope.ALL.value))
    assert view.state() is ViewState.HINT  # nothing asked yet: nothing to repeat

    models = ui_ctx.service.parts.models
    assert isinstance(models, FakeModels)
    held, release = threading.Event(), threading.Event()

    def hold_once(_texts: Sequence[str]) -> None:
        if not held.is_set():
            held.set()
            release.wait(10)

    models.embedder_instance.before_embed = hold_once
    answers: list[object] = []
    view.searchFinished.connect(answers.append)
    try:
        view.search("water")  # all bases: held in Garden's embedding
        qtbot.waitUntil(held.is_set, timeout=5000)
        with qtbot.waitSignal(view.searchFinished, timeout=10_000) as blocker:
            box.setCurrentIndex(box.findData(Scope.BASE.value))
        assert isinstance(blocker.args[0], SearchResponse)
    finally:
        release.set()
    qtbot.waitUntil(lambda: ui_ctx.tasks.pending == 0, timeout=5000)
    assert len(answers) == 1  # the late answer of all bases was dropped
    assert set(base_names(view)) == {""}


def test_the_scope_is_remembered(qtbot: QtBot, ui_ctx: UiContext) -> None:
    first = SearchView(ui_ctx)
    qtbot.addWidget(first)
    first.set_scope(Scope.ALL)
    assert ui_ctx.settings.value(SCOPE_SETTING) == Scope.ALL.value
    second = SearchView(ui_ctx)
    qtbot.addWidget(second)
    assert second.scope() is Scope.ALL


def test_a_base_that_cannot_be_searched_is_named_beside_the_results(
    qtbot: QtBot, view: SearchView, ui_ctx: UiContext
) -> None:
    garden = make_base(ui_ctx, "Garden", GARDEN)
    broken = make_base(ui_ctx, "Broken", KITCHEN)
    ui_ctx.service.catalog.set_base_status(broken.id, BaseStatus.FAILED, "index lost")
    view.set_base(garden)
    view.set_scope(Scope.ALL)
    search(qtbot, view, "water")
    assert set(base_names(view)) == {"Garden"}
    summary = view.findChild(QLabel, "searchSummary")
    assert summary is not None
    assert summary.text() == "2 result(s) \u00b7 1 knowledge base(s) could not be searched"
    assert summary.toolTip().startswith("Broken: ")


# -- loosely related results -----------------------------------------------------------------


def test_the_cue_shows_over_loosely_related_results_only(
    qtbot: QtBot, view: SearchView, ui_ctx: UiContext
) -> None:
    ui_ctx.service.related_levels = {"fake:bow": 0.99}
    view.set_base(make_base(ui_ctx, "Garden", GARDEN, embedding_model="fake:bow"))
    assert cue(view).isHidden()

    loose = search(qtbot, view, "zorblax quibbleflint")
    assert isinstance(loose, SearchResponse) and loose.results
    assert cue(view).isVisible()
    assert cue(view).text() == "No result contains your words; these are only loosely related."
    # Above the results, and the results are still there to read.
    assert (
        cue(view).geometry().bottom() < view.results_view().mapTo(view, view.rect().topLeft()).y()
    )
    assert view.model().rowCount() == len(loose.results)

    search(qtbot, view, "roses")
    assert cue(view).isHidden()

    ui_ctx.service.related_levels = {}  # no measured level: the careful words
    search(qtbot, view, "zorblax")
    assert cue(view).isVisible()
    assert cue(view).text() == (
        "No result contains your words; these were found by similar meaning and may not be related."
    )
    view.search("")  # cleared: no cue over nothing
    assert cue(view).isHidden()


# -- room for the results --------------------------------------------------------------------


@pytest.fixture
def window(qtbot: QtBot, ui_ctx: UiContext) -> Iterator[MainWindow]:
    win = MainWindow(ui_ctx)
    win.confirm_quit = lambda _running: True
    qtbot.addWidget(win)
    win.show()
    win.start()
    qtbot.waitUntil(lambda: win.bases.loaded)
    yield win
    win.close()


def test_the_first_search_in_a_default_window_shows_several_results(
    qtbot: QtBot, window: MainWindow, ui_ctx: UiContext
) -> None:
    assert (window.width(), window.height()) == (1280, 800)  # the first start's size
    notes = [
        (
            f"Orchard note {n}",
            f"Orchard diary, entry {n}. " + "Apples, pears and plums were picked and stored. " * 6,
        )
        for n in range(8)
    ]
    base = make_base(ui_ctx, "Orchard", notes)
    window.bases.reload(select=base.id)
    qtbot.waitUntil(lambda: window.search.base() is not None)
    results = window.search.results_view()
    search(qtbot, window.search, "orchard")
    assert window.search.model().rowCount() == 8
    qtbot.waitUntil(lambda: visible_rows(results) >= MIN_VISIBLE_ROWS, timeout=5000)
    # The rest of the window keeps a share of its own.
    assert window.tabs.height() >= window.right.height() // 5


# -- PDFs: the page ---------------------------------------------------------------------------


@pytest.fixture
def pdf(tmp_path: Path) -> Path:
    path = tmp_path / "animals.pdf"
    path.write_bytes(
        pdf_bytes(
            [
                "Orchard notes. Apples grow on trees.",
                "Bees pollinate the blossom; the quokka visits too.",
                "Harvest ends in October with cider pressing.",
            ]
        )
    )
    return path


def test_a_pdf_hit_opens_at_its_page_with_pages_marked(
    qtbot: QtBot, view: SearchView, ui_ctx: UiContext, pdf: Path
) -> None:
    base = ui_ctx.service.create_base("Papers")
    ui_ctx.service.add(base.id, [pdf])
    ui_ctx.service.run_pending_jobs()
    view.set_base(ui_ctx.service.get_base(base.id))
    search(qtbot, view, "quokka")
    assert view.model().index(0, 0).data(ResultRole.PAGE) == 2

    viewer = view.open_result(0)
    assert isinstance(viewer, ChunkViewer)
    with qtbot.waitSignal(viewer.loaded, timeout=10_000):
        pass
    header = viewer.findChild(QLabel, "chunkViewerHeader")
    assert header is not None and header.text().endswith(", page 2")
    assert viewer.page_markers() == ["Page 1", "Page 2", "Page 3"]
    # The markers are not part of the passage that is highlighted and copied.
    assert viewer.highlighted_text() == view.model().result(0).text

    opened: list[QUrl] = []
    view.opener.launcher = lambda url: opened.append(url) or True
    button = viewer.findChild(QPushButton, "chunkViewerOpenOriginal")
    assert button is not None and button.text() == "Open at page 2"
    with qtbot.waitSignal(view.opener.opened, timeout=10_000):
        button.click()
    assert opened == [page_url(QUrl.fromLocalFile(str(pdf)), 2)]
    assert opened[0].toString().endswith("animals.pdf#page=2")

    # From the list too: Ctrl+Enter opens the selected result's original.
    opened.clear()
    viewer.close()
    view.activateWindow()
    view.results_view().setFocus()
    qtbot.waitUntil(view.results_view().hasFocus)
    with qtbot.waitSignal(view.opener.opened, timeout=10_000):
        qtbot.keyClick(view.results_view(), Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert opened == [page_url(QUrl.fromLocalFile(str(pdf)), 2)]

    # The original is gone: Trove's own copy opens, at the same page.
    pdf.unlink()
    opened.clear()
    with qtbot.waitSignal(view.opener.opened, timeout=10_000):
        view.open_original(0)
    assert opened[0].fragment() == "page=2"
    copy = Path(opened[0].toLocalFile())
    assert copy.is_file() and copy.is_relative_to(ui_ctx.service.layout.home)


def test_a_viewer_that_refuses_the_page_gets_the_plain_file() -> None:
    url = page_url(QUrl.fromLocalFile("/docs/paper.pdf"), 4)
    assert url.toString() == "file:///docs/paper.pdf#page=4"
    asked: list[str] = []

    def fussy(candidate: QUrl) -> bool:
        asked.append(candidate.toString())
        return not candidate.hasFragment()

    assert launch(url, fussy) == QUrl.fromLocalFile("/docs/paper.pdf")
    assert asked == ["file:///docs/paper.pdf#page=4", "file:///docs/paper.pdf"]
    assert launch(url, lambda _url: False) is None
    # Only a PDF with a known page gets one.
    assert not page_url(QUrl.fromLocalFile("/docs/notes.docx"), 4).hasFragment()
    assert not page_url(QUrl.fromLocalFile("/docs/paper.pdf"), None).hasFragment()
    assert not page_url(QUrl("https://example.com/paper.pdf"), 4).hasFragment()
