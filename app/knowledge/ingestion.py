"""Write-side orchestration: admission checks, item creation, add conflicts, enqueueing."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from app.knowledge import paths
from app.knowledge.catalog import Catalog
from app.knowledge.jobs.context import EngineParts
from app.knowledge.jobs.kinds import JobKind, index_key, prepare_key
from app.knowledge.types import BaseStatus, ErrorCode, Item, ItemStatus, ItemType, TroveError


@dataclass(slots=True)
class AddReport:
    added: list[Item] = field(default_factory=list)
    # (source, reason) for sources the base already has: reported, never duplicated silently.
    skipped: list[tuple[str, str]] = field(default_factory=list)
    # (source, message) for sources that could not be admitted at all.
    errors: list[tuple[str, str]] = field(default_factory=list)


def _reserved_paths(catalog: Catalog, base_id: str) -> set[str]:
    return {i.relative_path for i in catalog.list_items(base_id) if i.relative_path}


def create_file_items(
    parts: EngineParts,
    base_id: str,
    files: Sequence[tuple[Path, str]],
    *,
    parent_id: str | None = None,
) -> list[Item]:
    """Create processing file items with allocated material names and queue their indexing.

    The caller holds the base mutex: allocation reads what exists, then rows are created.
    """
    raw = parts.layout.raw_dir(base_id)
    reserved = _reserved_paths(parts.catalog, base_id)
    items: list[Item] = []
    with parts.catalog.transaction():
        for path, desired in files:
            rel = paths.allocate_material_name(raw, desired, reserved=reserved)
            size = _size(path)
            item = parts.catalog.create_item(
                base_id,
                ItemType.FILE,
                str(path),
                path.name,
                status=ItemStatus.PROCESSING,
                parent_id=parent_id,
                relative_path=rel,
                size=size,
            )
            parts.catalog.enqueue_job(
                JobKind.INDEX_DOCUMENTS,
                base_id,
                item_id=item.id,
                payload={"reacquire": True},
                idempotency_key=index_key(item.id),
            )
            items.append(item)
    return items


def _size(path: Path) -> int | None:
    try:
        return path.stat().st_size
    except OSError:
        return None


def add_paths(parts: EngineParts, base_id: str, sources: Sequence[str | Path]) -> AddReport:
    """Admit files and folders: each becomes a root item with its job queued."""
    base = parts.catalog.require_base(base_id)
    if base.status is BaseStatus.FAILED:
        raise TroveError(
            ErrorCode.BASE_FAILED, f"knowledge base {base.name!r} has failed; restore it first"
        )
    report = AddReport()
    files: list[tuple[Path, str]] = []
    folders: list[Path] = []
    for raw_source in sources:
        path = Path(raw_source).expanduser()
        try:
            path = path.resolve(strict=True)
        except (OSError, RuntimeError):
            report.errors.append(
                (str(raw_source), f"{ErrorCode.SOURCE_MISSING}: no such file or folder")
            )
            continue
        if path.is_dir():
            folders.append(path)
        elif path.is_file():
            files.append((path, path.name))
        else:
            report.errors.append(
                (str(path), f"{ErrorCode.READ_FAILED}: not a regular file or folder")
            )

    with parts.mutex.lock(base_id):
        fresh_files: list[tuple[Path, str]] = []
        for path, name in files:
            if _already_has(parts.catalog, base_id, str(path)):
                report.skipped.append((str(path), "already in this knowledge base"))
            else:
                fresh_files.append((path, name))
        report.added.extend(create_file_items(parts, base_id, fresh_files))
        for folder in folders:
            if _already_has(parts.catalog, base_id, str(folder)):
                report.skipped.append((str(folder), "already in this knowledge base"))
                continue
            report.added.append(_create_directory_root(parts, base_id, folder))
    return report


def _already_has(catalog: Catalog, base_id: str, source: str) -> bool:
    return any(
        i.status is not ItemStatus.DELETING for i in catalog.find_items_by_source(base_id, source)
    )


def _create_directory_root(parts: EngineParts, base_id: str, folder: Path) -> Item:
    raw = parts.layout.raw_dir(base_id)
    rel = paths.allocate_material_name(
        raw, folder.name or "folder", reserved=_reserved_paths(parts.catalog, base_id)
    )
    with parts.catalog.transaction():
        item = parts.catalog.create_item(
            base_id,
            ItemType.DIRECTORY,
            str(folder),
            folder.name or str(folder),
            status=ItemStatus.PREPARING,
            relative_path=rel,
        )
        parts.catalog.enqueue_job(
            JobKind.PREPARE_ROOT, base_id, item_id=item.id, idempotency_key=prepare_key(item.id)
        )
    return item
