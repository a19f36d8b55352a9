"""The `.trovebase` file: a zip of stored (uncompressed) members and a manifest.

Members: `manifest.json` (format version, app version, embedding model and dimensions,
counts, sha256 and size of every other member), `base.json` (the base's settings),
`items.jsonl` (one item row per line, parents before children), `index.sqlite` (a
consistent snapshot of the base's index: materials, chunks, passages, FTS5, vectors) and
`raw/<path>` (the base's own copies). Members are stored, not deflated: raw copies are
mostly PDFs and Office files that are compressed already, and stored members stream at
disk speed.

Every member is copied in 1 MiB blocks and hashed while it is copied, so memory stays flat
whatever the base's size.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import IO, Any

from app.knowledge import path_safety
from app.knowledge.types import ErrorCode, TroveError

FORMAT_NAME = "trove-base"
FORMAT_VERSION = 1
FILE_SUFFIX = ".trovebase"

MANIFEST = "manifest.json"
BASE_MEMBER = "base.json"
ITEMS_MEMBER = "items.jsonl"
INDEX_MEMBER = "index.sqlite"
RAW_PREFIX = "raw/"

BLOCK = 1024 * 1024
# A manifest lists one line per member; even a million files stay far below this.
MANIFEST_MAX_BYTES = 256 * 1024 * 1024
# What one member's line in the manifest may take beside its name (sha256, size, JSON), and
# what the manifest may take beside its members: a manifest is read whole, so it may be no
# larger than the zip's own directory makes plausible (a padded one is refused unread).
MANIFEST_BYTES_PER_MEMBER = 256
MANIFEST_BASE_BYTES = 64 * 1024
# base.json holds a few settings (under a kilobyte); it is read whole.
SETTINGS_MAX_BYTES = 1024 * 1024
# items.jsonl is read a line at a time; a note's text is on its line, so lines are long.
ITEM_LINE_MAX_BYTES = 64 * 1024 * 1024
# A member's whole path, as unpacked below the staging folder (PATH_MAX is 4096 on Linux).
MEMBER_NAME_MAX_BYTES = 3072

# (bytes done, bytes in all) -> None
Progress = Callable[[int, int], None]
Cancelled = Callable[[], bool]


class TransferCancelled(Exception):
    """The person cancelled an export or import; nothing it made is left behind."""


@dataclass(frozen=True, slots=True)
class Member:
    name: str
    sha256: str
    size: int


@dataclass(frozen=True, slots=True)
class Manifest:
    format_version: int
    app_version: str
    base_name: str
    embedding_model: str | None
    dimensions: int | None
    counts: dict[str, int]
    members: dict[str, Member]

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT_NAME,
            "formatVersion": self.format_version,
            "appVersion": self.app_version,
            "baseName": self.base_name,
            "embeddingModel": self.embedding_model,
            "dimensions": self.dimensions,
            "counts": self.counts,
            "members": [
                {"name": m.name, "sha256": m.sha256, "size": m.size} for m in self.members.values()
            ],
        }


def damaged(detail: str) -> TroveError:
    return TroveError(
        ErrorCode.ARCHIVE_DAMAGED, f"the export file is damaged or not a Trove base: {detail}"
    )


def read_json(data: bytes, what: str) -> Any:
    """A member's JSON; text that is not JSON, or nested too deep to parse, is damage."""
    try:
        return json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise damaged(f"{what} is not JSON ({exc})") from exc
    except RecursionError as exc:
        raise damaged(f"{what} is nested too deep to be a Trove file") from exc


def copy_hashed(
    src: IO[bytes],
    dst: IO[bytes],
    *,
    limit: int | None = None,
    on_block: Callable[[int], None] | None = None,
    cancelled: Cancelled | None = None,
) -> tuple[str, int]:
    """Copy src to dst in 1 MiB blocks; the sha256 and size of what was copied.

    With `limit`, reading stops one byte past it, so a member longer than its manifest says
    is caught without reading the rest."""
    digest = hashlib.sha256()
    size = 0
    while True:
        if cancelled is not None and cancelled():
            raise TransferCancelled()
        want = BLOCK if limit is None else min(BLOCK, limit + 1 - size)
        if want <= 0:
            break
        block = src.read(want)
        if not block:
            break
        digest.update(block)
        dst.write(block)
        size += len(block)
        if on_block is not None:
            on_block(len(block))
    return digest.hexdigest(), size


def parse_manifest(data: bytes) -> Manifest:
    """Read and check a manifest; a newer format is refused before anything else."""
    raw = read_json(data, MANIFEST)
    if not isinstance(raw, dict) or raw.get("format") != FORMAT_NAME:
        raise damaged(f"{MANIFEST} does not describe a Trove base")
    version = raw.get("formatVersion")
    if not isinstance(version, int) or version < 1:
        raise damaged(f"{MANIFEST} has no valid format version")
    if version > FORMAT_VERSION:
        raise TroveError(
            ErrorCode.ARCHIVE_NEWER_FORMAT,
            f"this file was exported by a newer Trove (format {version}, "
            f"app {raw.get('appVersion', '?')}); this Trove reads format {FORMAT_VERSION}: "
            "update Trove to import it",
            params={"version": version, "supported": FORMAT_VERSION},
        )
    try:
        listed = [Member(str(m["name"]), str(m["sha256"]), int(m["size"])) for m in raw["members"]]
        members = {m.name: m for m in listed}
        if len(members) != len(listed):
            raise ValueError("a member is listed twice")
        model = raw.get("embeddingModel")
        dims = raw.get("dimensions")
        manifest = Manifest(
            format_version=version,
            app_version=str(raw.get("appVersion", "")),
            base_name=str(raw["baseName"]),
            embedding_model=str(model) if model else None,
            dimensions=int(dims) if dims is not None else None,
            counts={str(k): int(v) for k, v in dict(raw.get("counts", {})).items()},
            members=members,
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise damaged(f"{MANIFEST} is missing a field ({exc})") from exc
    _check_members(manifest)
    return manifest


def _check_members(manifest: Manifest) -> None:
    for required in (BASE_MEMBER, ITEMS_MEMBER, INDEX_MEMBER):
        if required not in manifest.members:
            raise damaged(f"it has no {required}")
    if (manifest.embedding_model is None) != (manifest.dimensions is None):
        raise damaged("the embedding model and its dimensions do not go together")
    if manifest.members[BASE_MEMBER].size > SETTINGS_MAX_BYTES:
        raise damaged(f"{BASE_MEMBER} is larger than a base's settings can be")
    for name, member in manifest.members.items():
        if member.size < 0 or len(member.sha256) != 64:
            raise damaged(f"{name} has no valid checksum")
        if name in (BASE_MEMBER, ITEMS_MEMBER, INDEX_MEMBER):
            continue
        if len(name.encode("utf-8", "surrogatepass")) > MEMBER_NAME_MAX_BYTES:
            raise damaged(f"the member name {name[:60]!r}... is too long to unpack")
        if not name.startswith(RAW_PREFIX):
            raise damaged(f"unexpected member {name!r}")
        try:
            path_safety.check_relative_path(name[len(RAW_PREFIX) :])
        except path_safety.UnsafePathError as exc:
            raise TroveError(
                ErrorCode.UNSAFE_PATH, f"the export file holds an unsafe path {name!r}: {exc}"
            ) from exc
