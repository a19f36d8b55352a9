"""Paints the status column: a coloured badge, the running phase with its percent, and for
folders and sitemaps the share of their children that finished (napari style: the badge is
painted over `super().paint()`, which draws selection and focus)."""

from __future__ import annotations

from collections import Counter

from PySide6.QtCore import QCoreApplication, QModelIndex, QPersistentModelIndex, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QFontMetrics, QPainter, QPainterPath
from PySide6.QtWidgets import QStyle, QStyledItemDelegate, QStyleOptionViewItem, QWidget

from app.knowledge.types import ItemStatus
from app.ui.items.item_model import Role, phase_label, status_label

STATUS_COLOURS = {
    ItemStatus.PREPARING: QColor("#7a869a"),
    ItemStatus.PROCESSING: QColor("#2f6fdb"),
    ItemStatus.COMPLETED: QColor("#2e9d5b"),
    ItemStatus.FAILED: QColor("#d64545"),
    ItemStatus.DELETING: QColor("#d9822b"),
}

_PAD_X = 7
_GAP = 6


def badge_text(status: ItemStatus, phase: str | None, percent: float | None) -> str:
    """What the badge says: the status, or the running phase with its percent."""
    if status in (ItemStatus.PREPARING, ItemStatus.PROCESSING) and phase:
        label = phase_label(phase)
        if percent is not None and percent >= 0:
            return QCoreApplication.translate("StatusDelegate", "{0} {1}%").format(
                label, round(percent)
            )
        return label
    return status_label(status)


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


class StatusDelegate(QStyledItemDelegate):
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
        phase = index.data(Role.PHASE)
        percent = index.data(Role.PROGRESS)
        text = badge_text(status, phase, percent)
        rect = QRectF(option.rect).adjusted(4, 3, -4, -3)
        painter.save()
        try:
            painter.setRenderHint(QPainter.RenderHint.Antialiasing)
            width = self._paint_badge(painter, rect, status, text, percent, option)
            extra = aggregate_text(_counts(index.data(Role.AGGREGATE)))
            if extra:
                rest = rect.adjusted(width + _GAP, 0, 0, 0)
                painter.setPen(option.palette.text().color())
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
            text = badge_text(status, index.data(Role.PHASE), index.data(Role.PROGRESS))
            extra = aggregate_text(_counts(index.data(Role.AGGREGATE)))
            width = metrics.horizontalAdvance(text) + 2 * _PAD_X + 8
            if extra:
                width += _GAP + metrics.horizontalAdvance(extra)
            hint.setWidth(max(hint.width(), width))
        hint.setHeight(max(hint.height(), metrics.height() + 8))
        return hint

    def _paint_badge(
        self,
        painter: QPainter,
        rect: QRectF,
        status: ItemStatus,
        text: str,
        percent: float | None,
        option: QStyleOptionViewItem,
    ) -> float:
        metrics = QFontMetrics(option.font)
        width = min(rect.width(), metrics.horizontalAdvance(text) + 2 * _PAD_X)
        badge = QRectF(rect.left(), rect.top(), width, rect.height())
        colour = STATUS_COLOURS[status]
        path = QPainterPath()
        path.addRoundedRect(badge, badge.height() / 2, badge.height() / 2)
        fill = QColor(colour)
        fill.setAlpha(40)
        painter.fillPath(path, fill)
        if percent is not None and percent > 0 and status is ItemStatus.PROCESSING:
            # The running share fills the badge from the left, like a progress bar.
            done = QRectF(
                badge.left(), badge.top(), badge.width() * min(percent, 100) / 100, badge.height()
            )
            painter.save()
            painter.setClipRect(done)
            strong = QColor(colour)
            strong.setAlpha(90)
            painter.fillPath(path, strong)
            painter.restore()
        painter.setPen(colour)
        painter.drawPath(path)
        painter.setPen(colour.darker(130))
        painter.drawText(badge, int(Qt.AlignmentFlag.AlignCenter), text)
        return width
