"""Concept IDs and the agent tools kb_search / kb_read / kb_tree / kb_manage.

A Concept ID is the relative path of an item's material under ``raw/``: a file's stored
copy when it is plain text, else its ``.md`` product; the snapshot of a URL or a note
(`app.knowledge.material_paths.material_path`). It is what search hits carry and what agents
pass back to read or change a document.

A Concept ID is never trusted: on every use it is checked for shape (no ``..``, absolute
paths, NUL bytes, backslashes or ``.trove``), resolved against the base's index, and the item
that owns it is re-checked in the catalog: it must belong to the base and be ``completed``
(so not failed, still processing, deleting or gone).

The tools take JSON-like arguments and return JSON-ready dicts; any failure comes back as
``{"error": {"code", "message"}}`` with a stable code, never as a traceback. Everything goes
through `KnowledgeService`. Qt-free: the MCP server (`app.mcp_server`) and any other caller
use this module as it is.
"""

from __future__ import annotations

import base64
import binascii
import importlib
import io
import json
import logging
import math
import re
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path, PurePosixPath
from typing import Any

from app.knowledge import path_safety
from app.knowledge.ingestion import AddReport
from app.knowledge.material_paths import CONTAINER_TYPES, material_path
from app.knowledge.query import derive_mode
from app.knowledge.service import KnowledgeService
from app.knowledge.types import (
    RUNNING_STATUSES,
    Base,
    ErrorCode,
    Item,
    ItemStatus,
    ItemType,
    SearchResponse,
    SearchResult,
    TroveError,
)

log = logging.getLogger(__name__)

MAX_READ_CHARS = 20_000
MAX_QUERY_CHARS = 1_000
MAX_TOP_K = 100
MAX_SEARCH_BASES = 50
MAX_PATTERN_CHARS = 256
DEFAULT_GREP_MATCHES = 50
MAX_GREP_MATCHES = 200
DEFAULT_CONTEXT_LINES = 1
MAX_CONTEXT_LINES = 10
GREP_TIME_BUDGET = 2.0  # seconds for one grep over one material
SHOWN_LINE_CHARS = 400  # a matching or context line is cut to this much around the match
DEFAULT_TREE_PAGE = 100
MAX_TREE_PAGE = 500
MAX_TREE_DEPTH = 64
MAX_MANAGE_TARGETS = 100
DEFAULT_WAIT_SECONDS = 30.0
# kb_manage wait=true polls the catalog for items whose jobs another process runs.
SETTLE_POLL_FIRST = 0.05
SETTLE_POLL_MAX = 0.5
SETTLE_RECOVER_EVERY = 2.0
UNSETTLED_STATUSES = frozenset({ItemStatus.PREPARING, ItemStatus.PROCESSING, ItemStatus.DELETING})
_SKIP_CHUNK = 1 << 20

_URL_LIKE = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://|^(?:file|javascript|data|mailto|about):", re.I)


class ToolErrorCode(StrEnum):
    """Codes of the agent tools' own errors; engine errors keep their `ErrorCode`."""

    CONCEPT_NOT_FOUND = "CONCEPT_NOT_FOUND"
    CONCEPT_NOT_VISIBLE = "CONCEPT_NOT_VISIBLE"
    AGENT_WRITES_DISABLED = "AGENT_WRITES_DISABLED"
    INVALID_PATTERN = "INVALID_PATTERN"
    INVALID_CURSOR = "INVALID_CURSOR"
    UNKNOWN_TOOL = "UNKNOWN_TOOL"
    INTERNAL_ERROR = "INTERNAL_ERROR"


class ToolError(Exception):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = str(code)
        self.message = message

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"


@dataclass(frozen=True, slots=True)
class ToolResult:
    data: dict[str, Any]
    is_error: bool = False

    @classmethod
    def failure(cls, code: str, message: str) -> ToolResult:
        return cls({"error": {"code": str(code), "message": message}}, is_error=True)


# -- tool definitions ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ToolSpec:
    name: str
    title: str
    description: str
    input_schema: dict[str, Any]
    read_only: bool = True


def _schema(properties: dict[str, Any], required: Sequence[str] = ()) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": list(required),
        "additionalProperties": False,
    }


_BASE_ID = {"type": "string", "minLength": 1, "description": "Knowledge base id (or its name)."}
_CONCEPT_ID = {
    "type": "string",
    "minLength": 1,
    "description": "Concept ID of a document, as kb_search hits and kb_tree list them.",
}

TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        name="kb_search",
        title="Search knowledge bases",
        description=(
            "Search the person's Trove knowledge bases (hybrid vector + BM25 full text, or BM25 "
            "alone). Returns ranked passages, each with baseId, conceptId, title, type, the chunk "
            "text, score, scoreKind ('ranking' scores only order hits; 'relevance' scores are "
            "similarities) and charStart/charEnd of the passage in its document. Read more "
            "around a hit with kb_read(baseId, conceptId, charStart, charEnd). When a model "
            "provider is down the search still answers: 'degraded' then lists each skipped "
            "stage (embedding: full-text results only; rerank: results not reranked)."
        ),
        input_schema=_schema(
            {
                "query": {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": MAX_QUERY_CHARS,
                    "description": "What to look for: words or a question.",
                },
                "baseIds": {
                    "type": "array",
                    "items": {"type": "string", "minLength": 1},
                    "maxItems": MAX_SEARCH_BASES,
                    "description": "Bases to search (ids or names). Default: every base.",
                },
                "topK": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": MAX_TOP_K,
                    "description": "How many hits to return. Default: the bases' own setting.",
                },
            },
            required=["query"],
        ),
    ),
    ToolSpec(
        name="kb_read",
        title="Read a document",
        description=(
            f"Read a document of a knowledge base by its conceptId: a character range (at most "
            f"{MAX_READ_CHARS} characters per call; totalChars and truncated tell whether there "
            "is more, nextCharStart where to continue), or, with `pattern`, grep it: the lines "
            "matching a regular expression, with line numbers, character offsets and context."
        ),
        input_schema=_schema(
            {
                "baseId": _BASE_ID,
                "conceptId": _CONCEPT_ID,
                "charStart": {
                    "type": "integer",
                    "minimum": 0,
                    "description": "First character to return (default 0).",
                },
                "charEnd": {
                    "type": "integer",
                    "minimum": 0,
                    "description": "End of the range, exclusive (default: the end, capped).",
                },
                "pattern": {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": MAX_PATTERN_CHARS,
                    "description": (
                        "Grep mode: a Python regular expression matched line by line. "
                        "Back-references, nested repetition such as (a+)+ and patterns with "
                        "many open-ended repeats (.*, \\w+) are refused as too slow."
                    ),
                },
                "ignoreCase": {"type": "boolean", "description": "Grep mode: ignore case."},
                "contextLines": {
                    "type": "integer",
                    "minimum": 0,
                    "maximum": MAX_CONTEXT_LINES,
                    "description": f"Grep mode: lines shown around each match (default {DEFAULT_CONTEXT_LINES}).",
                },
                "maxMatches": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": MAX_GREP_MATCHES,
                    "description": f"Grep mode: stop after this many matching lines (default {DEFAULT_GREP_MATCHES}).",
                },
            },
            required=["baseId", "conceptId"],
        ),
    ),
    ToolSpec(
        name="kb_tree",
        title="Browse knowledge bases",
        description=(
            "Without baseId: the knowledge bases with their item counts and settings. With "
            "baseId: that base's folders and documents (conceptId, title, type, status) in "
            "depth-first order. Long listings are paged: pass nextCursor back as cursor."
        ),
        input_schema=_schema(
            {
                "baseId": _BASE_ID,
                "maxDepth": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": MAX_TREE_DEPTH,
                    "description": "Only list entries this many folder levels deep (1 = top level).",
                },
                "cursor": {
                    "type": "string",
                    "description": "nextCursor of the previous page, to get the next one.",
                },
                "limit": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": MAX_TREE_PAGE,
                    "description": f"Entries per page (default {DEFAULT_TREE_PAGE}).",
                },
            }
        ),
    ),
    ToolSpec(
        name="kb_manage",
        title="Change a knowledge base",
        description=(
            "Add sources to a knowledge base (absolute file or folder paths, http(s) URLs), or "
            "delete or refresh (re-read and re-index) documents by conceptId. Only works for "
            "bases where the person enabled agent writes in Trove's settings. The work is "
            "queued and processed in the background; pass wait=true to wait for it (up to "
            f"{DEFAULT_WAIT_SECONDS:.0f} s), or follow the statuses with kb_tree."
        ),
        input_schema=_schema(
            {
                "baseId": _BASE_ID,
                "action": {"type": "string", "enum": ["add", "delete", "refresh"]},
                "conceptIds": {
                    "type": "array",
                    "items": {"type": "string", "minLength": 1},
                    "minItems": 1,
                    "maxItems": MAX_MANAGE_TARGETS,
                    "description": "delete / refresh: the documents to act on.",
                },
                "sources": {
                    "type": "array",
                    "items": {"type": "string", "minLength": 1},
                    "minItems": 1,
                    "maxItems": MAX_MANAGE_TARGETS,
                    "description": "add: absolute paths of files or folders, or http(s) URLs.",
                },
                "wait": {
                    "type": "boolean",
                    "description": "Wait until the queued work has been processed.",
                },
            },
            required=["baseId", "action"],
        ),
        read_only=False,
    ),
)

_SPECS = {spec.name: spec for spec in TOOLS}


# -- arguments -------------------------------------------------------------------------------


def _invalid(message: str) -> ToolError:
    return ToolError(ErrorCode.INVALID_ARGUMENT, message)


class _Args:
    """Typed access to a tool's JSON arguments; a null value counts as absent."""

    def __init__(self, spec: ToolSpec, raw: object) -> None:
        if raw is None:
            raw = {}
        if not isinstance(raw, Mapping):
            raise _invalid(f"{spec.name}: arguments must be a JSON object")
        allowed = spec.input_schema["properties"]
        unknown = sorted(str(k) for k in raw if k not in allowed)
        if unknown:
            raise _invalid(
                f"{spec.name}: unknown argument(s) {', '.join(unknown)}; "
                f"it takes {', '.join(allowed)}"
            )
        self._raw = {str(k): v for k, v in raw.items() if v is not None}
        self._tool = spec.name

    def text(self, key: str, *, required: bool = False, max_len: int | None = None) -> str | None:
        value = self._raw.get(key)
        if value is None:
            if required:
                raise _invalid(f"{self._tool}: {key} is required")
            return None
        if not isinstance(value, str) or not value:
            raise _invalid(f"{self._tool}: {key} must be a non-empty string")
        if max_len is not None and len(value) > max_len:
            raise _invalid(f"{self._tool}: {key} is longer than {max_len} characters")
        return value

    def required_text(self, key: str, *, max_len: int | None = None) -> str:
        value = self.text(key, required=True, max_len=max_len)
        assert value is not None
        return value

    def integer(self, key: str, *, low: int, high: int | None = None) -> int | None:
        value = self._raw.get(key)
        if value is None:
            return None
        # JSON numbers like 5.0 are fine; true/false are not numbers here.
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int):
            raise _invalid(f"{self._tool}: {key} must be a whole number")
        if value < low or (high is not None and value > high):
            bound = f"between {low} and {high}" if high is not None else f"at least {low}"
            raise _invalid(f"{self._tool}: {key} must be {bound}")
        return value

    def flag(self, key: str) -> bool:
        value = self._raw.get(key, False)
        if not isinstance(value, bool):
            raise _invalid(f"{self._tool}: {key} must be true or false")
        return value

    def texts(self, key: str, *, max_items: int) -> list[str] | None:
        value = self._raw.get(key)
        if value is None:
            return None
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            raise _invalid(f"{self._tool}: {key} must be a list of non-empty strings")
        if not value:
            raise _invalid(f"{self._tool}: {key} must not be empty")
        if len(value) > max_items:
            raise _invalid(f"{self._tool}: {key} takes at most {max_items} entries")
        return list(dict.fromkeys(value))

    def choice(self, key: str, options: Sequence[str]) -> str:
        value = self.required_text(key)
        if value not in options:
            raise _invalid(f"{self._tool}: {key} must be one of {', '.join(options)}")
        return value


