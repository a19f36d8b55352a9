"""Yes/no questions asked in a modal box (widgets keep them in replaceable attributes so
tests can answer without one)."""

from __future__ import annotations

from PySide6.QtWidgets import QMessageBox, QWidget


def ask_yes_no(parent: QWidget, title: str, question: str) -> bool:
    answer = QMessageBox.question(parent, title, question)
    return answer == QMessageBox.StandardButton.Yes
