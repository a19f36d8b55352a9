"""Plain text and Markdown: bytes -> str with encoding detection."""

from __future__ import annotations

import codecs
import re
from collections.abc import Iterator

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


class NotUtf8Error(Exception):
    """A text streamed as UTF-8 is not UTF-8 after all: it must be read whole instead, for
    its encoding to be detected."""


def _bom_encoding(data: bytes) -> str | None:
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            return encoding
    return None


def _refuse_binary(data: bytes) -> None:
    sample = data[:65536]
    if b"\x00" in sample or len(_BINARY_CONTROL.findall(sample)) > max(8, len(sample) // 100):
        raise ReaderError(ErrorCode.READ_FAILED, "the file looks binary, not text")


def decode_stream(blocks: Iterator[bytes]) -> Iterator[str]:
    """decode_text, a block at a time: the pieces joined equal decode_text(b"".join(blocks)).

    Only a BOM or UTF-8 can be decoded this way; anything else raises NotUtf8Error (after
    some pieces may have been yielded), as detecting an encoding needs the whole text.
    """
    block = next(blocks, b"")
    encoding = _bom_encoding(block)
    if encoding is None:
        _refuse_binary(block)
    decoder = codecs.getincrementaldecoder(encoding or "utf-8")("replace" if encoding else "strict")
    final = False
    while not final:
        final = not block
        try:
            piece = decoder.decode(block, final=final)
        except UnicodeDecodeError as exc:
            raise NotUtf8Error(str(exc)) from exc
        if piece:
            yield piece
        block = next(blocks, b"")


def decode_text(data: bytes) -> str:
    """Decode text whatever its encoding; binary content raises READ_FAILED."""
    encoding = _bom_encoding(data)
    if encoding is not None:
        return data.decode(encoding, errors="replace")
    _refuse_binary(data)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    # Imported here: only texts in legacy encodings need it, most reader workers never do.
    from charset_normalizer import from_bytes

    best = from_bytes(data).best()
    if best is None:
        raise ReaderError(ErrorCode.READ_FAILED, "the text encoding could not be detected")
    return str(best)


def markdown_title(text: str) -> str | None:
    """The first heading of a Markdown text, if it has one near the top."""
    match = _MD_HEADING.search(text[:4096])
    return match.group(1).strip() if match else None
