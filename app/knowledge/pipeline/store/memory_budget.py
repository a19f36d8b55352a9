"""How much memory a process spends on searchable vector views, across all its bases.

Each store reports its view's size after a search; when the total passes the limit, the
views of the least recently searched bases are dropped (their next search loads them
again, in well under a second even at a million vectors). The view being reported is never
the one dropped, so a single base larger than the budget still searches.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Callable

DEFAULT_LIMIT_BYTES = 1024 * 1024 * 1024
ENV_LIMIT_MB = "TROVE_VECTOR_MEMORY_MB"


def default_limit() -> int:
    """1 GiB (about 18M vectors of 384 dimensions), or TROVE_VECTOR_MEMORY_MB."""
    raw = os.environ.get(ENV_LIMIT_MB, "").strip()
    if raw.isdigit() and int(raw) > 0:
        return int(raw) * 1024 * 1024
    return DEFAULT_LIMIT_BYTES


class MemoryBudget:
    def __init__(self, limit_bytes: int | None = None) -> None:
        self.limit_bytes = default_limit() if limit_bytes is None else limit_bytes
        self._lock = threading.Lock()
        # key -> (bytes held, how to release them); oldest use first.
        self._held: OrderedDict[object, tuple[int, Callable[[], None]]] = OrderedDict()
        self.evictions = 0

    def used_bytes(self) -> int:
        with self._lock:
            return sum(size for size, _ in self._held.values())

    def charge(self, key: object, size: int, release: Callable[[], None]) -> None:
        """`key` now holds `size` bytes and was just used; evict others beyond the limit.

        Release callbacks run after the budget's lock is let go: they take their store's
        own lock, which may be held by a thread waiting to charge here.
        """
        victims: list[Callable[[], None]] = []
        with self._lock:
            self._held[key] = (size, release)
            self._held.move_to_end(key)
            total = sum(held for held, _ in self._held.values())
            for other in list(self._held):
                if total <= self.limit_bytes or other is key:
                    break
                held, other_release = self._held.pop(other)
                total -= held
                victims.append(other_release)
                self.evictions += 1
        for victim in victims:
            victim()

    def forget(self, key: object) -> None:
        with self._lock:
            self._held.pop(key, None)
