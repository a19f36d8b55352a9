"""Path safety for knowledge-base folders.

Layout: ``bases/<baseId>/raw/`` holds materials and ``bases/<baseId>/.trove/`` holds the
index. Material names come from user input (file names, URL titles, note titles), so every
name is sanitised before it touches the disk, and every relative path is re-checked before
it is joined to a root.

The rules are deliberately stricter than any single platform requires: a base created on
Linux must still open on Windows and macOS (synced folders, backups), so anything one of
those systems would reject or reinterpret is refused or rewritten everywhere.
"""

from __future__ import annotations

import os
import re
import unicodedata
from collections.abc import Iterable
from pathlib import Path

__all__ = [
    "MAX_SEGMENT_BYTES",
    "RESERVED_SEGMENT",
    "UnsafePathError",
    "allocate_material_name",
    "check_relative_path",
    "md_product_name",
    "resolve_below",
    "sanitize_base_id",
    "sanitize_file_name",
]


class UnsafePathError(ValueError):
    """A base id, name or relative path was refused; the message says what and why."""


RESERVED_SEGMENT = ".trove"

# 255 bytes is the common per-segment limit (ext4, APFS, NTFS counts UTF-16 units). Staying
# well below it leaves room for the "_N" collision suffix, the ".md" product and for tools
# that append their own suffixes (".part", "~") without hitting the limit.
MAX_SEGMENT_BYTES = 150
# The longest name a file system stores (a longer one fails with ENAMETOOLONG): a path with
# such a segment was not allocated here and cannot be written anywhere.
MAX_NAME_BYTES = 255

UNTITLED = "untitled"

_BASE_ID_RE = re.compile(r"[a-z0-9_-]{1,64}")

# Windows refuses these in names; replacing them on every platform keeps bases portable.
_FORBIDDEN_CHARS = frozenset('/\\:*?"<>|')

# Bidi controls let a name render differently from what it is ("evil\u202etxt.exe" shows as
# "evilexe.txt"), a classic spoofing trick. They are dropped like control characters.
# Zero-width joiners are NOT in this set: emoji sequences need them.
_BIDI_CONTROLS = frozenset(
    "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
)

# Windows maps these device names into every directory, with or without an extension
# ("con.txt" opens the console). COM0/LPT0 and the superscript digits are listed by current
# Microsoft docs; CONIN$/CONOUT$ are console devices too. Refusing extra names costs nothing.
_WINDOWS_RESERVED = frozenset(
    {"CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$"}
    | {f"{prefix}{digit}" for prefix in ("COM", "LPT") for digit in "0123456789¹²³"}
)

# An "extension" longer than this, or containing whitespace, is almost certainly part of a
# title ("Version 2.0 release notes") rather than a file type, so it is not preserved.
_MAX_EXT_BYTES = 16

_MD_EXT = ".md"


# --------------------------------------------------------------------------- base ids


def sanitize_base_id(value: str) -> str:
    """Return ``value`` if it is a valid base id (``[a-z0-9_-]{1,64}``), else raise.

    Ids are never rewritten: two different inputs silently mapping to one folder would merge
    two knowledge bases.
    """
    if not _BASE_ID_RE.fullmatch(value):
        raise UnsafePathError(
            f"refused base id {value!r}: ids must be 1-64 characters from [a-z0-9_-]"
        )
    return value


# --------------------------------------------------------------------------- file names


