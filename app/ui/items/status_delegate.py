"""Paints the status column: a coloured badge, the running phase with its percent, and for
folders and sitemaps the share of their children that finished, or while they run, how far
they are with an ETA (napari style: the badge is painted over `super().paint()`, which draws
selection and focus). Colours come from `app.ui.theme`, picked for the view's palette."""

from __future__ import annotations

from collections import Counter

from PySide6.QtCore import (
    QCoreApplication,
    QEvent,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QRectF,
    QSize,
    Qt,
    Slot,
)
from PySide6.QtGui import QColor, QFontMetrics, QHelpEvent, QPainter, QPainterPath, QPalette
from PySide6.QtWidgets import (
    QAbstractItemView,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QToolTip,
    QWidget,
)

from app.knowledge.types import ItemPhase, ItemStatus
from app.ui import theme
from app.ui.items.item_model import Role, phase_label, recognising_text, status_label

_PAD_X = 7
_GAP = 6
_RUNNING = (ItemStatus.PREPARING, ItemStatus.PROCESSING)
_SELECTED_BAR_HEIGHT = 2.0


def badge_text(
    status: ItemStatus, phase: str | None, percent: float | None, ocr_pages: int | None = None
) -> str:
    """What the badge says: the status, or the running phase with its percent. A phase
    whose first percentage has not arrived says "Embedding…", not a misleading 0 %: small
    documents finish before the throttled progress reports a later one. A document waiting
    on text recognition says how many of its pages are read."""
    if status in _RUNNING and phase == ItemPhase.WAITING and ocr_pages:
        return recognising_text(percent, ocr_pages)
    if status is ItemStatus.COMPLETED and phase == ItemPhase.EMBEDDING:
        return vectors_pending_text(percent)
    if status in _RUNNING and phase:
        label = phase_label(phase)
        if percent is not None and round(percent) >= 1:
            return QCoreApplication.translate("StatusDelegate", "{0} {1}%").format(
                label, round(min(percent, 100.0))
            )
        return QCoreApplication.translate("StatusDelegate", "{0}…").format(label)
    return status_label(status)


def vectors_pending_text(percent: float | None) -> str:
    """A document searchable by full text whose vectors are still being computed (the
    vector stage): "Searchable · vectors 40%", unlike a running badge ("Embedding 40%"),
    which is not searchable yet."""
    if percent is not None and round(percent) >= 1:
        return QCoreApplication.translate("StatusDelegate", "Searchable · vectors {0}%").format(
            round(min(percent, 99.0))
        )
    return QCoreApplication.translate("StatusDelegate", "Searchable · vectors…")


def aggregate_text(counts: Counter[ItemStatus] | None) -> str:
    """ "12/40" for a folder: settled children of all children (deleting ones do not count)."""
    if not counts:
        return ""
    total = sum(n for s, n in counts.items() if s is not ItemStatus.DELETING)
    done = counts[ItemStatus.COMPLETED] + counts[ItemStatus.FAILED]
    text = f"{done}/{total}"
    if counts[ItemStatus.FAILED]:
        text += " · " + QCoreApplication.translate("StatusDelegate", "{0} failed").format(
            counts[ItemStatus.FAILED]
        )
    return text


def _status(value: object) -> ItemStatus | None:
    """Qt hands a StrEnum back as its plain string value."""
    try:
        return ItemStatus(str(value)) if value else None
    except ValueError:
        return None


def _counts(value: object) -> Counter[ItemStatus] | None:
    if not isinstance(value, dict) or not value:
        return None
    return Counter({ItemStatus(str(k)): int(n) for k, n in value.items()})


def _run(value: object, status: ItemStatus) -> dict[str, object] | None:
    """A running folder's progress line, if the progress watcher wrote one."""
    if status not in _RUNNING or not isinstance(value, dict) or not value.get("text"):
        return None
    return value


def _fraction(run: dict[str, object] | None, percent: object) -> float | None:
    """How much of the badge shows as done (0..1): a folder's run, else the item's percent
    once it is a real one (the same rule as the badge's text)."""
    if run is not None:
        value = run.get("fraction")
        return min(1.0, float(value)) if isinstance(value, int | float) and value > 0 else None
    if isinstance(percent, int | float) and round(percent) >= 1:
        return min(1.0, percent / 100)
    return None


