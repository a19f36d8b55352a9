"""The search pipeline (DESIGN.md section 6): one contract for GUI, CLI and agent tools."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from app.knowledge import relevance
from app.knowledge.fusion import fusion_weights, rrf
from app.knowledge.pages import hit_page
from app.knowledge.pipeline.indexing.tokenize import (
    QueryTokens,
    fts_match_expression,
    query_tokens,
)
from app.knowledge.pipeline.store.base_index import BaseIndex
from app.knowledge.pipeline.store.index_store import Bm25Hit
from app.knowledge.provider_errors import provider_failure, provider_params
from app.knowledge.term_spans import query_terms
from app.knowledge.types import (
    Base,
    BaseStatus,
    Degradation,
    ErrorCode,
    Item,
    ItemStatus,
    ScoreKind,
    SearchMetrics,
    SearchMode,
    SearchResponse,
    SearchResult,
    SearchStage,
    TroveError,
)
from app.providers.interfaces import Embedder, FloatMatrix, ProviderError, Reranker
from app.providers.model_info import ModelLanguages

log = logging.getLogger(__name__)

OVERFETCH_FACTOR = 5
CANDIDATE_CAP = 200

ItemLookup = Callable[[Iterable[str]], dict[str, Item]]


def without_subtrees(items: ItemLookup, roots: frozenset[str]) -> ItemLookup:
    """A lookup that leaves out `roots` and every item below them (items whose deletion the
    person asked for in the window but which can still be undone)."""
    if not roots:
        return items

    def visible(ids: Iterable[str]) -> dict[str, Item]:
        found = items(ids)
        known = dict(found)
        return {i: item for i, item in found.items() if not _below(item, roots, items, known)}

    return visible


def _below(item: Item, roots: frozenset[str], items: ItemLookup, known: dict[str, Item]) -> bool:
    """Whether `item` or one of its ancestors is in `roots` (`known` caches the ancestors)."""
    current: Item | None = item
    while current is not None:
        if current.id in roots:
            return True
        parent = current.parent_id
        if parent is None:
            return False
        if parent not in known:
            known.update(items([parent]))
        current = known.get(parent)
    return False


class UnavailableModel:
    """Stands in for a model whose client could not be built (provider removed, disabled,
    runtime missing), so the search meets the failure where it meets a dead server's."""

    def __init__(self, model_id: str, failure: ProviderError) -> None:
        self.model_id = model_id
        self._failure = failure

    def _fail(self) -> ProviderError:
        # A fresh error each call: raising one instance twice would chain its tracebacks.
        return ProviderError(
            self._failure.code,
            self._failure.message,
            retryable=False,
            reason=self._failure.reason,
            params=self._failure.params,
        )

    def embed(self, texts: Sequence[str]) -> FloatMatrix:
        raise self._fail()

    def rerank(self, query: str, documents: Sequence[str], top_n: int) -> list[tuple[int, float]]:
        raise self._fail()


def derive_mode(base: Base) -> SearchMode:
    """Computed on every call from the base, never stored, so it cannot drift."""
    return SearchMode.HYBRID if base.has_vectors else SearchMode.BM25


def candidate_count(top_k: int) -> int:
    return min(top_k * OVERFETCH_FACTOR, CANDIDATE_CAP)


def apply_threshold(results: list[SearchResult], threshold: float | None) -> list[SearchResult]:
    """Only relevance scores are comparable to a threshold; ranking scores always pass."""
    if threshold is None:
        return results
    return [r for r in results if r.score_kind is not ScoreKind.RELEVANCE or r.score >= threshold]


@dataclass(slots=True)
class _Candidate:
    chunk_id: int
    score: float
    kind: ScoreKind


def _ms(start: float) -> float:
    return (time.perf_counter() - start) * 1000.0


