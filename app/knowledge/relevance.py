"""Whether a hybrid search's results are only loosely related to the query.

Vector search always returns its nearest chunks, however far they are: a nonsense query
in a hybrid base lists ten results as confidently as a good one. Two signals say the
results are unrelated: full text (BM25) found none of the query's words, and the best
vector similarity is below what the base's embedding model gives related text. Cosine
levels differ from model to model, so the level is measured per model; for a model
without one, only the first signal is known and the response says just that
(LowRelevance.NO_WORD_MATCH).
"""

from __future__ import annotations

from collections.abc import Mapping

from app.knowledge.types import LowRelevance
from app.providers.local_model import LOCAL_MODEL_ID

# The cosine similarity under which a model's best hit is not related text. Measured with
# tests/bench/relevance_calibration.py on scifact (5,183 abstracts, 300 queries) for the
# built-in model: see the README ("Loosely related results").
RELATED_LEVELS: Mapping[str, float] = {LOCAL_MODEL_ID: 0.35}


def related_level(levels: Mapping[str, float], model_id: str | None) -> float | None:
    """The model's measured level, None for a model that has none (or no model)."""
    return levels.get(model_id) if model_id else None


def judge(
    bm25_hit_count: int, best_similarity: float | None, level: float | None
) -> LowRelevance | None:
    """Why the results of a hybrid search are only loosely related, or None."""
    if bm25_hit_count:
        return None
    if level is None or best_similarity is None:
        return LowRelevance.NO_WORD_MATCH
    return LowRelevance.WEAK_MATCH if best_similarity < level else None
