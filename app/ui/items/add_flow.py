"""Adding content from the window: admission runs off the GUI thread; sources the base already
has are reported by the engine and the person is asked once per batch whether to skip or
replace them."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from enum import Enum

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QMessageBox, QWidget

from app.knowledge.types import AddReport, Item, OnConflict
from app.ui import errors
from app.ui.context import UiContext


class Kind(Enum):
    PATHS = "paths"
    URLS = "urls"
    SITEMAP = "sitemap"


class AddFlow(QObject):
    # one finished batch: the engine's AddReport (replacements merged in)
    finished = Signal(object)

    def __init__(self, ctx: UiContext, window: QWidget) -> None:
        super().__init__(window)
        self._ctx = ctx
        self._window = window
        # Tests answer the conflict question without a modal box.
        self.ask_conflict: Callable[[list[tuple[str, str]]], OnConflict] = self._ask_conflict

    def add_paths(self, base_id: str, paths: Sequence[str]) -> None:
        self._start(base_id, Kind.PATHS, list(paths), OnConflict.SKIP, None)

    def add_urls(self, base_id: str, urls: Sequence[str], *, sitemap: bool = False) -> None:
        kind = Kind.SITEMAP if sitemap else Kind.URLS
        self._start(base_id, kind, list(urls), OnConflict.SKIP, None)

    def add_note(self, base_id: str, title: str, text: str) -> None:
        def done(item: Item) -> None:
            self._ctx.executor.schedule()
            self.finished.emit(AddReport(added=[item]))

        self._ctx.tasks.run(
            lambda: self._ctx.service.add_note(base_id, title, text),
            done,
            self._on_error,
            owner=self,
        )

    def _start(
        self,
        base_id: str,
        kind: Kind,
        sources: list[str],
        on_conflict: OnConflict,
        first: AddReport | None,
    ) -> None:
        service = self._ctx.service

        def call() -> AddReport:
            if kind is Kind.PATHS:
                return service.add(base_id, sources, on_conflict=on_conflict)
            return service.add_urls(
                base_id, sources, sitemap=kind is Kind.SITEMAP, on_conflict=on_conflict
            )

        self._ctx.tasks.run(
            call,
            lambda report: self._on_report(base_id, kind, report, first),
            self._on_error,
            owner=self,
        )

    def _on_report(
        self, base_id: str, kind: Kind, report: AddReport, first: AddReport | None
    ) -> None:
        self._ctx.executor.schedule()
        replace = (
            first is None
            and bool(report.skipped)
            and self.ask_conflict(report.skipped) is OnConflict.REPLACE
        )
        if replace:
            again = [source for source, _ in report.skipped]
            report.skipped = []
            self._start(base_id, kind, again, OnConflict.REPLACE, report)
            return
        if first is not None:
            report = _merge(first, report)
        self._report_errors(report)
        self.finished.emit(report)

    def _report_errors(self, report: AddReport) -> None:
        if not report.errors:
            return
        lines = "\n".join(
            f"{source}: {errors.add_error_text(message)}" for source, message in report.errors[:10]
        )
        self._ctx.notifier.error(
            self.tr("%n source(s) could not be added", "", len(report.errors)), lines
        )

    def _on_error(self, exc: BaseException) -> None:
        self._ctx.notifier.failure(exc)

    def _ask_conflict(self, skipped: list[tuple[str, str]]) -> OnConflict:
        box = QMessageBox(self._window)
        box.setObjectName("conflictBox")
        box.setIcon(QMessageBox.Icon.Question)
        box.setWindowTitle(self.tr("Already in this knowledge base"))
        box.setText(
            self.tr("%n of the added sources are already in this knowledge base.", "", len(skipped))
        )
        box.setInformativeText(self.tr("Skip them, or replace them with fresh copies?"))
        box.setDetailedText(
            "\n".join(f"{s} ({errors.skip_reason_text(r)})" for s, r in skipped[:200])
        )
        skip = box.addButton(self.tr("Skip"), QMessageBox.ButtonRole.RejectRole)
        replace = box.addButton(self.tr("Replace"), QMessageBox.ButtonRole.AcceptRole)
        box.setDefaultButton(skip)
        box.exec()
        return OnConflict.REPLACE if box.clickedButton() is replace else OnConflict.SKIP


def _merge(first: AddReport, second: AddReport) -> AddReport:
    return AddReport(
        added=first.added + second.added,
        skipped=first.skipped + second.skipped,
        replaced=first.replaced + second.replaced,
        errors=first.errors + second.errors,
    )
