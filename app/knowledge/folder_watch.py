"""Watching linked folders while a front end runs (the window, `trove mcp`).

watchdog reports file events on its own observer thread; they are filtered by the folder's
ignore rules and debounced per folder: a folder is synced once it has been quiet for
`debounce_s` (an editor saving ten times is one sync), or after `max_delay_s` of steady
changes. Watching only *asks* for syncs (queued jobs, jobs/sync_folder.py); the executor
runs them. The same thread starts due scheduled refreshes of web pages, and re-reads the
links every `rescan_s` (another process may link or unlink a folder).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer
from watchdog.observers.api import BaseObserver, ObservedWatch

from app.knowledge.engine import EngineParts
from app.knowledge.folder_scan import follow_links
from app.knowledge.jobs.refresh_pages import queue_refresh
from app.knowledge.jobs.sync_folder import queue_sync
from app.knowledge.pipeline.readers.registry import SUPPORTED_EXTENSIONS
from app.knowledge.pipeline.sources.ignore_rules import IGNORE_FILES, IgnoreRules
from app.knowledge.types import ItemStatus

log = logging.getLogger(__name__)

# Events that change nothing on disk (inotify reports reads too: a sync's own hashing).
_QUIET_EVENTS = frozenset({"opened", "closed_no_write"})

Queued = Callable[[str], None]


@dataclass(slots=True)
class _Watched:
    base_id: str
    folder: Path
    rules: IgnoreRules
    handle: ObservedWatch


@dataclass(slots=True)
class _Pending:
    first: float
    last: float


def _indexable(path: str) -> bool:
    name = Path(path).name
    return name in IGNORE_FILES or Path(name).suffix.lower() in SUPPORTED_EXTENSIONS


class _Events(FileSystemEventHandler):
    def __init__(self, watch: FolderWatch, root_id: str) -> None:
        self._watch = watch
        self._root_id = root_id

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.event_type in _QUIET_EVENTS:
            return
        if event.is_directory and event.event_type == "modified":
            return  # a folder's own timestamps: its files' events say what changed
        paths = [str(event.src_path)]
        if getattr(event, "dest_path", ""):
            paths.append(str(event.dest_path))
        if not event.is_directory and not any(_indexable(p) for p in paths):
            return  # an image, an archive of a build...: no sync could take it in
        self._watch.noticed(self._root_id, paths)


class FolderWatch:
    def __init__(
        self,
        parts: EngineParts,
        on_queued: Queued | None = None,
        *,
        debounce_s: float = 0.5,
        max_delay_s: float = 5.0,
        rescan_s: float = 5.0,
    ) -> None:
        self._parts = parts
        self._on_queued = on_queued or (lambda base_id: None)
        self.debounce_s = debounce_s
        self.max_delay_s = max_delay_s
        self.rescan_s = rescan_s
        self._lock = threading.Lock()
        self._wake = threading.Condition(self._lock)
        # One refresh at a time: the watch thread and a link made in the window may both ask.
        self._refreshing = threading.Lock()
        self._watched: dict[str, _Watched] = {}
        self._pending: dict[str, _Pending] = {}
        self._observer: BaseObserver | None = None
        self._thread: threading.Thread | None = None
        self._stopping = False
        # How many syncs this watch asked for (tests and the bench read it).
        self.requests = 0

    # -- lifetime ------------------------------------------------------------------------

    def start(self) -> None:
        """Watch every linked folder and sync each once (changes made while Trove was
        closed)."""
        if self._thread is not None:
            return
        self._observer = Observer()
        self._observer.daemon = True
        self._observer.start()
        self.refresh(sync_all=True)
        self._thread = threading.Thread(target=self._loop, name="trove-folder-watch", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        with self._lock:
            self._stopping = True
            self._wake.notify_all()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None
        if self._observer is not None:
            self._observer.stop()
            self._observer.join(timeout=5)
            self._observer = None
        with self._lock:
            self._watched.clear()
            self._pending.clear()

    def watching(self) -> frozenset[str]:
        with self._lock:
            return frozenset(self._watched)

    # -- links -----------------------------------------------------------------------------

    def refresh(self, *, sync_all: bool = False) -> None:
        """Watch the linked folders the catalog has now, and stop watching unlinked ones."""
        with self._refreshing:
            self._refresh(sync_all)

    def _refresh(self, sync_all: bool) -> None:
        observer = self._observer
        if observer is None:
            return
        links = {link.item_id: link for link in self._parts.catalog.list_links()}
        roots = self._parts.catalog.get_items(links)
        with self._lock:
            known = dict(self._watched)
        for root_id, watched in known.items():
            root = roots.get(root_id)
            if root_id not in links or root is None or root.status is ItemStatus.DELETING:
                observer.unschedule(watched.handle)
                with self._lock:
                    self._watched.pop(root_id, None)
        for root_id, link in links.items():
            root = roots.get(root_id)
            if root is None or root.status is ItemStatus.DELETING:
                continue
            folder = Path(root.source)
            rules = IgnoreRules.for_folder(folder, link.ignore_patterns)
            if root_id in known:
                known[root_id].rules = rules  # patterns may have changed
            elif folder.is_dir():
                try:
                    # Links out of the folder are watched only where the sync follows them.
                    handle = observer.schedule(
                        _Events(self, root_id),
                        str(folder),
                        recursive=True,
                        follow_symlink=follow_links(root.options),
                    )
                except OSError as exc:  # too many watches, permissions: syncs still work
                    log.warning("cannot watch %s: %s", folder, exc)
                    continue
                with self._lock:
                    self._watched[root_id] = _Watched(link.base_id, folder, rules, handle)
            if sync_all:
                self._request(link.base_id, root_id)

    # -- events ----------------------------------------------------------------------------

    def noticed(self, root_id: str, paths: list[str]) -> None:
        """A file event under a watched folder (on watchdog's thread)."""
        with self._lock:
            watched = self._watched.get(root_id)
            if watched is None or not any(self._matters(watched, p) for p in paths):
                return
            now = time.monotonic()
            pending = self._pending.get(root_id)
            if pending is None:
                self._pending[root_id] = _Pending(now, now)
            else:
                pending.last = now
            self._wake.notify_all()

    @staticmethod
    def _matters(watched: _Watched, path: str) -> bool:
        try:
            rel = Path(path).relative_to(watched.folder).as_posix()
        except ValueError:
            return False
        if rel in IGNORE_FILES:
            return True  # the rules changed: a sync applies them
        return rel != "." and not watched.rules.ignored(rel)

    def _loop(self) -> None:
        next_rescan = time.monotonic() + self.rescan_s
        while True:
            with self._lock:
                if self._stopping:
                    return
                due, wait = self._due(time.monotonic())
                if not due:
                    self._wake.wait(timeout=min(wait, max(0.0, next_rescan - time.monotonic())))
                    continue
            for root_id, base_id in due:
                self._safely(partial(self._request, base_id, root_id))
            if time.monotonic() >= next_rescan:
                next_rescan = time.monotonic() + self.rescan_s
                self._safely(self.refresh)
                self._safely(self._start_due_refreshes)

    def _due(self, now: float) -> tuple[list[tuple[str, str]], float]:
        """Folders whose events have settled (caller holds the lock), and how long until the
        next one may."""
        due: list[tuple[str, str]] = []
        wait = self.rescan_s
        for root_id, pending in list(self._pending.items()):
            ready_at = min(pending.last + self.debounce_s, pending.first + self.max_delay_s)
            if ready_at <= now:
                del self._pending[root_id]
                watched = self._watched.get(root_id)
                if watched is not None:
                    due.append((root_id, watched.base_id))
            else:
                wait = min(wait, ready_at - now)
        return due, wait

    def _request(self, base_id: str, root_id: str) -> None:
        queue_sync(self._parts, base_id, root_id)
        self.requests += 1
        self._on_queued(base_id)

    def _start_due_refreshes(self) -> None:
        for item_id, base_id in self._parts.catalog.due_refreshes(time.time()):
            queue_refresh(self._parts, base_id, item_id)
            self._on_queued(base_id)

    @staticmethod
    def _safely(step: Callable[[], None]) -> None:
        # A catalog hiccup (busy, disk full) must not end watching: the next turn retries.
        try:
            step()
        except Exception:
            log.exception("folder watch step failed")