# -- Concept IDs -----------------------------------------------------------------------------


def check_concept_id(value: object) -> str:
    """The Concept ID if its shape is safe; UNSAFE_PATH (or INVALID_ARGUMENT) otherwise.

    On top of the material-path guard (`path_safety.check_relative_path`: no '..', absolute or
    drive paths, NUL bytes, backslashes, or a first segment '.trove'), no segment may be
    '.trove': nothing an agent asks for may even look like the index.
    """
    if not isinstance(value, str) or not value:
        raise _invalid("conceptId must be a non-empty string")
    try:
        checked = path_safety.check_relative_path(value)
    except path_safety.UnsafePathError as exc:
        raise ToolError(ErrorCode.UNSAFE_PATH, f"refused conceptId: {exc}") from exc
    if any(seg.casefold() == path_safety.RESERVED_SEGMENT for seg in checked.split("/")):
        raise ToolError(
            ErrorCode.UNSAFE_PATH,
            f"refused conceptId {value!r}: {path_safety.RESERVED_SEGMENT!r} is reserved for the index",
        )
    return checked


@dataclass(frozen=True, slots=True)
class Concept:
    """A Concept ID resolved to its visible item and indexed material."""

    base: Base
    item: Item
    concept_id: str
    char_count: int


_NOT_VISIBLE = {
    ItemStatus.DELETING: "is being deleted",
    ItemStatus.FAILED: "failed to index",
    ItemStatus.PROCESSING: "is still being indexed",
    ItemStatus.PREPARING: "is still being prepared",
}


# -- background processing -------------------------------------------------------------------


