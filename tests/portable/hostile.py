"""Hostile `.trovebase` files made from a real export: one member rewritten (its manifest
entry kept in step, so only Trove's own checks can refuse it), the index changed with SQL,
the item rows changed, members added or compressed."""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from app.knowledge.portable.archive import INDEX_MEMBER, ITEMS_MEMBER, MANIFEST, RAW_PREFIX

Rows = list[dict[str, Any]]


def members(src: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(src) as zf:
        return {info.filename: zf.read(info) for info in zf.infolist()}


def manifest_of(src: Path) -> dict[str, Any]:
    with zipfile.ZipFile(src) as zf:
        data: dict[str, Any] = json.loads(zf.read(MANIFEST))
    return data


def write(
    dst: Path,
    contents: dict[str, bytes],
    *,
    manifest: dict[str, Any],
    compressed: frozenset[str] = frozenset(),
) -> Path:
    """A zip of `contents` whose manifest lists each member's true checksum and size."""
    manifest = dict(manifest)
    manifest["members"] = [
        {"name": name, "sha256": hashlib.sha256(data).hexdigest(), "size": len(data)}
        for name, data in contents.items()
        if name != MANIFEST
    ]
    with zipfile.ZipFile(dst, "w", zipfile.ZIP_STORED, allowZip64=True) as zf:
        for name, data in contents.items():
            if name == MANIFEST:
                continue
            method = zipfile.ZIP_DEFLATED if name in compressed else zipfile.ZIP_STORED
            zf.writestr(zipfile.ZipInfo(name), data, compress_type=method)
        zf.writestr(zipfile.ZipInfo(MANIFEST), json.dumps(manifest).encode())
    return dst


def rewrite(
    src: Path,
    dst: Path,
    change: dict[str, bytes | None],
    *,
    compressed: frozenset[str] = frozenset(),
) -> Path:
    """The export with some members replaced, added (a new name) or dropped (None)."""
    contents = members(src)
    for name, data in change.items():
        if data is None:
            contents.pop(name, None)
        else:
            contents[name] = data
    return write(dst, contents, manifest=manifest_of(src), compressed=compressed)


def with_index_sql(src: Path, dst: Path, work: Path, *sql: str) -> Path:
    """The export with its index changed by these statements (the stdlib's sqlite3: another
    SQLite than Trove's, as an attacker's tool would be)."""
    index = work / "hostile-index.sqlite"
    index.write_bytes(members(src)[INDEX_MEMBER])
    conn = sqlite3.connect(index)
    try:
        for statement in sql:
            conn.executescript(statement)
        conn.commit()
    finally:
        conn.close()
    data = index.read_bytes()
    index.unlink()
    return rewrite(src, dst, {INDEX_MEMBER: data})


def with_index_file(src: Path, dst: Path, data: bytes) -> Path:
    return rewrite(src, dst, {INDEX_MEMBER: data})


def item_rows(src: Path) -> Rows:
    return [json.loads(line) for line in members(src)[ITEMS_MEMBER].splitlines() if line]


def with_items(src: Path, dst: Path, change: Callable[[Rows], Rows]) -> Path:
    rows = change(item_rows(src))
    data = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode()
    return rewrite(src, dst, {ITEMS_MEMBER: data})


def raw_names(src: Path) -> list[str]:
    return [n for n in members(src) if n.startswith(RAW_PREFIX)]


def nested(depth: int) -> bytes:
    """JSON nested `depth` lists deep: valid, and deeper than a recursive parser goes."""
    return b"[" * depth + b"]" * depth


def copy(src: Path, dst: Path) -> Path:
    shutil.copyfile(src, dst)
    return dst
