"""One lock per model id, held while a download, an import or a removal changes that model's
folders: two processes never write the same partial files, and a clean-up never deletes a
staging folder another process is still filling.

An OS file lock (flock / LockFileEx through msvcrt), not a lock file's existence: the OS
drops it when its holder exits or crashes, so a crash never leaves a model locked.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path

from app.providers.model_store.errors import model_busy

LOCKS_DIR = ".locks"


@contextlib.contextmanager
def model_lock(models_dir: Path, model_id: str) -> Iterator[None]:
    """Hold the model's lock, or raise INVALID_ARGUMENT (reason busy) at once when another
    holds it (this process's other threads included)."""
    fd = _open(models_dir, model_id)
    locked = False
    try:
        locked = _try_lock(fd)
        if not locked:
            raise model_busy(model_id)
        yield
    finally:
        if locked:
            _unlock(fd)
        os.close(fd)


def _open(models_dir: Path, model_id: str) -> int:
    folder = models_dir / LOCKS_DIR
    folder.mkdir(parents=True, exist_ok=True)
    return os.open(folder / f"{model_id}.lock", os.O_RDWR | os.O_CREAT, 0o644)


if sys.platform == "win32":
    import msvcrt

    def _try_lock(fd: int) -> bool:
        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True

    def _unlock(fd: int) -> None:
        os.lseek(fd, 0, os.SEEK_SET)  # the locked byte is the first
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)

else:
    import fcntl

    def _try_lock(fd: int) -> bool:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True

    def _unlock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_UN)
