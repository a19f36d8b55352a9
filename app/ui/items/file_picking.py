"""The file dialogs that add content: they open in the folder the person added from last
(else the Documents folder) and offer the formats Trove reads before "All files"."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QCoreApplication, QSettings, QStandardPaths
from PySide6.QtWidgets import QFileDialog, QWidget

from app.ui.context import UiContext

# the folder files or a folder were last added from
LAST_FOLDER_SETTING = "items/lastFolder"
# formats named first in the filter; the rest follow in order
_COMMON_EXTENSIONS = (".md", ".txt", ".pdf", ".docx", ".pptx", ".xlsx", ".epub", ".html")


def pick_files(parent: QWidget, ctx: UiContext, caption: str) -> list[str]:
    paths, _ = QFileDialog.getOpenFileNames(
        parent,
        caption,
        start_folder(ctx.settings),
        file_filters(ctx.service.supported_extensions()),
    )
    if paths:
        ctx.settings.setValue(LAST_FOLDER_SETTING, str(Path(paths[0]).parent))
    return list(paths)


def pick_folder(parent: QWidget, ctx: UiContext, caption: str) -> str:
    folder = QFileDialog.getExistingDirectory(parent, caption, start_folder(ctx.settings))
    if folder:
        # Next time, open beside it: the person may add its siblings.
        ctx.settings.setValue(LAST_FOLDER_SETTING, str(Path(folder).parent))
    return folder


def start_folder(settings: QSettings) -> str:
    """The folder used last while it still exists, else the Documents folder."""
    last = str(settings.value(LAST_FOLDER_SETTING, "") or "")
    if last and Path(last).is_dir():
        return last
    documents = QStandardPaths.StandardLocation.DocumentsLocation
    return QStandardPaths.writableLocation(documents) or str(Path.home())


def file_filters(extensions: frozenset[str]) -> str:
    """ "Documents (*.md *.txt …);;All files (*)" for these extensions."""
    first = [e for e in _COMMON_EXTENSIONS if e in extensions]
    patterns = " ".join(f"*{e}" for e in first + sorted(extensions - set(first)))
    documents = QCoreApplication.translate("FilePicking", "Documents ({0})").format(patterns)
    return ";;".join([documents, QCoreApplication.translate("FilePicking", "All files (*)")])
