"""Where log records and library warnings go.

Trove's own messages (loggers under `app`) reach the terminal; what libraries say (pypdf's
"EOF marker not found", openpyxl, `warnings.warn` from anywhere) goes to the log file
`<home>/logs/trove.log` only: a person running `trove add` should see Trove's words, not a
parser's internals. Reader worker processes find the file through `LOG_FILE_ENV`, which the
main process sets and spawned workers inherit.
"""

from __future__ import annotations

import contextlib
import logging
import logging.handlers
import os
import sys
from pathlib import Path
from typing import TextIO

LOG_FILE_ENV = "TROVE_LOG_FILE"
LOGS_DIR = "logs"
LOG_FILE = "trove.log"
OWN_LOGGER = "app"
TERMINAL_FORMAT = "%(levelname)s %(name)s: %(message)s"
FILE_FORMAT = "%(asctime)s %(process)d %(levelname)s %(name)s: %(message)s"
MAX_LOG_BYTES = 2 * 1024 * 1024
LOG_BACKUPS = 2

# Marks the handlers installed here, so configuring twice (tests call the CLI's main() many
# times in one process) replaces them instead of stacking duplicates.
_TROVE_HANDLER = "_trove_handler"


class _OwnRecords(logging.Filter):
    """Passes only Trove's own loggers."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.name == OWN_LOGGER or record.name.startswith(OWN_LOGGER + ".")


class _Stderr(logging.StreamHandler):  # type: ignore[type-arg]
    """Writes to whatever sys.stderr is at the time, like logging's own last resort, so a
    caller that swaps sys.stderr (tests, an embedding app) is followed."""

    @property
    def stream(self) -> TextIO:
        return sys.stderr

    @stream.setter
    def stream(self, _value: TextIO) -> None:
        pass


class _QuietRotatingFile(logging.handlers.RotatingFileHandler):
    def handleError(self, record: logging.LogRecord) -> None:
        # A log file that vanished or filled the disk must not print a traceback on stderr.
        pass


class _QuietFile(logging.FileHandler):
    def handleError(self, record: logging.LogRecord) -> None:
        pass


def log_file_path(home: Path) -> Path:
    return home / LOGS_DIR / LOG_FILE


def _tag(handler: logging.Handler) -> logging.Handler:
    setattr(handler, _TROVE_HANDLER, True)
    return handler


def _replace_handlers(root: logging.Logger, handlers: list[logging.Handler]) -> None:
    for old in [h for h in root.handlers if getattr(h, _TROVE_HANDLER, False)]:
        root.removeHandler(old)
        _close_quietly(old)
    for handler in handlers:
        root.addHandler(_tag(handler))


def _close_quietly(handler: logging.Handler) -> None:
    """Close a handler whose last flush may meet a full disk (or a closed stderr): the
    command has ended, and what it said matters more than a lost log line. The file is
    closed all the same (the stream's close releases its descriptor even when its flush
    fails)."""
    with contextlib.suppress(OSError, ValueError):
        handler.close()


def _file_handler(path: Path, *, rotate: bool) -> logging.Handler | None:
    """A handler appending to `path`, or None when the folder cannot be made (read-only or
    full disk): losing library chatter must never stop a command."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    handler: logging.Handler
    if rotate:
        handler = _QuietRotatingFile(
            path, maxBytes=MAX_LOG_BYTES, backupCount=LOG_BACKUPS, encoding="utf-8", delay=True
        )
    else:
        # Workers append without rotating: only the main process renames the file.
        handler = _QuietFile(path, encoding="utf-8", delay=True)
    handler.setFormatter(logging.Formatter(FILE_FORMAT))
    return handler


def _silent_fallback() -> logging.Handler:
    # With no handler at all, logging's last resort prints warnings raw on stderr.
    return logging.NullHandler()


def configure_logging(home: Path, *, verbose: bool = False) -> Path | None:
    """Main process: Trove's messages to stderr, everything to the log file; returns the
    log file's path, or None when it cannot be written."""
    logging.captureWarnings(True)
    root = logging.getLogger()
    root.setLevel(logging.INFO if verbose else logging.WARNING)
    terminal = _Stderr()
    terminal.setFormatter(logging.Formatter(TERMINAL_FORMAT))
    terminal.addFilter(_OwnRecords())
    path = log_file_path(home)
    to_file = _file_handler(path, rotate=True)
    _replace_handlers(root, [terminal, to_file or _silent_fallback()])
    if to_file is None:
        os.environ.pop(LOG_FILE_ENV, None)
        return None
    os.environ[LOG_FILE_ENV] = str(path)
    return path


def reset_logging() -> None:
    """Remove what configure_logging installed (a caller running several commands in one
    process, e.g. tests, must not leave handlers pointing at a deleted data folder)."""
    _replace_handlers(logging.getLogger(), [])
    logging.captureWarnings(False)
    os.environ.pop(LOG_FILE_ENV, None)


def configure_worker_logging() -> None:
    """Reader worker: every record and warning to the main process's log file, none to the
    terminal the worker inherited."""
    logging.captureWarnings(True)
    root = logging.getLogger()
    root.setLevel(logging.WARNING)
    location = os.environ.get(LOG_FILE_ENV)
    to_file = _file_handler(Path(location), rotate=False) if location else None
    _replace_handlers(root, [to_file or _silent_fallback()])
