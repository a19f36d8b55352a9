"""Shows a search hit inside its whole material, scrolled to it and highlighted.

The material is read off the GUI thread. Offsets in the engine count Python characters of
the UTF-8 material with "\\r\\n" as two; a Qt text document counts UTF-16 units and turns
every line end into one block separator. `load_material` converts once, on the worker.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import partial

from PySide6.QtCore import Qt, QTimer, Signal, Slot
from PySide6.QtGui import QColor, QFont, QGuiApplication, QTextCharFormat, QTextCursor
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QTextEdit,
    QVBoxLayout,
    QWidget,
)

from app.knowledge.service import KnowledgeService
from app.knowledge.types import ErrorCode, SearchResult, TroveError
from app.ui.context import UiContext
from app.ui.errors import describe
from app.ui.search.open_original import OriginalOpener
from app.ui.search.results_model import origin_of
from app.ui.search.snippet import Span, hit_spans, query_terms

# A longer material is shown as a window of this many characters around the hit: the
# whole of a book would make the text view slow to lay out.
MAX_VIEW_CHARS = 400_000
_LINE_END = re.compile(r"\r\n?")
_CHUNK_BACKGROUND = "#fff59d"
_HIT_BACKGROUND = "#ffb74d"
_HIGHLIGHT_TEXT = "#000000"
_MARKER_BACKGROUND = "#eceff1"
_MARKER_TEXT = "#546e7a"


def _display(text: str) -> str:
    return _LINE_END.sub("\n", text)


def qt_length(text: str) -> int:
    """Length in UTF-16 code units, the unit of Qt text positions."""
    return len(text.encode("utf-16-le")) // 2


@dataclass(frozen=True, slots=True)
class MaterialView:
    text: str  # what the viewer shows: the material (or a window of it), line ends "\n"
    start: int  # the hit in Qt positions of `text`
    end: int
    hits: tuple[Span, ...]  # query terms inside the hit, Qt positions of `text`
    partial: bool  # only a window of a very long material
    # The page marker lines put in front of each page of a paged material (PDF pages,
    # slides), Qt positions of `text` without their line end; not part of the material.
    markers: tuple[Span, ...] = ()


class _Layout:
    """Builds the shown text from pieces of the material, and page markers between them,
    keeping where each cut point of the material landed (in Qt positions)."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.length = 0  # Qt positions so far
        self.at: dict[int, int] = {}  # material offset of a cut point -> Qt position
        self.markers: list[Span] = []

    def marker(self, label: str) -> None:
        start = self.length
        self._add(label + "\n")
        self.markers.append((start, start + qt_length(label)))

    def piece(self, offset: int, text: str) -> None:
        self.at[offset] = self.length
        self._add(_display(text))

    def _add(self, text: str) -> None:
        self.parts.append(text)
        self.length += qt_length(text)


