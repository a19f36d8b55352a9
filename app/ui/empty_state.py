"""The first-run page: what Trove does and the one step to take first. Things dropped on it
go into the knowledge base created next."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QDragEnterEvent, QDragMoveEvent, QDropEvent, QKeyEvent
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from app.ui.icons import app_icon
from app.ui.items.item_view import split_drop

# A link's look (the palette's link colour, underlined) with a focus frame for the keyboard.
LINK_STYLE = (
    "QPushButton { color: palette(link); text-decoration: underline; background: transparent;"
    " border: 1px solid transparent; border-radius: 3px; padding: 2px 6px; }"
    "QPushButton:hover { color: palette(highlight); }"
    "QPushButton:focus { border-color: palette(highlight); }"
)


class LinkButton(QPushButton):
    """A button that looks and acts like a link: pointing hand, Tab reaches it, Space, Enter
    and Return follow it."""

    def __init__(self, text: str, parent: QWidget | None = None) -> None:
        super().__init__(text, parent)
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setAutoDefault(False)
        self.setStyleSheet(LINK_STYLE)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            self.click()
            return
        super().keyPressEvent(event)


class EmptyState(QWidget):
    createRequested = Signal()
    providersRequested = Signal()
    # (local paths, web URLs) dropped on the page
    sourcesDropped = Signal(list, list)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("emptyState")
        self.setAcceptDrops(True)
        logo = QLabel(self)
        logo.setPixmap(app_icon().pixmap(96, 96))
        logo.setAlignment(Qt.AlignmentFlag.AlignCenter)
        title = QLabel(self.tr("Welcome to Trove"), self)
        title.setObjectName("emptyTitle")
        title.setAlignment(Qt.AlignmentFlag.AlignCenter)
        title.setStyleSheet("font-size: 20pt; font-weight: 600;")
        text = QLabel(
            self.tr(
                "A knowledge base collects your files, folders, web pages and notes and makes "
                "them searchable by meaning and by words — for you and for your AI tools. "
                "Everything stays on this computer.\n\n"
                "Create a knowledge base, then drop documents onto it."
            ),
            self,
        )
        text.setObjectName("emptyText")
        text.setWordWrap(True)
        text.setAlignment(Qt.AlignmentFlag.AlignCenter)
        text.setFixedWidth(520)
        create = QPushButton(self.tr("Create a knowledge base"), self)
        create.setObjectName("emptyCreateButton")
        create.setDefault(True)
        providers = LinkButton(self.tr("Set up model providers (optional)"), self)
        providers.setObjectName("emptyProvidersButton")
        # A fixed-width column centred by stretches, not by alignment flags: an aligned item
        # gets its size hint, and the wrapped text would be cut off.
        column = QVBoxLayout()
        for widget in (logo, title, text):
            column.addWidget(widget)
        for button in (create, providers):
            column.addWidget(button, 0, Qt.AlignmentFlag.AlignHCenter)
        row = QHBoxLayout()
        row.addStretch(1)
        row.addLayout(column)
        row.addStretch(1)
        layout = QVBoxLayout(self)
        layout.addStretch(1)
        layout.addLayout(row)
        layout.addStretch(2)
        create.clicked.connect(self.createRequested)
        providers.clicked.connect(self.providersRequested)

    # Drops are always copies: a move would make the drag source delete the originals.

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        self._offer_copy(event)

    def dragMoveEvent(self, event: QDragMoveEvent) -> None:
        self._offer_copy(event)

    def dropEvent(self, event: QDropEvent) -> None:
        paths, urls = split_drop(event.mimeData())
        if not paths and not urls:
            event.ignore()
            return
        event.setDropAction(Qt.DropAction.CopyAction)
        event.accept()
        self.sourcesDropped.emit(paths, urls)

    def _offer_copy(self, event: QDropEvent) -> None:
        if any(split_drop(event.mimeData())):
            event.setDropAction(Qt.DropAction.CopyAction)
            event.accept()
        else:
            event.ignore()
