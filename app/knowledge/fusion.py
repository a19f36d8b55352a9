"""Rank fusion of the BM25 and vector candidate lists."""

from __future__ import annotations

import re
from collections.abc import Hashable, Sequence
from typing import TypeVar

from app.knowledge.pipeline.indexing.tokenize import has_cjk
from app.providers.model_info import ModelLanguages, declared_languages

K = TypeVar("K", bound=Hashable)

RRF_K = 60

_HANGUL = re.compile("[\u1100-\u11ff\u3130-\u318f\uac00-\ud7af]")
_KANA = re.compile("[\u3040-\u30ff\u31f0-\u31ff\uff66-\uff9f]")


def rrf(
    ranked_lists: Sequence[Sequence[K]],
    *,
    k: int = RRF_K,
    weights: Sequence[float] | None = None,
    ranks: Sequence[Sequence[int] | None] | None = None,
) -> list[tuple[K, float]]:
    """Reciprocal Rank Fusion: score(d) = sum_i w_i / (k + rank_i(d)), ranks from 1.

    A list's ranks are the positions of its keys unless `ranks` gives them (keys may then
    share a rank: the chunks of one full-text passage). Ties keep the order in which keys
    were first seen, so the result is deterministic.
    """
    if weights is None:
        weights = [1.0] * len(ranked_lists)
    if ranks is None:
        ranks = [None] * len(ranked_lists)
    if len(weights) != len(ranked_lists) or len(ranks) != len(ranked_lists):
        raise ValueError("one weight (and one rank list) per ranked list is required")
    scores: dict[K, float] = {}
    for ranked, weight, given in zip(ranked_lists, weights, ranks, strict=True):
        positions = range(1, len(ranked) + 1) if given is None else given
        for rank, key in zip(positions, ranked, strict=True):
            scores[key] = scores.get(key, 0.0) + weight / (k + rank)
    order = {key: i for i, key in enumerate(scores)}
    return sorted(scores.items(), key=lambda kv: (-kv[1], order[kv[0]]))


def cjk_languages(query: str) -> frozenset[str]:
    """The languages the query's Chinese, Japanese or Korean text can be in (none: it has
    no such text). Han characters alone can be Chinese or Japanese kanji."""
    if not has_cjk(query):
        return frozenset()
    found = {"ko"} if _HANGUL.search(query) else set()
    if _KANA.search(query):
        found.add("ja")
    return frozenset(found or {"zh", "ja"})


def fusion_weights(
    query: str, embedding_model: str | None, languages: ModelLanguages | None = None
) -> tuple[float, float]:
    """(BM25 weight, vector weight) for one hybrid search, from signals Trove already has.

    Plain RRF falls below the better of its inputs when one input is much weaker; the
    clearest case is a model asked a Chinese, Japanese or Korean query in a language it is
    declared not to cover (an English-only model), whose vectors are close to noise. Such
    queries rank by BM25 alone; everything else, an unknown model's included, fuses both
    lists equally. `languages`: what the model is declared to cover (the person's override,
    an installed model's manifest; see model_info), else what the table of known models
    says. Internal and automatic: there is no user-facing knob.
    """
    wanted = cjk_languages(query)
    if not wanted:
        return 1.0, 1.0
    declared = languages or declared_languages(embedding_model)
    return (1.0, 1.0) if declared.covers_any(wanted) else (1.0, 0.0)
