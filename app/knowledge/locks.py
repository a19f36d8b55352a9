"""Per-key mutual exclusion for knowledge-base operations.

Operations on one base touch several stores (catalog, index, files under ``raw/``) whose
invariants only hold between steps, so each base gets its own lock while unrelated bases
proceed in parallel.
"""

from __future__ import annotations

import contextlib
import math
import threading
from types import TracebackType

__all__ = ["KeyedMutex"]


class _Entry:
    """The lock for one key plus how many threads hold or wait for it."""

    __slots__ = ("lock", "owner", "refs")

    def __init__(self) -> None:
        self.lock = threading.Lock()
        # Thread ident of the holder; lets re-entry fail loudly instead of deadlocking.
        self.owner: int | None = None
        # Holders plus waiters. The entry is dropped at zero so the table only ever holds
        # keys in use, however many bases have existed.
        self.refs = 0


class _Held(contextlib.AbstractContextManager[None]):
    """Context manager returned by :meth:`KeyedMutex.lock`; single use."""

    __slots__ = ("_entered", "_key", "_mutex", "_timeout")

    def __init__(self, mutex: KeyedMutex, key: str, timeout: float | None) -> None:
        self._mutex = mutex
        self._key = key
        self._timeout = timeout
        self._entered = False

    def __enter__(self) -> None:
        if self._entered:
            raise RuntimeError(f"lock context for key {self._key!r} was entered twice")
        self._entered = True
        self._mutex._acquire(self._key, self._timeout)

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._mutex._release(self._key)


class KeyedMutex:
    """One lock per key (a base id) guarding multi-step invariants across catalog, index and
    files.

    Different keys never block each other; the same key serialises. The lock is not
    re-entrant: re-acquiring a key the current thread holds raises ``RuntimeError`` at once,
    because silently nesting would hide a design bug and blocking would deadlock.
    """

    def __init__(self) -> None:
        # Guards the table and every entry's bookkeeping; never held while blocking on a
        # per-key lock, so a slow holder of one key cannot stall other keys.
        self._guard = threading.Lock()
        self._entries: dict[str, _Entry] = {}

    def lock(
        self, key: str, timeout: float | None = None
    ) -> contextlib.AbstractContextManager[None]:
        """Return a context manager holding ``key`` for the duration of the ``with`` block.

        ``timeout`` is in seconds (``None`` waits forever, ``0`` only tries); when it expires
        ``TimeoutError`` is raised naming the key.
        """
        if timeout is not None:
            if math.isnan(timeout) or timeout < 0:
                raise ValueError(f"timeout must be None or >= 0, got {timeout!r}")
            if timeout > threading.TIMEOUT_MAX:
                # Lock.acquire overflows past TIMEOUT_MAX; that long is "forever" in practice.
                timeout = None
        return _Held(self, key, timeout)

    def is_held(self, key: str) -> bool:
        """True while any thread holds ``key``. Meant for tests and assertions."""
        with self._guard:
            entry = self._entries.get(key)
            return entry is not None and entry.lock.locked()

    def held_by_current_thread(self, key: str) -> bool:
        """True if the calling thread holds ``key``."""
        ident = threading.get_ident()
        with self._guard:
            entry = self._entries.get(key)
            return entry is not None and entry.owner == ident

    def _acquire(self, key: str, timeout: float | None) -> None:
        ident = threading.get_ident()
        with self._guard:
            entry = self._entries.get(key)
            if entry is None:
                entry = self._entries[key] = _Entry()
            elif entry.owner == ident:
                raise RuntimeError(
                    f"lock for key {key!r} is already held by this thread (not re-entrant)"
                )
            entry.refs += 1

        acquired = False
        try:
            if timeout is None:
                acquired = entry.lock.acquire()
            else:
                acquired = entry.lock.acquire(timeout=timeout)
        finally:
            # Also runs on KeyboardInterrupt while waiting, so no reference is leaked.
            if not acquired:
                self._drop_ref(key, entry)
        if not acquired:
            raise TimeoutError(f"timed out after {timeout}s waiting for lock on key {key!r}")

        with self._guard:
            entry.owner = ident

    def _release(self, key: str) -> None:
        ident = threading.get_ident()
        with self._guard:
            entry = self._entries.get(key)
            if entry is None or entry.owner != ident:
                raise RuntimeError(f"lock for key {key!r} released by a thread not holding it")
            entry.owner = None
            entry.lock.release()
            self._drop_ref_locked(key, entry)

    def _drop_ref(self, key: str, entry: _Entry) -> None:
        with self._guard:
            self._drop_ref_locked(key, entry)

    def _drop_ref_locked(self, key: str, entry: _Entry) -> None:
        entry.refs -= 1
        if entry.refs == 0:
            del self._entries[key]
