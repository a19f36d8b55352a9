"""The search view says so when a provider died and the results are degraded: a notice in
the debug strip, the error's headline and message in its tooltip (loopback provider, real
engine, offscreen window)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import keyring
import pytest
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QLabel, QLineEdit
from pytestqt.qtbot import QtBot

from app.knowledge.types import SearchResponse
from app.runtime.executor import JobExecutor
from app.ui.context import UiContext
from app.ui.notifications import Notifier
from app.ui.search import SearchView
from app.ui.search.debug_strip import DebugStrip
from app.ui.tasks import BackgroundTasks
from tests.providers.conftest import MemoryKeyring
from tests.providers.fake_api import FakeApi
from tests.reliability.dead_provider import QUERY, Outage, World, index_base, open_service


@pytest.fixture(autouse=True)
def memory_keyring() -> Iterator[MemoryKeyring]:
    previous = keyring.get_keyring()
    backend = MemoryKeyring()
    keyring.set_keyring(backend)
    yield backend
    keyring.set_keyring(previous)


@pytest.fixture
def api() -> Iterator[FakeApi]:
    with FakeApi(dims=8) as server:
        yield server


@pytest.fixture
def closers() -> Iterator[list[Callable[[], None]]]:
    """What to close after the test, after pytest-qt closed the widgets."""
    done: list[Callable[[], None]] = []
    yield done
    for close in reversed(done):
        close()


@pytest.fixture
def world(tmp_path: Path, api: FakeApi) -> World:
    return index_base(tmp_path, api)


def _view(
    qtbot: QtBot,
    tmp_path: Path,
    world: World,
    api: FakeApi,
    closers: list[Callable[[], None]],
    **dead: Outage,
) -> SearchView:
    service = open_service(world, api, **dead)
    executor = JobExecutor(service, max_workers=1)
    tasks = BackgroundTasks()
    ctx = UiContext(
        service=service,
        executor=executor,
        tasks=tasks,
        settings=QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat),
        notifier=Notifier(),
    )
    view = SearchView(ctx)
    qtbot.addWidget(view)
    view.set_base(service.get_base(world.base_id))
    view.resize(900, 600)
    view.show()

    closers.append(service.close)
    closers.append(tasks.wait)
    return view


def _search(qtbot: QtBot, view: SearchView) -> SearchResponse:
    box = view.findChild(QLineEdit, "searchQuery")
    assert box is not None
    box.setText(QUERY)
    with qtbot.waitSignal(view.searchFinished, timeout=10_000) as blocker:
        view.search()
    response = blocker.args[0]
    assert isinstance(response, SearchResponse)
    return response


def _tag(view: SearchView, name: str) -> QLabel:
    strip = view.findChild(DebugStrip, "searchDebugStrip")
    assert strip is not None
    label = strip.findChild(QLabel, f"searchTag{name}")
    assert label is not None
    return label


def test_dead_reranker_shows_the_not_reranked_notice(
    qtbot: QtBot,
    tmp_path: Path,
    world: World,
    api: FakeApi,
    closers: list[Callable[[], None]],
) -> None:
    view = _view(qtbot, tmp_path, world, api, closers, rerank=Outage.REFUSED)
    response = _search(qtbot, view)
    assert response.results and view.model().rowCount() == len(response.results)
    notice = _tag(view, "DegradedRerank")
    qtbot.waitUntil(notice.isVisible)
    assert notice.text() == "Reranker unavailable — results not reranked"
    assert notice.toolTip().startswith("The rerank model failed\n")
    assert "Nothing answered at 127.0.0.1:" in notice.toolTip()
    assert not _tag(view, "DegradedEmbedding").isVisible()
    assert not _tag(view, "Rerank").isVisible()


def test_dead_embedder_shows_the_keyword_only_notice_and_a_healthy_search_clears_it(
    qtbot: QtBot,
    tmp_path: Path,
    world: World,
    api: FakeApi,
    closers: list[Callable[[], None]],
) -> None:
    view = _view(qtbot, tmp_path, world, api, closers, embed=Outage.HTTP_500)
    response = _search(qtbot, view)
    assert response.results[0].title == "Tomatoes"
    notice = _tag(view, "DegradedEmbedding")
    qtbot.waitUntil(notice.isVisible)
    assert notice.text() == "Embedding model unavailable — keyword results only"
    assert notice.toolTip().startswith("The embedding model failed\n")
    assert "HTTP 500" in notice.toolTip()
    # The reranker was not asked after the embedder's outage: that is a notice too.
    assert _tag(view, "DegradedRerank").isVisible()

    api.chooser = None  # the provider is back
    healthy = _search(qtbot, view)
    assert healthy.degraded == [] and healthy.reranked
    qtbot.waitUntil(lambda: not notice.isVisible())
    assert not _tag(view, "DegradedRerank").isVisible()
    assert _tag(view, "Rerank").isVisible()