def search(
    base: Base,
    query: str,
    *,
    store: BaseIndex | None,
    items: ItemLookup,
    embedder: Embedder | None = None,
    reranker: Reranker | None = None,
    top_k: int | None = None,
    mode: SearchMode | None = None,
    fusion: str | None = None,
    languages: ModelLanguages | None = None,
    related_level: float | None = None,
) -> SearchResponse:
    """`languages`: what the embedding model is declared to cover (fusion.fusion_weights;
    None: what the table of known models says). `related_level`: the cosine similarity
    under which the embedding model's best hit is not related text
    (relevance.RELATED_LEVELS); None when the model has no measured one."""
    started = time.perf_counter()
    if base.status is BaseStatus.FAILED:
        raise TroveError(
            ErrorCode.BASE_FAILED,
            f"knowledge base {base.name!r} has failed ({base.status_reason or 'unknown reason'}); "
            "restore it before searching",
        )
    tokens = query_tokens(query)
    if not tokens:
        raise TroveError(
            ErrorCode.NO_SEARCHABLE_TOKEN,
            "the query has no searchable word; type a word or a phrase",
        )
    mode = mode or derive_mode(base)
    k = top_k if top_k is not None else base.document_count
    if k < 1:
        raise TroveError(ErrorCode.INVALID_ARGUMENT, "top-K must be at least 1")
    wanted = candidate_count(k)
    metrics = SearchMetrics()
    response = SearchResponse(query=query, mode=mode, metrics=metrics)
    if store is None:
        metrics.total_ms = _ms(started)
        return response

    bm25_hits: list[Bm25Hit] = []
    vector_hits: list[tuple[int, float]] = []
    embed_failure: ProviderError | None = None
    if mode in (SearchMode.BM25, SearchMode.HYBRID):
        t = time.perf_counter()
        bm25_hits = store.bm25_search(fts_match_expression(tokens), wanted)
        metrics.bm25_search_ms = _ms(t)
        metrics.bm25_hit_count = len({h.rank for h in bm25_hits})
    if mode in (SearchMode.VECTOR, SearchMode.HYBRID):
        if embedder is None:
            raise TroveError(
                ErrorCode.MODEL_NOT_AVAILABLE,
                f"the embedding model {base.embedding_model!r} is not available",
                {"model": base.embedding_model or ""},
            )
        try:
            vector_hits = _vector_stage(embedder, store, query, wanted, metrics)
        except ProviderError as exc:
            if mode is SearchMode.VECTOR:  # nothing else could answer
                raise provider_failure(exc, ErrorCode.EMBEDDING_FAILED) from exc
            _degrade(base, response, _embedding_degraded(exc))
            embed_failure = exc
            # Say the mode the results really come from; `degraded` says why.
            response.mode, response.requested_mode = SearchMode.BM25, mode

    t = time.perf_counter()
    weights = (
        (1.0, 1.0) if fusion == "rrf" else fusion_weights(query, base.embedding_model, languages)
    )
    # Without the query's vector a hybrid search is a full-text one: keep BM25's own order.
    fuse_mode = SearchMode.BM25 if embed_failure is not None else mode
    candidates = _fuse(fuse_mode, bm25_hits, vector_hits, weights, store)
    metrics.fusion_ms = _ms(t) if fuse_mode is SearchMode.HYBRID else 0.0

    results = _visible_results(base, store, items, candidates)
    if reranker is not None and base.rerank_model and results:
        results = _rerank_stage(base, reranker, query, results, response, embed_failure)
    results = apply_threshold(results[:k], base.threshold)
    results = _place_on_pages(store, results, query)
    response.results = [replace(r, rank=i) for i, r in enumerate(results, start=1)]
    if vector_hits:
        response.best_similarity = max(score for _, score in vector_hits)
    if response.results and fuse_mode is SearchMode.HYBRID:
        response.low_relevance = relevance.judge(
            response.best_similarity,
            related_level,
            lambda: _word_hits(store, tokens, metrics.bm25_hit_count),
        )
    metrics.final_count = len(response.results)
    metrics.total_ms = _ms(started)
    return response


def _vector_stage(
    embedder: Embedder, store: BaseIndex, query: str, wanted: int, metrics: SearchMetrics
) -> list[tuple[int, float]]:
    t = time.perf_counter()
    query_vector = np.asarray(embed_queries(embedder, [query]), dtype=np.float32)[0]
    metrics.embedding_ms = _ms(t)
    t = time.perf_counter()
    hits = store.vector_search(query_vector, wanted)
    metrics.vector_search_ms = _ms(t)
    metrics.vector_hit_count = len(hits)
    return hits


