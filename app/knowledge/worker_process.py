"""What every Trove worker process (document readers, text recognition) does first: leave
with its parent, run below the window's priority, and stay within an address-space limit."""

from __future__ import annotations

import logging
import os
import signal
import sys
import threading
import time

from app.knowledge.logs import configure_worker_logging
from app.knowledge.process_identity import owner_alive

log = logging.getLogger(__name__)

WORKER_NICENESS = 5

PARENT_POLL_SECONDS = 1.0
# prctl(2) option: the signal the kernel sends this process when its parent goes away.
PR_SET_PDEATHSIG = 1


def _parent_gone(parent_pid: int, parent_owner: str) -> bool:
    if os.name == "posix":
        # An orphan is re-parented (to init or a subreaper) the moment its parent dies,
        # before the parent is reaped.
        return os.getppid() != parent_pid
    # Windows never re-parents: getppid() keeps naming the dead parent, whose pid may even
    # be reused. Its pid plus start time tell whether it is still the same live process.
    return not owner_alive(parent_owner)


def _exit_if_orphaned(parent_pid: int, parent_owner: str) -> None:
    if _parent_gone(parent_pid, parent_owner):
        os._exit(0)


def _exit_with_parent(parent_pid: int, parent_owner: str) -> None:
    """A worker whose Trove died (killed, crashed) must not linger holding memory.

    The parent is named by the pool (initargs), not read with getppid() here: a parent
    killed while this worker was still starting up would otherwise be "init", and the
    orphan would wait for init to die. The check runs before the first sleep for the same
    reason."""
    while True:
        _exit_if_orphaned(parent_pid, parent_owner)
        time.sleep(PARENT_POLL_SECONDS)


def _signal_on_parent_death(parent_pid: int, parent_owner: str) -> None:
    """Linux: have the kernel signal this worker when its parent dies, so it leaves at
    once rather than at the next poll.

    Not SIGKILL: the kernel sends the signal when the *thread* that spawned the worker
    ends, and the pool spawns workers from whichever job thread submits (QThreadPool
    threads expire while Trove runs on). So the signal only triggers the same check as
    the poll; the poll stays as the fallback (and is all macOS and Windows have)."""
    import ctypes

    signal.signal(signal.SIGUSR1, lambda _sig, _frame: _exit_if_orphaned(parent_pid, parent_owner))
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, ctypes.c_ulong(signal.SIGUSR1), 0, 0, 0)
    except (OSError, AttributeError):
        log.debug("prctl(PR_SET_PDEATHSIG) unavailable; polling for the parent", exc_info=True)


def init_worker(memory_limit: int, parent_owner: str) -> None:
    # Ctrl-C belongs to the main process, which shuts the pool down in order.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    parent_pid = int(parent_owner.partition(":")[0])
    if sys.platform.startswith("linux"):
        _signal_on_parent_death(parent_pid, parent_owner)
    threading.Thread(target=_exit_with_parent, args=(parent_pid, parent_owner), daemon=True).start()
    # Parsers' warnings (pypdf "EOF marker not found", ...) belong in the log file, not on
    # the terminal the worker inherited.
    configure_worker_logging()
    if hasattr(os, "nice"):
        # Reading is background work: when the cores are busy, the window comes first.
        os.nice(WORKER_NICENESS)
    if sys.platform.startswith("linux") and memory_limit > 0:
        import resource

        _soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        limit = memory_limit if hard == resource.RLIM_INFINITY else min(memory_limit, hard)
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
