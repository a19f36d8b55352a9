"""Model pickers for a knowledge base: the configured providers' models grouped by provider.

A model id is `PROVIDER_ID:MODEL` (the form the engine resolves, see app/providers/factory.py).
Rows are built from the records `KnowledgeService.list_providers()` returns; group headers and
models of disabled providers are shown but cannot be chosen.

The built-in provider's group ("On this computer") lists the local models of
`KnowledgeService.list_models()` that serve the picker's purpose: the built-in model, the
installed ones, then the catalog's models not installed yet with their download size
("multilingual-e5-small — download 135 MB"). Choosing one of those does not choose it: the
picker stays on the previous model and asks for the download (`downloadRequested`); the
model is chosen once it is installed.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import Enum, IntEnum
from typing import Any, Protocol

import shiboken6
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

from app.knowledge.providers_config import EMBEDDING_KINDS, RERANK_KINDS
from app.knowledge.service import KnowledgeService, ModelKind, ModelListing, ModelState
from app.ui.context import UiContext
from app.ui.models import texts
from app.ui.models.alive import while_alive as while_alive

log = logging.getLogger(__name__)

BUILTIN_KIND = "local"

ModelIndex = QModelIndex | QPersistentModelIndex


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
    builtin: bool = False  # in the built-in provider's group
    available: bool = True  # False: the provider is disabled
    configured: bool = True  # False: a base's model that no configured provider offers
    installed: bool = False  # a model installed in the data folder (not the built-in one)
    # A catalog model not installed yet: about how much its download fetches.
    download_bytes: int | None = None
    local_group: bool = False  # the header of the group of local models
    listing: ModelListing | None = field(default=None, compare=False)

    @property
    def selectable(self) -> bool:
        return self.kind is RowKind.NONE or (self.kind is RowKind.MODEL and self.available)

    @property
    def needs_download(self) -> bool:
        return self.download_bytes is not None


@dataclass(frozen=True, slots=True)
class ModelChoices:
    """What the pickers offer: the providers and the local models (None: not read)."""

    providers: Sequence[ProviderInfo]
    local: Sequence[ModelListing] | None = None


def model_id(provider_id: str, model: str) -> str:
    return f"{provider_id}:{model}"


def serves(provider: ProviderInfo, purpose: Purpose) -> bool:
    kinds = EMBEDDING_KINDS if purpose is Purpose.EMBEDDING else RERANK_KINDS
    return provider.kind in kinds


def model_rows(
    providers: Sequence[ProviderInfo],
    purpose: Purpose,
    local: Sequence[ModelListing] | None = None,
) -> list[ModelRow]:
    """The "None" row, then a group per provider that serves `purpose`: enabled providers in
    the given order, the built-in model, then disabled providers. With `local` (the local
    models), the built-in provider's group lists those that serve `purpose` instead."""
    rows = [ModelRow(RowKind.NONE)]
    seen: set[str] = set()
    for provider in sorted(providers, key=_group_order):
        builtin = provider.kind == BUILTIN_KIND
        if builtin and local is not None and provider.id not in seen:
            seen.add(provider.id)
            rows.extend(local_rows(provider.id, local, purpose))
            continue
        if provider.id in seen or not serves(provider, purpose):
            continue
        seen.add(provider.id)
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


def local_rows(provider_id: str, local: Sequence[ModelListing], purpose: Purpose) -> list[ModelRow]:
    """The local group: its header, the built-in model, the installed models, then the
    catalog's not installed yet (none at all when no local model serves `purpose`)."""
    kind = ModelKind.EMBEDDING if purpose is Purpose.EMBEDDING else ModelKind.RERANK
    serving = [m for m in local if m.kind == kind]
    rows: list[ModelRow] = []
    for listing in serving:
        if listing.state in (ModelState.BUILT_IN, ModelState.INSTALLED):
            rows.append(_local_row(provider_id, listing))
    rows.extend(
        _local_row(provider_id, listing, download_bytes=texts.download_left(listing))
        for listing in serving
        if listing.state is ModelState.AVAILABLE and listing.in_catalog
    )
    if not rows:
        return []
    return [ModelRow(RowKind.HEADER, builtin=True, local_group=True), *rows]


