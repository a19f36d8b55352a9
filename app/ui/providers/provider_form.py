"""The form of one provider: kind, name, id, base URL, API key, models, and the two network
probes (fetch models, test connection) that run as coroutines on the window's event loop.

A stored key never comes back to the window: the key field starts empty, and an empty field
on saving keeps the stored key. Its placeholder says a key is stored only when the keychain
holds one for the provider (asked off the GUI thread). Probes of a saved provider use its stored key unless one is
typed; the engine reads it (KnowledgeService.probe_models / probe_connection).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Final

import shiboken6
from PySide6.QtCore import Qt, QUrl, Signal, Slot
from PySide6.QtGui import QStandardItemModel
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListView,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.knowledge.types import ConnectionOk, ErrorCode, TroveError
from app.ui import theme
from app.ui.context import UiContext
from app.ui.errors import describe, explain
from app.ui.providers.probe_runner import NoEventLoop, ProbeRunner
from app.ui.providers.providers_model import (
    BUILTIN_KIND,
    EDITABLE_KINDS,
    ModelChoicesModel,
    ProviderEntry,
    kind_label,
)

RESERVED_IDS: Final = frozenset({BUILTIN_KIND})
# Probe errors whose own headline says what is wrong; the rest get the probe's headline.
# A 404 for the model list (MODEL_NOT_AVAILABLE) means "no list here", not "no such model".
FETCH_SPECIFIC_ERRORS: Final = frozenset(
    {ErrorCode.PROVIDER_AUTH_FAILED, ErrorCode.INVALID_ARGUMENT}
)
TEST_SPECIFIC_ERRORS: Final = FETCH_SPECIFIC_ERRORS | {ErrorCode.MODEL_NOT_AVAILABLE}
_ID_SEPARATORS = re.compile(r"[\s:]+")


@dataclass(frozen=True, slots=True)
class ProviderDraft:
    """What the form would save."""

    provider_id: str
    kind: str
    display_name: str
    base_url: str
    models: tuple[str, ...]
    enabled: bool
    key: str | None  # None: keep the stored key


def suggest_id(name: str) -> str:
    """A provider id from a display name: model ids are `ID:MODEL`, so no ':' or spaces."""
    return _ID_SEPARATORS.sub("-", name.strip().lower()).strip("-")


def is_http_url(text: str) -> bool:
    url = QUrl(text.strip(), QUrl.ParsingMode.StrictMode)
    return url.isValid() and url.scheme() in ("http", "https") and bool(url.host())


class ProviderForm(QWidget):
    # a provider's settings were stored (its id); the list should reload
    saved = Signal(str)
    # a probe ended: True on success (tests and the dialog wait on it)
    probeFinished = Signal(bool)
    # the keychain said whether it holds a key for the shown provider
    keyStateKnown = Signal(bool)

    def __init__(self, ctx: UiContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("providerForm")
        self._ctx = ctx
        self._entry: ProviderEntry | None = None
        self._existing_ids: frozenset[str] = frozenset()
        self._id_edited = False
        self._saving = False
        # Whether the keychain holds a key for the shown provider; None until it answers.
        self._key_stored: bool | None = None
        self._runner = ProbeRunner(self)
        self.models = ModelChoicesModel(self)
        self._build()
        self._connect_signals()
        self.load(None)

    # -- building ------------------------------------------------------------------------

    def _build(self) -> None:
        self.builtin_note = QLabel(
            self.tr(
                "The built-in model runs on this computer without a network connection. "
                "It needs no settings."
            )
        )
        self.builtin_note.setObjectName("builtinNote")
        self.builtin_note.setWordWrap(True)

        self.kind_combo = QComboBox()
        self.kind_combo.setObjectName("providerKind")
        for kind in (*EDITABLE_KINDS, BUILTIN_KIND):
            self.kind_combo.addItem(kind_label(kind), kind)
        builtin_item = self._combo_items().item(self.kind_combo.count() - 1)
        builtin_item.setEnabled(False)  # shown for the built-in provider, never chosen

        self.name_edit = QLineEdit()
        self.name_edit.setObjectName("providerName")
        self.name_edit.setPlaceholderText(self.tr("e.g. SiliconFlow"))
        self.id_edit = QLineEdit()
        self.id_edit.setObjectName("providerId")
        self.id_edit.setToolTip(self.tr("Knowledge bases name this provider's models as ID:MODEL."))
        self.url_edit = QLineEdit()
        self.url_edit.setObjectName("providerBaseUrl")
        self.key_edit = QLineEdit()
        self.key_edit.setObjectName("providerKey")
        self.key_edit.setEchoMode(QLineEdit.EchoMode.Password)
        self.enabled_check = QCheckBox(self.tr("Offer this provider's models to knowledge bases"))
        self.enabled_check.setObjectName("providerEnabled")

        fields = QFormLayout()
        fields.addRow(self.tr("Kind"), self.kind_combo)
        fields.addRow(self.tr("Name"), self.name_edit)
        fields.addRow(self.tr("ID"), self.id_edit)
        fields.addRow(self.tr("Base URL"), self.url_edit)
        fields.addRow(self.tr("API key"), self.key_edit)
        fields.addRow("", self.enabled_check)

        self.models_view = QListView()
        self.models_view.setObjectName("providerModels")
        self.models_view.setModel(self.models)
        self.models_view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.new_model_edit = QLineEdit()
        self.new_model_edit.setObjectName("newModelEdit")
        self.new_model_edit.setPlaceholderText(self.tr("Type a model name"))
        self.add_model_button = QPushButton(self.tr("Add model"))
        self.add_model_button.setObjectName("addModelButton")
        add_row = QHBoxLayout()
        add_row.addWidget(self.new_model_edit, 1)
        add_row.addWidget(self.add_model_button)

        self.fetch_button = QPushButton(self.tr("Fetch models"))
        self.fetch_button.setObjectName("fetchModelsButton")
        self.test_button = QPushButton(self.tr("Test connection"))
        self.test_button.setObjectName("testConnectionButton")
        self.save_button = QPushButton(self.tr("Save"))
        self.save_button.setObjectName("saveProviderButton")
        for button in (
            self.add_model_button,
            self.fetch_button,
            self.test_button,
            self.save_button,
        ):
            # Enter in a field must not press a button (or close the dialog) behind its back.
            button.setAutoDefault(False)
        actions = QHBoxLayout()
        actions.addWidget(self.fetch_button)
        actions.addWidget(self.test_button)
        actions.addStretch(1)
        actions.addWidget(self.save_button)

        self.message = QLabel()
        self.message.setObjectName("providerMessage")
        self.message.setWordWrap(True)
        self.message.setTextFormat(Qt.TextFormat.PlainText)  # server text is never markup
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        models_label = QLabel(self.tr("Models (checked ones are offered to knowledge bases)"))
        models_label.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.builtin_note)
        layout.addLayout(fields)
        layout.addWidget(models_label)
        layout.addWidget(self.models_view, 1)
        layout.addLayout(add_row)
        layout.addLayout(actions)
        layout.addWidget(self.message)

    def _combo_items(self) -> QStandardItemModel:
        model = self.kind_combo.model()
        assert isinstance(model, QStandardItemModel)  # QComboBox's own model
        return model

    def _connect_signals(self) -> None:
        self.kind_combo.activated.connect(self._on_kind_chosen)
        self.name_edit.textEdited.connect(self._on_name_edited)
        self.id_edit.textEdited.connect(self._on_id_edited)
        self.url_edit.textEdited.connect(self._on_connection_edited)
        self.key_edit.textEdited.connect(self._on_connection_edited)
        self.add_model_button.clicked.connect(self._on_add_model)
        self.new_model_edit.returnPressed.connect(self._on_add_model)
        self.fetch_button.clicked.connect(self.fetch_models)
        self.test_button.clicked.connect(self.test_connection)
        self.save_button.clicked.connect(self.save)
        self._runner.busyChanged.connect(self._on_busy_changed)

    # -- state ---------------------------------------------------------------------------

    @property
    def entry(self) -> ProviderEntry | None:
        """The saved provider being edited; None while adding a new one."""
        return self._entry

    @property
    def probing(self) -> bool:
        return self._runner.busy

    def set_existing_ids(self, ids: Iterable[str]) -> None:
        """Ids already taken, so adding a provider cannot overwrite another one."""
        self._existing_ids = frozenset(ids)

    def load(self, entry: ProviderEntry | None, *, keep_message: bool = False) -> None:
        """Show a saved provider, or an empty form for a new one (entry None)."""
        self._runner.cancel()
        self._entry = entry
        self._id_edited = entry is not None
        kind = entry.kind if entry is not None else EDITABLE_KINDS[0]
        index = self.kind_combo.findData(kind)
        if index < 0:  # a kind from a newer version: shown as stored, read-only
            self.kind_combo.addItem(kind_label(kind), kind)
            index = self.kind_combo.count() - 1
        self.kind_combo.setCurrentIndex(index)
        if entry is None:
            self.name_edit.clear()
        else:
            self.name_edit.setText(entry.label if entry.builtin else entry.display_name)
        self.id_edit.setText(entry.id if entry is not None else "")
        self.url_edit.setText(entry.base_url if entry is not None else "")
        self.key_edit.clear()
        self._key_stored = None
        self.enabled_check.setChecked(entry.enabled if entry is not None else True)
        self.new_model_edit.clear()
        self.models.set_models(entry.models if entry is not None else ())
        self._update_placeholders()
        self._update_enabled()
        if not keep_message:
            self._clear_message()
        if entry is not None and not self._read_only():
            self._check_stored_key(entry.id)

    def draft(self) -> ProviderDraft:
        key = self.key_edit.text().strip()
        return ProviderDraft(
            provider_id=self.id_edit.text().strip(),
            kind=str(self.kind_combo.currentData()),
            display_name=self.name_edit.text().strip(),
            base_url=self.url_edit.text().strip().rstrip("/"),
            models=tuple(self.models.checked()),
            enabled=self.enabled_check.isChecked(),
            key=key or None,
        )

    def _read_only(self) -> bool:
        return self._entry is not None and (
            self._entry.builtin or self._entry.kind not in EDITABLE_KINDS
        )

    def _update_enabled(self) -> None:
        editable = not self._read_only()
        busy = self._runner.busy
        self.builtin_note.setVisible(self._entry is not None and self._entry.builtin)
        for widget in (
            self.kind_combo,
            self.name_edit,
            self.url_edit,
            self.key_edit,
            self.enabled_check,
            self.new_model_edit,
            self.add_model_button,
        ):
            widget.setEnabled(editable)
        self.id_edit.setEnabled(editable)
        self.id_edit.setReadOnly(self._entry is not None)  # bases refer to it in model ids
        self.models.set_editable(editable)
        self.fetch_button.setEnabled(editable and not busy)
        self.test_button.setEnabled(editable and not busy)
        self.save_button.setEnabled(editable and not self._saving)

    def _update_placeholders(self) -> None:
        kind = str(self.kind_combo.currentData())
        if kind == "ollama":
            self.url_edit.setPlaceholderText(self.tr("e.g. http://localhost:11434"))
        elif kind == "rerank":
            self.url_edit.setPlaceholderText(self.tr("e.g. https://api.jina.ai/v1"))
        else:
            self.url_edit.setPlaceholderText(self.tr("e.g. https://api.openai.com/v1"))
        self.key_edit.setPlaceholderText(self._key_placeholder())
        self.id_edit.setPlaceholderText(self.tr("e.g. siliconflow") if self._entry is None else "")

    def _key_placeholder(self) -> str:
        if self._entry is None:
            return self.tr("Optional; local servers usually need none")
        if self._key_stored is False:
            return self.tr("No key stored — optional; local servers usually need none")
        if self._key_stored:
            return self.tr("A key is stored in the system keychain — type to replace it")
        return ""  # the keychain has not answered yet: claim nothing

    def _check_stored_key(self, provider_id: str) -> None:
        service = self._ctx.service
        self._ctx.tasks.run(
            lambda: service.provider_key_stored(provider_id),
            functools.partial(self._on_key_checked, provider_id),
            functools.partial(self._on_key_check_failed, provider_id),
            owner=self,
        )

    def _on_key_check_failed(self, provider_id: str, _exc: BaseException) -> None:
        self._on_key_checked(provider_id, False)  # an unreadable keychain holds nothing usable

    def _on_key_checked(self, provider_id: str, stored: object) -> None:
        if not shiboken6.isValid(self) or self._entry is None or self._entry.id != provider_id:
            return  # another provider is shown meanwhile
        self._key_stored = stored is True
        self._update_placeholders()
        self.keyStateKnown.emit(self._key_stored)

    # -- messages ------------------------------------------------------------------------

    def _show(self, level: str, headline: str, detail: str = "") -> None:
        self.message.setStyleSheet(theme.message_style(level) if level in ("ok", "error") else "")
        self.message.setProperty("level", level)
        self.message.setText(f"{headline}\n{detail}" if detail else headline)

    def _show_error(self, exc: BaseException) -> None:
        if isinstance(exc, NoEventLoop):
            self._show(
                "error",
                self.tr("Network checks are unavailable"),
                self.tr("The window was started without its asyncio event loop."),
            )
            return
        headline, detail = describe(exc)
        self._show("error", headline, detail)

    def _clear_message(self) -> None:
        self._show("", "")

    # -- probes --------------------------------------------------------------------------

    def _probe_target(self) -> tuple[str, str, str | None, str | None, str | None] | None:
        """(kind, base URL, typed key, id whose stored key to use, name), or None after
        showing why the form cannot be probed."""
        draft = self.draft()
        if not is_http_url(draft.base_url):
            self._show("error", self._bad_url_text())
            return None
        stored_for = self._entry.id if self._entry is not None else None
        name = draft.display_name or draft.provider_id or None
        return draft.kind, draft.base_url, draft.key, stored_for, name

    @Slot()
    def fetch_models(self) -> None:
        """Ask the provider for its models; they join the list unchecked."""
        target = self._probe_target()
        if target is None:
            return
        kind, url, key, stored_for, name = target
        self._show("busy", self.tr("Fetching the model list…"))
        self._runner.start(
            self._ctx.service.probe_models(kind, url, key=key, provider_id=stored_for, name=name),
            self._on_models_fetched,
            self._on_fetch_failed,
        )

    @Slot()
    def test_connection(self) -> None:
        """One real call with the selected (else the first checked) model."""
        target = self._probe_target()
        if target is None:
            return
        kind, url, key, stored_for, name = target
        self._show("busy", self.tr("Testing the connection…"))
        self._runner.start(
            self._ctx.service.probe_connection(
                kind, url, key=key, provider_id=stored_for, model=self._model_to_test(), name=name
            ),
            self._on_connection_ok,
            self._on_test_failed,
        )

    def cancel_probes(self) -> None:
        self._runner.cancel()

    def _model_to_test(self) -> str | None:
        current = self.models_view.currentIndex()
        if current.isValid():
            return self.models.name_at(current.row())
        checked = self.models.checked()
        if checked:
            return checked[0]
        return self.models.name_at(0)

    def _on_models_fetched(self, names: list[str]) -> None:
        self.models.merge(names)
        if names:
            self._show(
                "ok",
                self.tr("Found %n model(s)", "", len(names)),
                self.tr("Check the models knowledge bases may use, then save."),
            )
        else:
            self._show(
                "info",
                self.tr("The provider lists no models"),
                self.tr("Type the model names below instead."),
            )
        self.probeFinished.emit(True)

    def _on_connection_ok(self, result: ConnectionOk) -> None:
        self._show("ok", self.tr("Connection works"), self._answered(result))
        self.probeFinished.emit(True)

    def _answered(self, result: ConnectionOk) -> str:
        if result.local:
            return self.tr("The built-in model works offline ({0} dimensions).").format(
                result.dimensions
            )
        if result.dimensions is None:
            return self.tr("{0} answered with the rerank model {1}.").format(
                result.provider, result.model
            )
        return self.tr("{0} answered: {1} gives {2}-dimensional vectors.").format(
            result.provider, result.model, result.dimensions
        )

    def _on_fetch_failed(self, exc: BaseException) -> None:
        self._show_probe_error(
            exc, self.tr("Could not fetch the model list"), FETCH_SPECIFIC_ERRORS
        )
        self.probeFinished.emit(False)

    def _on_test_failed(self, exc: BaseException) -> None:
        self._show_probe_error(exc, self.tr("The connection test failed"), TEST_SPECIFIC_ERRORS)
        self.probeFinished.emit(False)

    def _show_probe_error(
        self, exc: BaseException, fallback: str, specific: frozenset[ErrorCode]
    ) -> None:
        if isinstance(exc, TroveError) and exc.code not in specific:
            self._show("error", fallback, explain(exc.code, exc.message, exc.params))
        else:
            self._show_error(exc)

    # -- saving --------------------------------------------------------------------------

    def _bad_url_text(self) -> str:
        return self.tr("The base URL must start with http:// or https:// and name a host.")

    def _problem(self, draft: ProviderDraft) -> str | None:
        """Why the draft cannot be saved (translated), or None."""
        if not draft.provider_id:
            return self.tr("Give the provider a name or an ID.")
        if _ID_SEPARATORS.search(draft.provider_id):
            return self.tr("The ID cannot contain spaces or ':'.")
        if draft.provider_id in RESERVED_IDS:
            return self.tr("This ID is reserved for the built-in model.")
        if self._entry is None and draft.provider_id in self._existing_ids:
            return self.tr("Another provider already has this ID.")
        if not is_http_url(draft.base_url):
            return self._bad_url_text()
        return None

    @Slot()
    def save(self) -> None:
        if self._read_only() or self._saving:
            return
        draft = self.draft()
        problem = self._problem(draft)
        if problem is not None:
            self._show("error", problem)
            return
        self._saving = True
        self._update_enabled()
        self._show("busy", self.tr("Saving…"))
        call = functools.partial(
            self._ctx.service.save_provider,
            draft.provider_id,
            draft.kind,
            base_url=draft.base_url,
            display_name=draft.display_name,
            models=draft.models,
            enabled=draft.enabled,
            key=draft.key,
        )
        self._ctx.tasks.run(
            call,
            functools.partial(self._on_saved, draft.provider_id),
            functools.partial(self._on_save_failed, draft.provider_id),
            owner=self,
        )

    def _on_saved(self, provider_id: str, _settings: Any) -> None:
        if not shiboken6.isValid(self):
            return
        self._saving = False
        self.key_edit.clear()
        self._update_enabled()
        self._check_stored_key(provider_id)
        self._show("ok", self.tr("Saved"))
        self.saved.emit(provider_id)

    def _on_save_failed(self, provider_id: str, exc: BaseException) -> None:
        if not shiboken6.isValid(self):
            return
        self._saving = False
        self._update_enabled()
        self._show_error(exc)
        # Without a keychain the settings are stored and only the key is refused.
        if isinstance(exc, TroveError) and exc.code == ErrorCode.PROVIDER_AUTH_FAILED:
            self.key_edit.clear()
            self.saved.emit(provider_id)

    # -- slots ---------------------------------------------------------------------------

    @Slot(int)
    def _on_kind_chosen(self, _index: int) -> None:
        self._update_placeholders()
        self._on_connection_edited()

    @Slot(str)
    def _on_name_edited(self, text: str) -> None:
        if self._entry is None and not self._id_edited:
            self.id_edit.setText(suggest_id(text))

    @Slot(str)
    def _on_id_edited(self, text: str) -> None:
        self._id_edited = bool(text)

    @Slot()
    def _on_connection_edited(self) -> None:
        # A running probe describes the old address or key: its answer would mislead.
        if self._runner.busy:
            self._runner.cancel()
            self._clear_message()

    @Slot()
    def _on_add_model(self) -> None:
        row = self.models.add(self.new_model_edit.text())
        if row >= 0:
            self.new_model_edit.clear()
            self.models_view.setCurrentIndex(self.models.index(row))

    @Slot(bool)
    def _on_busy_changed(self, _busy: bool) -> None:
        if shiboken6.isValid(self):
            self._update_enabled()