class JobRunner:
    """Runs the queued jobs of bases that kb_manage changed, in one background thread.

    Each request drains that base's queue with `KnowledgeService.run_pending_jobs` (the
    synchronous, Qt-free headless path); requests for several bases are served in turn.
    A ticket says which request a waiter waits for: it is satisfied by a drain that started
    after the request was made, so its jobs were seen.
    """

    def __init__(self, service: KnowledgeService) -> None:
        self._service = service
        self._cond = threading.Condition()
        self._requested: dict[str, int] = {}
        self._done: dict[str, int] = {}
        self._pending: list[str] = []
        self._thread: threading.Thread | None = None
        self._closed = False

    def request(self, base_id: str) -> int:
        with self._cond:
            if self._closed:
                raise ToolError(ToolErrorCode.INTERNAL_ERROR, "the job runner has stopped")
            ticket = self._requested.get(base_id, 0) + 1
            self._requested[base_id] = ticket
            if base_id not in self._pending:
                self._pending.append(base_id)
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._loop, name="trove-agent-jobs", daemon=True
                )
                self._thread.start()
            self._cond.notify_all()
            return ticket

    def wait(self, base_id: str, ticket: int, timeout: float) -> bool:
        """True once a drain started after `ticket` was issued has finished."""
        with self._cond:
            self._cond.wait_for(
                lambda: self._done.get(base_id, 0) >= ticket or self._closed, timeout
            )
            return self._done.get(base_id, 0) >= ticket

    def close(self, timeout: float = 5.0) -> None:
        """Stop taking work; wait a little for a drain in progress (then leave it behind:
        an interrupted item is failed by the next start's recovery and can be reindexed)."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()
            thread = self._thread
        if thread is not None:
            thread.join(timeout)

    def _loop(self) -> None:
        while True:
            with self._cond:
                self._cond.wait_for(lambda: bool(self._pending) or self._closed)
                if self._closed:
                    return
                base_id = self._pending.pop(0)
                ticket = self._requested[base_id]
            try:
                self._service.run_pending_jobs(base_id)
            except Exception:
                log.exception("processing queued work of knowledge base %s failed", base_id)
            finally:
                with self._cond:
                    self._done[base_id] = max(self._done.get(base_id, 0), ticket)
                    self._cond.notify_all()


# -- the tools -------------------------------------------------------------------------------


@dataclass(slots=True)
class _Folder:
    name: str
    path: str
    depth: int
    item: Item | None = None
    folders: dict[str, _Folder] = field(default_factory=dict)
    documents: list[tuple[str, Item]] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    total: int = 0


class ConceptTools:
    """The four agent tools over one `KnowledgeService`.

    `jobs` processes what kb_manage queues; without it the work stays queued for the app or
    the CLI to run (the result says so).
    """

    def __init__(
        self,
        service: KnowledgeService,
        *,
        jobs: JobRunner | None = None,
        wait_seconds: float = DEFAULT_WAIT_SECONDS,
    ) -> None:
        self._service = service
        self._jobs = jobs
        self._wait_seconds = wait_seconds
        self._handlers: dict[str, Callable[[object], dict[str, Any]]] = {
            "kb_search": self.kb_search,
            "kb_read": self.kb_read,
            "kb_tree": self.kb_tree,
            "kb_manage": self.kb_manage,
        }

    def call(self, name: str, arguments: object) -> ToolResult:
        """Run a tool by name; every failure becomes an error result, never an exception."""
        handler = self._handlers.get(name)
        if handler is None:
            return ToolResult.failure(
                ToolErrorCode.UNKNOWN_TOOL,
                f"no tool named {name!r}; the tools are {', '.join(self._handlers)}",
            )
        try:
            return ToolResult(handler(arguments))
        except (ToolError, TroveError) as exc:
            return ToolResult.failure(str(exc.code), exc.message)
        except path_safety.UnsafePathError as exc:
            return ToolResult.failure(ErrorCode.UNSAFE_PATH, str(exc))
        except Exception:
            log.exception("agent tool %s failed", name)
            return ToolResult.failure(
                ToolErrorCode.INTERNAL_ERROR,
                f"{name} failed unexpectedly; the details are in Trove's log",
            )

    # -- shared --------------------------------------------------------------------------

    def _base(self, ref: str) -> Base:
        return self._service.resolve_base(ref)

    def resolve(self, base_ref: str, concept_id: object) -> Concept:
        """Resolve a Concept ID against the index, then require a visible item behind it."""
        cid = check_concept_id(concept_id)
        base = self._base(base_ref)
        info = self._service.find_material(base.id, cid)
        item = self._service.catalog.get_item(info.item_id) if info is not None else None
        if item is None or item.base_id != base.id or material_path(item) != cid:
            holder = self._item_at(base, cid)
            if holder is not None and holder.status is not ItemStatus.COMPLETED:
                raise self._not_visible(base, cid, holder)
            raise ToolError(
                ToolErrorCode.CONCEPT_NOT_FOUND,
                f"knowledge base {base.name!r} has no document {cid!r} "
                "(it may have been deleted; kb_tree lists what there is)",
            )
        if item.status is not ItemStatus.COMPLETED:
            raise self._not_visible(base, cid, item)
        assert info is not None
        return Concept(base, item, cid, info.char_count)

    def _item_at(self, base: Base, cid: str) -> Item | None:
        for item in self._service.list_items(base.id):
            if item.type not in CONTAINER_TYPES and material_path(item) == cid:
                return item
        return None

    @staticmethod
    def _not_visible(base: Base, cid: str, item: Item) -> ToolError:
        why = _NOT_VISIBLE.get(item.status, f"is {item.status}")
        return ToolError(
            ToolErrorCode.CONCEPT_NOT_VISIBLE,
            f"document {cid!r} in knowledge base {base.name!r} {why}; only completed "
            "documents can be used",
        )

    def _recheck(self, concept: Concept) -> None:
        """After a read: the item may have started deleting meanwhile."""
        item = self._service.catalog.get_item(concept.item.id)
        if item is None:
            raise ToolError(
                ToolErrorCode.CONCEPT_NOT_FOUND, f"document {concept.concept_id!r} was deleted"
            )
        if item.status is not ItemStatus.COMPLETED:
            raise self._not_visible(concept.base, concept.concept_id, item)

    def _material_file(self, concept: Concept) -> Path:
        path = self._service.material_file(concept.base.id, concept.concept_id)
        if not path.is_file():
            self._recheck(concept)
            raise ToolError(
                ErrorCode.READ_FAILED,
                f"the stored text of {concept.concept_id!r} is missing; refresh or restore "
                "the knowledge base",
            )
        return path

    # -- kb_search -----------------------------------------------------------------------

    def kb_search(self, arguments: object) -> dict[str, Any]:
        args = _Args(_SPECS["kb_search"], arguments)
        query = args.required_text("query", max_len=MAX_QUERY_CHARS)
        refs = args.texts("baseIds", max_items=MAX_SEARCH_BASES)
        top_k = args.integer("topK", low=1, high=MAX_TOP_K)
        bases = [self._base(r) for r in refs] if refs else self._service.list_bases()
        bases = list({b.id: b for b in bases}.values())

        searched: list[tuple[Base, SearchResponse]] = []
        errors: list[dict[str, str]] = []
        for base in bases:
            try:
                response = self._service.search(base.id, query, top_k=top_k)
            except TroveError as exc:
                if exc.code in (ErrorCode.NO_SEARCHABLE_TOKEN, ErrorCode.INVALID_ARGUMENT):
                    raise  # about the query, not the base: say it once
                errors.append({"baseId": base.id, "code": str(exc.code), "message": exc.message})
                continue
            searched.append((base, response))
        if bases and not searched:
            first = errors[0]
            detail = "; ".join(f"{e['baseId']}: {e['message']}" for e in errors)
            raise ToolError(first["code"], f"no knowledge base could be searched ({detail})")

        limit = top_k or max((b.document_count for b, _ in searched), default=0)
        merged = interleave([[(b, r) for r in resp.results] for b, resp in searched])[:limit]
        items = self._service.catalog.get_items(r.item_id for _, r in merged)
        hits = []
        for rank, (base, result) in enumerate(merged, start=1):
            item = items.get(result.item_id)
            hits.append(_hit_json(rank, base, result, item.type if item else None))
        return {
            "query": query,
            "results": hits,
            "degraded": [
                {"baseId": b.id, **d.to_json()} for b, resp in searched for d in resp.degraded
            ],
            "bases": [
                {
                    "baseId": b.id,
                    "name": b.name,
                    "mode": str(resp.mode),
                    "hitCount": len(resp.results),
                }
                for b, resp in searched
            ],
            "errors": errors,
        }

    # -- kb_read -------------------------------------------------------------------------

    def kb_read(self, arguments: object) -> dict[str, Any]:
        args = _Args(_SPECS["kb_read"], arguments)
        base_ref = args.required_text("baseId")
        concept_id = args.required_text("conceptId")
        start = args.integer("charStart", low=0)
        end = args.integer("charEnd", low=0)
        pattern = args.text("pattern", max_len=MAX_PATTERN_CHARS)
        ignore_case = args.flag("ignoreCase")
        context = args.integer("contextLines", low=0, high=MAX_CONTEXT_LINES)
        max_matches = args.integer("maxMatches", low=1, high=MAX_GREP_MATCHES)
        if pattern is not None and (start is not None or end is not None):
            raise _invalid("kb_read: give either a character range or a pattern, not both")
        if pattern is None and (ignore_case or context is not None or max_matches is not None):
            raise _invalid("kb_read: ignoreCase, contextLines and maxMatches need a pattern")
        compiled = compile_pattern(pattern, ignore_case=ignore_case) if pattern else None
        concept = self.resolve(base_ref, concept_id)
        if compiled is not None:
            return self._grep(
                concept,
                compiled,
                DEFAULT_CONTEXT_LINES if context is None else context,
                max_matches or DEFAULT_GREP_MATCHES,
            )
        return self._slice(concept, start or 0, end)

    def _slice(self, concept: Concept, start: int, end: int | None) -> dict[str, Any]:
        total = concept.char_count
        if end is not None and end < start:
            raise _invalid("kb_read: charEnd must not be before charStart")
        if start > total:
            raise _invalid(
                f"kb_read: charStart {start} is past the end of {concept.concept_id!r} "
                f"({total} characters)"
            )
        wanted_end = total if end is None else min(end, total)
        stop = min(wanted_end, start + MAX_READ_CHARS)
        path = self._material_file(concept)
        text = _read_range(path, start, stop)
        self._recheck(concept)
        stop = start + len(text)
        truncated = stop < wanted_end
        return {
            **_concept_json(concept),
            "charStart": start,
            "charEnd": stop,
            "totalChars": total,
            "truncated": truncated,
            "nextCharStart": stop if stop < total else None,
            "text": text,
        }

    def _grep(
        self, concept: Concept, pattern: GrepPattern, context: int, max_matches: int
    ) -> dict[str, Any]:
        path = self._material_file(concept)
        # newline="": offsets count "\r\n" as two characters, as the index does.
        with path.open("r", encoding="utf-8", errors="replace", newline="") as fh:
            text = fh.read()
        self._recheck(concept)
        found = grep_lines(text, pattern, context=context, max_matches=max_matches)
        return {
            **_concept_json(concept),
            "pattern": pattern.regex.pattern,
            "ignoreCase": bool(pattern.regex.flags & re.IGNORECASE),
            "totalChars": concept.char_count,
            **found,
        }

    # -- kb_tree -------------------------------------------------------------------------

    def kb_tree(self, arguments: object) -> dict[str, Any]:
        args = _Args(_SPECS["kb_tree"], arguments)
        base_ref = args.text("baseId")
        max_depth = args.integer("maxDepth", low=1, high=MAX_TREE_DEPTH)
        cursor = args.text("cursor")
        limit = args.integer("limit", low=1, high=MAX_TREE_PAGE) or DEFAULT_TREE_PAGE
        if base_ref is None:
            if max_depth is not None:
                raise _invalid("kb_tree: maxDepth applies to one base; give baseId too")
            offset = _decode_cursor(cursor, "bases")
            bases = self._service.list_bases()
            page = bases[offset : offset + limit]
            return {
                "bases": [self._base_json(b) for b in page],
                "total": len(bases),
                "nextCursor": _next_cursor("bases", offset, limit, len(bases)),
            }
        base = self._base(base_ref)
        signature = f"tree:{base.id}:{max_depth or 0}"
        offset = _decode_cursor(cursor, signature)
        root = _build_tree(self._service.list_items(base.id))
        nodes: list[dict[str, Any]] = []
        _flatten(root, max_depth, nodes)
        return {
            **self._base_json(base),
            "nodes": nodes[offset : offset + limit],
            "total": len(nodes),
            "nextCursor": _next_cursor(signature, offset, limit, len(nodes)),
        }

    def _base_json(self, base: Base) -> dict[str, Any]:
        counts = {
            str(status): n
            for status in ItemStatus
            if (n := self._service.catalog.count_items(base.id, status))
        }
        return {
            "baseId": base.id,
            "name": base.name,
            "status": str(base.status),
            "statusReason": base.status_reason,
            "mode": str(derive_mode(base)),
            "embeddingModel": base.embedding_model,
            "rerankModel": base.rerank_model,
            "documentCount": base.document_count,
            "agentWrites": base.agent_writes,
            "items": sum(counts.values()),
            "statusCounts": counts,
        }

    # -- kb_manage -----------------------------------------------------------------------

    def kb_manage(self, arguments: object) -> dict[str, Any]:
        args = _Args(_SPECS["kb_manage"], arguments)
        base_ref = args.required_text("baseId")
        action = args.choice("action", ("add", "delete", "refresh"))
        concept_ids = args.texts("conceptIds", max_items=MAX_MANAGE_TARGETS)
        sources = args.texts("sources", max_items=MAX_MANAGE_TARGETS)
        wait = args.flag("wait")
        if action == "add" and (concept_ids or not sources):
            raise _invalid("kb_manage: add needs sources (absolute paths or URLs), no conceptIds")
        if action != "add" and (sources or not concept_ids):
            raise _invalid(f"kb_manage: {action} needs conceptIds, no sources")
        base = self._base(base_ref)
        if not base.agent_writes:
            raise ToolError(
                ToolErrorCode.AGENT_WRITES_DISABLED,
                f"agents may not change knowledge base {base.name!r}: the person has not "
                "enabled agent writes for it in Trove's settings",
            )
        result: dict[str, Any] = {"action": action, "baseId": base.id}
        if action == "add":
            report = self._add(base, sources or [])
            touched = [i.id for i in report.added]
            result.update(
                skipped=[{"source": s, "reason": r} for s, r in report.skipped],
                errors=[{"source": s, "message": m} for s, m in report.errors],
            )
        else:
            concepts = [self.resolve(base.id, cid) for cid in concept_ids or []]
            ids = [c.item.id for c in concepts]
            if action == "delete":
                touched = self._service.delete_items(base.id, ids)
            else:
                touched = [i.id for i in self._service.reindex(base.id, ids)]
            result["conceptIds"] = [c.concept_id for c in concepts]

        result["processing"] = self._process(base.id, wait, touched) if touched else "done"
        items = self._service.catalog.get_items(touched)
        if action == "delete":
            result["deleted"] = [i for i in touched if i not in items]
            result["items"] = [_item_json(items[i]) for i in touched if i in items]
        else:
            result["items"] = [self._item_summary(items[i]) for i in touched if i in items]
        return result

    def _add(self, base: Base, sources: list[str]) -> AddReport:
        urls = [s for s in sources if _URL_LIKE.match(s)]
        files = [s for s in sources if not _URL_LIKE.match(s)]
        relative = [f for f in files if not Path(f).expanduser().is_absolute()]
        if relative:
            raise _invalid(
                f"kb_manage: file and folder sources must be absolute paths (got {relative[0]!r})"
            )
        report = AddReport()
        if files:
            _merge(report, self._service.add(base.id, files))
        if urls:
            _merge(report, self._service.add_urls(base.id, urls))
        return report

    def _process(self, base_id: str, wait: bool, touched: Sequence[str]) -> str:
        """'done' when processed, 'running' in the background, 'queued' when nobody runs it."""
        if self._jobs is None:
            return "queued"
        ticket = self._jobs.request(base_id)
        if not wait:
            return "running"
        deadline = time.monotonic() + self._wait_seconds
        if not self._jobs.wait(base_id, ticket, self._wait_seconds):
            return "running"
        return "done" if self._settle(base_id, touched, deadline) else "running"

    def _settle(self, base_id: str, touched: Sequence[str], deadline: float) -> bool:
        """Wait until the touched items are settled (or gone), wherever their jobs run.

        This process's drain ends when it finds nothing left to claim, but the window or a
        terminal on the same data folder may have claimed some of the jobs: "done" must mean
        done there too. A process that dies meanwhile is recovered here (its items fail as
        interrupted), so the wait never outlives the work."""
        assert self._jobs is not None
        pause, recovered_at = SETTLE_POLL_FIRST, time.monotonic()
        while True:
            items = self._service.catalog.get_items(list(touched)).values()
            if not any(i.status in UNSETTLED_STATUSES for i in items):
                return True
            now = time.monotonic()
            if now >= deadline:
                return False
            if self._service.catalog.job_counts(base_id)[0]:
                # Work queued again (a retry came due, a dead writer's deletion resumed).
                ticket = self._jobs.request(base_id)
                self._jobs.wait(base_id, ticket, max(0.0, deadline - now))
            elif now - recovered_at >= SETTLE_RECOVER_EVERY:
                self._service.recover()
                recovered_at = now
            time.sleep(min(pause, max(0.0, deadline - time.monotonic())))
            pause = min(pause * 2, SETTLE_POLL_MAX)

    def _item_summary(self, item: Item) -> dict[str, Any]:
        data = _item_json(item)
        if item.type in CONTAINER_TYPES:
            counts = self._service.catalog.child_status_counts(item.id)
            data["children"] = {str(s): n for s, n in counts.items()}
        return data


# -- helpers ---------------------------------------------------------------------------------


def interleave(
    per_base: Sequence[Sequence[tuple[Base, SearchResult]]],
) -> list[tuple[Base, SearchResult]]:
    """Merge per-base result lists into one ranking without comparing their scores.

    Each base is searched with the normal pipeline, whose scores mean different things:
    BM25 and RRF scores ("ranking") only order the hits of the list that produced them, and
    even "relevance" scores (cosine, rerank) come from each base's own models, so neither is
    on a scale shared across bases. The merged list therefore interleaves by rank: every
    base's #1 (bases in the order asked), then every base's #2, and so on — RRF over the
    per-base lists with equal weights. Each hit keeps its own score, scoreKind and baseRank.
    """
    merged: list[tuple[Base, SearchResult]] = []
    depth = max((len(hits) for hits in per_base), default=0)
    for index in range(depth):
        merged.extend(hits[index] for hits in per_base if index < len(hits))
    return merged


def _hit_json(
    rank: int, base: Base, result: SearchResult, item_type: ItemType | None
) -> dict[str, Any]:
    hit: dict[str, Any] = {
        "rank": rank,
        "baseId": base.id,
        "baseName": base.name,
        "conceptId": result.concept_id,
        "title": result.title,
        "type": str(item_type) if item_type else None,
        "itemId": result.item_id,
        "score": result.score,
        "scoreKind": str(result.score_kind),
        "baseRank": result.rank,
        "charStart": result.char_start,
        "charEnd": result.char_end,
        "text": result.text,
    }
    if result.page is not None:
        hit["page"] = result.page
    if item_type is not ItemType.NOTE:
        hit["source"] = result.source
    return hit


def _concept_json(concept: Concept) -> dict[str, Any]:
    return {
        "baseId": concept.base.id,
        "conceptId": concept.concept_id,
        "title": concept.item.title,
        "type": str(concept.item.type),
        "itemId": concept.item.id,
    }


def _item_json(item: Item) -> dict[str, Any]:
    """An item as agents see it; a note's source is its whole text, so it is left out."""
    data: dict[str, Any] = {
        "itemId": item.id,
        "type": str(item.type),
        "title": item.title,
        "status": str(item.status),
    }
    if item.type is not ItemType.NOTE:
        data["source"] = item.source
    if item.type not in CONTAINER_TYPES:
        data["conceptId"] = material_path(item)
        data["chunkCount"] = item.chunk_count
    if item.status in RUNNING_STATUSES and item.phase is not None:
        data["phase"] = str(item.phase)
        if item.progress is not None:
            data["progress"] = round(item.progress, 1)
    if item.status is ItemStatus.FAILED:
        data["errorCode"] = item.error_code
        data["errorMessage"] = item.error_message
    return data


