"""Questions asked in a modal box (widgets keep them in replaceable attributes so tests can
answer without one)."""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication
from PySide6.QtWidgets import QMessageBox, QWidget


def ask_yes_no(parent: QWidget, title: str, question: str) -> bool:
    answer = QMessageBox.question(parent, title, question)
    return answer == QMessageBox.StandardButton.Yes


def deletion_box(parent: QWidget, title: str, question: str) -> QMessageBox:
    """A box asking whether to delete something. The first paragraph of `question` is the
    question, the rest its detail. Cancel is the default button: Enter never deletes."""
    box = QMessageBox(parent)
    box.setObjectName("confirmDeleteBox")
    box.setIcon(QMessageBox.Icon.Warning)
    box.setWindowTitle(title)
    head, _, detail = question.partition("\n\n")
    box.setText(head)
    box.setInformativeText(detail)
    delete = box.addButton(
        QCoreApplication.translate("Questions", "Delete"), QMessageBox.ButtonRole.DestructiveRole
    )
    delete.setObjectName("confirmDeleteButton")
    cancel = box.addButton(QMessageBox.StandardButton.Cancel)
    box.setDefaultButton(cancel)
    box.setEscapeButton(cancel)
    return box


def ask_to_delete(parent: QWidget, title: str, question: str) -> bool:
    """Ask in a `deletion_box`; True only when the person chose Delete."""
    box = deletion_box(parent, title, question)
    box.exec()
    clicked = box.clickedButton()
    return clicked is not None and clicked.objectName() == "confirmDeleteButton"


def ask_to_detach(parent: QWidget, title: str, question: str) -> bool:
    """Ask whether to stop using a shared base here; True only when the person chose Detach.
    The first paragraph of `question` is the question, the rest its detail."""
    box = QMessageBox(parent)
    box.setObjectName("confirmDetachBox")
    box.setIcon(QMessageBox.Icon.Question)
    box.setWindowTitle(title)
    head, _, detail = question.partition("\n\n")
    box.setText(head)
    box.setInformativeText(detail)
    detach = box.addButton(
        QCoreApplication.translate("Questions", "Detach"), QMessageBox.ButtonRole.AcceptRole
    )
    cancel = box.addButton(QMessageBox.StandardButton.Cancel)
    box.setDefaultButton(cancel)
    box.setEscapeButton(cancel)
    box.exec()
    return box.clickedButton() is detach
