"""How much text an embedding model reads: its input size, and its tokenizer when Trove has it.

A model reads at most its input size in tokens and silently drops the rest, so chunks are
cut to fit it (app/knowledge/pipeline/indexing/token_count.py). Where the limit comes from,
first found wins:

1. the built-in model: its own tokenizer file and 256 tokens, exact; an installed model
   (`local:<id>`) likewise, from its folder's tokenizer and its manifest's `max_tokens`
   (its client says so: installed_models.InstalledEmbedder.input_limit);
2. a probe of the provider: Ollama's `/api/show` (`<arch>.context_length`), an
   OpenAI-compatible server's model list entry (`max_model_len` from vLLM,
   `context_length` / `max_context_length` from others);
3. the table below, by model name (published maximum sequence lengths);
4. `DEFAULT_INPUT_TOKENS`: 512, what most open embedding models read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from app.providers.local_model import LOCAL_MODEL_ID, MAX_TOKENS, tokenizer_path

DEFAULT_INPUT_TOKENS = 512
# A provider's answer beyond this is not a real embedding input size; chunks are never
# anywhere near it anyway (a base's own chunk size caps them).
MAX_PLAUSIBLE_TOKENS = 1 << 20


@dataclass(frozen=True, slots=True)
class InputLimit:
    """At most `tokens` of the model's tokens per input, `special_tokens` of them added by
    the model itself (its special tokens, and a prefix it puts in front of every passage);
    `tokenizer_file` is the model's tokenizer.json when Trove has it."""

    tokens: int
    special_tokens: int = 0
    tokenizer_file: str | None = None
    source: str = "table"  # built-in | installed | probe | table | default


# Lower-cased model name (after "PROVIDER:" and any "org/") -> published input size.
# Ordered: the first pattern that matches wins, so specific names come before families.
_TABLE: tuple[tuple[re.Pattern[str], int], ...] = tuple(
    (re.compile(pattern), tokens)
    for pattern, tokens in (
        (r"paraphrase-(multilingual-)?minilm", 128),
        (r"all-minilm", 256),
        (r"all-mpnet", 384),
        (r"multi-qa-", 512),
        (r"bge-m3", 8192),
        (r"bge-(small|base|large)", 512),
        (r"(multilingual-)?e5-(small|base|large)", 512),
        (r"gte-qwen", 32768),
        (r"gte-(small|base|large)", 512),
        (r"gte-multilingual", 8192),
        (r"nomic-embed-text", 2048),
        (r"mxbai-embed", 512),
        (r"snowflake-arctic-embed.*v2", 8192),
        (r"snowflake-arctic-embed", 512),
        (r"jina-embeddings-v[23]", 8192),
        (r"jina-clip", 8192),
        (r"text-embedding-3|text-embedding-ada", 8191),
        (r"voyage", 32000),
        (r"qwen3-embedding", 32768),
        (r"embeddinggemma", 2048),
        (r"granite-embedding", 512),
        (r"embed-(english|multilingual)", 512),  # Cohere v3
    )
)


def model_name(model_id: str) -> str:
    name = model_id.partition(":")[2] or model_id
    return name.rsplit("/", 1)[-1].lower()


def builtin_limit(model_id: str) -> InputLimit | None:
    if model_id != LOCAL_MODEL_ID:
        return None
    # [CLS] and [SEP] count against the model's 256 positions.
    return InputLimit(MAX_TOKENS, 2, str(tokenizer_path()), "built-in")


def table_limit(model_id: str) -> InputLimit | None:
    name = model_name(model_id)
    for pattern, tokens in _TABLE:
        if pattern.search(name):
            return InputLimit(tokens, 0, None, "table")
    return None


def known_limit(model_id: str, probed: int | None = None) -> InputLimit:
    """The limit for `model_id`, from the first source that knows (see the module doc)."""
    found = builtin_limit(model_id)
    if found is not None:
        return found
    if probed is not None and 0 < probed <= MAX_PLAUSIBLE_TOKENS:
        return InputLimit(probed, 0, None, "probe")
    return table_limit(model_id) or InputLimit(DEFAULT_INPUT_TOKENS, 0, None, "default")


_LENGTH_KEYS = ("context_length", "max_context_length", "max_model_len", "max_input_tokens")


def context_length_in(info: Any) -> int | None:
    """A context length from a server's model description (Ollama's model_info, a
    /v1/models entry): the smallest positive integer under a known key, if any."""
    if not isinstance(info, dict):
        return None
    found: list[int] = []
    for key, value in info.items():
        if not isinstance(key, str) or isinstance(value, bool) or not isinstance(value, int):
            continue
        if value > 0 and (key.endswith(".context_length") or key in _LENGTH_KEYS):
            found.append(value)
    return min(found) if found else None
