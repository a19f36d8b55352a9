"""kb_tree: a base's items as folders and documents by Concept ID, listed depth-first and
paged with opaque cursors that are tied to the listing they came from."""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from app.agent.errors import ToolError, ToolErrorCode
from app.agent.views import item_json
from app.knowledge.material_paths import CONTAINER_TYPES, material_path
from app.knowledge.types import Item


@dataclass(slots=True)
class Folder:
    """A folder of the listing: its own item (a folder or sitemap), sub-folders, documents
    and the status counts of every document below it."""

    name: str
    path: str
    depth: int
    item: Item | None = None
    folders: dict[str, Folder] = field(default_factory=dict)
    documents: list[tuple[str, Item]] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    total: int = 0


def _folder(root: Folder, path: str) -> Folder:
    node = root
    for segment in PurePosixPath(path).parts:
        child = node.folders.get(segment)
        if child is None:
            prefix = f"{node.path}/" if node.path else ""
            child = Folder(segment, prefix + segment, node.depth + 1)
            node.folders[segment] = child
        node = child
    return node


def build_tree(items: Sequence[Item]) -> Folder:
    """Folders and documents by Concept ID; a folder or sitemap item is its folder."""
    root = Folder("", "", -1)
    for item in items:
        if item.type in CONTAINER_TYPES:
            if item.relative_path:
                _folder(root, item.relative_path).item = item
            continue
        cid = material_path(item)
        parent = str(PurePosixPath(cid).parent) if cid else "."
        folder = _folder(root, "" if parent == "." else parent)
        folder.documents.append((PurePosixPath(cid).name if cid else item.title, item))
        for node in _chain(root, folder):
            node.total += 1
            node.counts[str(item.status)] = node.counts.get(str(item.status), 0) + 1
    return root


def _chain(root: Folder, folder: Folder) -> list[Folder]:
    chain, node = [root], root
    for segment in PurePosixPath(folder.path).parts:
        node = node.folders[segment]
        chain.append(node)
    return chain


def flatten(folder: Folder, max_depth: int | None, out: list[dict[str, Any]]) -> None:
    """Depth-first: a folder, then what it holds; folders before documents, by name."""
    depth = folder.depth + 1
    if max_depth is not None and depth >= max_depth:
        return
    for sub in sorted(folder.folders.values(), key=lambda f: (f.name.casefold(), f.name)):
        collapsed = max_depth is not None and depth + 1 >= max_depth
        node: dict[str, Any] = {
            "kind": "folder",
            "depth": depth,
            "path": sub.path,
            "name": sub.name,
            "documents": sub.total,
            "statusCounts": dict(sorted(sub.counts.items())),
            "collapsed": collapsed and bool(sub.folders or sub.documents),
        }
        if sub.item is not None:
            node["item"] = item_json(sub.item)
        out.append(node)
        flatten(sub, max_depth, out)
    for name, item in sorted(folder.documents, key=lambda d: (d[0].casefold(), d[0])):
        out.append({"kind": "document", "depth": depth, "name": name, **item_json(item)})


def _encode_cursor(signature: str, offset: int) -> str:
    raw = json.dumps({"v": 1, "s": signature, "o": offset}, separators=(",", ":"))
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def decode_cursor(cursor: str | None, signature: str) -> int:
    if cursor is None:
        return 0
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        data = json.loads(base64.urlsafe_b64decode(padded.encode()))
        offset = data["o"]
        ok = data.get("v") == 1 and isinstance(offset, int) and offset >= 0
    except (ValueError, binascii.Error, KeyError, TypeError, AttributeError):
        ok = False
    if not ok:
        raise ToolError(ToolErrorCode.INVALID_CURSOR, "kb_tree: the cursor is not valid")
    if data.get("s") != signature:
        raise ToolError(
            ToolErrorCode.INVALID_CURSOR,
            "kb_tree: the cursor belongs to another listing; repeat the call with the same "
            "baseId and maxDepth, or start again without a cursor",
        )
    return int(offset)


def next_cursor(signature: str, offset: int, limit: int, total: int) -> str | None:
    return _encode_cursor(signature, offset + limit) if offset + limit < total else None
