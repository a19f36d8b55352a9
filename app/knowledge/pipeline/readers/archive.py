"""Zip containers (DOCX, PPTX, XLSX, EPUB): open them only when they cannot blow up."""

from __future__ import annotations

import struct
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from app.knowledge.pipeline.readers.document import human_size
from app.knowledge.pipeline.readers.errors import ReaderError
from app.knowledge.types import ErrorCode


@dataclass(frozen=True, slots=True)
class ZipLimits:
    """Caps on what a zip-based document may expand to.

    The caps are checked on the sizes the central directory declares, and those sizes are
    checked against the data: zipfile truncates an entry to its declared size, but only
    after inflating everything a read asked for, which for a parser's read() is the whole
    entry. A bomb that declares a small size would otherwise get past the caps and be
    inflated in full.
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
    check_inflated_sizes(path, infos, kind, limits)


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


# Deflate cannot expand data by more than this (a 258-byte match per 2 bits, roughly).
_DEFLATE_MAX_RATIO = 1032
_LOCAL_HEADER = struct.Struct("<4s2B4HL2L2H")  # the zip local file header, 30 bytes
_LOCAL_SIGNATURE = b"PK\x03\x04"
_CHUNK = 64 * 1024


def check_inflated_sizes(
    path: Path, infos: list[zipfile.ZipInfo], kind: str, limits: ZipLimits
) -> None:
    """Refuse an entry whose data inflates past the size it declares, inflating at most
    that much (plus one chunk) to find out. Skipped when the whole archive could not
    exceed the size cap even at deflate's largest ratio: most documents are that small."""
    worst = sum(
        _DEFLATE_MAX_RATIO * info.compress_size
        for info in infos
        if info.compress_type != zipfile.ZIP_STORED
    )
    if worst <= limits.max_total_bytes and all(
        info.compress_type in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED) for info in infos
    ):
        return
    try:
        with path.open("rb") as handle:
            for info in infos:
                _check_entry(handle, info, kind)
    except (OSError, struct.error, zlib.error) as exc:
        raise ReaderError(
            ErrorCode.READ_FAILED, f"the {kind} is damaged: an entry cannot be inflated ({exc})"
        ) from exc


def _check_entry(handle: BinaryIO, info: zipfile.ZipInfo, kind: str) -> None:
    if info.flag_bits & 0x1:
        return  # encrypted: no parser can read it anyway
    if info.compress_type == zipfile.ZIP_STORED:
        if info.compress_size != info.file_size:
            raise _bomb(kind, f"{info.filename!r} holds more data than it declares")
        return
    if info.compress_type != zipfile.ZIP_DEFLATED:
        # OOXML (ECMA-376 part 2) and EPUB (OCF) allow only stored and deflated entries;
        # zipfile inflates bzip2 and LZMA entries with no bound at all, so they are refused.
        raise ReaderError(
            ErrorCode.READ_FAILED,
            f"the {kind} uses an unsupported compression method for {info.filename!r}",
        )
    handle.seek(info.header_offset)
    header = _LOCAL_HEADER.unpack(handle.read(_LOCAL_HEADER.size))
    if header[0] != _LOCAL_SIGNATURE:
        raise ReaderError(ErrorCode.READ_FAILED, f"the {kind} is damaged: a bad local header")
    handle.seek(header[10] + header[11], 1)  # the entry's name and extra field
    inflater = zlib.decompressobj(-zlib.MAX_WBITS)
    limit = info.file_size
    produced = 0
    left = info.compress_size
    while left > 0 and not inflater.eof:
        data = handle.read(min(_CHUNK, left))
        if not data:
            break
        left -= len(data)
        # max_length stays >= 1 (0 would mean unbounded): one byte past the limit is proof.
        produced += len(inflater.decompress(data, limit + 1 - produced))
        while inflater.unconsumed_tail and produced <= limit:
            produced += len(inflater.decompress(inflater.unconsumed_tail, limit + 1 - produced))
        if produced > limit:
            raise _bomb(
                kind,
                f"{info.filename!r} inflates past the {human_size(limit)} it declares",
            )
