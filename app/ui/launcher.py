"""Starts the window: Qt application, language, the engine and its runtime, an asyncio loop
(qasync) for the window's network calls, then the main window.

`--screenshot PATH` renders the window with a demo base to a PNG and exits (`--dark` forces a
dark palette, for the README's dark picture or to try it out); `--self-test`
opens the window, runs one search through it, prints one JSON line and exits (the frozen
build's smoke test uses it)."""

from __future__ import annotations

import argparse
import asyncio
import gc
import logging
import os
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

import qasync
from PySide6.QtCore import QObject, QProcess, QSettings, Qt
from PySide6.QtWidgets import QApplication, QMessageBox

from app.knowledge.data_layout import resolve_home
from app.knowledge.logs import configure_logging
from app.knowledge.service import open_service
from app.knowledge.types import TroveError
from app.runtime.main_thread_gc import MainThreadCollector
from app.runtime.process_executor import window_executor
from app.ui import errors, i18n, theme
from app.ui.context import UiContext
from app.ui.icons import app_icon
from app.ui.notifications import Notifier
from app.ui.tasks import BackgroundTasks
from app.ui.terminate import TerminateWatch

log = logging.getLogger(__name__)

# How often the GIL changes hands in the window's process (see settle_heap).
GUI_SWITCH_INTERVAL_S = 0.001


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="trove", description="Trove desktop window")
    parser.add_argument("--home", help="data directory (default: TROVE_HOME or the per-user one)")
    parser.add_argument("--lang", choices=i18n.LANGUAGES, help="interface language")
    parser.add_argument("--screenshot", metavar="PATH", help="render a demo window to a PNG")
    parser.add_argument("--self-test", action="store_true", help="open, search once, exit")
    parser.add_argument(
        "--dark", action="store_true", help="use a dark palette whatever the system's is"
    )
    parser.add_argument(
        "--ask", action="store_true", help="with --screenshot: show the Ask view with an answer"
    )
    return parser.parse_args(list(argv))


def application() -> QApplication:
    app = QApplication.instance()
    if isinstance(app, QApplication):
        return app
    QApplication.setHighDpiScaleFactorRoundingPolicy(
        Qt.HighDpiScaleFactorRoundingPolicy.PassThrough
    )
    app = QApplication(sys.argv[:1])
    app.setApplicationName("Trove")
    app.setOrganizationName("Trove")
    app.setApplicationDisplayName("Trove")
    app.setDesktopFileName("trove")
    app.setWindowIcon(app_icon())
    return app


def build_context(home: Path, settings: QSettings) -> UiContext:
    service = open_service(home)
    return UiContext(
        service=service,
        executor=window_executor(home, service),
        tasks=BackgroundTasks(),
        settings=settings,
        notifier=Notifier(),
    )


def close_context(ctx: UiContext) -> None:
    ctx.watching.stop()  # asks for no more syncs before the executor stops
    ctx.server_watching.stop()
    ctx.executor.shutdown()
    ctx.tasks.wait()
    ctx.service.close()


def no_display() -> bool:
    """On Linux without X11 or Wayland Qt would abort; say what to do instead."""
    if not sys.platform.startswith("linux") or os.environ.get("QT_QPA_PLATFORM"):
        return False
    return not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def main(argv: Sequence[str]) -> int:
    args = parse_args(argv)
    if no_display():
        print(
            "trove: no display to open the window on (DISPLAY and WAYLAND_DISPLAY are not set).\n"
            "Use the commands instead (`trove --help`), or set QT_QPA_PLATFORM=offscreen "
            "for --screenshot and --self-test.",
            file=sys.stderr,
        )
        return 2
    if args.screenshot and not args.home and not os.environ.get("TROVE_HOME"):
        # A screenshot never touches the person's own knowledge bases.
        args.home = tempfile.mkdtemp(prefix="trove-demo-")
    home = resolve_home(args.home)
    home.mkdir(parents=True, exist_ok=True)
    # Trove's warnings to the terminal, libraries' chatter (and reader workers') to the log file.
    configure_logging(home)
    app = application()
    if args.dark:
        theme.force_dark(app)
    settings = QSettings(str(home / "settings.ini"), QSettings.Format.IniFormat)
    language = i18n.choose_language(args.lang, settings)
    translators = i18n.install_translators(app, language)
    try:
        ctx = build_context(home, settings)
    except TroveError as exc:
        title, detail = errors.describe(exc)
        if args.self_test or args.screenshot:  # scripted runs: nobody to click a box away
            print(f"error: {exc.code}: {exc.message} (data folder: {home})", file=sys.stderr)
        else:
            QMessageBox.critical(None, "Trove", f"{title}\n\n{detail}\n\n{home}")
        return 1
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    try:
        if args.screenshot:
            from app.ui.screenshot import render_demo

            return render_demo(ctx, Path(args.screenshot), language, ask=args.ask)
        if args.self_test:
            from app.ui.self_test import run_self_test

            return run_self_test(ctx)
        return run_window(ctx, loop)
    finally:
        close_context(ctx)
        i18n.remove_translators(app, translators)
        loop.close()


def run_window(ctx: UiContext, loop: asyncio.AbstractEventLoop) -> int:
    from app.ui.main_window import MainWindow

    window = MainWindow(ctx)
    terminate = TerminateWatch(window.close_without_asking)
    try:
        window.show()
        ctx.service.warm_up()
        ctx.executor.start()
        ctx.watching.start()
        ctx.server_watching.start()
        window.start()
        settle_heap(window)
        app = QApplication.instance()
        assert isinstance(app, QApplication)
        quit_event = asyncio.Event()
        app.aboutToQuit.connect(quit_event.set)
        app.lastWindowClosed.connect(quit_event.set)
        loop.run_until_complete(quit_event.wait())
    finally:  # the shutdown after this must not swallow a SIGTERM into an unread socket
        terminate.stop()
    if window.restart_requested:
        restart()
    return 0


def settle_heap(window: QObject) -> MainThreadCollector:
    """Tune the interpreter for a window that shares its process with other threads (its
    reads, its network calls).

    Cyclic garbage is collected on the window's thread from the event loop, never by
    whichever thread allocates (app/runtime/main_thread_gc.py: a collection inside a Qt
    destructor deadlocked); the collector lives as long as `window`.

    Put what the start built (modules, Qt bindings, the window: most of the heap) out of
    the cyclic collector's reach, so a full collection walks only what came later. In the
    responsiveness bench, while answers streamed into the Ask view, full collections of the
    whole heap held the window's thread 74-106 ms.

    Hand the GIL over every 1 ms instead of 5: the window's thread gives the GIL up at each
    wait (the event loop, a socket read of a streamed answer) and must win it back from job
    threads that hold it for a whole switch interval each time. Measured with the bench
    while 300 files indexed and answers streamed: longest stall 117-141 ms at 5 ms, 51-62 ms
    at 1 ms, files indexed per second unchanged (3.1-3.6)."""
    gc.freeze()
    sys.setswitchinterval(GUI_SWITCH_INTERVAL_S)
    collector = MainThreadCollector(window)
    collector.start()
    return collector


def restart() -> None:
    """Start Trove again as a new process (after the language changed)."""
    if getattr(sys, "frozen", False):
        program, args = sys.executable, sys.argv[1:]
    else:
        program, args = sys.executable, ["-m", "app", *sys.argv[1:]]
    if not QProcess.startDetached(program, args):
        log.error("could not start %s again", program)
