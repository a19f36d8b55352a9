"""Gives a list room for its first rows inside the splitter pane that holds it.

The search view shares a vertical splitter with the base's content; at the window's
default size its share left one and a half results visible until the person found the
handle and dragged it. When results arrive, the pane grows until the first few rows fit,
taking height from the other panes, each of which keeps a share of its own.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QListView, QSplitter, QWidget

MIN_VISIBLE_ROWS = 4
# The other panes of the splitter keep at least this share of its height.
OTHERS_KEEP = 0.25


def rows_height(view: QListView, rows: int) -> int:
    """The height the first `rows` rows of `view` take."""
    model = view.model()
    count = min(rows, model.rowCount()) if model is not None else 0
    return sum(view.sizeHintForRow(row) + 2 * view.spacing() for row in range(count))


def visible_rows(view: QListView) -> int:
    """How many rows are wholly inside the view's viewport."""
    model = view.model()
    if model is None:
        return 0
    area = view.viewport().rect()
    return sum(
        1 for row in range(model.rowCount()) if area.contains(view.visualRect(model.index(row, 0)))
    )


def _pane_in_splitter(widget: QWidget) -> tuple[QSplitter, QWidget] | None:
    """The nearest vertical splitter above `widget`, and its pane that holds `widget`."""
    child: QWidget = widget
    parent = widget.parentWidget()
    while parent is not None:
        if isinstance(parent, QSplitter) and parent.orientation() is Qt.Orientation.Vertical:
            return parent, child
        child, parent = parent, parent.parentWidget()
    return None


def make_room(holder: QWidget, view: QListView, rows: int = MIN_VISIBLE_ROWS) -> bool:
    """Grow the splitter pane holding `holder` until `rows` rows of `view` fit; whether it
    grew. Nothing happens outside a vertical splitter or when they fit already."""
    found = _pane_in_splitter(holder)
    if found is None:
        return False
    splitter, pane = found
    missing = rows_height(view, rows) - view.viewport().height()
    if missing <= 0:
        return False
    sizes = splitter.sizes()
    index = splitter.indexOf(pane)
    floor = int(sum(sizes) * OTHERS_KEEP)
    for other in range(len(sizes)):
        if other == index or missing <= 0:
            continue
        widget = splitter.widget(other)
        least = widget.minimumSizeHint().height() if widget is not None else 0
        keep = max(floor, least)
        taken = max(0, min(sizes[other] - keep, missing))
        sizes[other] -= taken
        sizes[index] += taken
        missing -= taken
    if sizes == splitter.sizes():
        return False
    splitter.setSizes(sizes)
    return True
