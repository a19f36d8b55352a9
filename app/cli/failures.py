"""Storage failures said in one line with the way out, never as a traceback."""

from __future__ import annotations

import sys
from pathlib import Path

import apsw

from app.cli.output import EXIT_FAILED
from app.knowledge.data_layout import DataLayout
from app.knowledge.jobs.errors import storage_failure
from app.knowledge.types import (
    ErrorCode,
)


def damaged(exc: apsw.Error, home: Path, *, catalog: bool) -> int:
    """A damaged database is said in one line with the way out, never as a traceback."""
    if catalog:
        code, what = ErrorCode.CATALOG_DAMAGED, f"the catalog {DataLayout(home).catalog_path}"
    else:
        code, what = ErrorCode.INDEX_CORRUPT, "an index"
    print(
        f"error: {code}: {what} is damaged ({exc}); run trove doctor to see what and how to "
        f"repair it (data folder: {home})",
        file=sys.stderr,
    )
    return EXIT_FAILED


def storage_error(exc: OSError | apsw.Error, home: Path) -> int:
    """A full disk or a read-only data dir is said plainly; anything else is a bug."""
    failure = storage_failure(exc, home, then="run the command again")
    if failure is None:
        raise exc
    print(f"error: {failure.code}: {failure.message} (data folder: {home})", file=sys.stderr)
    return EXIT_FAILED
