"""Plain text and Markdown: bytes -> str with encoding detection."""

from __future__ import annotations

import re

from charset_normalizer import from_bytes

from app.knowledge.pipeline.readers.errors import ReaderError
from app.knowledge.types import ErrorCode

_BOMS = (
    (b"\xef\xbb\xbf", "utf-8-sig"),
    (b"\xff\xfe", "utf-16"),
    (b"\xfe\xff", "utf-16"),
)
# Text files rarely hold these control bytes; many of them mean "this is binary".
_BINARY_CONTROL = re.compile(rb"[\x00-\x08\x0e-\x1a\x1c-\x1f]")
_MD_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.+?)\s*#*\s*$", re.MULTILINE)


def decode_text(data: bytes) -> str:
    """Decode text whatever its encoding; binary content raises READ_FAILED."""
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            return data.decode(encoding, errors="replace")
    sample = data[:65536]
    if b"\x00" in sample or len(_BINARY_CONTROL.findall(sample)) > max(8, len(sample) // 100):
        raise ReaderError(ErrorCode.READ_FAILED, "the file looks binary, not text")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    best = from_bytes(data).best()
    if best is None:
        raise ReaderError(ErrorCode.READ_FAILED, "the text encoding could not be detected")
    return str(best)


def markdown_title(text: str) -> str | None:
    """The first heading of a Markdown text, if it has one near the top."""
    match = _MD_HEADING.search(text[:4096])
    return match.group(1).strip() if match else None
