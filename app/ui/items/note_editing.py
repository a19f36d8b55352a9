"""Editing a note: the note dialog filled in; Save hands the change to the engine off the
GUI thread and the dialog stays open until the engine took it, showing why not otherwise
(so nothing typed is lost)."""

from __future__ import annotations

import shiboken6
from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import QWidget

from app.knowledge.types import Item
from app.ui import errors
from app.ui.context import UiContext
from app.ui.items.add_dialogs import NoteDialog


class NoteEditor(QObject):
    # the engine took an edit and queued the note's reindex (the updated Item)
    saved = Signal(object)

    def __init__(self, ctx: UiContext, window: QWidget) -> None:
        super().__init__(window)
        self._ctx = ctx
        self._window = window

    def edit(self, item: Item) -> NoteDialog:
        dialog = NoteDialog(self._window, editing=True)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.set_note(item.title, item.source)
        dialog.saveRequested.connect(lambda title, text: self._save(dialog, item, title, text))
        dialog.open()
        return dialog

    def _save(self, dialog: NoteDialog, item: Item, title: str, text: str) -> None:
        if (title, text) == (item.title, item.source):
            dialog.accept()  # nothing changed: nothing to index again
            return

        def done(updated: Item) -> None:
            self.saved.emit(updated)
            if shiboken6.isValid(dialog):
                dialog.accept()

        def refused(exc: BaseException) -> None:
            if shiboken6.isValid(dialog):
                headline, detail = errors.describe(exc)
                dialog.show_error(f"{headline}: {detail}")
            else:
                self._ctx.notifier.failure(exc)

        service = self._ctx.service
        self._ctx.tasks.run(
            lambda: service.update_note(item.base_id, item.id, title, text),
            done,
            refused,
            owner=self,
        )
