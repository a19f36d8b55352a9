"""Opening originals with the desktop's applications.

When the desktop cannot open one (no launcher such as xdg-open, no application for the
type), `QDesktopServices.openUrl` only returns False: the person is told in a notice, and a
small non-modal dialog shows the path to select or copy, and the folder to try instead.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QCoreApplication, Qt, QUrl, Slot
from PySide6.QtGui import QDesktopServices, QGuiApplication
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.ui.notifications import Level, Notifier


def containing_folder(path: Path) -> Path:
    """The folder a person would look in: the folder itself, or the file's folder."""
    return path if path.is_dir() else path.parent


def where(url: QUrl) -> str:
    """What to show and copy: a local path, else the address."""
    return url.toLocalFile() if url.isLocalFile() else url.toString()


def open_or_explain(
    url: QUrl, name: str, notifier: Notifier, parent: QWidget, *, offer_folder: bool
) -> bool:
    """Open `url` (the original of the item called `name`); False when the desktop could not,
    after saying so and showing the path."""
    if QDesktopServices.openUrl(url):
        return True
    notifier.notify(
        QCoreApplication.translate("OpenFailedDialog", "Could not open {0}").format(name),
        QCoreApplication.translate(
            "OpenFailedDialog", "No application is set up to open it. It is at {0}"
        ).format(where(url)),
        Level.WARNING,
    )
    OpenFailedDialog(name, url, parent, offer_folder=offer_folder).show()
    return False


class OpenFailedDialog(QDialog):
    def __init__(
        self, name: str, url: QUrl, parent: QWidget | None = None, *, offer_folder: bool = True
    ) -> None:
        super().__init__(parent)
        self.setObjectName("openFailedDialog")
        self.setWindowTitle(self.tr("Could not open"))
        self.setModal(False)
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self._url = url
        message = QLabel(
            self.tr(
                "No application on this computer opened “{0}”. Copy its location, or open "
                "its folder and open it from there."
            ).format(name),
            self,
        )
        message.setWordWrap(True)
        self._path = QLineEdit(where(url), self)
        self._path.setObjectName("openFailedPath")
        self._path.setReadOnly(True)
        self._path.setCursorPosition(0)
        self._status = QLabel(self)
        self._status.setObjectName("openFailedStatus")
        self._status.hide()
        self._buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        self.copy_button = self._buttons.addButton(
            self.tr("Copy path"), QDialogButtonBox.ButtonRole.ActionRole
        )
        self.copy_button.setObjectName("copyPathButton")
        self.folder_button: QPushButton | None = None
        if offer_folder and url.isLocalFile():
            self.folder_button = self._buttons.addButton(
                self.tr("Show in folder"), QDialogButtonBox.ButtonRole.ActionRole
            )
            self.folder_button.setObjectName("showFolderButton")
        layout = QVBoxLayout(self)
        layout.addWidget(message)
        layout.addWidget(self._path)
        layout.addWidget(self._status)
        layout.addWidget(self._buttons)
        self.resize(520, 0)
        self._connect_signals()

    def _connect_signals(self) -> None:
        self._buttons.rejected.connect(self.close)
        self.copy_button.clicked.connect(self._on_copy)
        if self.folder_button is not None:
            self.folder_button.clicked.connect(self._on_show_folder)

    @Slot()
    def _on_copy(self) -> None:
        QGuiApplication.clipboard().setText(where(self._url))
        self._say(self.tr("Copied to the clipboard."))

    @Slot()
    def _on_show_folder(self) -> None:
        folder = containing_folder(Path(self._url.toLocalFile()))
        if not QDesktopServices.openUrl(QUrl.fromLocalFile(str(folder))):
            self._say(self.tr("The folder could not be opened either: {0}").format(folder))

    def _say(self, text: str) -> None:
        self._status.setText(text)
        self._status.show()
