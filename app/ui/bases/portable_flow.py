"""Export and import of whole bases, and copies and moves of items between bases, from the
window: each runs off the GUI thread with a progress dialog (shown only when the work takes
a moment) whose Cancel stops it with nothing left behind."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QObject, Qt, Signal, Slot
from PySide6.QtWidgets import (
    QCheckBox,
    QFileDialog,
    QInputDialog,
    QMessageBox,
    QProgressDialog,
    QWidget,
)

from app.knowledge.types import (
    Base,
    ErrorCode,
    ExportReport,
    ImportReport,
    TransferReport,
    TroveError,
)
from app.ui.context import UiContext

FILE_SUFFIX = ".trovebase"
# The progress dialog appears only when the work lasts longer than this.
PROGRESS_DELAY_MS = 600
PROGRESS_STEPS = 1000


class _Progress(QObject):
    """Carries byte progress from the worker thread to the dialog on the GUI thread."""

    moved = Signal(int, int)


class _Run(QObject):
    """One export or import: its dialog, its cancel flag and its progress bridge."""

    def __init__(self, parent: QWidget, label: str) -> None:
        super().__init__(parent)
        self.cancel = threading.Event()
        self.dialog = QProgressDialog(label, self.tr("Cancel"), 0, PROGRESS_STEPS, parent)
        self.dialog.setObjectName("portableProgress")
        self.dialog.setWindowModality(Qt.WindowModality.WindowModal)
        self.dialog.setMinimumDuration(PROGRESS_DELAY_MS)
        self.dialog.setAutoClose(False)
        self.dialog.setAutoReset(False)
        self.dialog.setValue(0)
        self.bridge = _Progress(self)
        self._connect_signals()

    def _connect_signals(self) -> None:
        self.dialog.canceled.connect(self.cancel.set)
        self.bridge.moved.connect(self._on_moved)

    def report(self, done: int, total: int) -> None:
        """Called on the worker thread: a queued signal takes it to the dialog."""
        self.bridge.moved.emit(done, total)

    @Slot(int, int)
    def _on_moved(self, done: int, total: int) -> None:
        if not self.cancel.is_set():
            self.dialog.setValue(PROGRESS_STEPS * done // total if total else PROGRESS_STEPS)

    def close(self) -> None:
        self.dialog.reset()
        self.dialog.deleteLater()
        self.deleteLater()


class PortableFlow(QObject):
    # a base was imported (the base list reads the bases again and selects it)
    baseImported = Signal(object)  # ImportReport
    exported = Signal(object)  # ExportReport
    transferred = Signal(object)  # TransferReport
    # the person asked to pick a model for an imported base whose model is not here
    modelNeeded = Signal(str)  # base id
    # an export, import or copy ended, whichever way (tests wait on it)
    finished = Signal()

    def __init__(self, ctx: UiContext, parent: QWidget) -> None:
        super().__init__(parent)
        self._ctx = ctx
        self._parent = parent
        # Tests answer the file and base pickers without a modal dialog.
        self.choose_export_path: Callable[[Base], str | None] = self._choose_export_path
        # Whether the export leaves out the paths of files and folders (None: cancelled).
        self.choose_strip_sources: Callable[[Base], bool | None] = self._choose_strip_sources
        # Whether the export carries the originals of folders indexed in place (None: cancelled);
        # asked only of a base that has such files.
        self.choose_with_originals: Callable[[Base], bool | None] = self._choose_with_originals
        self.choose_import_path: Callable[[], str | None] = self._choose_import_path
        self.choose_target: Callable[[list[Base], bool], Base | None] = self._choose_target
        self.running: _Run | None = None

    # -- export and import ---------------------------------------------------------------

    def export_base(self, base: Base) -> None:
        path = self.choose_export_path(base)
        if not path:
            return
        strip = self.choose_strip_sources(base)
        if strip is None:
            return
        target = Path(path if path.endswith(FILE_SUFFIX) else path + FILE_SUFFIX)
        base_id = base.id
        # Reading every item of a large base to know whether it has such files is not the
        # GUI thread's work.
        self._ctx.tasks.run(
            lambda: self._ctx.service.has_in_place_files(base_id),
            lambda in_place: self._export_to(base, target, strip, in_place=in_place),
            lambda exc: self._on_failed(None, exc),
            owner=self,
        )

    def _export_to(self, base: Base, target: Path, strip: bool, *, in_place: bool) -> None:
        originals = self.choose_with_originals(base) if in_place else False
        if originals is None:
            return
        run = self._start(self.tr("Exporting “{0}”…").format(base.name))
        base_id = base.id
        self._ctx.tasks.run(
            lambda: self._ctx.service.export_base(
                base_id,
                target,
                progress=run.report,
                cancelled=run.cancel.is_set,
                strip_sources=strip,
                with_originals=originals,
            ),
            lambda report: self._on_exported(run, base, report),
            lambda exc: self._on_failed(run, exc),
            owner=self,
        )

    def import_file(self) -> None:
        path = self.choose_import_path()
        if not path:
            return
        run = self._start(self.tr("Importing “{0}”…").format(Path(path).name))
        self._ctx.tasks.run(
            lambda: self._ctx.service.import_base(
                Path(path), progress=run.report, cancelled=run.cancel.is_set
            ),
            lambda report: self._on_imported(run, report),
            lambda exc: self._on_failed(run, exc),
            owner=self,
        )

    # -- copies and moves between bases ---------------------------------------------------

    def transfer(self, source_id: str, item_ids: list[str], target: Base, *, move: bool) -> None:
        """Copy (or move) items into `target`; the engine reuses vectors when it can."""
        if not item_ids or target.id == source_id:
            return
        service = self._ctx.service
        target_id = target.id
        self._ctx.tasks.run(
            lambda: service.copy_items(source_id, item_ids, target_id, move=move),
            lambda report: self._on_transferred(target, report, move),
            lambda exc: self._on_failed(None, exc),
            owner=self,
        )

    def pick_target_and_transfer(
        self, source_id: str, item_ids: list[str], bases: list[Base], *, move: bool
    ) -> None:
        """Ask which base the items go to (Copy to… / Move to…), then transfer them."""
        others = [b for b in bases if b.id != source_id]
        if not item_ids or not others:
            if not others:
                self._ctx.notifier.notify(
                    self.tr("No other knowledge base"),
                    self.tr("Create another knowledge base to copy or move items into."),
                )
            return
        target = self.choose_target(others, move)
        if target is not None:
            self.transfer(source_id, item_ids, target, move=move)

    # -- results ------------------------------------------------------------------------

    def _start(self, label: str) -> _Run:
        run = _Run(self._parent, label)
        self.running = run
        return run

    def _finish(self, run: _Run | None) -> None:
        if run is not None:
            run.close()
            if self.running is run:
                self.running = None
        self.finished.emit()

    def _on_exported(self, run: _Run, base: Base, report: ExportReport) -> None:
        self._finish(run)
        text = self.tr("%n document(s) saved to {0}", "", report.items).format(report.path)
        if report.originals_gone:
            text += " " + self.tr(
                "%n original file(s) were gone or outside their folder: those documents "
                "carry their text and index only.",
                "",
                len(report.originals_gone),
            )
        self._ctx.notifier.notify(self.tr("Exported “{0}”").format(base.name), text)
        self.exported.emit(report)

    def _on_imported(self, run: _Run, report: ImportReport) -> None:
        self._finish(run)
        base = report.base
        self.baseImported.emit(report)
        if report.model_available:
            self._ctx.notifier.notify(
                self.tr("Imported “{0}”").format(base.name),
                self.tr("%n item(s) with their index and vectors.", "", report.items),
            )
            return
        base_id = base.id
        self._ctx.notifier.offer(
            self.tr("Imported “{0}” without its embedding model").format(base.name),
            self.tr("Choose a model"),
            lambda: self.modelNeeded.emit(base_id),
            20_000,
            self.tr(
                "Its model {0} is not set up here, so search uses full text only. Set up "
                "the model, or choose another one to compute new vectors."
            ).format(base.embedding_model or ""),
        )

    def _on_transferred(self, target: Base, report: TransferReport, move: bool) -> None:
        self._ctx.executor.schedule()
        count = len(report.copied)
        title = (
            self.tr("Moved %n item(s) to “{0}”", "", count)
            if move
            else self.tr("Copied %n item(s) to “{0}”", "", count)
        ).format(target.name)
        text = (
            self.tr("%n document(s) are being indexed with its model.", "", report.reindexing)
            if report.reindexing
            else self.tr("Their index and vectors came along: nothing is computed again.")
        )
        self._ctx.notifier.notify(title, text)
        self.transferred.emit(report)
        self._finish(None)

    def _on_failed(self, run: _Run | None, exc: BaseException) -> None:
        self._finish(run)
        if isinstance(exc, TroveError) and exc.code is ErrorCode.CANCELLED:
            self._ctx.notifier.notify(self.tr("Cancelled"), self.tr("Nothing of it was kept."))
            return
        self._ctx.notifier.failure(exc)

    # -- pickers --------------------------------------------------------------------------

    def _choose_export_path(self, base: Base) -> str | None:
        path, _ = QFileDialog.getSaveFileName(
            self._parent,
            self.tr("Export knowledge base"),
            base.name + FILE_SUFFIX,
            self.tr("Trove knowledge base (*.trovebase)"),
        )
        return path or None

    def sources_question(self, base: Base) -> QMessageBox:
        """The export's question: the file says where each document came from, which
        names folders of this computer; its checkbox leaves those paths out."""
        box = QMessageBox(
            QMessageBox.Icon.Question,
            self.tr("Export knowledge base"),
            self.tr("Export “{0}” with where its documents came from?").format(base.name),
            QMessageBox.StandardButton.Cancel,
            self._parent,
        )
        box.setObjectName("exportSourcesQuestion")
        box.setInformativeText(
            self.tr(
                "The file keeps, for every file and folder, its path on this computer (such "
                "as /home/you/Documents/…), so whoever receives the file can read your "
                "folder names. Web addresses and notes are part of the documents and stay. "
                "A Trove that imports the file only shows these paths; it never reads them."
            )
        )
        strip = QCheckBox(self.tr("Leave out the paths of files and folders"), box)
        strip.setObjectName("stripSources")
        box.setCheckBox(strip)
        export = box.addButton(self.tr("Export"), QMessageBox.ButtonRole.AcceptRole)
        box.setDefaultButton(export)
        return box

    def _choose_strip_sources(self, base: Base) -> bool | None:
        box = self.sources_question(base)
        try:
            box.exec()
            if box.clickedButton() is not box.defaultButton():
                return None
            return box.checkBox().isChecked()
        finally:
            box.deleteLater()

    def originals_question(self, base: Base) -> QMessageBox:
        """Asked when the base has linked folders indexed in place: Trove holds their text
        and index, not copies of their files, so the export carries the files only if asked."""
        box = QMessageBox(
            QMessageBox.Icon.Question,
            self.tr("Export knowledge base"),
            self.tr("Put the original files of “{0}”'s linked folders in the export?").format(
                base.name
            ),
            QMessageBox.StandardButton.Cancel,
            self._parent,
        )
        box.setObjectName("exportOriginalsQuestion")
        box.setInformativeText(
            self.tr(
                "Its linked folders are indexed where they are: Trove keeps their text and "
                "index, not copies of the files. Without the originals, whoever imports the "
                "file can search and read the text but cannot open the files themselves; "
                "with them, the file grows by the size of those folders."
            )
        )
        with_originals = box.addButton(
            self.tr("Include the originals"), QMessageBox.ButtonRole.AcceptRole
        )
        with_originals.setObjectName("withOriginals")
        text_only = box.addButton(self.tr("Text and index only"), QMessageBox.ButtonRole.ActionRole)
        text_only.setObjectName("textOnly")
        box.setDefaultButton(text_only)
        return box

    def _choose_with_originals(self, base: Base) -> bool | None:
        box = self.originals_question(base)
        try:
            box.exec()
            clicked = box.clickedButton()
            if clicked is None or clicked.objectName() not in ("withOriginals", "textOnly"):
                return None
            return clicked.objectName() == "withOriginals"
        finally:
            box.deleteLater()

    def _choose_import_path(self) -> str | None:
        path, _ = QFileDialog.getOpenFileName(
            self._parent,
            self.tr("Import knowledge base"),
            "",
            self.tr("Trove knowledge base (*.trovebase)"),
        )
        return path or None

    def _choose_target(self, bases: list[Base], move: bool) -> Base | None:
        names = [b.name for b in bases]
        name, ok = QInputDialog.getItem(
            self._parent,
            self.tr("Move to") if move else self.tr("Copy to"),
            self.tr("Knowledge base:"),
            names,
            0,
            False,
        )
        return bases[names.index(name)] if ok and name in names else None
