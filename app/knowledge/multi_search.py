"""One query over several bases, merged into one ranking with each hit's base named.

The GUI's "All bases" scope and the agent tool kb_search use this, so both merge alike.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import TypeVar

from app.knowledge.types import (
    Base,
    BaseFailure,
    BaseHit,
    ErrorCode,
    MultiSearchResponse,
    SearchResponse,
    TroveError,
)

T = TypeVar("T")

# Errors about the query itself: every base would refuse it alike, so it is said once.
QUERY_ERRORS = frozenset({ErrorCode.NO_SEARCHABLE_TOKEN, ErrorCode.INVALID_ARGUMENT})


def interleave(per_base: Sequence[Sequence[T]]) -> list[T]:
    """Merge per-base result lists into one ranking without comparing their scores.

    Each base is searched with the normal pipeline, whose scores mean different things:
    BM25 and RRF scores ("ranking") only order the hits of the list that produced them, and
    even "relevance" scores (cosine, rerank) come from each base's own models, so neither is
    on a scale shared across bases. The merged list therefore interleaves by rank: every
    base's #1 (bases in the order asked), then every base's #2, and so on — RRF over the
    per-base lists with equal weights.
    """
    merged: list[T] = []
    depth = max((len(hits) for hits in per_base), default=0)
    for index in range(depth):
        merged.extend(hits[index] for hits in per_base if index < len(hits))
    return merged


def search_many(
    bases: Sequence[Base],
    query: str,
    search: Callable[[Base], SearchResponse],
    top_k: int | None = None,
) -> MultiSearchResponse:
    """Search each base (once, in the order given) and merge the results by rank.

    At most `top_k` hits are kept, by default the largest document count of the bases
    searched. A base that cannot be searched is listed in `failures`; when none can be,
    the first failure is raised, naming every base's.
    """
    started = time.perf_counter()
    unique = list({b.id: b for b in bases}.values())
    response = MultiSearchResponse(query=query)
    for base in unique:
        try:
            response.searched.append((base, search(base)))
        except TroveError as exc:
            if exc.code in QUERY_ERRORS:
                raise
            response.failures.append(BaseFailure(base, str(exc.code), exc.message))
    if unique and not response.searched:
        first = response.failures[0]
        detail = "; ".join(f"{f.base.id}: {f.message}" for f in response.failures)
        raise TroveError(ErrorCode(first.code), f"no knowledge base could be searched ({detail})")
    limit = top_k or max((b.document_count for b, _ in response.searched), default=0)
    merged = interleave([[(b, r) for r in resp.results] for b, resp in response.searched])
    response.hits = [
        BaseHit(rank, base, result) for rank, (base, result) in enumerate(merged[:limit], start=1)
    ]
    response.total_ms = (time.perf_counter() - started) * 1000.0
    return response