def embed_queries(embedder: Embedder, texts: Sequence[str]) -> FloatMatrix:
    """Vectors for search queries: through the embedder's `embed_query` when it has one (a
    model that embeds queries unlike passages, e.g. with a "query: " prefix), else `embed`."""
    embed_query = getattr(embedder, "embed_query", None)
    if callable(embed_query):
        vectors: FloatMatrix = embed_query(texts)
        return vectors
    return embedder.embed(texts)


def _rerank_stage(
    base: Base,
    reranker: Reranker,
    query: str,
    results: list[SearchResult],
    response: SearchResponse,
    embed_failure: ProviderError | None,
) -> list[SearchResult]:
    """The reranked results, or, when the reranker fails, the order they came in."""
    if embed_failure is not None and embed_failure.retryable:
        # The embedder already cost this search its timeouts and retries; a second
        # unreachable provider must not double the wait, so rerank is given up too.
        _degrade(base, response, _rerank_skipped(embed_failure))
        return results
    t = time.perf_counter()
    try:
        reranked = _rerank(reranker, query, results)
    except ProviderError as exc:
        _degrade(base, response, _rerank_degraded(exc))
        return results
    finally:
        response.metrics.rerank_ms = _ms(t)
    response.reranked = True
    return reranked


def _degrade(base: Base, response: SearchResponse, degradation: Degradation) -> None:
    log.warning(
        "search in %r degraded: %s %s: %s",
        base.name,
        degradation.stage,
        degradation.code,
        degradation.message,
    )
    response.degraded.append(degradation)


def _fuse(
    mode: SearchMode,
    bm25_hits: list[Bm25Hit],
    vector_hits: list[tuple[int, float]],
    weights: tuple[float, float],
    store: BaseIndex,
) -> list[_Candidate]:
    if mode is SearchMode.BM25:
        return [_Candidate(h.chunk_id, h.score, ScoreKind.RANKING) for h in bm25_hits]
    if mode is SearchMode.VECTOR:
        return [_Candidate(cid, score, ScoreKind.RELEVANCE) for cid, score in vector_hits]
    return _fuse_passages(bm25_hits, vector_hits, weights, store)


def _fuse_passages(
    bm25_hits: list[Bm25Hit],
    vector_hits: list[tuple[int, float]],
    weights: tuple[float, float],
    store: BaseIndex,
) -> list[_Candidate]:
    """RRF over full-text passages, the unit both lists can rank.

    Full text ranks passages; the vectors rank chunks, and a passage takes the rank of its
    best chunk among passages (MaxP), so a document cut into several chunks counts once in
    each list, as it did when it was one chunk. Each fused passage then lists its chunks
    that either list found, best vector match first, all with the passage's score.
    """
    passage_of = {h.chunk_id: h.passage for h in bm25_hits}
    passage_of.update(store.passages_of(cid for cid, _ in vector_hits if cid not in passage_of))
    bm25_order = list(dict.fromkeys(h.passage for h in bm25_hits))
    vector_order = list(
        dict.fromkeys(passage_of.get(cid, -cid) for cid, _ in vector_hits)
    )  # a chunk in no passage (a damaged index) stands for itself
    lists = [bm25_order, vector_order]
    kept = [i for i, w in enumerate(weights) if w > 0]
    fused = rrf([lists[i] for i in kept], weights=[weights[i] for i in kept])
    members: dict[int, list[int]] = {}
    for cid, _ in vector_hits if weights[1] > 0 else ():
        members.setdefault(passage_of.get(cid, -cid), []).append(cid)
    for h in bm25_hits:
        members.setdefault(h.passage, []).append(h.chunk_id)
    out: list[_Candidate] = []
    for passage, score in fused:
        for cid in dict.fromkeys(members.get(passage, ())):
            out.append(_Candidate(cid, score, ScoreKind.RANKING))
    return out


