"""Small dialogs for adding content: web pages or a sitemap by URL, and a note editor."""

from __future__ import annotations

from urllib.parse import urlsplit

from PySide6.QtCore import Signal, Slot
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.ui import theme


def parse_urls(text: str) -> tuple[list[str], list[str]]:
    """(valid http(s) URLs, rejected entries) from whitespace-separated text."""
    good: list[str] = []
    bad: list[str] = []
    for word in text.split():
        parts = urlsplit(word)
        (good if parts.scheme in ("http", "https") and parts.netloc else bad).append(word)
    return good, bad


class UrlDialog(QDialog):
    """Asks for one or more web pages, or for one sitemap."""

    def __init__(self, sitemap: bool, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("sitemapDialog" if sitemap else "urlDialog")
        self._sitemap = sitemap
        if sitemap:
            self.setWindowTitle(self.tr("Add sitemap"))
            prompt = self.tr("Sitemap address (every page it lists is added and kept together):")
        else:
            self.setWindowTitle(self.tr("Add web pages"))
            prompt = self.tr("Page addresses, one per line:")
        self._edit = QPlainTextEdit(self)
        self._edit.setObjectName("urlEdit")
        self._edit.setPlaceholderText("https://example.com/sitemap.xml" if sitemap else "https://")
        self._error = QLabel(self)
        self._error.setObjectName("urlError")
        self._error.setStyleSheet(theme.message_style("error"))
        self._error.hide()
        self._buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel, self
        )
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel(prompt, self))
        layout.addWidget(self._edit)
        layout.addWidget(self._error)
        layout.addWidget(self._buttons)
        self.resize(520, 220 if not sitemap else 160)
        self._connect_signals()

    def _connect_signals(self) -> None:
        self._buttons.accepted.connect(self._on_accept)
        self._buttons.rejected.connect(self.reject)

    def urls(self) -> list[str]:
        return parse_urls(self._edit.toPlainText())[0]

    def set_text(self, text: str) -> None:
        self._edit.setPlainText(text)

    @Slot()
    def _on_accept(self) -> None:
        good, bad = parse_urls(self._edit.toPlainText())
        if bad:
            self._show_error(self.tr("Not a web address: {0}").format(", ".join(bad[:3])))
        elif not good:
            self._show_error(self.tr("Enter an address that starts with http:// or https://"))
        elif self._sitemap and len(good) > 1:
            self._show_error(self.tr("Enter one sitemap address"))
        else:
            self.accept()

    def _show_error(self, text: str) -> None:
        self._error.setText(text)
        self._error.show()


class NoteDialog(QDialog):
    """Writes a note: a title and Markdown text, indexed like a file.

    Editing an existing note (`editing=True`) keeps the dialog open while the change is
    saved: Save emits `saveRequested`, and the owner closes it (`accept`) once the engine
    took the change, or shows why not (`show_error`) so nothing typed is lost.
    """

    saveRequested = Signal(str, str)  # title, text

    def __init__(self, parent: QWidget | None = None, *, editing: bool = False) -> None:
        super().__init__(parent)
        self.setObjectName("noteDialog")
        self._editing = editing
        self.setWindowTitle(self.tr("Edit note") if editing else self.tr("New note"))
        self._title = QLineEdit(self)
        self._title.setObjectName("noteTitle")
        self._title.setPlaceholderText(self.tr("Title"))
        self._text = QPlainTextEdit(self)
        self._text.setObjectName("noteText")
        self._text.setPlaceholderText(self.tr("Write the note here (Markdown is fine)"))
        self._error = QLabel(self)
        self._error.setObjectName("noteError")
        self._error.setStyleSheet(theme.message_style("error"))
        self._error.setWordWrap(True)
        self._error.hide()
        self._buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel, self
        )
        layout = QVBoxLayout(self)
        layout.addWidget(self._title)
        layout.addWidget(self._text, 1)
        layout.addWidget(self._error)
        layout.addWidget(self._buttons)
        self.resize(640, 480)
        self._connect_signals()
        self._on_text_changed()

    def _connect_signals(self) -> None:
        self._buttons.accepted.connect(self._on_save)
        self._buttons.rejected.connect(self.reject)
        self._text.textChanged.connect(self._on_text_changed)

    def title(self) -> str:
        return self._title.text().strip()

    def text(self) -> str:
        return self._text.toPlainText()

    def set_note(self, title: str, text: str) -> None:
        self._title.setText(title)
        self._text.setPlainText(text)

    def set_busy(self, busy: bool) -> None:
        """While a change is being saved: no second Save, no edits that would be dropped."""
        self._title.setReadOnly(busy)
        self._text.setReadOnly(busy)
        self._save_button().setEnabled(not busy and bool(self._text.toPlainText().strip()))

    def show_error(self, text: str) -> None:
        self.set_busy(False)
        self._error.setText(text)
        self._error.show()

    def _save_button(self) -> QPushButton:
        return self._buttons.button(QDialogButtonBox.StandardButton.Save)

    @Slot()
    def _on_save(self) -> None:
        if not self._editing:
            self.accept()
            return
        self._error.hide()
        self.set_busy(True)
        self.saveRequested.emit(self.title(), self.text())

    @Slot()
    def _on_text_changed(self) -> None:
        self._save_button().setEnabled(bool(self._text.toPlainText().strip()))
