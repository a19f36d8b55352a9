"""Shows how an item was chunked: every chunk with its position, loaded off the GUI thread."""

from __future__ import annotations

import html

from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QTextBrowser, QVBoxLayout, QWidget

from app.knowledge.types import Item, StoredChunk
from app.ui import errors, theme
from app.ui.context import UiContext


class ChunksDialog(QDialog):
    def __init__(self, ctx: UiContext, item: Item, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("chunksDialog")
        self.setWindowTitle(self.tr("Chunks of {0}").format(item.title))
        self._summary = QLabel(self.tr("Loading…"), self)
        self._summary.setObjectName("chunksSummary")
        self._text = QTextBrowser(self)
        self._text.setObjectName("chunksText")
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self._summary)
        layout.addWidget(self._text, 1)
        layout.addWidget(buttons)
        self.resize(720, 560)
        ctx.tasks.run(
            lambda: ctx.service.item_chunks(item.base_id, item.id),
            self._on_loaded,
            self._on_error,
            owner=self,
        )

    def _on_loaded(self, chunks: list[StoredChunk]) -> None:
        self._summary.setText(self.tr("%n chunk(s)", "", len(chunks)))
        parts = []
        for chunk in chunks:
            where = self.tr("Chunk {0} · characters {1}–{2}").format(
                chunk.seq + 1, chunk.char_start, chunk.char_end
            )
            if chunk.page is not None:
                where += " · " + self.tr("page {0}").format(chunk.page)
            parts.append(
                f"<p style='color:{theme.message_colour('heading').name()}'>"
                f"<b>{html.escape(where)}</b></p>"
                f"<pre style='white-space:pre-wrap'>{html.escape(chunk.text)}</pre>"
            )
        self._text.setHtml("<hr>".join(parts))

    def _on_error(self, exc: BaseException) -> None:
        title, detail = errors.describe(exc)
        self._summary.setText(f"{title}: {detail}")