def load_material(
    service: KnowledgeService,
    base_id: str,
    result: SearchResult,
    query: str = "",
    limit: int = MAX_VIEW_CHARS,
    page_label: str = "Page {0}",
) -> MaterialView:
    """Read a hit's material and place the hit in it (runs on a worker thread). A paged
    material gets a marker line (`page_label` with the page number) before each page."""
    info = service.find_material(base_id, result.concept_id)
    if info is None:
        raise TroveError(
            ErrorCode.ITEM_NOT_FOUND,
            f"the document {result.concept_id!r} is no longer in the knowledge base",
        )
    path = service.material_file(base_id, result.concept_id)
    # newline="": the index counted "\r\n" as two characters.
    with path.open("r", encoding="utf-8", errors="replace", newline="") as fh:
        text = fh.read()
    start = min(max(result.char_start, 0), len(text))
    end = min(max(result.char_end, start), len(text))
    low, high = 0, len(text)
    if len(text) > limit:
        low = max(0, min(start - (limit - (end - start)) // 2, len(text) - limit))
        high = max(end, low + limit)
    # A one-page document needs no marker.
    pages = info.page_starts if len(info.page_starts) > 1 else ()
    marks = {offset: page for page, offset in enumerate(pages, start=1) if low <= offset < high}
    cuts = sorted({low, start, end, high, *marks})
    layout = _Layout()
    for cut, following in zip(cuts, [*cuts[1:], high], strict=True):
        if cut in marks:
            layout.marker(page_label.format(marks[cut]))
        layout.piece(cut, text[cut:following])

    def position(offset: int, *, closing: bool = False) -> int:
        # A range that closes where a page starts ends before that page's marker.
        below = [c for c in cuts if c < offset] if closing else []
        cut = max(below) if below else max(c for c in cuts if c <= offset)
        return layout.at[cut] + qt_length(_display(text[cut:offset]))

    chunk = text[start:end]
    hits = tuple(
        (position(start + s), position(start + e, closing=True))
        for s, e in hit_spans(chunk, query_terms(query))
    )
    return MaterialView(
        text="".join(layout.parts),
        start=layout.at[start],
        end=position(end, closing=True),
        hits=hits,
        partial=low > 0 or high < len(text),
        markers=tuple(layout.markers),
    )


def _highlight(
    document_cursor: QTextCursor,
    start: int,
    end: int,
    background: str,
    foreground: str = _HIGHLIGHT_TEXT,
) -> QTextEdit.ExtraSelection:
    cursor = QTextCursor(document_cursor)
    cursor.setPosition(start)
    cursor.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
    fmt = QTextCharFormat()
    fmt.setBackground(QColor(background))
    fmt.setForeground(QColor(foreground))
    selection = QTextEdit.ExtraSelection()
    selection.cursor = cursor
    selection.format = fmt
    return selection


class ChunkViewer(QDialog):
    """Non-modal: the person can keep searching while it is open; one viewer is reused."""

    loaded = Signal()
    loadFailed = Signal(object)

    def __init__(
        self, ctx: UiContext, opener: OriginalOpener, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self._ctx = ctx
        self._opener = opener
        self._generation = 0
        self._base_id = ""
        self._result: SearchResult | None = None
        self._view: MaterialView | None = None
        self.setObjectName("chunkViewer")
        self.setModal(False)
        self.setWindowTitle(self.tr("Passage"))
        self.resize(760, 560)

        self._header = QLabel(self)
        self._header.setObjectName("chunkViewerHeader")
        self._header.setTextFormat(Qt.TextFormat.PlainText)
        self._header.setWordWrap(True)
        font = QFont(self._header.font())
        font.setBold(True)
        self._header.setFont(font)
        self._origin = QLabel(self)
        self._origin.setObjectName("chunkViewerOrigin")
        self._origin.setTextFormat(Qt.TextFormat.PlainText)
        self._origin.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self._status = QLabel(self)
        self._status.setObjectName("chunkViewerStatus")
        self._status.setTextFormat(Qt.TextFormat.PlainText)
        self._status.setWordWrap(True)
        self._text = QPlainTextEdit(self)
        self._text.setObjectName("chunkViewerText")
        self._text.setReadOnly(True)
        self._text.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse
            | Qt.TextInteractionFlag.TextSelectableByKeyboard
        )
        self._buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        self._copy = QPushButton(self.tr("Copy passage"), self)
        self._copy.setObjectName("chunkViewerCopy")
        self._buttons.addButton(self._copy, QDialogButtonBox.ButtonRole.ActionRole)
        self._open = QPushButton(self.tr("Open original"), self)
        self._open.setObjectName("chunkViewerOpenOriginal")
        self._buttons.addButton(self._open, QDialogButtonBox.ButtonRole.ActionRole)

        layout = QVBoxLayout(self)
        layout.addWidget(self._header)
        layout.addWidget(self._origin)
        layout.addWidget(self._status)
        layout.addWidget(self._text, 1)
        layout.addWidget(self._buttons)
        self._connect_signals()

    def _connect_signals(self) -> None:
        self._buttons.rejected.connect(self.close)
        self._copy.clicked.connect(self._on_copy)
        self._open.clicked.connect(self._on_open_original)

    # -- public ------------------------------------------------------------------------

    def show_result(self, base_id: str, result: SearchResult, query: str = "") -> None:
        """Show the window now and the material once it is read."""
        self._generation += 1
        generation = self._generation
        self._base_id = base_id
        self._result = result
        self._view = None
        self.setWindowTitle(result.title)
        if result.page is not None:
            self._header.setText(self.tr("{0}, page {1}").format(result.title, result.page))
        else:
            self._header.setText(result.title)
        if result.page is not None and result.source.lower().endswith(".pdf"):
            self._open.setText(self.tr("Open at page {0}").format(result.page))
        else:
            self._open.setText(self.tr("Open original"))
        origin = origin_of(result.source)
        self._origin.setText(origin)
        self._origin.setVisible(bool(origin))
        self._set_status(self.tr("Loading the document\u2026"))
        self._text.clear()
        self._copy.setEnabled(False)
        self.show()
        self.raise_()
        self.activateWindow()
        service = self._ctx.service
        page_label = self.tr("Page {0}")
        self._ctx.tasks.run(
            lambda: load_material(service, base_id, result, query, page_label=page_label),
            partial(self._on_loaded, generation),
            partial(self._on_failed, generation),
            owner=self,
        )

    def current_result(self) -> SearchResult | None:
        return self._result

    def highlighted_range(self) -> tuple[int, int] | None:
        """The hit's [start, end) in the text view's document, once loaded."""
        return (self._view.start, self._view.end) if self._view is not None else None

    def highlighted_text(self) -> str:
        """The highlighted passage as shown (line ends "\\n"), without page markers."""
        if self._view is None:
            return ""
        parts: list[str] = []
        pos = self._view.start
        for start, end in self._view.markers:
            if start >= self._view.end:
                break
            if end < pos:
                continue
            parts.append(self._document_text(pos, start))
            pos = end + 1  # the marker's line end
        parts.append(self._document_text(pos, self._view.end))
        return "".join(parts)

    def page_markers(self) -> list[str]:
        """The page marker lines shown in the text, in order."""
        if self._view is None:
            return []
        return [self._document_text(start, end) for start, end in self._view.markers]

    def _document_text(self, start: int, end: int) -> str:
        if end <= start:
            return ""
        cursor = QTextCursor(self._text.document())
        cursor.setPosition(start)
        cursor.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
        return cursor.selectedText().replace("\u2029", "\n")

    def text_view(self) -> QPlainTextEdit:
        return self._text

    # -- slots -------------------------------------------------------------------------

    def _on_loaded(self, generation: int, view: MaterialView) -> None:
        if generation != self._generation:
            return  # another hit was opened meanwhile
        self._view = view
        self._text.setPlainText(view.text)
        base = self._text.textCursor()
        selections = [_highlight(base, view.start, view.end, _CHUNK_BACKGROUND)]
        selections.extend(_highlight(base, s, e, _HIT_BACKGROUND) for s, e in view.hits)
        selections.extend(
            _highlight(base, s, e, _MARKER_BACKGROUND, _MARKER_TEXT) for s, e in view.markers
        )
        self._text.setExtraSelections(selections)
        if view.partial:
            self._set_status(
                self.tr("This document is long; the part around the passage is shown.")
            )
        else:
            self._set_status("")
        self._copy.setEnabled(True)
        self._scroll_to_hit()
        # The first layout happens after the window is shown; centre again then.
        QTimer.singleShot(0, self, self._scroll_to_hit)
        self.loaded.emit()

    def _on_failed(self, generation: int, error: BaseException) -> None:
        if generation != self._generation:
            return
        headline, detail = describe(error)
        self._set_status(f"{headline}\n{detail}" if detail else headline)
        self.loadFailed.emit(error)

    @Slot()
    def _scroll_to_hit(self) -> None:
        if self._view is None:
            return
        cursor = QTextCursor(self._text.document())
        cursor.setPosition(self._view.start)
        self._text.setTextCursor(cursor)
        self._text.centerCursor()

    @Slot()
    def _on_open_original(self) -> None:
        if self._result is not None:
            self._opener.open(self._base_id, self._result)

    @Slot()
    def _on_copy(self) -> None:
        text = self.highlighted_text()
        if text:
            QGuiApplication.clipboard().setText(text)

    def _set_status(self, text: str) -> None:
        self._status.setText(text)
        self._status.setVisible(bool(text))