class StatusDelegate(QStyledItemDelegate):
    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        theme.watcher().changed.connect(self._on_theme_changed)

    def paint(
        self,
        painter: QPainter,
        option: QStyleOptionViewItem,
        index: QModelIndex | QPersistentModelIndex,
    ) -> None:
        status = _status(index.data(Role.STATUS))
        if status is None:
            super().paint(painter, option, index)
            return
        plain = QStyleOptionViewItem(option)
        self.initStyleOption(plain, index)
        plain.text = ""  # the badge replaces the text; the style still paints the selection
        widget = option.widget
        style = widget.style() if isinstance(widget, QWidget) else None
        if style is not None:
            style.drawControl(QStyle.ControlElement.CE_ItemViewItem, plain, painter, widget)
        percent = index.data(Role.PROGRESS)
        run = _run(index.data(Role.RUN), status)
        text = badge_text(status, index.data(Role.PHASE), percent, index.data(Role.OCR_PAGES))
        selected = bool(option.state & QStyle.StateFlag.State_Selected)
        rect = QRectF(option.rect).adjusted(4, 3, -4, -3)
        painter.save()
        try:
            painter.setRenderHint(QPainter.RenderHint.Antialiasing)
            width = self._paint_badge(
                painter, rect, status, text, _fraction(run, percent), option, selected
            )
            rest = rect.adjusted(width + _GAP, 0, 0, 0)
            extra = self._extra_text(run, index, QFontMetrics(option.font), rest.width())
            if extra:
                role = QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.Text
                painter.setPen(option.palette.color(role))
                painter.drawText(rest, int(Qt.AlignmentFlag.AlignVCenter), extra)
        finally:
            painter.restore()

    def sizeHint(
        self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> QSize:
        hint = super().sizeHint(option, index)
        metrics = QFontMetrics(option.font)
        status = _status(index.data(Role.STATUS))
        if status is not None:
            text = badge_text(
                status,
                index.data(Role.PHASE),
                index.data(Role.PROGRESS),
                index.data(Role.OCR_PAGES),
            )
            run = _run(index.data(Role.RUN), status)
            extra = (
                str(run["short"]) if run else aggregate_text(_counts(index.data(Role.AGGREGATE)))
            )
            width = metrics.horizontalAdvance(text) + 2 * _PAD_X + 8
            if extra:
                width += _GAP + metrics.horizontalAdvance(extra)
            hint.setWidth(max(hint.width(), width))
        hint.setHeight(max(hint.height(), metrics.height() + 8))
        return hint

    def helpEvent(
        self,
        event: QHelpEvent,
        view: QAbstractItemView,
        option: QStyleOptionViewItem,
        index: QModelIndex | QPersistentModelIndex,
    ) -> bool:
        # A running folder's whole progress line, which the column may be too narrow for.
        status = _status(index.data(Role.STATUS))
        run = _run(index.data(Role.RUN), status) if status is not None else None
        if event.type() == QEvent.Type.ToolTip and run is not None:
            source = str(index.data(Qt.ItemDataRole.ToolTipRole) or "")
            QToolTip.showText(
                event.globalPos(), "\n".join(filter(None, [str(run["text"]), source])), view
            )
            return True
        return super().helpEvent(event, view, option, index)

    @Slot()
    def _on_theme_changed(self) -> None:
        view = self.parent()
        if isinstance(view, QAbstractItemView):
            view.viewport().update()

    @staticmethod
    def _extra_text(
        run: dict[str, object] | None,
        index: QModelIndex | QPersistentModelIndex,
        metrics: QFontMetrics,
        width: float,
    ) -> str:
        """Beside the badge: a running folder's progress line (shortened to fit), else how
        many of its children finished."""
        if run is None:
            return aggregate_text(_counts(index.data(Role.AGGREGATE)))
        for candidate in (str(run["text"]), str(run["short"])):
            if metrics.horizontalAdvance(candidate) <= width:
                return candidate
        return metrics.elidedText(str(run["short"]), Qt.TextElideMode.ElideRight, int(width))

    def _paint_badge(
        self,
        painter: QPainter,
        rect: QRectF,
        status: ItemStatus,
        text: str,
        fraction: float | None,
        option: QStyleOptionViewItem,
        selected: bool,
    ) -> float:
        metrics = QFontMetrics(option.font)
        width = min(rect.width(), metrics.horizontalAdvance(text) + 2 * _PAD_X)
        badge = QRectF(rect.left(), rect.top(), width, rect.height())
        colours = theme.badge(status, option.palette)
        path = QPainterPath()
        path.addRoundedRect(badge, badge.height() / 2, badge.height() / 2)
        if selected:
            # On the selection colour only the palette's own pair reads well: outline and
            # text in the highlighted-text colour, the done share thickening the bottom edge
            # (along its straight part), clear of the text.
            ink = option.palette.color(QPalette.ColorRole.HighlightedText)
            stroke = text_colour = ink
            if fraction is not None and status in _RUNNING:
                radius = badge.height() / 2
                done = QRectF(
                    badge.left() + radius,
                    badge.bottom() - _SELECTED_BAR_HEIGHT / 2,
                    (badge.width() - 2 * radius) * fraction,
                    _SELECTED_BAR_HEIGHT,
                )
                painter.fillRect(done, ink)
        else:
            stroke, text_colour = colours.stroke, colours.text
            painter.fillPath(path, colours.fill)
            if fraction is not None and status in _RUNNING:
                # The running share fills the badge from the left, like a progress bar.
                done = QRectF(badge.left(), badge.top(), badge.width() * fraction, badge.height())
                painter.save()
                painter.setClipRect(done)
                painter.fillPath(path, colours.bar)
                painter.restore()
        painter.setPen(QColor(stroke))
        painter.drawPath(path)
        painter.setPen(QColor(text_colour))
        painter.drawText(badge, int(Qt.AlignmentFlag.AlignCenter), text)
        return width
