"""One open index per base, shared by every caller in the process, and one memory budget
for all their searchable vector views.

A base's index is its SQLite file, or a schema on a PostgreSQL server when `servers` names
one for it (a (connection string, schema) pair); the PostgreSQL store is imported only then,
so psycopg stays an optional extra.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from app.knowledge.pipeline.store.base_index import BaseIndex
from app.knowledge.pipeline.store.index_store import IndexStore, build_fresh, index_path, swap_in
from app.knowledge.pipeline.store.memory_budget import MemoryBudget

if TYPE_CHECKING:
    from app.knowledge.pipeline.store.pg.store import PgIndexStore

# (connection string with its password, schema) of a base whose index is on a server.
ServerAddress = tuple[str, str]


class StoreRegistry:
    def __init__(
        self,
        base_dir: Callable[[str], Path],
        *,
        read_only: bool = False,
        budget: MemoryBudget | None = None,
        servers: Callable[[str], ServerAddress | None] | None = None,
    ) -> None:
        self._base_dir = base_dir
        self._servers = servers or (lambda _base_id: None)
        # A read-only data folder: stores open read-only and none is ever created.
        self.read_only = read_only
        # One budget for every base's searchable vectors in this registry.
        self.budget = budget if budget is not None else MemoryBudget()
        self._stores: dict[str, BaseIndex] = {}
        self._lock = threading.Lock()

    def get(self, base_id: str) -> BaseIndex:
        """The base's store, created on first use inside the base's existing folder.

        A job that outlives its base (deleted meanwhile) must not bring the folder back.
        """
        with self._lock:
            store = self._stores.get(base_id)
            if store is None:
                base_dir = self._base_dir(base_id)
                if not base_dir.is_dir():
                    raise FileNotFoundError(f"the folder of knowledge base {base_id} is gone")
                server = self._servers(base_id)
                if server is not None:
                    made = self._create_on_server(server)
                    self._stores[base_id] = made
                    return made
                store = IndexStore(
                    index_path(base_dir),
                    create=not self.read_only,
                    read_only=self.read_only,
                    budget=self.budget,
                )
                self._stores[base_id] = store
            return store

    def get_if_exists(self, base_id: str) -> BaseIndex | None:
        """The store only if it exists: cleanup must never create an empty index."""
        with self._lock:
            store = self._stores.get(base_id)
            if store is not None:
                return store
            server = self._servers(base_id)
            if server is not None:
                found = self._existing_on_server(server)
                if found is not None:
                    self._stores[base_id] = found
                return found
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
        server = self._servers(base_id)
        if server is not None:
            self._replace_on_server(base_id, server, dimensions)
            return
        path = index_path(base_dir)
        path.parent.mkdir(parents=True, exist_ok=True)
        fresh = build_fresh(path, dimensions)
        self.close(base_id)
        with self._lock:
            swap_in(fresh, path)

    def drop(self, base_id: str) -> None:
        """Remove a base's index for good: its schema on a server (the base is deleted;
        a file index goes with the base's folder)."""
        server = self._servers(base_id)
        self.close(base_id)
        if server is not None:
            found = _existing_on_server(server, read_only=False, budget=None)
            if found is not None:
                found.drop()

    def _create_on_server(self, server: ServerAddress) -> BaseIndex:
        from app.knowledge.pipeline.store.pg.store import PgIndexStore

        return PgIndexStore(*server, create=True, read_only=self.read_only, budget=self.budget)

    def _existing_on_server(self, server: ServerAddress) -> BaseIndex | None:
        return _existing_on_server(server, read_only=self.read_only, budget=self.budget)

    def _replace_on_server(
        self, base_id: str, server: ServerAddress, dimensions: int | None
    ) -> None:
        """An empty schema in place of the base's (restore): other processes' stores find
        their tables recreated and answer from the new, empty ones."""
        from app.knowledge.pipeline.store.pg.reset import reset_index
        from app.knowledge.pipeline.store.pg.store import PgIndexStore

        self.close(base_id)
        reset_index(*server)
        fresh = PgIndexStore(*server, create=True)
        try:
            fresh.seed_epoch()
            if dimensions is not None:
                fresh.ensure_vectors(dimensions)
        finally:
            fresh.close()

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


def _existing_on_server(
    server: ServerAddress, *, read_only: bool, budget: MemoryBudget | None
) -> PgIndexStore | None:
    """The base's index on its server, or None when its schema is not there."""
    from app.knowledge.pipeline.store.pg.errors import PgSchemaMissingError
    from app.knowledge.pipeline.store.pg.store import PgIndexStore

    try:
        return PgIndexStore(*server, create=False, read_only=read_only, budget=budget)
    except PgSchemaMissingError:
        return None
