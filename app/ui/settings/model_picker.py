"""Model pickers for a knowledge base: the configured providers' models grouped by provider.

A model id is `PROVIDER_ID:MODEL` (the form the engine resolves, see app/providers/factory.py).
Rows are built from the records `KnowledgeService.list_providers()` returns; group headers and
models of disabled providers are shown but cannot be chosen.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import Enum, IntEnum
from typing import Any, Protocol, TypeVar

from PySide6.QtCore import (
    QAbstractListModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
    Signal,
    Slot,
)
from PySide6.QtGui import QFont, QPaintEvent
from PySide6.QtWidgets import (
    QComboBox,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionComboBox,
    QStyleOptionViewItem,
    QStylePainter,
    QWidget,
)
from shiboken6 import isValid

from app.knowledge.providers_config import EMBEDDING_KINDS, RERANK_KINDS
from app.ui.context import UiContext

BUILTIN_KIND = "local"

ModelIndex = QModelIndex | QPersistentModelIndex
T = TypeVar("T")


def while_alive(owner: QObject, callback: Callable[[T], None]) -> Callable[[T], None]:
    """Wraps a background call's callback so it is dropped once `owner` has been deleted
    (a dialog may close before the call it started returns)."""

    def call(value: T) -> None:
        if isValid(owner):
            callback(value)

    return call


class ProviderInfo(Protocol):
    """The parts of a provider record (app.providers.factory.ProviderSettings) pickers read."""

    @property
    def id(self) -> str: ...

    @property
    def kind(self) -> str: ...

    @property
    def label(self) -> str: ...

    @property
    def enabled(self) -> bool: ...

    @property
    def models(self) -> Sequence[str]: ...


class Purpose(Enum):
    EMBEDDING = "embedding"
    RERANK = "rerank"


class RowKind(IntEnum):
    NONE = 0  # "no model"
    HEADER = 1  # a provider's name
    MODEL = 2
    EMPTY = 3  # a provider that lists no models


@dataclass(frozen=True, slots=True)
class ModelRow:
    kind: RowKind
    model_id: str = ""
    name: str = ""  # model name (MODEL) or provider label (HEADER)
    builtin: bool = False
    available: bool = True  # False: the provider is disabled
    configured: bool = True  # False: a base's model that no configured provider offers

    @property
    def selectable(self) -> bool:
        return self.kind is RowKind.NONE or (self.kind is RowKind.MODEL and self.available)


def model_id(provider_id: str, model: str) -> str:
    return f"{provider_id}:{model}"


def serves(provider: ProviderInfo, purpose: Purpose) -> bool:
    kinds = EMBEDDING_KINDS if purpose is Purpose.EMBEDDING else RERANK_KINDS
    return provider.kind in kinds


def model_rows(providers: Sequence[ProviderInfo], purpose: Purpose) -> list[ModelRow]:
    """The "None" row, then a group per provider that serves `purpose`: enabled providers in
    the given order, the built-in model, then disabled providers."""
    rows = [ModelRow(RowKind.NONE)]
    seen: set[str] = set()
    for provider in sorted(providers, key=_group_order):
        if provider.id in seen or not serves(provider, purpose):
            continue
        seen.add(provider.id)
        builtin = provider.kind == BUILTIN_KIND
        available = provider.enabled or builtin
        rows.append(
            ModelRow(RowKind.HEADER, name=provider.label, builtin=builtin, available=available)
        )
        if not provider.models:
            rows.append(ModelRow(RowKind.EMPTY, available=False))
        rows.extend(
            ModelRow(
                RowKind.MODEL,
                model_id=model_id(provider.id, name),
                name=name,
                builtin=builtin,
                available=available,
            )
            for name in dict.fromkeys(provider.models)
        )
    return rows


def _group_order(provider: ProviderInfo) -> int:
    if provider.kind == BUILTIN_KIND:
        return 1
    return 0 if provider.enabled else 2


def unconfigured_rows(model: str) -> list[ModelRow]:
    """A group holding a model a base uses that no configured provider lists."""
    return [
        ModelRow(RowKind.HEADER, configured=False),
        ModelRow(RowKind.MODEL, model_id=model, name=model, configured=False),
    ]


class ModelListModel(QAbstractListModel):
    """A flat list of picker rows; headers and unavailable rows are disabled."""

    MODEL_ID_ROLE = Qt.ItemDataRole.UserRole
    ROW_KIND_ROLE = Qt.ItemDataRole.UserRole + 1
    # The text the closed combo box shows: model and provider together.
    CHOSEN_TEXT_ROLE = Qt.ItemDataRole.UserRole + 2

    def __init__(self, purpose: Purpose, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.purpose = purpose
        self._rows: list[ModelRow] = [ModelRow(RowKind.NONE)]

    @property
    def rows(self) -> list[ModelRow]:
        return list(self._rows)

    def set_rows(self, rows: Sequence[ModelRow]) -> None:
        self.beginResetModel()
        self._rows = list(rows)
        self.endResetModel()

    def row_of(self, model: str | None) -> int:
        """The row of a model id ("" or None: the "None" row); -1 when it is not listed."""
        for row, entry in enumerate(self._rows):
            if model and entry.kind is RowKind.MODEL and entry.model_id == model:
                return row
            if not model and entry.kind is RowKind.NONE:
                return row
        return -1

    def rowCount(self, parent: ModelIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self._rows)

    def flags(self, index: ModelIndex) -> Qt.ItemFlag:
        if not self._valid(index):
            return Qt.ItemFlag.NoItemFlags
        if self._rows[index.row()].selectable:
            return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
        return Qt.ItemFlag.NoItemFlags

    def data(self, index: ModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not self._valid(index):
            return None
        row = index.row()
        entry = self._rows[row]
        if role == Qt.ItemDataRole.DisplayRole:
            return self._text(entry)
        if role == Qt.ItemDataRole.ToolTipRole:
            return self._tooltip(entry)
        if role == Qt.ItemDataRole.FontRole and entry.kind is RowKind.HEADER:
            font = QFont()
            font.setBold(True)
            return font
        if role == self.MODEL_ID_ROLE:
            if entry.kind is RowKind.NONE:
                return ""
            return entry.model_id if entry.kind is RowKind.MODEL else None
        if role == self.ROW_KIND_ROLE:
            return int(entry.kind)
        if role == self.CHOSEN_TEXT_ROLE:
            return self._chosen_text(row, entry)
        return None

    def _valid(self, index: ModelIndex) -> bool:
        return index.isValid() and 0 <= index.row() < len(self._rows) and index.column() == 0

    def _text(self, entry: ModelRow) -> str:
        if entry.kind is RowKind.NONE:
            if self.purpose is Purpose.EMBEDDING:
                return self.tr("None (full-text search only)")
            return self.tr("None")
        if entry.kind is RowKind.EMPTY:
            return self.tr("No models listed")
        if entry.kind is RowKind.MODEL:
            return entry.name
        return self._header_text(entry)

    def _header_text(self, entry: ModelRow) -> str:
        if not entry.configured:
            return self.tr("Not configured")
        label = self.tr("Built-in (offline)") if entry.builtin else entry.name
        if not entry.available:
            return self.tr("{0} (disabled)").format(label)
        return label

    def _tooltip(self, entry: ModelRow) -> str | None:
        if entry.kind is RowKind.EMPTY:
            return self.tr("Add model names to this provider in the provider settings.")
        if not entry.available:
            return self.tr("This provider is disabled in the provider settings.")
        if not entry.configured:
            return self.tr("No configured provider offers this model.")
        if entry.kind is RowKind.MODEL:
            return entry.model_id
        return None

    def _chosen_text(self, row: int, entry: ModelRow) -> str:
        if entry.kind is not RowKind.MODEL:
            return self._text(entry)
        header = next(
            (r for r in reversed(self._rows[:row]) if r.kind is RowKind.HEADER),
            None,
        )
        if header is None:
            return entry.name
        return self.tr("{0} — {1}").format(entry.name, self._header_text(header))


class _IndentDelegate(QStyledItemDelegate):
    """Indents model rows under their provider's header in the popup."""

    INDENT = 16

    def initStyleOption(self, option: QStyleOptionViewItem, index: ModelIndex) -> None:
        super().initStyleOption(option, index)
        kind = index.data(ModelListModel.ROW_KIND_ROLE)
        if kind in (RowKind.MODEL, RowKind.EMPTY):
            option.rect.adjust(self.INDENT, 0, 0, 0)


