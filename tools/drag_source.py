"""A window in a process of its own that starts a real drag of files (a file manager's part).

    python tools/drag_source.py PATH...

Pressing the mouse on it starts a QDrag carrying the paths as file URLs, offering Copy and
Move (as a file manager does), so a drop target sees the same XDND drag a person makes.
It prints the action the drop completed with (`copy`, `move` or `ignore`) and exits a few
seconds later, so a caller can check that the target never asked for a Move.
"""

from __future__ import annotations

import sys
from pathlib import Path

from PySide6.QtCore import QMimeData, Qt, QTimer, QUrl
from PySide6.QtGui import QDrag, QMouseEvent
from PySide6.QtWidgets import QApplication, QLabel

ACTIONS = {
    Qt.DropAction.CopyAction: "copy",
    Qt.DropAction.MoveAction: "move",
    Qt.DropAction.LinkAction: "link",
    Qt.DropAction.IgnoreAction: "ignore",
}


class DragSource(QLabel):
    def __init__(self, paths: list[Path]) -> None:
        super().__init__(f"Drag {len(paths)} files from here")
        self.setWindowTitle("Drag source")
        self.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.setStyleSheet("font-size: 16px; background: #fff8d0; border: 2px dashed #b08d00;")
        self.resize(260, 160)
        self._paths = paths

    def mousePressEvent(self, event: QMouseEvent) -> None:
        mime = QMimeData()
        mime.setUrls([QUrl.fromLocalFile(str(p)) for p in self._paths])
        drag = QDrag(self)
        drag.setMimeData(mime)
        done = drag.exec(
            Qt.DropAction.CopyAction | Qt.DropAction.MoveAction, Qt.DropAction.MoveAction
        )
        print(ACTIONS.get(done, str(done)), flush=True)
        # Stay a moment, as a file manager does: the target reads the dropped data from us
        # (an X selection request) after the drop, and a source already gone answers nothing.
        QTimer.singleShot(5000, QApplication.quit)


def main() -> int:
    app = QApplication(sys.argv[:1])
    source = DragSource([Path(p).resolve() for p in sys.argv[1:]])
    source.show()
    return app.exec()


if __name__ == "__main__":
    sys.exit(main())
