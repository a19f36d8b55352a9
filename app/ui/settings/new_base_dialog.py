"""Creating a knowledge base: a name, where its index lives and the retrieval settings.

Creation probes the embedding model for its vector size, a network call that can take a while,
so it runs off the GUI thread; the dialog stays open (busy) until it returns and shows a failure
inline. Closing it meanwhile lets the creation finish and reports the outcome as a notification.

The index lives on this computer by default; a base on a PostgreSQL server is shared by every
desktop that attaches it. The engine connects to the server before anything is written, so a
wrong address or password is said here, in the dialog, and creates nothing.
"""

from __future__ import annotations

import html

from PySide6.QtCore import QCoreApplication, QEvent, Qt, Signal, Slot
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import (
    QButtonGroup,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QProgressBar,
    QRadioButton,
    QVBoxLayout,
    QWidget,
)
from shiboken6 import isValid

from app.knowledge.types import Base, IndexBackend
from app.ui import theme
from app.ui.context import UiContext
from app.ui.errors import describe
from app.ui.settings.model_picker import ModelChoices, ProviderLoader
from app.ui.settings.rag_form import RagSettings, RagSettingsForm
from app.ui.settings.server_fields import ServerFields, describe_server_failure, where

LAST_MODEL_KEY = "newBase/embeddingModel"