def _merge(into: AddReport, report: AddReport) -> None:
    into.added.extend(report.added)
    into.skipped.extend(report.skipped)
    into.replaced.extend(report.replaced)
    into.errors.extend(report.errors)


def _read_range(path: Path, start: int, stop: int) -> str:
    """Characters [start, stop) of a UTF-8 material, without reading what comes after."""
    with path.open("r", encoding="utf-8", errors="replace", newline="") as fh:
        skip = start
        while skip > 0:
            got = fh.read(min(skip, _SKIP_CHUNK))
            if not got:
                return ""
            skip -= len(got)
        return fh.read(stop - start)


# -- grep ------------------------------------------------------------------------------------

_BACKREFS = frozenset(
    {
        "GROUPREF",
        "GROUPREF_EXISTS",
        "GROUPREF_IGNORE",
        "GROUPREF_LOC_IGNORE",
        "GROUPREF_UNI_IGNORE",
    }
)
_REPEATS = frozenset({"MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"})
# Window sizes tried, largest first: a line longer than the window is searched window by
# window. Below the smallest, a pattern is refused as too complex.
GREP_WINDOWS = (4_000, 2_000, 1_000, 500, 250, 125)
# The most backtracking paths (times start positions) a window may allow, by the estimate
# in `_log_paths`; at sre's speed this keeps one window's worst case to a fraction of a
# second.
GREP_PATH_LIMIT = 3e8


