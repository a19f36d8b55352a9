"""Paints one search result as rich text: a header line (rank, score, score kind, title,
page, an "OCR" tag for recognised text, and its base in a search of several bases), where
it came from, and the highlighted snippet."""

from __future__ import annotations

import html

from PySide6.QtCore import QModelIndex, QObject, QPersistentModelIndex, QRect, QSize
from PySide6.QtGui import QAbstractTextDocumentLayout, QPainter, QPalette, QTextDocument
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
)

from app.ui import theme
from app.ui.search.results_model import ResultRole

AnyIndex = QModelIndex | QPersistentModelIndex
_MARGIN = 6
_FALLBACK_WIDTH = 480


class ResultDelegate(QStyledItemDelegate):
    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)

    def row_html(
        self,
        index: AnyIndex,
        muted: str,
        *,
        selected: bool = False,
        palette: QPalette | None = None,
    ) -> str:
        """The rich text of one row; `muted` is the colour of secondary text. On a selected
        row the accent colours would fight the selection colour, so they give way to it."""
        kind = str(index.data(ResultRole.SCORE_KIND))
        accent = theme.score_colour(kind, palette or QApplication.palette()).name()
        kind_colour = muted if selected else accent
        rank = html.escape(self.tr("#{0}").format(index.data(ResultRole.RANK)))
        score = html.escape(str(index.data(ResultRole.SCORE_TEXT)))
        kind_text = html.escape(str(index.data(ResultRole.SCORE_KIND_TEXT)))
        title = html.escape(str(index.data(ResultRole.TITLE)))
        header = [
            f"<b>{rank}</b>",
            f'<span style="color:{kind_colour};">{score}&nbsp;{kind_text}</span>',
            f"<b>{title}</b>",
        ]
        page = index.data(ResultRole.PAGE)
        if page is not None:
            page_text = html.escape(self.tr("page {0}").format(page))
            header.append(f'<span style="color:{muted};">{page_text}</span>')
        if index.data(ResultRole.OCR):
            # Recognised text may hold misread characters: the person should know.
            tag = html.escape(self.tr("OCR"))
            tip = html.escape(self.tr("text recognised from a scan or picture"))
            header.append(f'<span style="color:{kind_colour};" title="{tip}"><b>[{tag}]</b></span>')
        base_name = str(index.data(ResultRole.BASE_NAME) or "")
        if base_name:
            base_text = html.escape(self.tr("in {0}").format(base_name))
            header.append(f'<span style="color:{muted};"><i>{base_text}</i></span>')
        parts = [f"<div>{'&nbsp;&nbsp;'.join(header)}</div>"]
        origin = str(index.data(ResultRole.ORIGIN) or "")
        if origin:
            parts.append(f'<div style="color:{muted};">{html.escape(origin)}</div>')
        parts.append(f"<div>{index.data(ResultRole.SNIPPET_HTML)}</div>")
        return "".join(parts)

    def _document(self, option: QStyleOptionViewItem, index: AnyIndex, width: int) -> QTextDocument:
        doc = QTextDocument()
        doc.setDocumentMargin(_MARGIN)
        doc.setDefaultFont(option.font)
        selected = bool(option.state & QStyle.StateFlag.State_Selected)
        muted = (
            option.palette.color(QPalette.ColorRole.HighlightedText)
            if selected
            else theme.muted_text(option.palette)
        ).name()
        doc.setHtml(self.row_html(index, muted, selected=selected, palette=option.palette))
        doc.setTextWidth(width)
        return doc

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: AnyIndex) -> None:
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        opt.text = ""  # the background and selection come from the style, the text from us
        widget = opt.widget
        style = widget.style() if widget is not None else QApplication.style()
        style.drawControl(QStyle.ControlElement.CE_ItemViewItem, opt, painter, widget)

        rect: QRect = opt.rect
        doc = self._document(opt, index, rect.width())
        selected = bool(opt.state & QStyle.StateFlag.State_Selected)
        text_role = QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.Text
        context = QAbstractTextDocumentLayout.PaintContext()
        context.palette.setColor(QPalette.ColorRole.Text, opt.palette.color(text_role))
        painter.save()
        painter.translate(rect.topLeft())
        painter.setClipRect(QRect(0, 0, rect.width(), rect.height()))
        doc.documentLayout().draw(painter, context)
        painter.restore()

    def sizeHint(self, option: QStyleOptionViewItem, index: AnyIndex) -> QSize:
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        width = self._available_width(opt)
        doc = self._document(opt, index, width)
        return QSize(width, int(doc.size().height()) + 1)

    @staticmethod
    def _available_width(option: QStyleOptionViewItem) -> int:
        # A list view asks for size hints without a row rectangle: rows span its viewport.
        view = option.widget
        if isinstance(view, QAbstractItemView) and view.viewport().width() > 0:
            return view.viewport().width()
        if option.rect.width() > 0:
            return option.rect.width()
        return _FALLBACK_WIDTH
