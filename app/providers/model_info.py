"""What Trove knows about embedding models' languages, by model name.

Fusion uses it to avoid trusting an English-only model on a Chinese query (its vectors
for such text are close to noise). Unknown models are assumed to be multilingual: modern
hosted models mostly are, and a wrong guess only costs what plain fusion would cost.
"""

from __future__ import annotations

import re

# Patterns over the lower-cased model name (the part after "PROVIDER:").
_ENGLISH_ONLY = (
    re.compile(r"all-minilm"),
    re.compile(r"all-mpnet"),
    re.compile(r"paraphrase-minilm"),
    re.compile(r"multi-qa-"),
    re.compile(r"bge-(small|base|large)-en"),
    re.compile(r"\be5-(small|base|large)(-v2)?$"),
    re.compile(r"gte-(small|base|large)$"),
    re.compile(r"nomic-embed-text"),
    re.compile(r"mxbai-embed-large"),
    re.compile(r"snowflake-arctic-embed(?!.*-l-v2)"),
)


def is_english_only(model_id: str | None) -> bool:
    if not model_id:
        return False
    name = model_id.partition(":")[2].lower() or model_id.lower()
    name = name.rsplit("/", 1)[-1]
    return any(p.search(name) for p in _ENGLISH_ONLY)