@dataclass(frozen=True, slots=True)
class GrepPattern:
    """A compiled grep pattern and the longest stretch of text it may search at once."""

    regex: re.Pattern[str]
    window: int

    @property
    def overlap(self) -> int:
        """Consecutive windows share this much, so a match up to this long is not split."""
        return self.window // 4


class _Refused(Exception):
    pass


def compile_pattern(pattern: str, *, ignore_case: bool = False) -> GrepPattern:
    """Compile a grep pattern, refusing what could make the regex engine run away.

    Python's `re` backtracks and cannot be interrupted, so the guard is layered:

    1. the pattern's length is capped, and back-references are refused;
    2. the pattern's worst case is estimated before anything runs: the number of ways it
       can backtrack over a window of text (`_log_paths`: repeats multiply, nested repeats
       and repeated alternations grow exponentially, so (a+)+ or (a|ab)* never pass);
       the search window is the largest one whose estimate stays under a fixed budget,
       and a pattern too complex even for the smallest window is refused;
    3. `grep_lines` then matches line by line, long lines window by window, and stops at
       a cap on matches and on total time.
    """
    if len(pattern) > MAX_PATTERN_CHARS:
        raise ToolError(
            ToolErrorCode.INVALID_PATTERN,
            f"the pattern is longer than {MAX_PATTERN_CHARS} characters",
        )
    flags = re.IGNORECASE if ignore_case else 0
    try:
        regex = re.compile(pattern, flags)
    except (re.error, RecursionError, OverflowError) as exc:
        raise ToolError(
            ToolErrorCode.INVALID_PATTERN, f"not a valid regular expression: {exc}"
        ) from exc
    try:
        window = _window_for(pattern, flags)
    except _Refused as exc:
        raise ToolError(ToolErrorCode.INVALID_PATTERN, f"refused pattern: {exc}") from None
    return GrepPattern(regex, window)


