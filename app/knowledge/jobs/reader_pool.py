"""Worker processes for reading and chunking documents.

One pool per Trove process, shared by every base. A parser that crashes or exhausts its
memory limit takes down a worker, not the application: the item fails with a clear
message and the pool is rebuilt.
"""

from __future__ import annotations

import atexit
import concurrent.futures as cf
import importlib
import logging
import multiprocessing
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures.process import BrokenProcessPool
from typing import Any, TypeVar

from app.knowledge.jobs.errors import ItemFailure, JobCancelled
from app.knowledge.jobs.owner import current_owner, owner_alive
from app.knowledge.logs import configure_worker_logging
from app.knowledge.types import CancelReason, ErrorCode

log = logging.getLogger(__name__)

T = TypeVar("T")

# A worker may use this much address space; a zip bomb or a pathological file hits
# MemoryError in the worker instead of swapping the machine to a halt.
WORKER_MEMORY_LIMIT = 3 * 1024**3
POLL_SECONDS = 0.25


WORKER_NICENESS = 5


def _warm_worker() -> int:
    # Importing the readers (lxml, pypdf, python-docx, ...) is most of a worker's start-up.
    importlib.import_module("app.knowledge.pipeline.text_extraction")
    return os.getpid()


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


def _worker_init(memory_limit: int, parent_owner: str) -> None:
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


def default_workers() -> int:
    return max(1, min(4, os.cpu_count() or 1))


class ExtractionPool:
    def __init__(self, workers: int | None = None, memory_limit: int = WORKER_MEMORY_LIMIT) -> None:
        self._workers = workers or default_workers()
        self._memory_limit = memory_limit
        self._pool: cf.ProcessPoolExecutor | None = None
        self._lock = threading.Lock()

    def _executor(self) -> cf.ProcessPoolExecutor:
        with self._lock:
            if self._pool is None:
                # spawn, not fork: forking a process that runs Qt and SQLite threads is unsafe.
                self._pool = cf.ProcessPoolExecutor(
                    max_workers=self._workers,
                    mp_context=multiprocessing.get_context("spawn"),
                    initializer=_worker_init,
                    # Who the workers' parent is, fixed here in the parent (see
                    # _exit_with_parent); pid plus start time, as for job owners.
                    initargs=(self._memory_limit, current_owner()),
                )
            return self._pool

    def _discard(self, broken: cf.ProcessPoolExecutor) -> None:
        with self._lock:
            if self._pool is broken:
                self._pool = None
        broken.shutdown(wait=False, cancel_futures=True)

    def run(
        self, fn: Callable[..., T], *args: Any, cancelled: Callable[[], CancelReason | None]
    ) -> T:
        """Run fn(*args) in a worker, polling `cancelled` while waiting."""
        pool = self._executor()
        future = pool.submit(fn, *args)
        while True:
            try:
                return future.result(timeout=POLL_SECONDS)
            except cf.TimeoutError:
                reason = cancelled()
                if reason is not None:
                    future.cancel()
                    raise JobCancelled(reason) from None
            except BrokenProcessPool as exc:
                log.error("a document reader process died; restarting the reader pool")
                self._discard(pool)
                raise ItemFailure(
                    ErrorCode.READ_FAILED, "the document reader crashed on this file"
                ) from exc
            except MemoryError as exc:
                raise ItemFailure(
                    ErrorCode.READ_FAILED, "reading this file needed more memory than allowed"
                ) from exc

    def warm(self) -> list[cf.Future[int]]:
        """Start every worker now and let it import the readers, so the first documents a
        person adds do not wait for process start-up (nor compete with it for the CPU)."""
        pool = self._executor()
        return [pool.submit(_warm_worker) for _ in range(self._workers)]

    def shutdown(self) -> None:
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)


class InlineExtraction:
    """Runs the work in the calling thread (tests, tools, platforms without processes)."""

    def run(
        self, fn: Callable[..., T], *args: Any, cancelled: Callable[[], CancelReason | None]
    ) -> T:
        reason = cancelled()
        if reason is not None:
            raise JobCancelled(reason)
        try:
            return fn(*args)
        except MemoryError as exc:
            raise ItemFailure(
                ErrorCode.READ_FAILED, "reading this file needed more memory than allowed"
            ) from exc

    def warm(self) -> list[cf.Future[int]]:
        return []

    def shutdown(self) -> None:
        return None


_shared: ExtractionPool | None = None
_shared_lock = threading.Lock()


def shared_pool() -> ExtractionPool:
    """The process-wide pool, started on first use and stopped at exit."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = ExtractionPool()
            atexit.register(_shared.shutdown)
        return _shared