class ModelPicker(QComboBox):
    """Chooses an embedding or rerank model, or none."""

    # the chosen model id, or None for "no model"
    modelChanged = Signal(object)

    def __init__(self, purpose: Purpose, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.purpose = purpose
        self._list = ModelListModel(purpose, self)
        self._providers: list[ProviderInfo] = []
        self._last: str | None = None
        self.setModel(self._list)
        self.setItemDelegate(_IndentDelegate(self))
        self.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self._connect_signals()

    def _connect_signals(self) -> None:
        self.currentIndexChanged.connect(self._on_index_changed)

    @property
    def list_model(self) -> ModelListModel:
        return self._list

    def current_model(self) -> str | None:
        value = self.currentData(ModelListModel.MODEL_ID_ROLE)
        return value if isinstance(value, str) and value else None

    def set_providers(self, providers: Sequence[ProviderInfo]) -> None:
        """List these providers' models; the current choice stays chosen."""
        self._providers = list(providers)
        self._rebuild(self.current_model())

    def set_current_model(self, model: str | None) -> None:
        """Choose a model id (None or "": no model); an id no provider lists is added apart."""
        if self._list.row_of(model) < 0:
            self._rebuild(model)
        else:
            self.setCurrentIndex(self._list.row_of(model))

    def available_models(self, *, include_builtin: bool = True) -> list[str]:
        """Model ids that can be chosen, in list order."""
        return [
            r.model_id
            for r in self._list.rows
            if r.kind is RowKind.MODEL
            and r.selectable
            and r.configured
            and (include_builtin or not r.builtin)
        ]

    def chosen_text(self) -> str:
        return str(self.currentData(ModelListModel.CHOSEN_TEXT_ROLE) or "")

    def label_of(self, model: str | None) -> str:
        """How a person knows a model id: its name and provider, the built-in model by
        that name, no model as such; an id no provider lists, as it is."""
        row = self._list.row_of(model)
        if not model:
            if self.purpose is Purpose.EMBEDDING:
                return self.tr("None (full-text only)")
            return self.tr("None")
        if row < 0:
            return model
        if self._list.rows[row].builtin:
            return self.tr("Built-in offline model")
        return str(self._list.data(self._list.index(row), ModelListModel.CHOSEN_TEXT_ROLE))

    def _rebuild(self, keep: str | None) -> None:
        rows = model_rows(self._providers, self.purpose)
        if keep and not any(r.kind is RowKind.MODEL and r.model_id == keep for r in rows):
            rows.extend(unconfigured_rows(keep))
        self.blockSignals(True)
        try:
            self._list.set_rows(rows)
            self.setCurrentIndex(self._list.row_of(keep))
        finally:
            self.blockSignals(False)
        self._on_index_changed(self.currentIndex())

    @Slot(int)
    def _on_index_changed(self, _index: int) -> None:
        model = self.current_model()
        if model != self._last:
            self._last = model
            self.modelChanged.emit(model)

    def paintEvent(self, event: QPaintEvent) -> None:
        # The closed box names the provider too: two providers may serve a model of one name.
        painter = QStylePainter(self)
        option = QStyleOptionComboBox()
        self.initStyleOption(option)
        option.currentText = self.chosen_text()
        painter.drawComplexControl(QStyle.ComplexControl.CC_ComboBox, option)
        painter.drawControl(QStyle.ControlElement.CE_ComboBoxLabel, option)


class ProviderLoader(QObject):
    """Loads the provider list off the GUI thread; answers only the latest request."""

    loaded = Signal(list)
    failed = Signal(object)

    def __init__(self, ctx: UiContext, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._ctx = ctx
        self._generation = 0

    def load(self) -> None:
        self._generation += 1
        generation = self._generation
        service = self._ctx.service
        self._ctx.tasks.run(
            service.list_providers,
            while_alive(self, lambda providers: self._on_done(generation, providers)),
            while_alive(self, lambda exc: self._on_error(generation, exc)),
        )

    def _on_done(self, generation: int, providers: list[Any]) -> None:
        if generation == self._generation:
            self.loaded.emit(providers)

    def _on_error(self, generation: int, exc: BaseException) -> None:
        if generation == self._generation:
            self.failed.emit(exc)