def _window_for(pattern: str, flags: int) -> int:
    try:
        # The parser behind `re`: private, so without it the smallest window is used.
        parser = importlib.import_module("re._parser")
        tree = parser.parse(pattern, flags)
    except Exception:
        return GREP_WINDOWS[-1]
    for window in GREP_WINDOWS:
        if math.log(window) + _log_paths(tree, window) <= math.log(GREP_PATH_LIMIT):
            return window
    raise _Refused(
        "it could take very long to run (nested repetition such as (a+)+, a repeated "
        "alternation such as (a|ab)*, or many open-ended repeats); simplify it"
    )


def _op_name(op: object) -> str:
    return str(getattr(op, "name", op))


_SIMPLE_ATOMS = frozenset({"LITERAL", "NOT_LITERAL", "ANY", "IN", "CATEGORY"})


def _log_paths(nodes: Iterable[Any], window: int) -> float:
    """Natural log of an upper bound on the paths a backtracking match can take through
    `nodes` over `window` characters, times nothing else (the caller multiplies by the
    start positions).

    A sequence multiplies its parts' paths and an alternation adds them; a repeat of at
    most m copies of a part with c paths has at most (m + 1) * c**m. Repeats of single
    characters in one sequence together consume at most `window` characters, so k of them
    split it in at most C(window + k, k) ways, which bounds their product.
    """
    total = 0.0
    simple: list[int] = []  # copies of each repeat of a single character in this sequence
    for op, av in nodes:
        name = _op_name(op)
        if name in _BACKREFS:
            raise _Refused("back-references are not supported")
        if name in _REPEATS:
            _low, high, sub = av
            copies = min(int(high), window)
            if len(sub) == 1 and _op_name(sub[0][0]) in _SIMPLE_ATOMS:
                simple.append(copies)
            else:
                total += math.log(copies + 1) + copies * _log_paths(sub, window)
        elif name == "SUBPATTERN":
            total += _log_paths(av[-1], window)
        elif name == "ATOMIC_GROUP":
            total += _log_paths(av, window)
        elif name in ("ASSERT", "ASSERT_NOT"):
            total += _log_paths(av[1], window)
        elif name == "BRANCH":
            logs = [_log_paths(alternative, window) for alternative in av[1]]
            top = max(logs)
            total += top + math.log(sum(math.exp(x - top) for x in logs))
    if simple:
        product = sum(math.log(c + 1) for c in simple)
        k = len(simple)
        split = math.lgamma(window + k + 1) - math.lgamma(window + 1) - math.lgamma(k + 1)
        total += min(product, split)
    return total


