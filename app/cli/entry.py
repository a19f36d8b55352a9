"""`main()`: parse, open the data folder, run one command, turn failures into exit codes."""

from __future__ import annotations

import argparse
import io
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TextIO

import apsw

from app.cli.failures import damaged, storage_error
from app.cli.output import EXIT_FAILED, EXIT_OK, EXIT_USAGE, shown
from app.cli.parser import build_parser, parse
from app.knowledge.data_layout import resolve_home
from app.knowledge.db import catalog_readable
from app.knowledge.logs import configure_logging, reset_logging
from app.knowledge.pipeline.store.index_store import CORRUPTION_ERRORS
from app.knowledge.service import KnowledgeService
from app.knowledge.types import ErrorCode, TroveError

Command = Callable[[KnowledgeService, argparse.Namespace], int]


def main(argv: Sequence[str] | None = None) -> int:
    _tolerant_output()
    guard = _GuardedOutput(sys.stdout)
    sys.stdout = guard
    try:
        code = _run(argv)
        # Flushed here, not at interpreter exit, so a closed pipe is caught below.
        sys.stdout.flush()
    except BrokenPipeError:
        # `trove status B | head -1`: the reader left; stop quietly (Python docs, "Note on
        # SIGPIPE"): point stdout at devnull so the final flush at exit cannot fail again.
        _stdout_to_devnull()
        return EXIT_FAILED
    except OutputFailed as exc:
        _stdout_to_devnull()  # the final flush at exit would fail (and print) again
        print(
            f"error: the output could not be written ({exc.cause.strerror or exc.cause}); "
            "nothing is wrong with Trove's data folder",
            file=sys.stderr,
        )
        return EXIT_FAILED
    finally:
        if sys.stdout is guard:
            sys.stdout = guard.inner
    return code


class OutputFailed(Exception):
    """Writing the command's output failed (`> /dev/full`, a full disk under a redirect):
    not a problem of Trove's data folder, whatever the errno says."""

    def __init__(self, cause: OSError) -> None:
        super().__init__(str(cause))
        self.cause = cause


class _GuardedOutput:
    """stdout, whose write errors say they are stdout's: an ENOSPC from `print` would
    otherwise be taken for the data folder's full disk. A closed pipe stays a
    BrokenPipeError (main ends quietly)."""

    def __init__(self, inner: TextIO) -> None:
        self.inner = inner

    def write(self, text: str) -> int:
        try:
            return self.inner.write(text)
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise OutputFailed(exc) from exc

    def flush(self) -> None:
        try:
            self.inner.flush()
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise OutputFailed(exc) from exc

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def _tolerant_output() -> None:
    """Whatever text reaches stdout/stderr (a path or argv with undecodable bytes) is
    written, escaped if need be, never a UnicodeEncodeError; piped stdout is UTF-8."""
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors="backslashreplace")
    if isinstance(sys.stdout, io.TextIOWrapper) and not sys.stdout.isatty():
        sys.stdout.reconfigure(encoding="utf-8")


def _stdout_to_devnull() -> None:
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):
        return  # not a real file (a test's buffer): nothing will flush it at exit
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fd)
    os.close(devnull)


def _not_a_folder(home: Path) -> bool:
    """`--home /dev/null`, or a path below a file: no data folder can be there."""
    current = home
    while not current.exists():
        if current.parent == current:
            return False
        current = current.parent
    return not current.is_dir()


def _run(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    args = parse(parser, argv)
    func: Command | None = getattr(args, "func", None)
    if func is None:
        parser.print_help()
        return EXIT_OK
    home = resolve_home(args.home)
    configure_logging(home, verbose=args.verbose)
    try:
        return _run_command(func, args, home)
    finally:
        reset_logging()


def _run_command(func: Command, args: argparse.Namespace, home: Path) -> int:
    if _not_a_folder(home):
        print(
            f"error: {ErrorCode.INVALID_ARGUMENT}: the data folder {home} is not a folder "
            "(pass --home or TROVE_HOME a folder, or a path where one can be made)",
            file=sys.stderr,
        )
        return EXIT_FAILED
    try:
        svc = KnowledgeService(home)
    except CORRUPTION_ERRORS as exc:
        return damaged(exc, home, catalog=True)
    except (OSError, apsw.Error) as exc:
        return storage_error(exc, home)
    try:
        return func(svc, args)
    except TroveError as exc:
        print(f"error: {exc.code}: {shown(exc.message)}", file=sys.stderr)
        return EXIT_FAILED
    except UnicodeEncodeError as exc:
        # An argument with bytes that are no text (decoded with surrogateescape) can name
        # no base, item or stored source: say so instead of a traceback.
        bad = exc.object[exc.start : exc.end] if isinstance(exc.object, str) else ""
        print(
            f"error: {ErrorCode.INVALID_ARGUMENT}: an argument is not valid text "
            f"(it holds {bad!a}, bytes that decode to no character)",
            file=sys.stderr,
        )
        return EXIT_USAGE
    except BrokenPipeError:
        raise  # an OSError, but not the data folder's: main() ends quietly
    except CORRUPTION_ERRORS as exc:
        return damaged(exc, home, catalog=not catalog_readable(svc.layout.catalog_path))
    except (OSError, apsw.Error) as exc:
        return storage_error(exc, home)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    finally:
        svc.close()
