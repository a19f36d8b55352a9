"""Pictures of the shared-base dialogs: New knowledge base with "PostgreSQL server" chosen,
and Attach a shared knowledge base.

    QT_QPA_PLATFORM=offscreen python -m tools.shared_base_screenshots [--lang en|zh_CN] [--out docs]

Drawn offscreen in a temporary home; no server is contacted (the address is only typed).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication, QWidget

from app.knowledge.service import KnowledgeService
from app.runtime.executor import JobExecutor
from app.ui import i18n
from app.ui.bases.attach_dialog import AttachBaseDialog
from app.ui.context import UiContext
from app.ui.notifications import Notifier
from app.ui.settings.new_base_dialog import NewBaseDialog
from app.ui.tasks import BackgroundTasks
from app.ui.waiting import wait_until

ADDRESS = "postgresql://trove@db.team.example:5432/knowledge"


def grab(widget: QWidget, path: Path) -> None:
    widget.show()
    QApplication.processEvents()
    widget.adjustSize()
    QApplication.processEvents()
    if not widget.grab().save(str(path)):
        raise SystemExit(f"could not write {path}")
    print(path)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lang", default="en", choices=("en", "zh_CN"))
    parser.add_argument("--out", type=Path, default=Path("docs"))
    args = parser.parse_args()
    app = QApplication(sys.argv[:1])
    i18n.install_translators(app, args.lang)
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as home:
        service = KnowledgeService(Path(home) / "home")
        executor = JobExecutor(service, max_workers=1)
        tasks = BackgroundTasks()
        settings = QSettings(str(Path(home) / "settings.ini"), QSettings.Format.IniFormat)
        ctx = UiContext(service, executor, tasks, settings, Notifier())
        dialog = NewBaseDialog(ctx)
        wait_until(lambda: tasks.pending == 0, 30, "the model lists")
        dialog.name_edit.setText("研究资料" if args.lang == "zh_CN" else "Team research")
        dialog.server_choice.setChecked(True)
        dialog.server.address_edit.setText(ADDRESS)
        dialog.server.password_edit.setText("secret")
        grab(dialog, args.out / f"new-base-server-{args.lang}.png")
        dialog.close()
        attach = AttachBaseDialog(ctx)
        attach.server.address_edit.setText(ADDRESS)
        grab(attach, args.out / f"attach-base-{args.lang}.png")
        attach.close()
        tasks.wait()
        service.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
