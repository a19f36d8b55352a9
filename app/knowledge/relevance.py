"""Whether a hybrid search's results are only loosely related to the query.

Vector search always returns its nearest chunks, however far they are: a nonsense query
in a hybrid base lists ten results as confidently as a good one. Two signals say the
results are unrelated: full text (BM25) found none of the query's words, and the best
vector similarity is below what the base's embedding model gives related text. Cosine
levels differ from model to model, so the level is measured per model; for a model
without one, only the first signal is known and the response says just that
(LowRelevance.NO_WORD_MATCH).

Full text matches every word of a query, "to" and "the" too, so "cheap flights to Lisbon"
finds a gardening note through "to". Hits on such function words alone do not count as
finding the query's words.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from app.knowledge.pipeline.indexing.tokenize import QueryTokens
from app.knowledge.types import LowRelevance
from app.providers.local_model import LOCAL_MODEL_ID

# The cosine similarity under which a model's best hit is not related text. Measured with
# tests/bench/relevance_calibration.py on scifact (5,183 abstracts, 300 queries) for the
# built-in model: see the README ("Loosely related results").
RELATED_LEVELS: Mapping[str, float] = {LOCAL_MODEL_ID: 0.35}


def related_level(levels: Mapping[str, float], model_id: str | None) -> float | None:
    """The model's measured level, None for a model that has none (or no model)."""
    return levels.get(model_id) if model_id else None


# English function words: a full-text hit on these alone says nothing about the query.
# fmt: off
FUNCTION_WORDS = frozenset({
    "a", "about", "after", "all", "also", "am", "an", "and", "any", "are", "as", "at", "be",
    "because", "been", "but", "by", "can", "could", "did", "do", "does", "for", "from", "had",
    "has", "have", "he", "her", "here", "his", "how", "i", "if", "in", "into", "is", "it",
    "its", "me", "my", "no", "not", "of", "on", "or", "our", "she", "should", "so", "than",
    "that", "the", "their", "them", "then", "there", "these", "they", "this", "those", "to",
    "too", "us", "very", "was", "we", "were", "what", "when", "where", "which", "who", "why",
    "will", "with", "would", "you", "your",
})
# fmt: on


def content_tokens(tokens: QueryTokens) -> QueryTokens | None:
    """The query's tokens without function words; None when it has none to drop, or when
    it is nothing but function words (then those are its words)."""
    kept = [t for t in tokens.terms if t not in FUNCTION_WORDS]
    if len(kept) == len(tokens.terms) or not (kept or tokens.prefix):
        return None
    return QueryTokens(kept, tokens.prefix)


def judge(
    best_similarity: float | None, level: float | None, word_hits: Callable[[], int]
) -> LowRelevance | None:
    """Why the results of a hybrid search are only loosely related, or None.

    `word_hits` counts the full-text hits on the query's own words; it is asked only when
    the vectors leave the question open (it may cost a second full-text query)."""
    if level is not None and best_similarity is not None and best_similarity >= level:
        return None
    if word_hits():
        return None
    if level is None or best_similarity is None:
        return LowRelevance.NO_WORD_MATCH
    return LowRelevance.WEAK_MATCH
