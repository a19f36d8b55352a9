"""`trove search BASE --queries FILE`: BEIR-style JSON Lines in, one JSON line out per query."""

from __future__ import annotations

import argparse
import codecs
import json
import sys
from pathlib import Path

from app.cli.output import EXIT_FAILED, EXIT_OK, print_json, response_json, searchable
from app.knowledge.service import KnowledgeService
from app.knowledge.types import (
    Base,
    TroveError,
)


def search_batch(svc: KnowledgeService, base: Base, args: argparse.Namespace) -> int:
    """BEIR-style queries (JSON Lines with _id and text) -> one JSON line per query."""
    path = Path(args.queries)
    try:
        data = path.read_bytes()
    except OSError as exc:
        print(f"error: cannot read {path}: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_FAILED
    encoding, text = _decode_queries(data)
    failures = 0
    for number, line in enumerate(text.split("\n"), start=1):
        line = line.rstrip("\r")
        if not line.strip():
            continue
        query = _parse_query_line(line, encoding)
        if isinstance(query, str):
            print(f"error: {path}:{number}: {query}", file=sys.stderr)
            failures += 1
            continue
        _answer_query(svc, base, *query, top_k=args.top_k)
    return EXIT_FAILED if failures else EXIT_OK


# Byte order marks the queries file may start with; without one it is UTF-8.
_BOMS = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)


_UNDECODABLE = "\udfff"


def _mark_undecodable(error: UnicodeError) -> tuple[str, int]:
    # A lone surrogate never comes out of a successful decode, so it marks the bad bytes
    # unambiguously; the line holding it is reported as malformed, the others still run.
    if not isinstance(error, UnicodeDecodeError):
        raise error
    return _UNDECODABLE, error.end


codecs.register_error("trove-mark-undecodable", _mark_undecodable)


def _decode_queries(data: bytes) -> tuple[str, str]:
    """(encoding, text) of a queries file; undecodable bytes become _UNDECODABLE."""
    encoding = "utf-8"
    for bom, name in _BOMS:
        if data.startswith(bom):
            data, encoding = data[len(bom) :], name
            break
    return encoding, data.decode(encoding, errors="trove-mark-undecodable")


def _parse_query_line(line: str, encoding: str) -> tuple[str, str] | str:
    """(query id, text), or why the line is malformed."""
    if _UNDECODABLE in line:
        return f"the line is not valid {encoding.upper()}"
    expected = "expected a JSON object with _id and text"
    try:
        record = json.loads(line)
    except (ValueError, RecursionError):
        # RecursionError: a line of thousands of nested brackets.
        return expected
    if not isinstance(record, dict) or "_id" not in record or "text" not in record:
        return expected
    query_id, text = record["_id"], record["text"]
    if isinstance(query_id, bool) or not isinstance(query_id, (str, int)):
        return f"{expected}: _id must be a string or a whole number"
    if not isinstance(text, str):
        return f"{expected}: text must be a string"
    return str(query_id), text


def _answer_query(
    svc: KnowledgeService, base: Base, query_id: str, text: str, *, top_k: int | None
) -> None:
    searched = searchable(text)
    try:
        response = svc.search(base.id, searched, top_k=top_k)
    except TroveError as exc:
        # A query the engine refuses (no searchable token) is an answer, not a failure.
        error = {"code": str(exc.code), "message": exc.message}
        print_json({"query_id": query_id, "query": text, "error": error, "results": []})
        return
    answer = {"query_id": query_id, **response_json(response)}
    if searched != text:
        answer["query"] = text  # echo the query as given, not its U+FFFD stand-in
    print_json(answer)
