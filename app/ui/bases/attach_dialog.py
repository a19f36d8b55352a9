"""Attaching a shared knowledge base: one that another desktop created on a PostgreSQL server.

The engine reads the bases the server holds and takes the one asked for (or the only one).
When the server holds several and none was chosen, the dialog lists them from the engine's
answer so the person can pick one and attach again. The call connects to the server (10 s at
most), so it runs off the GUI thread; the dialog stays open until it answers.
"""

from __future__ import annotations

import html

from PySide6.QtCore import Signal, Slot
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QProgressBar,
    QVBoxLayout,
    QWidget,
)

from app.knowledge.types import AmbiguousBaseError, Base, ErrorCode, TroveError
from app.ui import theme
from app.ui.context import UiContext
from app.ui.settings.server_fields import ServerFields, describe_server_failure, where


class AttachBaseDialog(QDialog):
    """Asks for a server (and, when it holds several, a base), then attaches it here."""

    # the attached Base
    baseAttached = Signal(object)
    busyChanged = Signal(bool)

    def __init__(self, ctx: UiContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("attachBaseDialog")
        self.setWindowTitle(self.tr("Attach a shared knowledge base"))
        self._ctx = ctx
        self._busy = False
        self.attached_base: Base | None = None
        self.intro = QLabel(
            self.tr(
                "Use a knowledge base that another desktop created on a PostgreSQL server. "
                "Its items and index stay on the server, shared with everyone who uses it."
            ),
            self,
        )
        self.intro.setWordWrap(True)
        self.server = ServerFields(self)
        self.base_box = QComboBox(self)
        self.base_box.setObjectName("serverBaseId")
        self.base_box.setEditable(True)
        line = self.base_box.lineEdit()
        if line is not None:
            line.setPlaceholderText(self.tr("Its ID, if the server holds several"))
        self.progress = QProgressBar(self)
        self.progress.setRange(0, 0)
        self.progress.setTextVisible(False)
        self.progress.hide()
        self.error_label = QLabel(self)
        self.error_label.setObjectName("errorLabel")
        self.error_label.setWordWrap(True)
        self.error_label.setStyleSheet(theme.message_style("error"))
        self.error_label.hide()
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel, self
        )
        self.attach_button = self.buttons.button(QDialogButtonBox.StandardButton.Ok)
        self.attach_button.setObjectName("attachButton")
        self.attach_button.setText(self.tr("Attach"))
        self.cancel_button = self.buttons.button(QDialogButtonBox.StandardButton.Cancel)
        self._build_layout()
        self.setMinimumWidth(480)
        self._connect_signals()
        self._update_controls()

    def _build_layout(self) -> None:
        layout = QVBoxLayout(self)
        layout.addWidget(self.intro)
        layout.addWidget(self.server)
        row = QFormLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addRow(self.tr("Knowledge base:"), self.base_box)
        layout.addLayout(row)
        layout.addWidget(self.error_label)
        layout.addWidget(self.progress)
        layout.addWidget(self.buttons)

    def _connect_signals(self) -> None:
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        self.server.changed.connect(self._on_server_changed)

    # -- public ---------------------------------------------------------------------------

    def is_busy(self) -> bool:
        return self._busy

    def chosen_id(self) -> str | None:
        """The base picked from the server's list or typed; None for "the only one"."""
        index = self.base_box.currentIndex()
        text = self.base_box.currentText().strip()
        if index >= 0 and text == self.base_box.itemText(index):
            picked = self.base_box.itemData(index)
            if isinstance(picked, str):
                return picked
        return text or None

    @Slot()
    def accept(self) -> None:
        if self._busy or not self.server.has_address():
            return
        wrong = self.server.check()
        if wrong is not None:
            self._show_message(*wrong)
            self.server.address_edit.setFocus()
            return
        self._attach(self.server.dsn(), self.chosen_id())

    @Slot()
    def reject(self) -> None:
        if self._busy:
            return  # the server answers within its connect timeout; the result is shown here
        super().reject()

    # -- attaching ------------------------------------------------------------------------

    def _attach(self, dsn: str, base_id: str | None) -> None:
        self._clear_error()
        self._set_busy(True)
        service = self._ctx.service
        self._ctx.tasks.run(
            lambda: service.attach_base(dsn, base_id),
            self._on_attached,
            self._on_failed,
            owner=self,
        )

    def _on_attached(self, base: Base) -> None:
        self._set_busy(False)
        self.attached_base = base
        self.server.password_edit.clear()
        self._ctx.notifier.notify(
            self.tr("Knowledge base “{0}” attached from {1}").format(base.name, where(base.dsn))
        )
        self.baseAttached.emit(base)
        super().accept()

    def _on_failed(self, exc: BaseException) -> None:
        self._set_busy(False)
        if isinstance(exc, AmbiguousBaseError):
            self._offer_choice(exc.choices)
        elif isinstance(exc, TroveError) and exc.code == ErrorCode.BASE_NOT_FOUND:
            self._show_message(
                self.tr("No such knowledge base on this server"),
                self.tr(
                    "The server holds no Trove knowledge base with that ID. Check the "
                    "address (the database too) and the ID."
                )
                if self.chosen_id()
                else self.tr(
                    "The server holds no Trove knowledge base. Check the address, the database too."
                ),
            )
        else:
            self._show_message(*describe_server_failure(exc))

    def _offer_choice(self, choices: list[tuple[str, str]]) -> None:
        """List the server's bases in the box so the person picks one, then attaches."""
        self.base_box.clear()
        for base_id, name in choices:
            self.base_box.addItem(self.tr("{0} (ID {1})").format(name, base_id), base_id)
        self._show_message(
            self.tr("This server holds several knowledge bases"),
            self.tr("Choose one below, then attach it."),
        )
        self.base_box.setFocus()

    # -- state ----------------------------------------------------------------------------

    @Slot()
    def _on_server_changed(self) -> None:
        # Another server: the bases listed for the last one do not apply.
        if self.base_box.count():
            self.base_box.clear()
        self._update_controls()

    def _set_busy(self, busy: bool) -> None:
        self._busy = busy
        self.progress.setVisible(busy)
        self._update_controls()
        self.busyChanged.emit(busy)

    def _update_controls(self) -> None:
        self.server.setEnabled(not self._busy)
        self.base_box.setEnabled(not self._busy)
        self.cancel_button.setEnabled(not self._busy)
        self.attach_button.setEnabled(self.server.has_address() and not self._busy)

    def _show_message(self, headline: str, detail: str) -> None:
        text = f"<b>{html.escape(headline)}</b>"
        if detail:
            text += "<br>" + html.escape(detail).replace("\n", "<br>")
        self.error_label.setText(text)
        self.error_label.show()

    def _clear_error(self) -> None:
        self.error_label.clear()
        self.error_label.hide()