def _local_row(
    provider_id: str, listing: ModelListing, *, download_bytes: int | None = None
) -> ModelRow:
    return ModelRow(
        RowKind.MODEL,
        model_id=model_id(provider_id, listing.id),
        name=listing.id,
        builtin=True,
        installed=listing.state is ModelState.INSTALLED,
        download_bytes=download_bytes,
        listing=listing,
    )


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
        if entry.kind is RowKind.MODEL and entry.download_bytes is not None:
            return self.tr("{0} — download {1}").format(
                entry.name, texts.size_text(entry.download_bytes)
            )
        if entry.kind is RowKind.MODEL:
            return entry.name
        return self._header_text(entry)

    def _header_text(self, entry: ModelRow) -> str:
        if not entry.configured:
            return self.tr("Not configured")
        if entry.local_group:
            return self.tr("On this computer (offline)")
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
        if entry.needs_download:
            return self.tr("Not on this computer yet: choosing it offers to download it.")
        if entry.kind is RowKind.MODEL and entry.listing is not None:
            summary = texts.summary_text(entry.listing)
            return f"{entry.model_id}\n{summary}" if summary else entry.model_id
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
    # the person chose a model that is not installed (its id, "local:<id>"); the picker
    # stayed on the model chosen before
    downloadRequested = Signal(str)

    def __init__(self, purpose: Purpose, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.purpose = purpose
        self._list = ModelListModel(purpose, self)
        self._providers: list[ProviderInfo] = []
        self._local: list[ModelListing] | None = None
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
        self.set_choices(ModelChoices(providers, self._local))

    def set_choices(self, choices: ModelChoices) -> None:
        """List the providers' models and the local ones; the current choice stays chosen."""
        if not shiboken6.isValid(self):
            return  # the list arrived after the window (and this picker) closed
        self._providers = list(choices.providers)
        self._local = list(choices.local) if choices.local is not None else None
        try:
            self._rebuild(self.current_model())
        except RuntimeError as exc:
            # Closed while the list was on its way: a window's teardown can delete the C++
            # side of its children before their wrappers say so (isValid still true).
            if "already deleted" not in str(exc):
                raise

    def local_listing(self, model: str) -> ModelListing | None:
        """The local model a row of this id shows, if any."""
        row = self._list.row_of(model)
        return self._list.rows[row].listing if row >= 0 else None

    def is_installed(self, model: str) -> bool:
        """Whether `model` is listed as one that can be chosen now (not one to download)."""
        row = self._list.row_of(model)
        return row >= 0 and not self._list.rows[row].needs_download

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
            and not r.needs_download
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
        entry = self._list.rows[row]
        if entry.builtin and not entry.installed and not entry.needs_download:
            return self.tr("Built-in offline model")
        if entry.builtin:
            return self.tr("{0} (on this computer)").format(entry.name)
        return str(self._list.data(self._list.index(row), ModelListModel.CHOSEN_TEXT_ROLE))

    def _rebuild(self, keep: str | None) -> None:
        rows = model_rows(self._providers, self.purpose, self._local)
        if keep and not any(
            r.kind is RowKind.MODEL and r.model_id == keep and not r.needs_download for r in rows
        ):
            rows = [r for r in rows if r.model_id != keep]  # chosen, so never "to download"
            rows.extend(unconfigured_rows(keep))
        self.blockSignals(True)
        try:
            self._list.set_rows(rows)
            self.setCurrentIndex(self._list.row_of(keep))
        finally:
            self.blockSignals(False)
        self._on_index_changed(self.currentIndex())

    @Slot(int)
    def _on_index_changed(self, index: int) -> None:
        rows = self._list.rows
        if 0 <= index < len(rows) and rows[index].needs_download:
            # Not installed: stay on the previous model and ask for the download instead.
            self.blockSignals(True)
            try:
                self.setCurrentIndex(self._list.row_of(self._last))
            finally:
                self.blockSignals(False)
            self.downloadRequested.emit(rows[index].model_id)
            return
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


def load_choices(service: KnowledgeService) -> ModelChoices:
    """The providers and the local models (runs off the GUI thread). A failure to read the
    local models leaves the providers' models choosable."""
    providers = service.list_providers()
    try:
        local = service.list_models()
    except Exception:  # the pickers still work without them; the Models dialog says why
        log.warning("the local models could not be listed", exc_info=True)
        local = None
    return ModelChoices(providers, local)


class ProviderLoader(QObject):
    """Loads the providers and the local models off the GUI thread; answers only the latest
    request."""

    # ModelChoices
    loaded = Signal(object)
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
            lambda: load_choices(service),
            while_alive(self, lambda choices: self._on_done(generation, choices)),
            while_alive(self, lambda exc: self._on_error(generation, exc)),
            owner=self,
        )

    def _on_done(self, generation: int, choices: ModelChoices) -> None:
        if generation == self._generation:
            self.loaded.emit(choices)

    def _on_error(self, generation: int, exc: BaseException) -> None:
        if generation == self._generation:
            self.failed.emit(exc)
