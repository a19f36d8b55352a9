"""Zip containers (DOCX, PPTX, XLSX, EPUB): open them only when they cannot blow up."""

from __future__ import annotations

import zipfile
from dataclasses import dataclass
from pathlib import Path

from app.knowledge.pipeline.readers.document import human_size
from app.knowledge.pipeline.readers.errors import ReaderError
from app.knowledge.types import ErrorCode


@dataclass(frozen=True, slots=True)
class ZipLimits:
    """Caps on what a zip-based document may expand to (checked from its central directory).

    zipfile never inflates an entry past the size its directory declares, so checking the
    declared sizes bounds what the parsers can be made to hold in memory.
    """

    max_total_bytes: int = 500 * 1024 * 1024
    max_entries: int = 10_000
    max_ratio: float = 200.0
    # The ratio test applies only to entries at least this big: small XML parts compress
    # very well without being dangerous.
    ratio_min_bytes: int = 10 * 1024 * 1024


DEFAULT_ZIP_LIMITS = ZipLimits()


def check_zip(path: Path, kind: str, limits: ZipLimits = DEFAULT_ZIP_LIMITS) -> None:
    """Refuse a container that is not a zip, or whose contents would expand too far."""
    try:
        with zipfile.ZipFile(path) as archive:
            infos = archive.infolist()
    except zipfile.BadZipFile as exc:
        raise ReaderError(
            ErrorCode.READ_FAILED,
            f"the {kind} is damaged: it is not a readable zip archive ({exc})",
        ) from exc
    except zipfile.LargeZipFile as exc:  # pragma: no cover - zip64 is allowed by default
        raise ReaderError(ErrorCode.READ_FAILED, f"the {kind} is too large to open") from exc
    check_zip_entries(infos, kind, limits)


def check_zip_entries(infos: list[zipfile.ZipInfo], kind: str, limits: ZipLimits) -> None:
    if len(infos) > limits.max_entries:
        raise _bomb(kind, f"it holds {len(infos):,} entries (limit {limits.max_entries:,})")
    total = 0
    for info in infos:
        size = info.file_size
        total += size
        if total > limits.max_total_bytes:
            raise _bomb(
                kind,
                f"it expands to more than {human_size(limits.max_total_bytes)}",
            )
        if size >= limits.ratio_min_bytes and size > limits.max_ratio * max(1, info.compress_size):
            raise _bomb(
                kind,
                f"{info.filename!r} is compressed {size / max(1, info.compress_size):,.0f} to 1",
            )


def _bomb(kind: str, why: str) -> ReaderError:
    return ReaderError(ErrorCode.READ_FAILED, f"the {kind} looks like a zip bomb: {why}")