class NewBaseDialog(QDialog):
    """Asks for a name and settings, then creates the base; `created_base` holds it."""

    # the new Base
    baseCreated = Signal(object)
    modelsLoaded = Signal()
    busyChanged = Signal(bool)

    def __init__(self, ctx: UiContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("newBaseDialog")
        self.setWindowTitle(self.tr("New knowledge base"))
        self._ctx = ctx
        self._busy = False
        # Closed while creating: the result goes to the notifier instead of the dialog.
        self._abandoned = False
        self._delete_when_done = False
        self._model_chosen = False
        # The next layout pass sets the height to the content's (after the section folds).
        self._fit_height = False
        self.created_base: Base | None = None
        self.name_edit = QLineEdit(self)
        self.name_edit.setObjectName("baseName")
        self.name_edit.setPlaceholderText(self.tr("For example: Research papers"))
        self.local_choice = QRadioButton(self.tr("This computer"), self)
        self.local_choice.setObjectName("indexOnThisComputer")
        self.local_choice.setChecked(True)
        self.server_choice = QRadioButton(self.tr("PostgreSQL server (shared with a team)"), self)
        self.server_choice.setObjectName("indexOnServer")
        self.place_group = QButtonGroup(self)
        self.place_group.addButton(self.local_choice)
        self.place_group.addButton(self.server_choice)
        self.server = ServerFields(self)
        self.server.hide()
        self.form = RagSettingsForm(self, ctx=ctx)
        self.progress = QProgressBar(self)
        self.progress.setObjectName("busyIndicator")
        self.progress.setRange(0, 0)
        self.progress.setTextVisible(False)
        self.progress.hide()
        self.busy_label = QLabel(self)
        self.busy_label.setObjectName("busyLabel")
        self.busy_label.setWordWrap(True)
        self.busy_label.hide()
        self.error_label = QLabel(self)
        self.error_label.setObjectName("errorLabel")
        self.error_label.setWordWrap(True)
        self.error_label.setStyleSheet(theme.message_style("error"))
        self.error_label.hide()
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel, self
        )
        self.create_button = self.buttons.button(QDialogButtonBox.StandardButton.Ok)
        self.create_button.setObjectName("createButton")
        self.create_button.setText(self.tr("Create"))
        self._loader = ProviderLoader(ctx, self)
        self._build_layout()
        self.setMinimumWidth(520)  # room for model names and the wrapped hints
        self._connect_signals()
        self._update_controls()
        self.reload_models()

    def _build_layout(self) -> None:
        name_row = QFormLayout()
        name_row.addRow(self.tr("Name:"), self.name_edit)
        places = QVBoxLayout()
        places.setContentsMargins(0, 0, 0, 0)
        places.addWidget(self.local_choice)
        places.addWidget(self.server_choice)
        name_row.addRow(self.tr("Where the index lives:"), places)
        layout = QVBoxLayout(self)
        layout.addLayout(name_row)
        layout.addWidget(self.server)
        layout.addWidget(self.form)
        layout.addWidget(self.error_label)
        layout.addWidget(self.busy_label)
        layout.addWidget(self.progress)
        layout.addWidget(self.buttons)

    def _connect_signals(self) -> None:
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        self.name_edit.textChanged.connect(self._on_input_changed)
        self.server_choice.toggled.connect(self._on_place_toggled)
        self.server.changed.connect(self._on_input_changed)
        self.form.changed.connect(self._on_input_changed)
        # `activated` comes from the person only, never from the default choice below.
        self.form.embedding_picker.activated.connect(self._on_model_activated)
        self.form.advanced.toggled.connect(self._on_advanced_toggled)
        self._loader.loaded.connect(self._on_providers_loaded)
        self._loader.failed.connect(self._on_providers_failed)
        # A model downloaded, imported or removed (here, in the Models dialog, anywhere).
        self._ctx.downloads.modelsChanged.connect(self.reload_models)

    # -- public ---------------------------------------------------------------------------

    @Slot()
    def reload_models(self) -> None:
        self._loader.load()

    def is_busy(self) -> bool:
        return self._busy

    @Slot()
    def accept(self) -> None:
        """Start creating the base; the dialog closes when it exists."""
        if self._busy:
            return
        name = self.name_edit.text().strip()
        if not name:
            self._show_message(self.tr("Give the knowledge base a name."), "")
            self.name_edit.setFocus()
            return
        if not self.form.is_valid():
            return
        if self.on_server():
            wrong = self.server.check()
            if wrong is not None:
                self._show_message(*wrong)
                self.server.address_edit.setFocus()
                return
        self._create(name, self.form.settings())

    def on_server(self) -> bool:
        """Whether the new base's index is to live on a PostgreSQL server."""
        return self.server_choice.isChecked()

    @Slot()
    def reject(self) -> None:
        if self._busy:
            # Stay alive (hidden) until the creation returns, so baseCreated still reaches
            # the window; a dialog meant to be deleted on close is deleted then.
            self._abandoned = True
            self._delete_when_done = self.testAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
            self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose, False)
        super().reject()

    # -- creating -------------------------------------------------------------------------

    def _create(self, name: str, settings: RagSettings) -> None:
        self._clear_error()
        arguments = settings.create_arguments()
        if self.on_server():
            # The password goes with this one call (the engine moves it to the keychain).
            arguments.update(backend=IndexBackend.POSTGRES, dsn=self.server.dsn())
            text = self.tr("Connecting to the server at {0} and creating the knowledge base…")
            text = text.format(where(self.server.address_edit.text().strip()))
        elif settings.embedding_model:
            text = self.tr("Creating the knowledge base and checking {0}…").format(
                self.form.embedding_picker.label_of(settings.embedding_model)
            )
        else:
            text = self.tr("Creating the knowledge base…")
        self._set_busy(True, text)
        service = self._ctx.service
        notifier = self._ctx.notifier

        def done(base: Base) -> None:
            if isValid(self):
                self._on_created(base)
            else:
                created = QCoreApplication.translate(
                    "NewBaseDialog", "Knowledge base “{0}” created"
                )
                notifier.notify(created.format(base.name))

        def failed(exc: BaseException) -> None:
            if isValid(self):
                self._on_failed(exc)
            else:
                notifier.error(*describe_server_failure(exc))

        self._ctx.tasks.run(
            lambda: service.create_base(name, **arguments),
            done,
            failed,
            owner=self,
        )

    def _on_created(self, base: Base) -> None:
        self.created_base = base
        self._ctx.settings.setValue(LAST_MODEL_KEY, base.embedding_model or "")
        self._set_busy(False)
        self.server.password_edit.clear()  # not kept in the window once it is stored
        self.baseCreated.emit(base)
        if self._abandoned:
            self._ctx.notifier.notify(self.tr("Knowledge base “{0}” created").format(base.name))
            self._finish_abandoned()
        else:
            super().accept()

    def _on_failed(self, exc: BaseException) -> None:
        self._set_busy(False)
        if self._abandoned:
            self._ctx.notifier.error(*describe_server_failure(exc))
            self._finish_abandoned()
        else:
            self._show_message(*describe_server_failure(exc))

    def _finish_abandoned(self) -> None:
        if self._delete_when_done:
            self.deleteLater()

    # -- state ----------------------------------------------------------------------------

    @Slot(object)
    def _on_providers_loaded(self, choices: ModelChoices) -> None:
        self.form.set_choices(choices)
        if not self._model_chosen:
            self.form.embedding_picker.set_current_model(self._default_model())
        self.modelsLoaded.emit()

    @Slot(object)
    def _on_providers_failed(self, exc: BaseException) -> None:
        self._show_message(*describe(exc))

    def _default_model(self) -> str | None:
        """The model used for the last new base if it is still offered, else the first one a
        configured provider offers, else the built-in offline model when it is installed (so
        a first base searches by meaning out of the box), else none."""
        picker = self.form.embedding_picker
        last = str(self._ctx.settings.value(LAST_MODEL_KEY, "") or "")
        offered = picker.available_models()
        if last in offered:
            return last
        configured = picker.available_models(include_builtin=False)
        if configured:
            return configured[0]
        return offered[0] if offered else None

    @Slot(int)
    def _on_model_activated(self, _row: int) -> None:
        self._model_chosen = True

    @Slot(bool)
    def _on_place_toggled(self, on_server: bool) -> None:
        self.server.setVisible(on_server)
        self._clear_error()
        self._fit_height = True  # the server's fields take room, or give it back
        self._update_controls()
        if on_server:
            self.server.address_edit.setFocus()

    @Slot(bool)
    def _on_advanced_toggled(self, _expanded: bool) -> None:
        # Opened: grow to show the section whole; folded: give the room back.
        self._fit_height = True

    # -- sizing ---------------------------------------------------------------------------

    def event(self, event: QEvent) -> bool:
        handled = super().event(event)
        if event.type() == QEvent.Type.LayoutRequest:  # the layout has just been redone
            self._fit_to_content()
        return handled

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        if event.spontaneous():  # the person (window manager) sized it: keep their height
            self._fit_height = False
        if event.size().width() != event.oldSize().width():
            self._fit_to_content()  # a narrower dialog wraps the labels onto more lines

    def _fit_to_content(self) -> None:
        """Keep the dialog at least as tall as its content at the current width.

        A window's layout sizes it for its hint, not for the height its wrapped labels need at
        the width it has, so an opened section or a longer translation would be cut off."""
        layout = self.layout()
        if layout is None:
            return
        needed = (
            layout.totalHeightForWidth(self.width())
            if layout.hasHeightForWidth()
            else layout.totalSizeHint().height()
        )
        self.setMinimumHeight(needed)
        # After a fold or unfold the height follows the content both ways until the person
        # resizes the dialog: the change is laid out over more than one request, and the
        # first may still count the folded rows.
        if self.height() < needed or (self._fit_height and self.height() != needed):
            self.resize(self.width(), needed)

    @Slot()
    def _on_input_changed(self) -> None:
        self._update_controls()

    def _set_busy(self, busy: bool, text: str = "") -> None:
        self._busy = busy
        self.busy_label.setText(text)
        self.busy_label.setVisible(busy)
        self.progress.setVisible(busy)
        self._update_controls()
        self.busyChanged.emit(busy)

    def _update_controls(self) -> None:
        self.name_edit.setEnabled(not self._busy)
        self.form.setEnabled(not self._busy)
        self.local_choice.setEnabled(not self._busy)
        self.server_choice.setEnabled(not self._busy)
        self.server.setEnabled(not self._busy)
        ready = bool(self.name_edit.text().strip()) and self.form.is_valid()
        if self.on_server():
            ready = ready and self.server.has_address()
        self.create_button.setEnabled(ready and not self._busy)

    def _show_message(self, headline: str, detail: str) -> None:
        text = f"<b>{html.escape(headline)}</b>"
        if detail:
            text += "<br>" + html.escape(detail).replace("\n", "<br>")
        self.error_label.setText(text)
        self.error_label.show()

    def _clear_error(self) -> None:
        self.error_label.clear()
        self.error_label.hide()
