"""Shared output: exit codes, JSON and table printing, one-line status texts and bars."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Sequence
from typing import Any, TextIO

from app.knowledge.imported_sources import is_imported
from app.knowledge.ocr.settings import ocr_on
from app.knowledge.server_index import address
from app.knowledge.types import (
    Base,
    Item,
    ItemPhase,
    ItemStatus,
    SearchResponse,
)

EXIT_OK = 0


EXIT_FAILED = 1


EXIT_USAGE = 2


def print_json(data: Any, out: TextIO | None = None) -> None:
    text = json.dumps(data, ensure_ascii=False)
    if _has_surrogates(text):
        # A lone surrogate (a query's "\\ud800") cannot be written as UTF-8; as a JSON
        # escape it stays valid UTF-8 and round-trips to the same string.
        text = json.dumps(data, ensure_ascii=True)
    (out or sys.stdout).write(text + "\n")


_SURROGATE = re.compile("[\ud800-\udfff]")


def _has_surrogates(text: str) -> bool:
    return _SURROGATE.search(text) is not None


# What must not reach a terminal as it is: C0 and C1 control characters (an escape sequence
# drives the terminal that prints it, a newline or carriage return forges lines), DEL, the
# line separators and the bidirectional overrides (they make text read as other text).
_UNPRINTABLE = re.compile(
    "[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]"
)
_UNPRINTABLE_IN_TEXT = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]"
)


def _escape(match: re.Match[str]) -> str:
    return match.group().encode("unicode_escape").decode("ascii")


def shown(text: object) -> str:
    """User-controlled text (a base's name, an item's title or source, an error message) as
    one line a terminal prints as it is: control characters become escapes (\\x1b, \\n)."""
    return _UNPRINTABLE.sub(_escape, str(text))


def shown_text(text: str) -> str:
    """Like `shown`, for running text that keeps its lines (an answer, a chunk's text)."""
    return _UNPRINTABLE_IN_TEXT.sub(_escape, text)


def searchable(text: str) -> str:
    """The query as the engine gets it: lone surrogates are no characters (no material can
    contain one), so they become U+FFFD instead of failing deep in a tokenizer."""
    return _SURROGATE.sub("\ufffd", text)


def base_json(base: Base) -> dict[str, Any]:
    return {
        "id": base.id,
        "name": base.name,
        "embeddingModel": base.embedding_model,
        "dimensions": base.dimensions,
        "rerankModel": base.rerank_model,
        "documentCount": base.document_count,
        "threshold": base.threshold,
        "chunkSize": base.chunk_size,
        "chunkOverlap": base.chunk_overlap,
        "status": str(base.status),
        "statusReason": base.status_reason,
        "agentWrites": base.agent_writes,
        "agentPrivateUrls": base.agent_private_urls,
        "ocr": {
            "enabled": ocr_on(base.ocr),
            "languages": list(base.ocr.languages),
            "maxPages": base.ocr.max_pages,
        },
        "backend": str(base.backend),
        # host:port/database only: never the user's password.
        "server": address(base.dsn) if base.dsn else None,
    }


def item_json(item: Item) -> dict[str, Any]:
    return {
        "id": item.id,
        "parentId": item.parent_id,
        "type": str(item.type),
        "source": item.source,
        "title": item.title,
        "relativePath": item.relative_path,
        "status": str(item.status),
        "phase": str(item.phase) if item.phase else None,
        "progress": item.progress,
        "errorCode": item.error_code,
        "errorMessage": item.error_message,
        "chunkCount": item.chunk_count,
        "size": item.size,
        # Its source came with an imported base: shown, never read (reindex uses the copy).
        "imported": is_imported(item),
    }


def response_json(response: SearchResponse, *, debug: bool = True) -> dict[str, Any]:
    data: dict[str, Any] = {
        "query": response.query,
        "mode": str(response.mode),
        # What was asked for, when the search answered in another mode (see "degraded").
        "requestedMode": str(response.requested_mode or response.mode),
        "results": [r.to_json() for r in response.results],
        **response.relevance_json(),
        "degraded": response.degraded_json(),
    }
    if debug:
        data["metrics"] = response.metrics.to_json()
    return data


def table(rows: Sequence[Sequence[str]], headers: Sequence[str]) -> str:
    rows = [[shown(c) for c in r] for r in rows]
    widths = [max(len(str(r[i])) for r in [headers, *rows]) for i in range(len(headers))]
    lines = ["  ".join(str(h).ljust(w) for h, w in zip(headers, widths, strict=True))]
    lines += ["  ".join(str(c).ljust(w) for c, w in zip(r, widths, strict=True)) for r in rows]
    return "\n".join(line.rstrip() for line in lines)


def status_text(item: Item) -> str:
    if item.status is ItemStatus.FAILED:
        return f"failed ({item.error_code})"
    if item.phase is ItemPhase.EMBEDDING and item.progress is not None:
        return f"{item.status}: embedding {item.progress:.0f}%"
    if item.phase:
        return f"{item.status}: {item.phase}"
    return str(item.status)


def bar(percent: float | None, width: int = 20) -> str:
    if percent is None:
        return "[" + "·" * width + "]"
    filled = round(width * max(0.0, min(100.0, percent)) / 100)
    return "[" + "#" * filled + "-" * (width - filled) + f"] {percent:3.0f}%"
