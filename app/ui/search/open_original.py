"""Opens the original of a search hit in the system's viewer, a PDF at the hit's page.

A `file://…#page=N` URL is honoured by browsers and several PDF viewers; a viewer that
cannot take it (the launch fails) gets the plain file instead. Where the original file is
gone, or came with an imported base (its path is another computer's), the copy Trove keeps
of it is opened.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QObject, QUrl, Signal
from PySide6.QtGui import QDesktopServices

from app.knowledge.service import KnowledgeService
from app.knowledge.types import ErrorCode, ItemType, SearchResult, TroveError
from app.ui.context import UiContext

Launcher = Callable[[QUrl], bool]


def page_url(url: QUrl, page: int | None) -> QUrl:
    """`url` pointing at `page` when it is a local PDF and the page is known."""
    if page is None or page < 1 or not url.isLocalFile():
        return url
    if not url.toLocalFile().lower().endswith(".pdf"):
        return url
    paged = QUrl(url)
    paged.setFragment(f"page={page}")
    return paged


def original_url(service: KnowledgeService, base_id: str, result: SearchResult) -> QUrl:
    """Where the hit's original is (runs on a worker: it reads the catalog and the disk)."""
    item = service.find_item(result.item_id)
    if item is None:
        raise TroveError(
            ErrorCode.ITEM_NOT_FOUND,
            f"the document {result.title!r} is no longer in the knowledge base",
        )
    if item.type in (ItemType.URL, ItemType.SITEMAP):
        return QUrl(item.source)
    if item.type is ItemType.FILE and not item.imported:  # else its copy, below
        original = Path(item.source)
        if original.is_absolute() and original.is_file():
            return page_url(QUrl.fromLocalFile(str(original)), result.page)
    if item.relative_path is None:
        raise TroveError(ErrorCode.SOURCE_MISSING, f"{item.source} no longer exists")
    copy = service.material_file(base_id, item.relative_path)
    if not copy.is_file():
        raise TroveError(ErrorCode.SOURCE_MISSING, f"{item.source} no longer exists")
    return page_url(QUrl.fromLocalFile(str(copy)), result.page)


def launch(url: QUrl, launcher: Launcher) -> QUrl | None:
    """Open `url`, or the same file without its page when that fails; what was opened."""
    if launcher(url):
        return url
    if url.hasFragment() and url.isLocalFile():
        plain = QUrl.fromLocalFile(url.toLocalFile())
        if launcher(plain):
            return plain
    return None


class OriginalOpener(QObject):
    """Finds a hit's original off the GUI thread, then hands it to the system."""

    opened = Signal(QUrl)  # what the system was asked to open
    failed = Signal(object)  # the exception

    def __init__(self, ctx: UiContext, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._ctx = ctx
        # Tests put a recorder here instead of the system's viewer.
        self.launcher: Launcher = QDesktopServices.openUrl

    def open(self, base_id: str, result: SearchResult) -> None:
        service = self._ctx.service
        self._ctx.tasks.run(
            lambda: original_url(service, base_id, result),
            self._on_found,
            self._on_failed,
            owner=self,
        )

    def _on_found(self, url: QUrl) -> None:
        opened = launch(url, self.launcher)
        if opened is None:
            self._ctx.notifier.error(
                self.tr("No application could open the original"), url.toDisplayString()
            )
            self.failed.emit(None)
            return
        self.opened.emit(opened)

    def _on_failed(self, error: BaseException) -> None:
        self._ctx.notifier.failure(error)
        self.failed.emit(error)
