"""What the item tree says about a linked folder: a short state for its Type cell and the
lines of its tooltip (the last sync's changes, an error)."""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication, QDateTime, QLocale

from app.knowledge.service import SyncChanges, SyncState


def short_state(state: SyncState) -> str:
    link = state.link
    if link.syncing:
        if link.total:
            return QCoreApplication.translate("SyncTexts", "Linked · syncing {0}/{1}").format(
                link.done, link.total
            )
        return QCoreApplication.translate("SyncTexts", "Linked · syncing")
    if link.last_error:
        return QCoreApplication.translate("SyncTexts", "Linked · sync problem")
    if state.pending:
        return QCoreApplication.translate("SyncTexts", "Linked · sync queued")
    if state.watching:
        return QCoreApplication.translate("SyncTexts", "Linked · watching")
    return QCoreApplication.translate("SyncTexts", "Linked folder")


def when(stamp: float) -> str:
    moment = QDateTime.fromMSecsSinceEpoch(int(stamp * 1000))
    return QLocale().toString(moment, QLocale.FormatType.ShortFormat)


def change_counts(changes: SyncChanges) -> str:
    text = QCoreApplication.translate(
        "SyncTexts", "{0} added, {1} changed, {2} removed, {3} renamed"
    ).format(len(changes.added), len(changes.changed), len(changes.removed), len(changes.renamed))
    if changes.deferred:
        text += QCoreApplication.translate("SyncTexts", "; {0} still being written").format(
            len(changes.deferred)
        )
    return text


def tooltip_lines(state: SyncState) -> list[str]:
    link = state.link
    lines = [
        QCoreApplication.translate(
            "SyncTexts", "Kept in sync with its folder (watched while Trove runs)"
        )
        if state.watching
        else QCoreApplication.translate("SyncTexts", "Kept in sync with its folder")
    ]
    if link.last_synced_at is not None:
        lines.append(
            QCoreApplication.translate("SyncTexts", "Last synced: {0}").format(
                when(link.last_synced_at)
            )
        )
    else:
        lines.append(QCoreApplication.translate("SyncTexts", "Not synced yet"))
    if state.last is not None:
        lines.append(
            QCoreApplication.translate("SyncTexts", "Last changes: {0}").format(
                change_counts(state.last)
            )
        )
    if link.last_error:
        lines.append(
            QCoreApplication.translate("SyncTexts", "Sync problem: {0}").format(link.last_error)
        )
    return lines
