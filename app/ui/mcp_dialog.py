"""Shows the snippet that connects an AI agent (an MCP client) to this Trove."""

from __future__ import annotations

from PySide6.QtGui import QFontDatabase, QGuiApplication
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)


class McpDialog(QDialog):
    def __init__(self, config_json: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("mcpDialog")
        self.setWindowTitle(self.tr("Connect AI agents"))
        intro = QLabel(
            self.tr(
                "Add this entry to the “mcpServers” section of your MCP client's configuration "
                "(for example Claude Desktop). Agents can then search and read your knowledge "
                "bases; they can change a base only where you allow it."
            ),
            self,
        )
        intro.setWordWrap(True)
        self._text = QPlainTextEdit(config_json, self)
        self._text.setObjectName("mcpConfig")
        self._text.setReadOnly(True)
        self._text.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        copy = QPushButton(self.tr("Copy"), self)
        copy.setObjectName("mcpCopyButton")
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.addButton(copy, QDialogButtonBox.ButtonRole.ActionRole)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addWidget(self._text, 1)
        layout.addWidget(buttons)
        self.resize(620, 380)
        copy.clicked.connect(self._on_copy)
        buttons.rejected.connect(self.reject)

    def _on_copy(self) -> None:
        QGuiApplication.clipboard().setText(self._text.toPlainText())
