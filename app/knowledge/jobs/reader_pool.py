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
import threading
from collections.abc import Callable
from concurrent.futures.process import BrokenProcessPool
from typing import Any, TypeVar

from app.knowledge.jobs.errors import ItemFailure, JobCancelled
from app.knowledge.jobs.owner import current_owner
from app.knowledge.types import CancelReason, ErrorCode
from app.knowledge.worker_process import init_worker

log = logging.getLogger(__name__)

T = TypeVar("T")

# A worker may use this much address space; a zip bomb or a pathological file hits
# MemoryError in the worker instead of swapping the machine to a halt.
WORKER_MEMORY_LIMIT = 3 * 1024**3
POLL_SECONDS = 0.25


def _warm_worker() -> int:
    # Importing the readers (lxml, pypdf, python-docx, ...) is most of a worker's start-up.
    importlib.import_module("app.knowledge.pipeline.text_extraction")
    return os.getpid()


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
                    initializer=init_worker,
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
