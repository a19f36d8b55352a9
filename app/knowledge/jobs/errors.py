"""How a job handler says it failed or stopped, and which failures are the storage's."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import apsw

from app.knowledge.pipeline.store.base_index import IndexUnavailable
from app.knowledge.pipeline.store.index_store import INDEX_DIR
from app.knowledge.types import Base, CancelReason, ErrorCode, TroveError


class JobCancelled(Exception):
    def __init__(self, reason: CancelReason) -> None:
        super().__init__(str(reason))
        self.reason = reason


class ItemFailure(Exception):
    """The job's item fails with this code; not retried."""

    def __init__(self, code: ErrorCode | str, message: str) -> None:
        super().__init__(message)
        self.code = str(code)
        self.message = message


class RetryableFailure(Exception):
    """A transient failure (network, rate limit): the runner retries with backoff."""

    def __init__(
        self, code: ErrorCode | str, message: str, retry_after: float | None = None
    ) -> None:
        super().__init__(message)
        self.code = str(code)
        self.message = message
        self.retry_after = retry_after


class PollLater(Exception):
    """Work running elsewhere (text recognition) is not finished: run this job again after
    `delay` seconds. Not a failure: no attempt is used up."""

    def __init__(self, delay: float, why: str | None = None, *, fresh: bool = False) -> None:
        super().__init__(why or f"poll again in {delay:.1f} s")
        self.delay = delay
        # The run made progress: its failed attempts so far are forgotten (they count
        # failed runs in a row).
        self.fresh = fresh


# Errnos of a write the storage refused. Windows' ERROR_DISK_FULL and ERROR_HANDLE_DISK_FULL
# arrive as ENOSPC; a quota is as full as a disk to the person.
_FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT})
_READ_ONLY_ERRNOS = frozenset({errno.EROFS, errno.EACCES, errno.EPERM})

STORAGE_FULL_MESSAGE = (
    "the disk that holds Trove's data is full ({detail}); free some space, then {then}"
)
STORAGE_READ_ONLY_MESSAGE = (
    "Trove's data folder is not writable ({detail}); make it writable, then {then}"
)


def storage_failure(
    exc: BaseException, data_dir: Path, *, then: str = "reindex"
) -> ItemFailure | None:
    """The failure to record when Trove's own storage under `data_dir` refused a write
    (disk full, read-only folder or file), or None for any other error. `then` is what the
    message tells the person to do once the storage is fixed.

    Permission errors count only for paths below `data_dir`: a source file the person
    cannot read is a READ_FAILED of that file, not a problem of Trove's storage. The cause
    may hide behind a later error: on a full disk SQLite rolls the transaction back itself,
    and the rollback that `with connection:` then attempts fails with an SQLError whose
    context is the FullError.
    """
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        found = _storage_failure(current, data_dir, then)
        if found is not None:
            return found
        current = current.__cause__ or current.__context__
    return None


def _storage_failure(exc: BaseException, data_dir: Path, then: str) -> ItemFailure | None:
    if isinstance(exc, IndexUnavailable):
        return ItemFailure(ErrorCode.SERVER_UNAVAILABLE, f"{exc}; {then} once it is back")
    if isinstance(exc, apsw.FullError):
        return ItemFailure(
            ErrorCode.STORAGE_FULL, STORAGE_FULL_MESSAGE.format(detail=exc, then=then)
        )
    if isinstance(exc, apsw.ReadOnlyError):
        return ItemFailure(
            ErrorCode.STORAGE_READ_ONLY, STORAGE_READ_ONLY_MESSAGE.format(detail=exc, then=then)
        )
    if isinstance(exc, apsw.CantOpenError) and not _writable(data_dir):
        # SQLite cannot create an index (or its WAL files) in a folder it may not write.
        return ItemFailure(
            ErrorCode.STORAGE_READ_ONLY,
            STORAGE_READ_ONLY_MESSAGE.format(detail=f"{exc}: {data_dir}", then=then),
        )
    if not isinstance(exc, OSError):
        return None
    detail = f"{exc.strerror or exc}: {exc.filename}" if exc.filename else str(exc.strerror or exc)
    if exc.errno in _FULL_ERRNOS:
        return ItemFailure(
            ErrorCode.STORAGE_FULL, STORAGE_FULL_MESSAGE.format(detail=detail, then=then)
        )
    if exc.errno in _READ_ONLY_ERRNOS and any(
        _below(name, data_dir) for name in (exc.filename, exc.filename2)
    ):
        return ItemFailure(
            ErrorCode.STORAGE_READ_ONLY, STORAGE_READ_ONLY_MESSAGE.format(detail=detail, then=then)
        )
    return None


def _below(name: object, folder: Path) -> bool:
    if not isinstance(name, str | bytes | os.PathLike):
        return False
    try:
        path = Path(os.fsdecode(name)).absolute()
        return path == folder.absolute() or folder.absolute() in path.parents
    except (TypeError, ValueError):
        return False


def _writable(folder: Path) -> bool:
    """Whether this process may create files in the base's folder and its index folder
    (checked with the effective ids and capabilities the write itself met)."""
    effective = os.access in os.supports_effective_ids
    for candidate in (folder, folder / INDEX_DIR):
        if candidate.is_dir() and not os.access(
            candidate, os.W_OK | os.X_OK, effective_ids=effective
        ):
            return False
    return True


def index_corrupt(base: Base, exc: BaseException) -> TroveError:
    """The one-line error for a base whose index file is damaged, naming the way out."""
    return TroveError(
        ErrorCode.INDEX_CORRUPT,
        f"the index of knowledge base {base.name!r} is damaged ({exc}); "
        f"rebuild it from the base's own copies: trove restore {base.id}",
    )
