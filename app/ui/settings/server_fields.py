"""A PostgreSQL server's address and password, as the New-base and Attach dialogs ask them.

The password has a field of its own (echoed as dots) and is merged into the connection
string only for the engine call, which moves it to the system keychain: the window keeps it
nowhere else, and the address field never needs to show it.
"""

from __future__ import annotations

import importlib.util

from PySide6.QtCore import QCoreApplication, Signal, Slot
from PySide6.QtWidgets import QFormLayout, QLabel, QLineEdit, QWidget

from app.knowledge.server_index import address, with_password
from app.knowledge.types import ErrorCode, TroveError
from app.ui.errors import describe

ADDRESS_EXAMPLE = "postgresql://user@host:5432/database"


class ServerFields(QWidget):
    """The server's connection string and its password; `dsn()` joins them."""

    changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("serverFields")
        self.address_edit = QLineEdit(self)
        self.address_edit.setObjectName("serverAddress")
        self.address_edit.setPlaceholderText(ADDRESS_EXAMPLE)
        self.password_edit = QLineEdit(self)
        self.password_edit.setObjectName("serverPassword")
        self.password_edit.setEchoMode(QLineEdit.EchoMode.Password)
        self.password_edit.setPlaceholderText(self.tr("Leave empty if the server needs none"))
        self.hint = QLabel(
            self.tr(
                "The password is kept in the system keychain. Without one, leave it empty "
                "and give it in PGPASSWORD or ~/.pgpass."
            ),
            self,
        )
        self.hint.setObjectName("serverHint")
        self.hint.setWordWrap(True)
        self.hint.setEnabled(False)  # greyed: a remark, not a control
        layout = QFormLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addRow(self.tr("Server:"), self.address_edit)
        layout.addRow(self.tr("Password:"), self.password_edit)
        layout.addRow("", self.hint)
        self.address_edit.textChanged.connect(self._on_text_changed)

    def has_address(self) -> bool:
        return bool(self.address_edit.text().strip())

    def dsn(self) -> str:
        """The connection string with the password in it (TroveError INVALID_ARGUMENT when
        the address is no PostgreSQL connection string)."""
        return with_password(self.address_edit.text().strip(), self.password_edit.text() or None)

    def check(self) -> tuple[str, str] | None:
        """(headline, message) when the address cannot be a connection string, else None.
        Only parses: the server itself is asked by the engine, off the GUI thread."""
        if importlib.util.find_spec("psycopg") is None:
            return (
                self.tr("PostgreSQL support is not installed"),
                self.tr("Install it first: {0}").format('pip install "trove[postgres]"'),
            )
        try:
            address(self.address_edit.text())
        except TroveError:
            return (
                self.tr("This is not a PostgreSQL server address"),
                self.tr("Write it like {0}.").format(ADDRESS_EXAMPLE),
            )
        return None

    @Slot()
    def _on_text_changed(self) -> None:
        self.changed.emit()


def describe_server_failure(exc: BaseException) -> tuple[str, str]:
    """(headline, message) of a failure to create or attach a base on a server: the
    keychain's failure is about the server's password here, not an API key."""
    if isinstance(exc, TroveError) and exc.code == ErrorCode.KEYCHAIN_UNAVAILABLE:
        return (
            QCoreApplication.translate("ServerFields", "The password cannot be kept"),
            QCoreApplication.translate(
                "ServerFields",
                "No system keychain can keep the server's password on this computer. Leave "
                "the password empty and give it in PGPASSWORD or ~/.pgpass instead.",
            ),
        )
    return describe(exc)


def where(dsn: str | None) -> str:
    """host:port/database of a base's server, for labels (the raw address if it cannot be
    read, e.g. without the PostgreSQL support installed)."""
    if not dsn:
        return ""
    try:
        return address(dsn)
    except TroveError:
        return dsn
