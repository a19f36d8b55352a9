"""Value types of linked folders and scheduled page refresh (public through the service)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class FileSnapshot:
    """What a linked folder's file looked like when Trove last took it in."""

    size: int
    mtime_ns: int
    content_hash: str


@dataclass(frozen=True, slots=True)
class LinkedFolder:
    """A folder item kept in sync with its source folder, and where its sync stands."""

    item_id: str
    base_id: str
    ignore_patterns: tuple[str, ...] = ()
    syncing: bool = False
    done: int = 0
    total: int = 0
    last_synced_at: float | None = None
    last_error: str | None = None


@dataclass(slots=True)
class SyncChanges:
    """What one sync of a linked folder changed (source paths, relative to the folder)."""

    finished_at: float = 0.0
    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    # (old, new)
    renamed: list[tuple[str, str]] = field(default_factory=list)
    # Files still being written (or unreadable for now): looked at again shortly.
    deferred: list[str] = field(default_factory=list)

    @property
    def count(self) -> int:
        return len(self.added) + len(self.changed) + len(self.removed) + len(self.renamed)

    def paths_json(self) -> dict[str, Any]:
        return {
            "added": self.added,
            "changed": self.changed,
            "removed": self.removed,
            "renamed": [list(pair) for pair in self.renamed],
            "deferred": self.deferred,
        }

    def summary_json(self) -> dict[str, Any]:
        return {
            "finishedAt": self.finished_at,
            "added": len(self.added),
            "changed": len(self.changed),
            "removed": len(self.removed),
            "renamed": len(self.renamed),
            "deferred": len(self.deferred),
            "paths": self.paths_json(),
        }

    @classmethod
    def from_json(cls, finished_at: float, encoded: object) -> SyncChanges:
        try:
            data = json.loads(str(encoded))
        except ValueError:
            data = {}
        if not isinstance(data, dict):
            data = {}

        def strings(key: str) -> list[str]:
            value = data.get(key)
            return [str(v) for v in value] if isinstance(value, list) else []

        renamed_raw = data.get("renamed")
        renamed = [
            (str(p[0]), str(p[1]))
            for p in (renamed_raw if isinstance(renamed_raw, list) else [])
            if isinstance(p, list) and len(p) == 2
        ]
        return cls(
            finished_at,
            strings("added"),
            strings("changed"),
            strings("removed"),
            renamed,
            strings("deferred"),
        )


@dataclass(frozen=True, slots=True)
class PageValidators:
    """A web page's HTTP validators and the hash of its text, from its last fetch."""

    etag: str | None
    last_modified: str | None
    text_hash: str | None


@dataclass(frozen=True, slots=True)
class SyncState:
    """A linked folder's state as the window and `trove sync` show it."""

    link: LinkedFolder
    watching: bool
    # A sync is queued or running somewhere (this or another process).
    pending: bool
    last: SyncChanges | None
