"""The words around progress numbers: "120 of 480 files · 35 MiB of 140 MiB · ~2 min left".

Methods of a QObject so `self.tr` gives lupdate the plural forms ("1 document", "2
documents"); the numbers come from `app.ui.eta`."""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QObject

from app.knowledge.types import ItemType
from app.ui.eta import RunProgress, approx_duration, format_size


@dataclass(frozen=True, slots=True)
class WorkReport:
    """What the status bar shows."""

    base: RunProgress | None  # the selected base's run
    overall: RunProgress | None  # all bases' run, when bases besides the selected one work

    @property
    def shown(self) -> RunProgress | None:
        """The run the bar shows: the selected base's, else all bases'."""
        if self.base is not None and self.base.total:
            return self.base
        return self.overall if self.overall is not None and self.overall.total else None


class ProgressTexts(QObject):
    def eta(self, seconds: float) -> str:
        """ "~2 min left"."""
        hours, minutes, secs = approx_duration(seconds)
        if hours and minutes:
            return self.tr("~{0} h {1} min left").format(hours, minutes)
        if hours:
            return self.tr("~{0} h left").format(hours)
        if minutes:
            return self.tr("~{0} min left").format(minutes)
        if secs <= 10:
            return self.tr("a few seconds left")
        return self.tr("~{0} s left").format(secs)

    def count(self, run: RunProgress, kind: ItemType | None = None) -> str:
        """ "120 of 480 files" (folders), "pages" (sitemaps), else "documents"."""
        total = run.total  # lupdate finds plurals only when the count is a plain name
        if kind is ItemType.DIRECTORY:
            text = self.tr("{0} of %n file(s)", "", total)
        elif kind is ItemType.SITEMAP:
            text = self.tr("{0} of %n page(s)", "", total)
        else:
            text = self.tr("{0} of %n document(s)", "", total)
        return text.format(run.done)

    def sizes(self, run: RunProgress) -> str:
        """ "35 MiB of 140 MiB", or nothing when a size is unknown."""
        if not run.by_bytes or run.done_bytes is None or run.total_bytes is None:
            return ""
        return self.tr("{0} of {1}").format(
            format_size(run.done_bytes), format_size(run.total_bytes)
        )

    def run_line(self, run: RunProgress, kind: ItemType | None = None) -> str:
        """ "120 of 480 files · 35 MiB of 140 MiB · ~2 min left"."""
        parts = [self.count(run, kind), self.sizes(run)]
        if run.eta is not None:
            parts.append(self.eta(run.eta))
        elif not run.running and run.done < run.total:
            parts.append(self.tr("waiting"))
        return " · ".join(p for p in parts if p)

    def short_line(self, run: RunProgress) -> str:
        """ "120/480 · ~2 min left": the same run for a narrow column."""
        parts = [f"{run.done}/{run.total}"]
        if run.eta is not None:
            parts.append(self.eta(run.eta))
        return " · ".join(parts)

    def scope(self, run: RunProgress) -> str:
        """One scope's part of the status bar: documents, sources being expanded, deletions."""
        total, preparing, deleting = run.total, run.preparing, run.deleting
        parts: list[str] = []
        if total and (run.running or run.done):
            parts.append(self.tr("Indexing {0}").format(self.run_line(run)))
        elif total:
            parts.append(self.tr("%n document(s) waiting", "", total))
        if preparing:
            parts.append(self.tr("Preparing %n folder(s) or sitemap(s)", "", preparing))
        if deleting:
            parts.append(self.tr("Deleting %n document(s)", "", deleting))
        return " · ".join(parts)

    def speed(self, run: RunProgress, speed: float) -> str:
        """ "1.2 MiB/s", or documents per second when sizes are unknown."""
        if run.by_bytes:
            return self.tr("{0}/s").format(format_size(speed))
        return self.tr("{0} documents/s").format(f"{speed:.1f}")

    def report(self, report: WorkReport) -> str:
        """The status bar's line: the selected base, then all bases; "Idle" without work."""
        parts = []
        if report.base is not None:
            parts.append(self.scope(report.base))
        if report.overall is not None:
            parts.append(self.tr("All bases: {0}").format(self.scope(report.overall)))
        return "  |  ".join(p for p in parts if p) or self.tr("Idle")

    def tooltip(self, report: WorkReport) -> str:
        """The line split by scope, with the speed of the run on the bar."""
        run = report.shown
        if run is None:
            return ""
        tip = self.report(report).replace("  |  ", "\n")
        if run.rate:
            tip += "\n" + self.tr("Speed: {0}").format(self.speed(run, run.rate))
        return tip


_texts: ProgressTexts | None = None


def texts() -> ProgressTexts:
    """The one ProgressTexts (its language follows the installed translators)."""
    global _texts
    if _texts is None:
        _texts = ProgressTexts()
    return _texts