def _first_match(pattern: GrepPattern, line: str, deadline: float) -> tuple[int, int] | None:
    """The first match in a line; a long line is searched in overlapping windows."""
    regex, window = pattern.regex, pattern.window
    if len(line) <= window:
        m = regex.search(line)
        return m.span() if m else None
    step = window - pattern.overlap
    for start in range(0, len(line) - pattern.overlap, step):
        if time.monotonic() > deadline:
            return None
        m = regex.search(line, start, min(len(line), start + window))
        if m:
            return m.span()
    return None


def _shown(line: str, start: int = 0, end: int = 0) -> str:
    """A line cut to SHOWN_LINE_CHARS around [start, end)."""
    if len(line) <= SHOWN_LINE_CHARS:
        return line
    room = max(0, SHOWN_LINE_CHARS - (end - start)) // 2
    lo = max(0, start - room)
    hi = min(len(line), max(end + room, lo + SHOWN_LINE_CHARS))
    return ("…" if lo > 0 else "") + line[lo:hi] + ("…" if hi < len(line) else "")


def _strip_eol(line: str) -> str:
    return line.rstrip("\r\n")


def grep_lines(
    text: str,
    pattern: GrepPattern,
    *,
    context: int = DEFAULT_CONTEXT_LINES,
    max_matches: int = DEFAULT_GREP_MATCHES,
    time_budget: float | None = None,
) -> dict[str, Any]:
    """Lines of `text` matching `pattern`: 1-based line numbers, absolute character offsets
    of the first match in each line, and `context` lines either side."""
    lines = io.StringIO(text, newline="").readlines()
    offsets: list[int] = []
    position = 0
    for line in lines:
        offsets.append(position)
        position += len(line)
    deadline = time.monotonic() + (GREP_TIME_BUDGET if time_budget is None else time_budget)
    matches: list[dict[str, Any]] = []
    truncated = timed_out = windowed = False
    scanned = 0
    for index, raw_line in enumerate(lines):
        if time.monotonic() > deadline:
            timed_out = True
            break
        line = _strip_eol(raw_line)
        windowed = windowed or len(line) > pattern.window
        span = _first_match(pattern, line, deadline)
        scanned = index + 1
        if span is None:
            continue
        if len(matches) >= max_matches:
            truncated = True
            break
        start, end = span
        matches.append(
            {
                "line": index + 1,
                "charStart": offsets[index] + start,
                "charEnd": offsets[index] + end,
                "text": _shown(line, start, end),
                "before": [_shown(_strip_eol(x)) for x in lines[max(0, index - context) : index]],
                "after": [_shown(_strip_eol(x)) for x in lines[index + 1 : index + 1 + context]],
            }
        )
    result: dict[str, Any] = {
        "matches": matches,
        "matchCount": len(matches),
        "truncated": truncated,
        "timedOut": timed_out,
        "linesScanned": scanned,
        "totalLines": len(lines),
    }
    notes = []
    if windowed:
        notes.append(
            f"long lines were searched {pattern.window} characters at a time, so a match "
            f"longer than {pattern.overlap} characters may be missed there"
        )
    if timed_out:
        notes.append(
            f"the search stopped after {GREP_TIME_BUDGET:g} s at line {scanned}; "
            "use a simpler pattern"
        )
    if notes:
        result["note"] = "; ".join(notes)
    return result


# -- the tree --------------------------------------------------------------------------------


def _folder(root: _Folder, path: str) -> _Folder:
    node = root
    for segment in PurePosixPath(path).parts:
        child = node.folders.get(segment)
        if child is None:
            prefix = f"{node.path}/" if node.path else ""
            child = _Folder(segment, prefix + segment, node.depth + 1)
            node.folders[segment] = child
        node = child
    return node


def _build_tree(items: Sequence[Item]) -> _Folder:
    """Folders and documents by Concept ID; a folder or sitemap item is its folder."""
    root = _Folder("", "", -1)
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


def _chain(root: _Folder, folder: _Folder) -> list[_Folder]:
    chain, node = [root], root
    for segment in PurePosixPath(folder.path).parts:
        node = node.folders[segment]
        chain.append(node)
    return chain


def _flatten(folder: _Folder, max_depth: int | None, out: list[dict[str, Any]]) -> None:
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
            node["item"] = _item_json(sub.item)
        out.append(node)
        _flatten(sub, max_depth, out)
    for name, item in sorted(folder.documents, key=lambda d: (d[0].casefold(), d[0])):
        out.append({"kind": "document", "depth": depth, "name": name, **_item_json(item)})


def _encode_cursor(signature: str, offset: int) -> str:
    raw = json.dumps({"v": 1, "s": signature, "o": offset}, separators=(",", ":"))
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def _decode_cursor(cursor: str | None, signature: str) -> int:
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


def _next_cursor(signature: str, offset: int, limit: int, total: int) -> str | None:
    return _encode_cursor(signature, offset + limit) if offset + limit < total else None
