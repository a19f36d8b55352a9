"""Copy or move items (and everything inside them) into another base.

When both bases embed with the same model and dimensions, the index rows travel with the
items: chunks, passages and the stored vectors are written into the target's index as
they are, so nothing is embedded again. Otherwise the copies are indexed in the target
with its own model, from the copied raw files (never the originals, which may be gone).

Crash safety: the new names are reserved on disk (empty placeholders made in the same
catalog write transaction as the allocation, so another process allocating meanwhile sees
them taken), the files are filled through temporary files and renames, the index rows are
written, and only then do the catalog rows appear, all in one transaction. A crash before
that leaves files and index rows no item owns, which `trove doctor --repair` removes; a
move deletes the originals through the normal delete path only after the copy is whole.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath

from app.knowledge import path_safety
from app.knowledge.catalog import new_id
from app.knowledge.engine import EngineParts
from app.knowledge.ingestion import check_settled, delete_items
from app.knowledge.jobs.queue import queue_index, top_roots
from app.knowledge.material_paths import CONTAINER_TYPES, material_path, needs_product
from app.knowledge.portable.archive import BLOCK, Cancelled, TransferCancelled
from app.knowledge.types import (
    Base,
    BaseStatus,
    ErrorCode,
    Item,
    ItemStatus,
    ItemType,
    TransferReport,
    TroveError,
)


@dataclass(slots=True)
class _Planned:
    old: Item
    new: Item
    # (source file under the old raw/, allocated path under the new raw/)
    files: list[tuple[Path, str]]
    reuse: bool  # index rows copied as they are


def _require_target(parts: EngineParts, base_id: str, target_id: str) -> tuple[Base, Base]:
    source = parts.catalog.require_base(base_id)
    target = parts.catalog.require_base(target_id)
    if source.id == target.id:
        raise TroveError(ErrorCode.INVALID_ARGUMENT, "the items are already in that base")
    if target.status is BaseStatus.FAILED:
        raise TroveError(
            ErrorCode.BASE_FAILED, f"knowledge base {target.name!r} has failed; restore it first"
        )
    return source, target


def _selected(parts: EngineParts, base_id: str, item_ids: Sequence[str]) -> list[Item]:
    found = parts.catalog.get_items(item_ids)
    missing = [i for i in item_ids if i not in found or found[i].base_id != base_id]
    if missing:
        raise TroveError(
            ErrorCode.ITEM_NOT_FOUND, f"no such item(s) in this base: {', '.join(missing)}"
        )
    live = [found[i] for i in dict.fromkeys(item_ids)]
    if any(i.status is ItemStatus.DELETING for i in live):
        raise TroveError(ErrorCode.INVALID_ARGUMENT, "an item being deleted cannot be copied")
    return top_roots(parts.catalog, live)


def _subtree(parts: EngineParts, root: Item) -> list[Item]:
    """The root and its live descendants, parents before children."""
    below = [i for i in parts.catalog.descendants(root.id) if i.status is not ItemStatus.DELETING]
    by_parent: dict[str | None, list[Item]] = {}
    for item in below:
        by_parent.setdefault(item.parent_id, []).append(item)
    ordered, queue = [root], [root.id]
    while queue:
        children = sorted(by_parent.get(queue.pop(0), []), key=lambda i: (i.created_at, i.id))
        ordered.extend(children)
        queue.extend(c.id for c in children)
    return ordered


def _desired(item: Item, root: Item, new_root: str | None) -> str:
    """Where the copy wants to live: under the new root's folder, as below the old one."""
    rel = item.relative_path or item.title
    if new_root is not None and root.relative_path and rel.startswith(root.relative_path + "/"):
        return new_root + rel[len(root.relative_path) :]
    return PurePosixPath(rel).name or "item"


