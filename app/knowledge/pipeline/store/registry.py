"""One open IndexStore per base, shared by every caller in the process, and one memory
budget for all their searchable vector views."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from app.knowledge.pipeline.store.index_store import IndexStore, build_fresh, index_path, swap_in
from app.knowledge.pipeline.store.memory_budget import MemoryBudget


class StoreRegistry:
    def __init__(
        self,
        base_dir: Callable[[str], Path],
        *,
        read_only: bool = False,
        budget: MemoryBudget | None = None,
    ) -> None:
        self._base_dir = base_dir
        # A read-only data folder: stores open read-only and none is ever created.
        self.read_only = read_only
        # One budget for every base's searchable vectors in this registry.
        self.budget = budget if budget is not None else MemoryBudget()
        self._stores: dict[str, IndexStore] = {}
        self._lock = threading.Lock()

    def get(self, base_id: str) -> IndexStore:
        """The base's store, created on first use inside the base's existing folder.

        A job that outlives its base (deleted meanwhile) must not bring the folder back.
        """
        with self._lock:
            store = self._stores.get(base_id)
            if store is None:
                base_dir = self._base_dir(base_id)
                if not base_dir.is_dir():
                    raise FileNotFoundError(f"the folder of knowledge base {base_id} is gone")
                store = IndexStore(
                    index_path(base_dir),
                    create=not self.read_only,
                    read_only=self.read_only,
                    budget=self.budget,
                )
                self._stores[base_id] = store
            return store

    def get_if_exists(self, base_id: str) -> IndexStore | None:
        """The store only if its file exists: cleanup must never create an empty index."""
        with self._lock:
            store = self._stores.get(base_id)
            if store is not None:
                return store
            path = index_path(self._base_dir(base_id))
            if not path.is_file():
                return None
            store = IndexStore(path, create=False, read_only=self.read_only, budget=self.budget)
            self._stores[base_id] = store
            return store

    def replace_with_fresh(self, base_id: str, dimensions: int | None) -> None:
        """Swap an empty index in for the base's (restore: however damaged the old one is).

        Other processes notice the new file by its identity and reopen; this process's
        store is closed and reopened on next use.
        """
        base_dir = self._base_dir(base_id)
        if not base_dir.is_dir():
            raise FileNotFoundError(f"the folder of knowledge base {base_id} is gone")
        path = index_path(base_dir)
        path.parent.mkdir(parents=True, exist_ok=True)
        fresh = build_fresh(path, dimensions)
        self.close(base_id)
        with self._lock:
            swap_in(fresh, path)

    def close(self, base_id: str) -> None:
        with self._lock:
            store = self._stores.pop(base_id, None)
        if store is not None:
            store.close()

    def close_all(self) -> None:
        with self._lock:
            stores = list(self._stores.values())
            self._stores.clear()
        for store in stores:
            store.close()
