"""Item and job calls routed to where a base keeps its rows: this catalog, or the base's
server (catalog/server.py) for a base whose index is on PostgreSQL.

Callers keep calling `catalog.get_item(...)`, `catalog.claim_next_job(...)` on one object.
A call naming a base goes to that base's home; one naming an item or a job finds its home
(a job id above SERVER_JOB_IDS is a server's; an item not here is looked up on the servers
and remembered); calls over every base (the runtime's claims, the window's counts) ask
this catalog and every server. Without server bases, every call is the local one, plus one
indexed lookup of whether any base is on a server.

`transaction()` spans the servers it touches: a server's transaction is begun the first
time a call inside reaches it, and ends (commits or rolls back) just before the local one.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.knowledge.catalog.items import ItemRows
from app.knowledge.catalog.jobs import JobRows
from app.knowledge.catalog.linked import LinkedFolderRows
from app.knowledge.catalog.portable import PortableRows
from app.knowledge.catalog.rows import Job
from app.knowledge.process_identity import owner_alive
from app.knowledge.sync_types import PageValidators
from app.knowledge.types import Item, ItemStatus, WorkCounts

if TYPE_CHECKING:
    from app.knowledge.catalog.server import ServerCatalog

log = logging.getLogger(__name__)

SERVER_JOB_IDS = 10**12  # catalog.server.SERVER_JOB_IDS, without importing psycopg here

# How long an unreachable server is left out of calls over every base before it is tried
# again: the runtime asks for work every few hundred milliseconds.
_RETRY_UNREACHABLE_S = 30.0

ServerOpener = Callable[[str], "ServerCatalog"]


class ServerRouting(ItemRows, JobRows, PortableRows, LinkedFolderRows):
    def __init__(self, path: Path, *, read_only: bool = False) -> None:
        super().__init__(path, read_only=read_only)
        self._opener: ServerOpener | None = None
        self._servers: dict[str, ServerCatalog] = {}
        self._unreachable: dict[str, float] = {}
        self._opening: set[str] = set()
        self._item_homes: dict[str, str] = {}
        self._job_homes: dict[int, str] = {}
        self._servers_lock = threading.RLock()
        self._tx = threading.local()
        self._watchers: dict[str, tuple[threading.Thread, threading.Event]] = {}
        self._on_change: Callable[[str], None] | None = None

    def watch_servers(self, changed: Callable[[str], None]) -> None:
        """Call `changed(base id)` whenever a server base's items change on its server
        (another desktop's work included), each base on a thread of its own, until
        stop_watching_servers. Calling it again starts watching bases added since."""
        with self._servers_lock:
            self._on_change = changed
            for base_id in self.server_base_ids():
                if base_id in self._watchers:
                    continue
                try:
                    server = self.server_of(base_id)
                except Exception as exc:
                    log.warning("cannot watch base %s on its server: %s", base_id, exc)
                    continue
                if server is None:
                    continue
                stop = threading.Event()
                thread = threading.Thread(
                    target=server.listen,
                    args=(lambda b=base_id: changed(b), stop),
                    name=f"trove-notices-{base_id}",
                    daemon=True,
                )
                self._watchers[base_id] = (thread, stop)
                thread.start()

    def watch_new_servers(self) -> None:
        """Start watching server bases added since watch_servers (if watching)."""
        if self._on_change is not None:
            self.watch_servers(self._on_change)

    def stop_watching_servers(self) -> None:
        with self._servers_lock:
            watchers = list(self._watchers.values())
            self._watchers.clear()
            self._on_change = None
        for _, stop in watchers:
            stop.set()
        for thread, _ in watchers:
            thread.join(timeout=2.0)

    def use_servers(self, opener: ServerOpener) -> None:
        """How to open a server base's rows (given by the service, which holds the keys)."""
        self._opener = opener

    def close(self) -> None:
        self.stop_watching_servers()
        with self._servers_lock:
            for server in self._servers.values():
                server.close()
            self._servers.clear()
        super().close()

    # -- finding a home --------------------------------------------------------------

    def server_base_ids(self) -> list[str]:
        rows = self._rows("SELECT id FROM bases WHERE backend = 'postgres' ORDER BY id")
        return [str(r[0]) for r in rows]

    def server_of(self, base_id: str) -> ServerCatalog | None:
        """The base's server rows (joined to an open transaction), or None when the base
        keeps its rows here (or is unknown: the local call then answers as it always did)."""
        rows = self._rows("SELECT backend FROM bases WHERE id = ?", (base_id,))
        if not rows or rows[0][0] != "postgres" or self._opener is None:
            return None
        with self._servers_lock:
            server = self._servers.get(base_id)
            if server is None:
                server = self._opener(base_id)
                self._servers[base_id] = server
                self._unreachable.pop(base_id, None)
        stack: ExitStack | None = getattr(self._tx, "stack", None)
        joined: set[str] = getattr(self._tx, "joined", set())
        if stack is not None and base_id not in joined:
            stack.enter_context(server.transaction())
            joined.add(base_id)
        return server

    def forget_server(self, base_id: str) -> None:
        """Close a base's server rows (the base is deleted or its server changed)."""
        with self._servers_lock:
            server = self._servers.pop(base_id, None)
            watcher = self._watchers.pop(base_id, None)
        if watcher is not None:
            watcher[1].set()
            watcher[0].join(timeout=2.0)
        if server is not None:
            server.close()

    def _reachable_servers(self) -> list[ServerCatalog]:
        """The server bases already connected. Calls over every base come from the
        runtime's own thread (the window's, the CLI's event loop), which must never wait
        on a network connect: a server not connected yet is opened on a thread of its own
        and joins the next round; one that failed is tried again after a while."""
        found: list[ServerCatalog] = []
        now = time.monotonic()
        for base_id in self.server_base_ids():
            if base_id in self._servers:
                server = self.server_of(base_id)  # joins an open transaction
                if server is not None:
                    found.append(server)
            elif now >= self._unreachable.get(base_id, 0.0):
                self._open_in_background(base_id)
        return found

    def open_servers(self) -> None:
        """Connect every server base now (waiting): the headless runner's start, so its
        first round already sees their queues. A server that cannot be reached is logged
        and left out for a while; the other bases work on."""
        for base_id in self.server_base_ids():
            self._try_open(base_id)

    def _open_in_background(self, base_id: str) -> None:
        with self._servers_lock:
            if base_id in self._opening:
                return
            self._opening.add(base_id)
        threading.Thread(
            target=self._try_open, args=(base_id,), name=f"trove-open-{base_id}", daemon=True
        ).start()

    def _try_open(self, base_id: str) -> None:
        try:
            self.server_of(base_id)
        except Exception as exc:
            log.warning("the server of base %s cannot be reached: %s", base_id, exc)
            self._unreachable[base_id] = time.monotonic() + _RETRY_UNREACHABLE_S
        finally:
            with self._servers_lock:
                self._opening.discard(base_id)

    def _item_server(self, item_id: str) -> ServerCatalog | None:
        base_id = self._item_homes.get(item_id)
        if base_id is not None:
            return self.server_of(base_id)
        if super().get_item(item_id) is not None:
            return None
        for server in self._reachable_servers():
            item = server.get_item(item_id)
            if item is not None:
                self._item_homes[item_id] = item.base_id
                return server
        return None

    def _job_server(self, job_id: int) -> ServerCatalog | None:
        if job_id < SERVER_JOB_IDS:
            return None
        base_id = self._job_homes.get(job_id)
        if base_id is not None:
            return self.server_of(base_id)
        for server in self._reachable_servers():
            if server.has_job(job_id):
                return server
        return None

    def _remember_jobs(self, jobs: Iterable[Job]) -> None:
        for job in jobs:
            if job.id >= SERVER_JOB_IDS:
                self._job_homes[job.id] = job.base_id

    # -- transactions over this catalog and the servers it touches -----------------------

    @contextmanager
    def transaction(self) -> Iterator[None]:
        if getattr(self._tx, "stack", None) is not None:
            with super().transaction():
                yield
            return
        with super().transaction():
            stack = ExitStack()
            self._tx.stack, self._tx.joined = stack, set()
            try:
                with stack:
                    yield
            finally:
                self._tx.stack, self._tx.joined = None, set()

    # -- items -------------------------------------------------------------------------

    def create_item(self, base_id: str, *args: Any, **kwargs: Any) -> Item:
        server = self.server_of(base_id)
        if server is None:
            return super().create_item(base_id, *args, **kwargs)
        item = server.create_item(base_id, *args, **kwargs)
        self._item_homes[item.id] = base_id
        return item

    def get_item(self, item_id: str) -> Item | None:
        found = super().get_item(item_id)
        if found is not None:
            return found
        server = self._item_server(item_id)
        return server.get_item(item_id) if server is not None else None

    def get_items(self, item_ids: Iterable[str]) -> dict[str, Item]:
        wanted = list(dict.fromkeys(item_ids))
        found = super().get_items(wanted)
        missing = [i for i in wanted if i not in found]
        if missing and self.server_base_ids():
            for server in self._reachable_servers():
                more = server.get_items(missing)
                for item in more.values():
                    self._item_homes[item.id] = item.base_id
                found.update(more)
        return found

    def list_items(self, base_id: str, **kwargs: Any) -> list[Item]:
        server = self.server_of(base_id)
        return (server or super()).list_items(base_id, **kwargs)  # type: ignore[union-attr]

    def item_ids(self, base_id: str) -> set[str]:
        server = self.server_of(base_id)
        return (server or super()).item_ids(base_id)  # type: ignore[union-attr]

    def find_items_by_source(self, base_id: str, source: str) -> list[Item]:
        server = self.server_of(base_id)
        if server is None:
            return super().find_items_by_source(base_id, source)
        return server.find_items_by_source(base_id, source)

    def find_items_by_hash(self, base_id: str, content_hash: str) -> list[Item]:
        server = self.server_of(base_id)
        if server is None:
            return super().find_items_by_hash(base_id, content_hash)
        return server.find_items_by_hash(base_id, content_hash)

    def vectors_waiting(self, base_id: str) -> bool:
        server = self.server_of(base_id)
        return (server or super()).vectors_waiting(base_id)  # type: ignore[union-attr]

    def count_items(self, base_id: str, status: ItemStatus | None = None) -> int:
        server = self.server_of(base_id)
        if server is None:
            return super().count_items(base_id, status)
        return server.count_items(base_id, status)

    def child_status_counts(self, parent_id: str) -> dict[ItemStatus, int]:
        server = self._item_server(parent_id)
        if server is None:
            return super().child_status_counts(parent_id)
        return server.child_status_counts(parent_id)

    def descendants(self, item_id: str) -> list[Item]:
        server = self._item_server(item_id)
        if server is None:
            return super().descendants(item_id)
        return server.descendants(item_id)

    def work_counts(self) -> dict[str, WorkCounts]:
        found = super().work_counts()
        if self.server_base_ids():
            for server in self._reachable_servers():
                found.update(server.work_counts())
        return found

    def set_item_status(self, item_id: str, status: ItemStatus, **kwargs: Any) -> Item:
        server = self._item_server(item_id)
        if server is None:
            return super().set_item_status(item_id, status, **kwargs)
        return server.set_item_status(item_id, status, **kwargs)

    def set_item_phase(self, item_id: str, *args: Any, **kwargs: Any) -> None:
        server = self._item_server(item_id)
        if server is None:
            super().set_item_phase(item_id, *args, **kwargs)
        else:
            server.set_item_phase(item_id, *args, **kwargs)

    def update_item(self, item_id: str, **fields: Any) -> Item:
        server = self._item_server(item_id)
        if server is None:
            return super().update_item(item_id, **fields)
        return server.update_item(item_id, **fields)

    def delete_item_row(self, item_id: str) -> None:
        server = self._item_server(item_id)
        if server is None:
            super().delete_item_row(item_id)
        else:
            server.delete_item_row(item_id)
        self._item_homes.pop(item_id, None)

    def insert_settled_items(self, items: Iterable[Item]) -> int:
        rows = list(items)
        server = self.server_of(rows[0].base_id) if rows else None
        if server is None:
            return super().insert_settled_items(rows)
        return server.insert_settled_items(rows)

    # -- a page's validators (conditional refresh): kept for this computer's items only ----
    # Their rows name the item (a foreign key to this catalog's items); a server base's page
    # is simply fetched whole when refreshed.

    def page_validators(self, item_id: str) -> PageValidators | None:
        if super().get_item(item_id) is None:
            return None
        return super().page_validators(item_id)

    def put_page_validators(self, item_id: str, validators: PageValidators) -> None:
        if super().get_item(item_id) is not None:
            super().put_page_validators(item_id, validators)

    # -- jobs --------------------------------------------------------------------------

    def enqueue_job(self, kind: str, base_id: str, **kwargs: Any) -> Job:
        server = self.server_of(base_id)
        if server is None:
            return super().enqueue_job(kind, base_id, **kwargs)
        job = server.enqueue_job(kind, base_id, **kwargs)
        self._remember_jobs([job])
        return job

    def require_job(self, job_id: int) -> Job:
        server = self._job_server(job_id)
        return super().require_job(job_id) if server is None else server.require_job(job_id)

    def claim_next_job(
        self,
        base_id: str | None = None,
        now: float | None = None,
        *,
        owner: str | None = None,
        skip: Iterable[tuple[str, str]] = (),
    ) -> Job | None:
        skip = list(skip)
        if base_id is not None:
            server = self.server_of(base_id)
            if server is None:
                return super().claim_next_job(base_id, now, owner=owner, skip=skip)
            job = server.claim_next_job(base_id, now, owner=owner, skip=skip)
            self._remember_jobs([job] if job else [])
            return job
        job = super().claim_next_job(None, now, owner=owner, skip=skip)
        if job is not None or not self.server_base_ids():
            return job
        for server in self._reachable_servers():
            job = server.claim_next_job(None, now, owner=owner, skip=skip)
            if job is not None:
                self._remember_jobs([job])
                return job
        return None

    def next_due_time(self, base_id: str | None = None) -> float | None:
        if base_id is not None:
            server = self.server_of(base_id)
            return (server or super()).next_due_time(base_id)  # type: ignore[union-attr]
        times = [super().next_due_time(None)]
        if self.server_base_ids():
            times += [s.next_due_time(None) for s in self._reachable_servers()]
        due = [t for t in times if t is not None]
        return min(due) if due else None

    def requeue_job(self, job_id: int, error: str | None = None) -> None:
        server = self._job_server(job_id)
        (server or super()).requeue_job(job_id, error)  # type: ignore[union-attr]

    def hand_back_job(self, job_id: int, error: str) -> None:
        server = self._job_server(job_id)
        (server or super()).hand_back_job(job_id, error)  # type: ignore[union-attr]

    def mark_running_job(self, job_id: int, owner: str, error: str) -> None:
        server = self._job_server(job_id)
        (server or super()).mark_running_job(job_id, owner, error)  # type: ignore[union-attr]

    def finish_job(self, job_id: int, status: str, error: str | None = None) -> None:
        server = self._job_server(job_id)
        (server or super()).finish_job(job_id, status, error)  # type: ignore[union-attr]
        self._job_homes.pop(job_id, None)

    def release_job(self, job_id: int, error: str) -> None:
        server = self._job_server(job_id)
        (server or super()).release_job(job_id, error)  # type: ignore[union-attr]

    def poll_job(self, job_id: int, not_before: float, error: str, *, fresh: bool = False) -> None:
        server = self._job_server(job_id)
        (server or super()).poll_job(  # type: ignore[union-attr]
            job_id, not_before, error, fresh=fresh
        )

    def retry_job(self, job_id: int, not_before: float, error: str) -> None:
        server = self._job_server(job_id)
        (server or super()).retry_job(job_id, not_before, error)  # type: ignore[union-attr]

    def take_job_lease(self, job_id: int, key: str) -> Job | None:
        server = self._job_server(job_id)
        return (server or super()).take_job_lease(job_id, key)  # type: ignore[union-attr]

    def prune_finished_jobs(self, older_than: float) -> int:
        pruned = super().prune_finished_jobs(older_than)
        if self.server_base_ids():
            pruned += sum(s.prune_finished_jobs(older_than) for s in self._reachable_servers())
        return pruned

    def list_jobs(
        self, base_id: str | None = None, statuses: Iterable[str] | None = None
    ) -> list[Job]:
        wanted = None if statuses is None else list(statuses)
        if base_id is not None:
            server = self.server_of(base_id)
            jobs = (server or super()).list_jobs(base_id, wanted)  # type: ignore[union-attr]
        else:
            jobs = super().list_jobs(None, wanted)
            if self.server_base_ids():
                for server in self._reachable_servers():
                    jobs += server.list_jobs(None, wanted)
        self._remember_jobs(jobs)
        return jobs

    def job_counts(self, base_id: str | None = None) -> tuple[int, int]:
        if base_id is not None:
            server = self.server_of(base_id)
            return (server or super()).job_counts(base_id)  # type: ignore[union-attr]
        queued, running = super().job_counts(None)
        if self.server_base_ids():
            for server in self._reachable_servers():
                q, r = server.job_counts(None)
                queued, running = queued + q, running + r
        return queued, running

    def job_counts_by_base(self) -> dict[str, tuple[int, int]]:
        counts = super().job_counts_by_base()
        if self.server_base_ids():
            for server in self._reachable_servers():
                counts.update(server.job_counts_by_base())
        return counts

    def defer_queued_job(self, base_id: str, key: str, not_before: float) -> None:
        server = self.server_of(base_id)
        (server or super()).defer_queued_job(  # type: ignore[union-attr]
            base_id, key, not_before
        )

    def live_job_keys(self, base_id: str, prefix: str) -> set[str]:
        server = self.server_of(base_id)
        if server is None:
            return super().live_job_keys(base_id, prefix)
        return server.live_job_keys(base_id, prefix)

    def job_owner_alive(self, job: Job) -> bool:
        """Whether the process that runs `job` still lives: asked of the job's server for
        a server base's job (its owner may run on another machine), else of this one."""
        server = self.server_of(job.base_id) if job.id >= SERVER_JOB_IDS else None
        if server is None:
            return owner_alive(job.owner)
        return server.owner_alive(job.owner)