def _visible_results(
    base: Base, store: BaseIndex, items: ItemLookup, candidates: list[_Candidate]
) -> list[SearchResult]:
    """Drop hits whose item is missing, elsewhere, unfinished or being deleted."""
    chunks = store.chunks(c.chunk_id for c in candidates)
    found = items({c.item_id for c in chunks.values()})
    results: list[SearchResult] = []
    for cand in candidates:
        chunk = chunks.get(cand.chunk_id)
        if chunk is None:
            continue
        item = found.get(chunk.item_id)
        if item is None or item.base_id != base.id or item.status is not ItemStatus.COMPLETED:
            continue
        results.append(
            SearchResult(
                rank=0,
                score=cand.score,
                score_kind=cand.kind,
                item_id=item.id,
                source=item.source,
                title=item.title,
                concept_id=chunk.relative_path,
                char_start=chunk.char_start,
                char_end=chunk.char_end,
                text=chunk.text,
                page=chunk.page,
                ocr=chunk.ocr,
            )
        )
    return results


def _word_hits(store: BaseIndex, tokens: QueryTokens, bm25_hit_count: int) -> int:
    """How many full-text hits the query's own words have: hits on "to" or "the" alone
    (relevance.FUNCTION_WORDS) do not count."""
    if not bm25_hit_count:
        return 0
    content = relevance.content_tokens(tokens)
    if content is None:
        return bm25_hit_count
    return len(store.bm25_search(fts_match_expression(content), 1))


def _place_on_pages(
    store: BaseIndex, results: list[SearchResult], query: str
) -> list[SearchResult]:
    """Give each hit in a paged material the page its matched words are on.

    A chunk can run across pages (and starts with the overlap carried over from the page
    before), so the page stored with it names where most of it is, not where the words
    the snippet shows are. Materials indexed before pages were kept keep that page."""
    paged = [r for r in results if r.page is not None]
    if not paged:
        return results
    starts = store.page_starts(r.item_id for r in paged)
    if not starts:
        return results
    terms = query_terms(query)
    placed: list[SearchResult] = []
    for r in results:
        pages = starts.get(r.item_id)
        page = hit_page(pages, r.char_start, r.text, terms) if pages else None
        placed.append(replace(r, page=page) if page is not None else r)
    return placed


def _rerank(reranker: Reranker, query: str, results: list[SearchResult]) -> list[SearchResult]:
    """Rerank the whole candidate list (before the top-K trim) so nothing good is cut early."""
    ranked = reranker.rerank(query, [r.text for r in results], len(results))
    ordered = sorted(ranked, key=lambda p: -p[1])
    return [
        replace(results[index], score=float(score), score_kind=ScoreKind.RELEVANCE)
        for index, score in ordered
    ]


# Provider codes that say more than "the call failed" and so are kept as they are.
_SPECIFIC_CODES = frozenset(
    {ErrorCode.PROVIDER_AUTH_FAILED, ErrorCode.MODEL_NOT_AVAILABLE, ErrorCode.INVALID_ARGUMENT}
)


def _stage_code(exc: ProviderError, fallback: ErrorCode) -> ErrorCode:
    """The provider's code when it is specific, else the stage's own failure code.

    HTTP clients report every generic failure as EMBEDDING_FAILED, which for a rerank call
    would send the person looking at the wrong model."""
    code = provider_failure(exc, fallback).code
    return code if code in _SPECIFIC_CODES else fallback


def _embedding_degraded(exc: ProviderError) -> Degradation:
    return Degradation(
        SearchStage.EMBEDDING,
        _stage_code(exc, ErrorCode.EMBEDDING_FAILED),
        f"{exc.message}; showing full-text (BM25) results only",
        provider_params(exc),
    )


def _rerank_degraded(exc: ProviderError) -> Degradation:
    return Degradation(
        SearchStage.RERANK,
        _stage_code(exc, ErrorCode.RERANK_FAILED),
        f"{exc.message}; results are not reranked",
        provider_params(exc),
    )


def _rerank_skipped(embed_failure: ProviderError) -> Degradation:
    return Degradation(
        SearchStage.RERANK,
        ErrorCode.RERANK_FAILED,
        "not asked: the embedding provider did not answer this search "
        f"({embed_failure.message}); results are not reranked",
        not_asked=True,
    )
