"""The agent tools' definitions: names, descriptions, JSON schemas and their limits."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

MAX_READ_CHARS = 20_000
MAX_QUERY_CHARS = 1_000
MAX_TOP_K = 100
MAX_SEARCH_BASES = 50
MAX_PATTERN_CHARS = 256
DEFAULT_GREP_MATCHES = 50
MAX_GREP_MATCHES = 200
DEFAULT_CONTEXT_LINES = 1
MAX_CONTEXT_LINES = 10
DEFAULT_TREE_PAGE = 100
MAX_TREE_PAGE = 500
MAX_TREE_DEPTH = 64
MAX_MANAGE_TARGETS = 100
DEFAULT_WAIT_SECONDS = 30.0


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
            "stage (embedding: full-text results only; rerank: results not reranked). "
            "'lowRelevance': true says no hit contains the query's words; with "
            "lowRelevanceReason 'weak-match' none is close in meaning either (the hits are "
            "only loosely related), with 'no-word-match' they were found by meaning alone."
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
                        "Grep mode: a Python regular expression matched line by line. A "
                        "search that runs too long (nested repetition such as (a+)+) stops "
                        "after a few seconds with timedOut set."
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

SPECS = {spec.name: spec for spec in TOOLS}
