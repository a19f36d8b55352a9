"""The proxy between the item model and the tree: sorting, the name filter, and items hidden
while their deletion can still be undone (with everything below them)."""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QObject, QPersistentModelIndex, QSortFilterProxyModel

from app.ui.items.item_model import Role

Index = QModelIndex | QPersistentModelIndex


class ItemFilterProxy(QSortFilterProxyModel):
    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._hidden: frozenset[str] = frozenset()

    def set_hidden(self, item_ids: frozenset[str]) -> None:
        if item_ids == self._hidden:
            return
        self.beginFilterChange()
        self._hidden = item_ids
        self.endFilterChange(QSortFilterProxyModel.Direction.Rows)

    def filterAcceptsRow(self, source_row: int, source_parent: Index) -> bool:
        if self._hidden and self._is_hidden(source_row, source_parent):
            return False
        return super().filterAcceptsRow(source_row, source_parent)

    def _is_hidden(self, source_row: int, source_parent: Index) -> bool:
        model = self.sourceModel()
        index = model.index(source_row, 0, source_parent)
        while index.isValid():
            if index.data(Role.ITEM_ID) in self._hidden:
                return True
            index = index.parent()
        return False
