"""Item deletion that can be undone for a few seconds.

The items leave the tree at once and a toast offers Undo; only when its time runs out (or the
window closes) are they handed to the engine. Until then the engine has not been touched, so
Undo brings them back exactly as they were. Handed-over items stay hidden until their rows
are gone, so they never flash back as "deleting".
"""

from __future__ import annotations

from collections.abc import Callable, Container, Iterable
from dataclasses import dataclass, field

from PySide6.QtCore import QObject, QTimer, Signal

from app.ui.notifications import Notice, Notifier

UNDO_MS = 8000

Commit = Callable[[str, list[str]], None]


@dataclass(eq=False)
class PendingDelete:
    base_id: str
    item_ids: list[str]
    timer: QTimer
    notice: Notice | None = field(default=None)


class DeferredDeletes(QObject):
    # the set of item ids hidden from the tree changed
    hiddenChanged = Signal()
    # a deletion was undone: these item ids are shown again
    restored = Signal(list)

    def __init__(self, notifier: Notifier, commit: Commit, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._notifier = notifier
        self._commit = commit
        self._pending: list[PendingDelete] = []
        # handed to the engine, hidden until the tree no longer has them
        self._handed_over: set[str] = set()

    @property
    def pending(self) -> bool:
        return bool(self._pending)

    def hidden(self) -> frozenset[str]:
        """Items (with everything below them) the tree and searches leave out."""
        ids = set(self._handed_over)
        for batch in self._pending:
            ids.update(batch.item_ids)
        return frozenset(ids)

    def schedule(self, base_id: str, item_ids: Iterable[str], title: str) -> PendingDelete:
        """Hide the items now; `commit` them when the Undo offer titled `title` runs out."""
        timer = QTimer(self)
        timer.setSingleShot(True)
        timer.setInterval(UNDO_MS)
        batch = PendingDelete(base_id, list(item_ids), timer)
        timer.timeout.connect(lambda: self._hand_over(batch))
        self._pending.append(batch)
        batch.notice = self._notifier.offer(
            title, self.tr("Undo"), lambda: self.undo(batch), UNDO_MS
        )
        timer.start()
        self.hiddenChanged.emit()
        return batch

    def undo(self, batch: PendingDelete) -> None:
        if batch not in self._pending:
            return  # already handed over: too late
        self._drop(batch)
        self.hiddenChanged.emit()
        self.restored.emit(batch.item_ids)

    def undo_last(self) -> bool:
        if not self._pending:
            return False
        self.undo(self._pending[-1])
        return True

    def flush(self) -> None:
        """Hand every pending deletion over now (the window is closing: the person's
        decision is carried out, never lost)."""
        for batch in list(self._pending):
            self._hand_over(batch)

    def forget_base(self, base_id: str) -> None:
        """The whole base was deleted: its pending deletions have nothing left to do."""
        for batch in [b for b in self._pending if b.base_id == base_id]:
            self._drop(batch)
        self.hiddenChanged.emit()

    def settle(self, present: Container[str]) -> None:
        """Forget handed-over items the tree no longer has (their rows are gone); `present`
        is tested per handed-over item, never walked (a big base shows 40,000 rows)."""
        self._handed_over = {i for i in self._handed_over if i in present}

    def release(self, item_ids: Iterable[str]) -> None:
        """The engine refused the deletion: show the items again."""
        self._handed_over.difference_update(item_ids)
        self.hiddenChanged.emit()

    def _hand_over(self, batch: PendingDelete) -> None:
        if batch not in self._pending:
            return
        self._drop(batch)
        self._handed_over.update(batch.item_ids)
        self._commit(batch.base_id, batch.item_ids)

    def _drop(self, batch: PendingDelete) -> None:
        self._pending.remove(batch)
        batch.timer.stop()
        batch.timer.deleteLater()
        if batch.notice is not None:
            self._notifier.withdraw(batch.notice)