def _plan(
    parts: EngineParts, roots: list[Item], source: Base, target: Base, reuse_model: bool
) -> list[_Planned]:
    """Allocate every copy's names and reserve them on disk (caller: one catalog transaction
    under the target's mutex)."""
    old_raw, new_raw = parts.layout.raw_dir(source.id), parts.layout.raw_dir(target.id)
    reserved = {i.relative_path for i in parts.catalog.list_items(target.id) if i.relative_path}
    namer = path_safety.MaterialNamer(new_raw, reserved)
    store = parts.stores.get_if_exists(source.id)
    planned: list[_Planned] = []
    for root in roots:
        new_root: str | None = None
        new_ids: dict[str, str] = {}
        for item in _subtree(parts, root):
            desired = _desired(item, root, new_root)
            is_file = item.type is ItemType.FILE
            names = namer.allocate_all(desired, with_md_product=is_file and needs_product(desired))
            if item is root and item.type in CONTAINER_TYPES:
                new_root = names[0]
            new_ids[item.id] = new_id()
            parent = new_ids.get(item.parent_id) if item.parent_id else None
            copy = replace(
                item,
                id=new_ids[item.id],
                base_id=target.id,
                parent_id=parent,
                relative_path=names[0] if item.relative_path is not None else None,
                phase=None,
                progress=None,
            )
            files = _reserve_files(item, copy, old_raw, new_raw)
            leaf_done = item.type not in CONTAINER_TYPES and item.status is ItemStatus.COMPLETED
            reuse = (
                leaf_done
                and reuse_model
                and store is not None
                and store.material(item.id) is not None
            )
            planned.append(_Planned(item, copy, files, reuse))
    return planned


def _reserve_files(old: Item, new: Item, old_raw: Path, new_raw: Path) -> list[tuple[Path, str]]:
    if old.relative_path is None or new.relative_path is None:
        return []
    if old.type in CONTAINER_TYPES:
        # A folder's name is taken on disk too, until its row names it.
        path_safety.resolve_below(new_raw, new.relative_path).mkdir(parents=True, exist_ok=True)
        return []
    pairs = [(old.relative_path, new.relative_path)]
    old_material, new_material = material_path(old), material_path(new)
    if old_material and new_material and old_material != old.relative_path:
        pairs.append((old_material, new_material))
    files: list[tuple[Path, str]] = []
    for old_rel, new_rel in pairs:
        try:
            src = path_safety.resolve_below(old_raw, old_rel)
            dst = path_safety.resolve_below(new_raw, new_rel)
        except path_safety.UnsafePathError:
            continue
        if src.is_file():
            dst.parent.mkdir(parents=True, exist_ok=True)
            dst.touch(exist_ok=False)  # the name is taken on disk from now on
            files.append((src, new_rel))
    return files


def _copy_file(src: Path, dst: Path, cancelled: Cancelled | None) -> None:
    tmp = dst.with_name(f".tmp-{dst.name}.{os.getpid()}.part")
    try:
        with src.open("rb") as fin, tmp.open("wb") as fout:
            while block := fin.read(BLOCK):
                if cancelled is not None and cancelled():
                    raise TransferCancelled()
                fout.write(block)
        shutil.copystat(src, tmp)
        os.replace(tmp, dst)
    finally:
        tmp.unlink(missing_ok=True)


def _status_of(plan: _Planned, working: set[str]) -> Item:
    """The copy's row: as it was, or processing when it (or, for a folder, a child) will be
    indexed again in the target."""
    if plan.new.id in working:
        return replace(plan.new, status=ItemStatus.PROCESSING, error_code=None, error_message=None)
    return plan.new


