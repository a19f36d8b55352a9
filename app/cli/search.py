"""`trove search BASE QUERY`: one search, as text or JSON."""

from __future__ import annotations

import argparse
import sys

from app.cli.output import EXIT_OK, EXIT_USAGE, print_json, response_json, searchable, shown
from app.cli.search_batch import search_batch
from app.knowledge.service import KnowledgeService
from app.knowledge.types import LowRelevance, SearchResponse


def cmd_search(svc: KnowledgeService, args: argparse.Namespace) -> int:
    base = svc.resolve_base(args.base)
    if args.queries:
        return search_batch(svc, base, args)
    if args.query is None:
        print("error: give a QUERY or --queries FILE", file=sys.stderr)
        return EXIT_USAGE
    response = svc.search(base.id, searchable(args.query), top_k=args.top_k)
    if args.json:
        print_json(response_json(response, debug=args.debug))
        return EXIT_OK
    _print_results(response, debug=args.debug)
    return EXIT_OK


def _print_results(response: SearchResponse, *, debug: bool) -> None:
    # Said before the results, and always: a degraded search is not a debugging detail.
    for d in response.degraded:
        print(f"warning: {d.stage} unavailable ({d.code}): {d.message}", file=sys.stderr)
    if response.low_relevance is LowRelevance.WEAK_MATCH:
        print(
            "note: no result contains your words; these are only loosely related", file=sys.stderr
        )
    elif response.low_relevance is LowRelevance.NO_WORD_MATCH:
        print("note: no result contains your words; these were found by meaning", file=sys.stderr)
    if not response.results:
        print("no results")
    for r in response.results:
        snippet = shown(" ".join(r.text.split()))
        if len(snippet) > 240:
            snippet = snippet[:239] + "…"
        print(
            f"{r.rank:>3}. {shown(r.title)}  [{r.score_kind} {r.score:.4f}]  {r.concept_id}:{r.char_start}-{r.char_end}"
        )
        print(f"     {snippet}")
    if debug:
        m = response.metrics.to_json()
        print(
            f"mode {response.mode} | " + " | ".join(f"{k} {v}" for k, v in m.items()),
            file=sys.stderr,
        )
