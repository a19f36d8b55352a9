"""Web pages and sitemaps in the item tree: refresh now, or on a schedule (off by default).
A refresh re-fetches conditionally and reindexes only pages whose text changed."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, Slot
from PySide6.QtGui import QAction, QActionGroup
from PySide6.QtWidgets import QMenu, QWidget

from app.knowledge.types import Item, ItemStatus, ItemType
from app.ui.context import UiContext

HOUR = 3600.0
# The schedules offered (seconds; None: off).
SCHEDULES: tuple[float | None, ...] = (None, HOUR, 24 * HOUR, 7 * 24 * HOUR)


class PageRefresh(QObject):
    def __init__(
        self,
        ctx: UiContext,
        selected: Callable[[], Item | None],
        after_queueing: Callable[[object], None],
        parent: QWidget,
    ) -> None:
        super().__init__(parent)
        self._ctx = ctx
        self._selected = selected
        self._after_queueing = after_queueing
        self._shown_for: str | None = None
        self.refresh_now_action = QAction(self.tr("Refresh now"), parent)
        self.refresh_now_action.setObjectName("refreshPageAction")
        self.menu = QMenu(self.tr("Refresh automatically"), parent)
        self.menu.setObjectName("refreshScheduleMenu")
        self.menu_action = self.menu.menuAction()
        self._group = QActionGroup(self)
        self.schedule_actions: dict[float | None, QAction] = {}
        for seconds, text in zip(
            SCHEDULES,
            (self.tr("Never"), self.tr("Every hour"), self.tr("Every day"), self.tr("Every week")),
            strict=True,
        ):
            act = QAction(text, self.menu)
            act.setCheckable(True)
            act.setData(seconds)
            self._group.addAction(act)
            self.menu.addAction(act)
            self.schedule_actions[seconds] = act
        self.schedule_actions[None].setChecked(True)
        self._connect_signals()

    def _connect_signals(self) -> None:
        self.refresh_now_action.triggered.connect(self._on_refresh_now)
        self._group.triggered.connect(self._on_schedule_chosen)

    @property
    def item_actions(self) -> list[QAction]:
        return [self.refresh_now_action, self.menu_action]

    def update(self, usable: bool) -> None:
        one = self._selected()
        page = (
            one is not None
            and one.type in (ItemType.URL, ItemType.SITEMAP)
            and one.parent_id is None
            and one.status is not ItemStatus.DELETING
        )
        for act in self.item_actions:
            act.setVisible(page)
            act.setEnabled(usable and page)
        if page and one is not None and one.id != self._shown_for:
            self._shown_for = one.id
            item_id = one.id
            self._ctx.tasks.run(
                lambda: self._ctx.service.refresh_interval(item_id),
                lambda seconds: self._show_schedule(item_id, seconds),
                self._on_failed,
                owner=self,
            )
        elif not page:
            self._shown_for = None

    def _show_schedule(self, item_id: str, seconds: object) -> None:
        if item_id != self._shown_for:
            return
        act = self.schedule_actions.get(seconds if isinstance(seconds, float) else None)
        (act or self.schedule_actions[None]).setChecked(True)

    @Slot()
    def _on_refresh_now(self) -> None:
        one = self._selected()
        if one is not None:
            base_id, item_id = one.base_id, one.id
            self._ctx.tasks.run(
                lambda: self._ctx.service.refresh_now(base_id, item_id),
                self._after_queueing,
                self._on_failed,
                owner=self,
            )

    @Slot(QAction)
    def _on_schedule_chosen(self, act: QAction) -> None:
        one = self._selected()
        if one is None:
            return
        seconds = act.data()
        base_id, item_id = one.base_id, one.id
        self._ctx.tasks.run(
            lambda: self._ctx.service.set_refresh(
                base_id, item_id, float(seconds) if seconds is not None else None
            ),
            lambda _result: None,
            self._on_failed,
            owner=self,
        )

    def _on_failed(self, exc: BaseException) -> None:
        self._ctx.notifier.failure(exc)
