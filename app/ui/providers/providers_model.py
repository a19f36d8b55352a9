"""Thin Qt models for the Providers dialog over plain records.

`ProviderEntry` is the dialog's copy of a provider record (app.providers.factory.
ProviderSettings, as `KnowledgeService.list_providers()` returns it: widgets may not import
app.providers). `ProvidersModel` lists them; `ModelChoicesModel` is the editable, checkable
list of one provider's model names (checked ones are saved).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Final, Protocol

from PySide6.QtCore import (
    QAbstractListModel,
    QCoreApplication,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
)
from PySide6.QtGui import QFont

Index = QModelIndex | QPersistentModelIndex

BUILTIN_KIND: Final = "local"
# The kinds a person can add; "local" is the built-in model, always present and read-only.
EDITABLE_KINDS: Final = ("openai", "ollama", "rerank")

ProviderIdRole: Final = Qt.ItemDataRole.UserRole + 1
EntryRole: Final = Qt.ItemDataRole.UserRole + 2


def kind_label(kind: str) -> str:
    """The translated name of a provider kind (an unknown kind is shown as it is stored)."""
    labels = {
        "openai": QCoreApplication.translate("ProviderKind", "OpenAI-compatible"),
        "ollama": QCoreApplication.translate("ProviderKind", "Ollama"),
        "rerank": QCoreApplication.translate("ProviderKind", "Rerank (/v1/rerank)"),
        BUILTIN_KIND: QCoreApplication.translate("ProviderKind", "Built-in (offline)"),
    }
    return labels.get(kind, kind)


class ProviderRecord(Protocol):
    """The parts of a provider record the dialog reads."""

    @property
    def id(self) -> str: ...

    @property
    def kind(self) -> str: ...

    @property
    def display_name(self) -> str: ...

    @property
    def base_url(self) -> str: ...

    @property
    def enabled(self) -> bool: ...

    @property
    def models(self) -> Sequence[str]: ...


@dataclass(frozen=True, slots=True)
class ProviderEntry:
    id: str
    kind: str
    display_name: str = ""
    base_url: str = ""
    models: tuple[str, ...] = ()
    enabled: bool = True

    @classmethod
    def from_record(cls, record: ProviderRecord) -> ProviderEntry:
        return cls(
            id=record.id,
            kind=record.kind,
            display_name=record.display_name,
            base_url=record.base_url,
            models=tuple(record.models),
            enabled=record.enabled,
        )

    @property
    def builtin(self) -> bool:
        return self.kind == BUILTIN_KIND

    @property
    def label(self) -> str:
        # The engine names the built-in provider in English; the window names it itself.
        if self.builtin:
            return kind_label(BUILTIN_KIND)
        return self.display_name or self.id


class ProvidersModel(QAbstractListModel):
    """Configured providers, then the built-in one. Reloaded as a whole: the list is short and
    changes only when the person saves or removes a provider."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._entries: list[ProviderEntry] = []

    def rowCount(self, parent: Index = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self._entries)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._entries):
            return None
        entry = self._entries[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            if not entry.enabled and not entry.builtin:
                return self.tr("{0} (off)").format(entry.label)
            return entry.label
        if role == Qt.ItemDataRole.ToolTipRole:
            return self._tooltip(entry)
        if role == Qt.ItemDataRole.FontRole and entry.builtin:
            font = QFont()
            font.setItalic(True)
            return font
        if role == ProviderIdRole:
            return entry.id
        if role == EntryRole:
            return entry
        return None

    def flags(self, index: Index) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable

    def set_entries(self, entries: Iterable[ProviderEntry]) -> None:
        self.beginResetModel()
        self._entries = list(entries)
        self.endResetModel()

    def entries(self) -> list[ProviderEntry]:
        return list(self._entries)

    def entry(self, row: int) -> ProviderEntry | None:
        return self._entries[row] if 0 <= row < len(self._entries) else None

    def row_of(self, provider_id: str) -> int:
        for row, entry in enumerate(self._entries):
            if entry.id == provider_id:
                return row
        return -1

    def _tooltip(self, entry: ProviderEntry) -> str:
        if entry.builtin:
            return self.tr("Runs on this computer; nothing to configure.")
        return self.tr("{0} at {1}").format(kind_label(entry.kind), entry.base_url)


@dataclass(slots=True)
class _Choice:
    name: str
    checked: bool


class ModelChoicesModel(QAbstractListModel):
    """A provider's model names with a check box each; the checked ones are offered to
    knowledge bases. Names come from the saved settings, a fetched list or typing."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._rows: list[_Choice] = []
        self._editable = True

    def rowCount(self, parent: Index = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self._rows)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._rows):
            return None
        row = self._rows[index.row()]
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.EditRole):
            return row.name
        if role == Qt.ItemDataRole.CheckStateRole:
            return Qt.CheckState.Checked if row.checked else Qt.CheckState.Unchecked
        return None

    def flags(self, index: Index) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        flags = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
        if self._editable:
            flags |= Qt.ItemFlag.ItemIsUserCheckable
        return flags

    def setData(self, index: Index, value: Any, role: int = Qt.ItemDataRole.EditRole) -> bool:
        if (
            not self._editable
            or role != Qt.ItemDataRole.CheckStateRole
            or not index.isValid()
            or not 0 <= index.row() < len(self._rows)
        ):
            return False
        checked = _is_checked(value)
        row = self._rows[index.row()]
        if row.checked != checked:
            row.checked = checked
            self.dataChanged.emit(index, index, [Qt.ItemDataRole.CheckStateRole])
        return True

    def set_editable(self, editable: bool) -> None:
        if editable == self._editable:
            return
        self._editable = editable
        if self._rows:
            self.dataChanged.emit(self.index(0), self.index(len(self._rows) - 1), [])

    def set_models(self, names: Iterable[str]) -> None:
        """Replace the list with a provider's saved models, all checked."""
        self.beginResetModel()
        self._rows = [_Choice(name, True) for name in _unique(names)]
        self.endResetModel()

    def merge(self, names: Iterable[str]) -> int:
        """Append the names not listed yet, unchecked; returns how many were new."""
        known = {row.name for row in self._rows}
        new = [name for name in _unique(names) if name not in known]
        if new:
            first = len(self._rows)
            self.beginInsertRows(QModelIndex(), first, first + len(new) - 1)
            self._rows.extend(_Choice(name, False) for name in new)
            self.endInsertRows()
        return len(new)

    def add(self, name: str) -> int:
        """Add (or check) one typed name; returns its row, or -1 for a blank name."""
        name = name.strip()
        if not name:
            return -1
        for row, choice in enumerate(self._rows):
            if choice.name == name:
                self.setData(self.index(row), Qt.CheckState.Checked, Qt.ItemDataRole.CheckStateRole)
                return row
        row = len(self._rows)
        self.beginInsertRows(QModelIndex(), row, row)
        self._rows.append(_Choice(name, True))
        self.endInsertRows()
        return row

    def names(self) -> list[str]:
        return [row.name for row in self._rows]

    def checked(self) -> list[str]:
        return [row.name for row in self._rows if row.checked]

    def name_at(self, row: int) -> str | None:
        return self._rows[row].name if 0 <= row < len(self._rows) else None


def _is_checked(value: Any) -> bool:
    if isinstance(value, Qt.CheckState):
        return value == Qt.CheckState.Checked
    return bool(value == Qt.CheckState.Checked.value)


def _unique(names: Iterable[str]) -> list[str]:
    seen: dict[str, None] = {}
    for name in names:
        name = name.strip()
        if name:
            seen.setdefault(name, None)
    return list(seen)
