"""Make file permissions apply to root too, so read-only tests also run as root.

Root ignores permission bits through two capabilities, CAP_DAC_OVERRIDE and
CAP_DAC_READ_SEARCH. On Linux a thread can take them out of its effective set (and put them
back, as they stay permitted); files are then checked by their mode bits like anybody's.
Capabilities are per thread: `enforced()` covers the calling thread only, which is where
`KnowledgeService.run_pending_jobs` runs jobs.

    python -m tests.reliability.permissions --home H add ...   # the CLI under the same rule

runs `app.cli.main` with the capabilities dropped before any other thread starts, so every
thread of that process inherits the rule.
"""

from __future__ import annotations

import ctypes
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager

_VERSION_3 = 0x20080522  # _LINUX_CAPABILITY_VERSION_3: two 32-bit words per set
_DAC_CAPS = (1 << 1) | (1 << 2)  # CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH


class _Header(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _Data(ctypes.Structure):
    _fields_ = [
        ("effective", ctypes.c_uint32),
        ("permitted", ctypes.c_uint32),
        ("inheritable", ctypes.c_uint32),
    ]


_Sets = _Data * 2


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def _get() -> ctypes.Array[_Data]:
    data = _Sets()
    if _libc().capget(ctypes.byref(_Header(_VERSION_3, 0)), data) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))
    return data


def _set(data: ctypes.Array[_Data]) -> None:
    if _libc().capset(ctypes.byref(_Header(_VERSION_3, 0)), data) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))


def need_dropping() -> bool:
    """Whether this process ignores permission bits (root, or a process with the caps)."""
    if not sys.platform.startswith("linux"):
        return os.name == "posix" and os.geteuid() == 0
    try:
        return bool(_get()[0].effective & _DAC_CAPS)
    except OSError:
        return os.geteuid() == 0


def can_enforce() -> bool:
    """Whether permission bits can be made to apply to this thread."""
    if os.name != "posix":
        return False
    if not need_dropping():
        return True
    if not sys.platform.startswith("linux"):
        return False
    try:
        with enforced():
            return True
    except OSError:
        return False


def drop() -> None:
    """Take the permission-bypassing capabilities out of this thread's effective set."""
    data = _get()
    data[0].effective &= ~_DAC_CAPS
    _set(data)


@contextmanager
def enforced() -> Iterator[None]:
    """Permission bits apply to the calling thread inside the block."""
    if not need_dropping():
        yield
        return
    before = _get()
    drop()
    try:
        yield
    finally:
        _set(before)


def main() -> int:
    if need_dropping():
        drop()
    from app.cli import main as cli_main

    return cli_main(sys.argv[1:])


if __name__ == "__main__":
    sys.exit(main())
