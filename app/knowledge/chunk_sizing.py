"""A base's chunk sizing: its settings, capped so its embedding model reads every chunk whole.

The rule (docs/design.md, "Chunk size"):
- no embedding model: the base's chunk size in estimated tokens, as set;
- a model whose tokenizer Trove has (the built-in one, an installed one): chunks counted
  in the model's own tokens, at most the model's input size less its special tokens, its
  passage prefix and the title repeated in front of later chunks;
- any other model: estimated tokens, at most ESTIMATE_SHARE of the model's input size
  (probed, else from the table in providers/input_limits.py, else 512).
"""

from __future__ import annotations

import logging

from app.knowledge.pipeline.indexing.token_count import ChunkSizing
from app.knowledge.types import Base
from app.providers.input_limits import InputLimit, known_limit
from app.providers.interfaces import ModelResolver, ProviderError

log = logging.getLogger(__name__)

# Estimated tokens (one per word, one per CJK character) per model token that real text stays
# under: subword tokenizers make 1.2-1.5 tokens of an English word and up to 2 of a CJK
# character or a number (measured in the README), so half the input size in estimated
# tokens fits the model.
ESTIMATE_SHARE = 0.5


def input_limit(models: ModelResolver, model_id: str) -> InputLimit:
    """The model's input size: probed by its client where it can ask, else known_limit."""
    try:
        embedder = models.embedder(model_id)
    except ProviderError:
        return known_limit(model_id)
    probe = getattr(embedder, "input_limit", None)
    if callable(probe):
        got = probe()
        if isinstance(got, InputLimit):
            return got
    return known_limit(model_id)


def sizing_for(base: Base, models: ModelResolver) -> ChunkSizing:
    if base.embedding_model is None or base.dimensions is None:
        return ChunkSizing(base.chunk_size, base.chunk_overlap)
    limit = input_limit(models, base.embedding_model)
    if limit.tokenizer_file is not None:
        room = limit.tokens - limit.special_tokens
        return ChunkSizing(base.chunk_size, base.chunk_overlap, room, limit.tokenizer_file)
    room = max(1, int(limit.tokens * ESTIMATE_SHARE) - limit.special_tokens)
    return ChunkSizing(base.chunk_size, base.chunk_overlap, room)