def _utf8_len(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def _truncate_utf8(text: str, max_bytes: int) -> str:
    """Longest prefix of ``text`` within ``max_bytes`` UTF-8 bytes, cut on a code point."""
    if max_bytes <= 0:
        return ""
    encoded = text.encode("utf-8")
    if len(encoded) <= max_bytes:
        return text
    # "ignore" drops the partial trailing sequence, so a code point is never split.
    return encoded[:max_bytes].decode("utf-8", "ignore")


def _split_ext(name: str) -> tuple[str, str]:
    """Split ``name`` into stem and extension (with its dot); extension may be ""."""
    stem, dot, ext = name.rpartition(".")
    if not dot or not stem or not ext:
        return name, ""
    if _utf8_len(ext) + 1 > _MAX_EXT_BYTES or any(ch.isspace() for ch in ext):
        return name, ""
    return stem, "." + ext


def _windows_device_prefix(name: str) -> str | None:
    """The reserved device word ``name`` starts with, as Windows would see it, or None."""
    # Windows looks at the part before the first dot, ignoring trailing spaces there.
    head = name.split(".", 1)[0].rstrip(" ")
    if head.upper() in _WINDOWS_RESERVED:
        return head
    return None


def _clean(name: str) -> str:
    """Character-level cleaning shared by sanitising and "is this segment nameless?"."""
    out: list[str] = []
    for ch in name:
        if ch.isspace():
            # Tabs and newlines are control characters too, but in a title they separate
            # words; turning them into spaces keeps "Hello\nWorld" readable.
            out.append(" ")
            continue
        category = unicodedata.category(ch)
        if category == "Cc" or ch in _BIDI_CONTROLS:
            continue
        if category == "Cs" or ch in _FORBIDDEN_CHARS:
            # Lone surrogates (os.fsdecode of undecodable bytes) cannot be encoded to UTF-8,
            # so they are replaced like the characters Windows forbids.
            out.append("_")
            continue
        out.append(ch)
    # Leading dots would make hidden files (and could spell ".trove"); trailing dots and
    # spaces are silently dropped by Windows, so "a." and "a" would alias the same file.
    return " ".join("".join(out).split()).strip(". ")


def sanitize_file_name(name: str) -> str:
    """Turn an arbitrary user-provided name into one safe, portable path segment.

    The result is never empty, never ``.``/``..``/``.trove``, contains no separators, no
    control or bidi characters, no characters Windows forbids, is not a Windows device name,
    does not start or end with a dot or space, and is at most ``MAX_SEGMENT_BYTES`` UTF-8
    bytes long (the extension is kept when the name is shortened). Other Unicode (CJK,
    emoji, accents) is kept as is. The function is idempotent.
    """
    cleaned = _clean(name)
    if not cleaned:
        return UNTITLED

    device = _windows_device_prefix(cleaned)
    if device is not None:
        # The "_" goes right after the device word so the extension stays intact:
        # "CON.txt" -> "CON_.txt" (Windows only checks the part before the first dot).
        cleaned = device + "_" + cleaned[len(device) :]

    cleaned = _cap_segment(cleaned)

    # Cannot happen while leading dots are stripped; kept so that invariant never hinges on
    # a distant line.
    if cleaned.casefold() == RESERVED_SEGMENT:
        cleaned = "_" + cleaned
    return cleaned


def _cap_segment(name: str, suffix: str = "", ext_room: int = 0, *, has_ext: bool = True) -> str:
    """Insert ``suffix`` before the extension and cap the result at ``MAX_SEGMENT_BYTES``.

    ``ext_room`` reserves bytes for an extension that may later replace the current one
    (the ".md" product), so both names fit. Folder names pass ``has_ext=False``: a dot in
    a folder name is not a file type, so the suffix goes at the end.
    """
    stem, ext = _split_ext(name) if has_ext else (name, "")
    room_for_ext = max(_utf8_len(ext), ext_room)
    budget = MAX_SEGMENT_BYTES - room_for_ext - _utf8_len(suffix)
    if _utf8_len(stem) > budget:
        # Truncation can expose a trailing space or dot, which Windows would strip.
        stem = _truncate_utf8(stem, budget).rstrip(". ")
    return stem + suffix + ext


# --------------------------------------------------------------------------- relative paths


def _segment_problem(segment: str) -> str | None:
    """Why ``segment`` is not a safe portable path segment, or None if it is."""
    if segment == "":
        return "empty segment (leading, trailing or doubled '/')"
    if segment in (".", ".."):
        return f"{segment!r} segment (relative navigation is not allowed)"
    if segment.strip(". ") == "":
        # Windows strips trailing dots/spaces, so ".. " or "..." can act as "..".
        return f"segment {segment!r} consists only of dots and spaces"
    if segment[-1] in ". ":
        return f"segment {segment!r} ends with a dot or space (Windows would drop it)"
    bad = sorted({ch for ch in segment if ch in _FORBIDDEN_CHARS})
    if bad:
        return f"segment {segment!r} contains characters not allowed on Windows: {bad}"
    for ch in segment:
        category = unicodedata.category(ch)
        if category == "Cc" or category == "Cs" or ch in _BIDI_CONTROLS:
            return f"segment {segment!r} contains control character {ch!r}"
    if _windows_device_prefix(segment) is not None:
        return f"segment {segment!r} is a Windows device name"
    if len(segment.encode("utf-8", "surrogatepass")) > MAX_NAME_BYTES:
        return f"segment {segment[:40]!r}... is longer than {MAX_NAME_BYTES} bytes"
    return None


def check_relative_path(rel: str) -> str:
    """Validate a material path relative to ``raw/`` and return it.

    Paths are POSIX style ('/'-separated). Anything that could point elsewhere on some
    platform is refused rather than repaired: a path that needs repairing did not come from
    :func:`allocate_material_name`, so it is suspect. Because every non-canonical spelling
    is refused, the returned string is the input unchanged.
    """
    if rel == "":
        raise UnsafePathError("refused empty relative path")
    if "\x00" in rel:
        raise UnsafePathError(f"refused path {rel!r}: contains a NUL byte")
    if rel[0] in "/\\":
        raise UnsafePathError(f"refused path {rel!r}: absolute or UNC paths are not allowed")
    if len(rel) >= 2 and rel[1] == ":" and rel[0].isascii() and rel[0].isalpha():
        raise UnsafePathError(f"refused path {rel!r}: Windows drive paths are not allowed")
    # '..' is checked across both separators first so the message names the real danger;
    # Windows treats '\' as a separator, so 'a\..\..\x' climbs out of the folder there.
    if any(part == ".." for part in re.split(r"[/\\]", rel)):
        raise UnsafePathError(f"refused path {rel!r}: '..' segments are not allowed")
    if "\\" in rel:
        raise UnsafePathError(
            f"refused path {rel!r}: backslashes are not allowed (a separator on Windows)"
        )
    if ":" in rel:
        raise UnsafePathError(
            f"refused path {rel!r}: ':' is not allowed (drive or NTFS alternate data stream)"
        )
    segments = rel.split("/")
    if segments[0].casefold() == RESERVED_SEGMENT:
        raise UnsafePathError(
            f"refused path {rel!r}: {RESERVED_SEGMENT!r} is reserved for the index"
        )
    for segment in segments:
        problem = _segment_problem(segment)
        if problem is not None:
            raise UnsafePathError(f"refused path {rel!r}: {problem}")
    return rel


def resolve_below(root: Path, rel: str) -> Path:
    """Resolve ``rel`` under ``root`` and return it, refusing anything not strictly below.

    Symlinks are followed, so a link inside ``root`` that points outside is refused. This is
    a guard against names and links, not against a local process swapping links between this
    check and the later open; that would need openat-style APIs the stdlib lacks.
    """
    checked = check_relative_path(rel)
    base = root.resolve()
    try:
        target = (base / checked).resolve(strict=False)
    except (RuntimeError, OSError) as exc:
        # Python 3.11 reports symlink loops as RuntimeError, later versions as OSError.
        raise UnsafePathError(f"refused path {rel!r}: cannot be resolved ({exc})") from exc
    if target == base or not target.is_relative_to(base):
        raise UnsafePathError(
            f"refused path {rel!r}: resolves to {str(target)!r}, not strictly below {str(base)!r}"
        )
    return target


def md_product_name(rel: str) -> str:
    """The Markdown product of a material: ``'a/report.pdf' -> 'a/report.md'``.

    A material that already is Markdown is its own product. The path is validated first.
    """
    checked = check_relative_path(rel)
    head, sep, name = checked.rpartition("/")
    stem, ext = _split_ext(name)
    if ext.casefold() == _MD_EXT:
        return checked
    return head + sep + stem + _MD_EXT


# --------------------------------------------------------------------------- allocation


def _fold(segment: str) -> str:
    # macOS and Windows compare names case-insensitively, and APFS/HFS+ also ignore
    # NFC/NFD differences; folding both ways over-approximates "same file" on all of them.
    # Over-approximating only costs an unnecessary "_N".
    return unicodedata.normalize("NFC", unicodedata.normalize("NFC", segment).casefold())


def _path_key(segments: Iterable[str]) -> tuple[str, ...]:
    return tuple(_fold(s) for s in segments)


class _Occupancy:
    """What already occupies names under ``raw_dir``: entries on disk plus reserved paths."""

    def __init__(self, raw_dir: Path, reserved: Iterable[str]) -> None:
        self._raw_dir = raw_dir
        self._listings: dict[tuple[str, ...], dict[str, list[tuple[str, bool]]]] = {}
        # Folded key -> spelling first seen, for every reserved path and each of its parent
        # folders. A reserved path may itself be a folder (directory items are allocated
        # here too), so reserved entries can be reused as folders but never taken as names.
        self._reserved: dict[tuple[str, ...], str] = {}
        self.reserve(reserved)

    def reserve(self, paths: Iterable[str]) -> None:
        for entry in paths:
            parts = [p for p in entry.split("/") if p]
            for depth in range(1, len(parts) + 1):
                self._reserved.setdefault(_path_key(parts[:depth]), parts[depth - 1])

    def _listing(self, parent: tuple[str, ...]) -> dict[str, list[tuple[str, bool]]]:
        """Folded name -> [(on-disk name, is real directory)] for ``raw_dir/parent``."""
        cached = self._listings.get(parent)
        if cached is not None:
            return cached
        listing: dict[str, list[tuple[str, bool]]] = {}
        try:
            with os.scandir(self._raw_dir.joinpath(*parent)) as it:
                for entry in it:
                    # Symlinked directories count as occupied names, never as folders to
                    # reuse: following one could place the material outside raw/.
                    is_dir = entry.is_dir(follow_symlinks=False)
                    listing.setdefault(_fold(entry.name), []).append((entry.name, is_dir))
        except (FileNotFoundError, NotADirectoryError):
            pass  # parent will be created; nothing in it is taken yet
        self._listings[parent] = listing
        return listing

    def directory_spelling(self, parent: tuple[str, ...], name: str) -> str | None:
        """Existing spelling of a usable folder matching ``name``, if there is one.

        A real directory on disk wins; a file (or symlink) on disk makes the name unusable
        as a folder; otherwise a reserved path of that name is assumed to be a folder, as
        a pending file there would make the caller's own plan inconsistent anyway.
        """
        matches = self._listing(parent).get(_fold(name), [])
        dirs = [n for n, is_dir in matches if is_dir]
        if dirs:
            return name if name in dirs else sorted(dirs)[0]
        if matches:
            return None
        return self._reserved.get(_path_key((*parent, name)))

    def is_taken(self, parent: tuple[str, ...], name: str) -> bool:
        return _fold(name) in self._listing(parent) or _path_key((*parent, name)) in self._reserved


def _place_directory(occupancy: _Occupancy, parent: tuple[str, ...], name: str) -> str:
    """Pick the folder name for ``name`` under ``parent``: reuse a matching folder, or the
    first ``name``/``name_N`` not occupied by a file."""
    n = 0
    while True:
        candidate = _cap_segment(name, f"_{n}", has_ext=False) if n else name
        existing = occupancy.directory_spelling(parent, candidate)
        if existing is not None:
            return existing
        if not occupancy.is_taken(parent, candidate):
            return candidate
        n += 1


class MaterialNamer:
    """Allocates material names under ``raw_dir``, one critical section at a time.

    Reading what occupies ``raw_dir`` once and keeping it up to date makes allocating the
    thousands of names of a large folder linear instead of quadratic.
    """

    def __init__(self, raw_dir: Path, reserved: Iterable[str] = ()) -> None:
        self._occupancy = _Occupancy(raw_dir, reserved)

    def allocate(self, desired: str, *, with_md_product: bool = False) -> str:
        """The name for ``desired``; see :func:`allocate_material_name`."""
        return self.allocate_all(desired, with_md_product=with_md_product)[0]

    def allocate_all(self, desired: str, *, with_md_product: bool = False) -> list[str]:
        """The name and, with ``with_md_product``, its product name, both reserved."""
        occupancy = self._occupancy
        raw_segments = desired.split("/")
        # Folder segments without a name ("", ".", "..", "...") are dropped instead of
        # becoming folders called "untitled"; they are syntax noise, not meaning. The last
        # segment is the file itself and always yields a name.
        folder_segments = [s for s in raw_segments[:-1] if _clean(s)]
        parent: tuple[str, ...] = ()
        for segment in folder_segments:
            parent = (*parent, _place_directory(occupancy, parent, sanitize_file_name(segment)))

        name = sanitize_file_name(raw_segments[-1])
        _, ext = _split_ext(name)
        want_product = with_md_product and ext.casefold() != _MD_EXT
        ext_room = len(_MD_EXT) if want_product else 0

        n = 0
        while True:
            candidate = _cap_segment(name, f"_{n}" if n else "", ext_room)
            names = [candidate]
            if want_product:
                names.append(md_product_name(candidate))
            if not any(occupancy.is_taken(parent, c) for c in names):
                break
            n += 1

        prefix = "/".join(parent)
        allocated = [f"{prefix}/{c}" if prefix else c for c in names]
        for path in allocated:
            check_relative_path(path)  # invariant: everything handed out passes the guard
        occupancy.reserve(allocated)
        return allocated


def allocate_material_name(
    raw_dir: Path,
    desired: str,
    *,
    with_md_product: bool = False,
    reserved: set[str] | None = None,
) -> str:
    """Allocate a free material path under ``raw_dir`` for ``desired``; create nothing.

    ``desired`` is '/'-separated; each segment is sanitised with :func:`sanitize_file_name`
    (a '\\' is part of a name, not a separator). Empty, '.' and '..' folder segments carry
    no name and are dropped. Existing folders are reused when they match case-insensitively,
    keeping their on-disk spelling.

    A name is taken if something with the same case-folded name exists on disk (including
    dangling symlinks) or is in ``reserved``. On collision ``_N`` is inserted before the
    extension, smallest N first. With ``with_md_product`` both the name and its
    :func:`md_product_name` must be free for the same N (ignored for Markdown names).

    Everything allocated is added to ``reserved`` when given, so several allocations inside
    one critical section cannot hand out the same name before any file exists. Callers must
    hold the base's lock across allocation and file creation.
    """
    allocated = MaterialNamer(raw_dir, reserved or ()).allocate_all(
        desired, with_md_product=with_md_product
    )
    if reserved is not None:
        reserved.update(allocated)
    return allocated[0]
