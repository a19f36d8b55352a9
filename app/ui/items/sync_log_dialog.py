"""The change log of a linked folder: what each recent sync added, changed, removed and
renamed."""

from __future__ import annotations

from PySide6.QtWidgets import QDialog, QDialogButtonBox, QPlainTextEdit, QVBoxLayout, QWidget

from app.knowledge.service import SyncChanges
from app.ui.items.sync_texts import change_counts, when


class SyncLogDialog(QDialog):
    def __init__(self, folder: str, log: list[SyncChanges], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("syncLogDialog")
        self.setWindowTitle(self.tr("Sync changes — {0}").format(folder))
        self.text = QPlainTextEdit(self)
        self.text.setObjectName("syncLogText")
        self.text.setReadOnly(True)
        self.text.setPlainText(self._render(log))
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.text)
        layout.addWidget(buttons)
        self.resize(620, 420)

    def _render(self, log: list[SyncChanges]) -> str:
        if not log:
            return self.tr("No sync has changed anything yet.")
        blocks = []
        for entry in log:
            lines = [f"{when(entry.finished_at)} — {change_counts(entry)}"]
            lines += [self.tr("  added: {0}").format(p) for p in entry.added]
            lines += [self.tr("  changed: {0}").format(p) for p in entry.changed]
            lines += [self.tr("  removed: {0}").format(p) for p in entry.removed]
            lines += [self.tr("  renamed: {0} → {1}").format(a, b) for a, b in entry.renamed]
            lines += [self.tr("  still being written: {0}").format(p) for p in entry.deferred]
            blocks.append("\n".join(lines))
        return "\n\n".join(blocks)