def copy_items(
    parts: EngineParts,
    base_id: str,
    item_ids: Sequence[str],
    target_id: str,
    *,
    move: bool = False,
    cancelled: Cancelled | None = None,
) -> TransferReport:
    source, target = _require_target(parts, base_id, target_id)
    same_model = (
        source.embedding_model == target.embedding_model and source.dimensions == target.dimensions
    )
    roots = _selected(parts, base_id, item_ids)
    check_settled(parts.catalog, roots, "move" if move else "copy")
    new_raw = parts.layout.raw_dir(target.id)
    with parts.mutex.lock(target.id):
        with parts.catalog.transaction():
            planned = _plan(parts, roots, source, target, same_model)
        written: list[str] = []
        try:
            for plan in planned:
                for src, rel in plan.files:
                    _copy_file(src, path_safety.resolve_below(new_raw, rel), cancelled)
            reused = _write_index(parts, source, target, planned, written)
        except BaseException:
            _undo(parts, target, planned, written)
            raise
        working = _working(planned)
        with parts.catalog.transaction():
            for plan in planned:
                row = _status_of(plan, working)
                if row.status is ItemStatus.PROCESSING:
                    parts.catalog.create_item(
                        row.base_id,
                        row.type,
                        row.source,
                        row.title,
                        status=ItemStatus.PROCESSING,
                        parent_id=row.parent_id,
                        relative_path=row.relative_path,
                        size=row.size,
                        content_hash=row.content_hash,
                        item_id=row.id,
                        options=row.options,
                    )
                    if row.type not in CONTAINER_TYPES:
                        queue_index(parts, row, reacquire=False)
                else:
                    parts.catalog.insert_settled_items([row])
    removed = len(delete_items(parts, base_id, [r.id for r in roots])) if move else 0
    return TransferReport(
        copied=[p.new.id for p in planned],
        vectors_reused=reused,
        reindexing=sum(
            1 for p in planned if p.new.id in working and p.new.type not in CONTAINER_TYPES
        ),
        removed_from_source=removed,
    )


def _working(planned: list[_Planned]) -> set[str]:
    """Copies that are indexed again in the target: completed leaves whose rows do not
    travel, and every folder above one of them."""
    leaves = {
        p.new.id
        for p in planned
        if p.old.type not in CONTAINER_TYPES
        and p.old.status is ItemStatus.COMPLETED
        and not p.reuse
    }
    parents = {p.new.id: p.new.parent_id for p in planned}
    working = set(leaves)
    for leaf in leaves:
        parent = parents.get(leaf)
        while parent is not None:
            working.add(parent)
            parent = parents.get(parent)
    return working


def _write_index(
    parts: EngineParts, source: Base, target: Base, planned: list[_Planned], written: list[str]
) -> int:
    reusable = [p for p in planned if p.reuse]
    if not reusable:
        return 0
    old_store = parts.stores.get(source.id)
    new_store = parts.stores.get(target.id)
    if target.dimensions is not None:
        new_store.ensure_vectors(target.dimensions)
    reused = 0
    for plan in reusable:
        copy = old_store.material_copy(plan.old.id)
        rel = material_path(plan.new)
        if copy is None or rel is None:
            plan.reuse = False
            continue
        if target.dimensions is not None and copy.vectors is None:
            plan.reuse = False  # vectors missing at the source: let the target embed them
            continue
        new_store.rebuild_material(
            plan.new.id,
            rel,
            copy.title,
            copy.char_count,
            copy.chunks,
            copy.vectors,
            copy.content_hash,
            copy.units,
            copy.page_starts,
        )
        written.append(plan.new.id)
        reused += len(copy.chunks) if copy.vectors is not None else 0
    return reused


def _undo(parts: EngineParts, target: Base, planned: list[_Planned], written: list[str]) -> None:
    """Take back what a failed or cancelled copy wrote before its rows existed."""
    store = parts.stores.get_if_exists(target.id)
    for item_id in written:
        if store is not None:
            store.delete_material(item_id)
    raw = parts.layout.raw_dir(target.id)
    for plan in planned:
        for _, rel in plan.files:
            with contextlib.suppress(OSError, path_safety.UnsafePathError):
                path_safety.resolve_below(raw, rel).unlink(missing_ok=True)
