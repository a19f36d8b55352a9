"""Which languages an embedding model covers, from what is declared about it.

Fusion uses it to avoid trusting a model on a query in a language it was not made for (an
English-only model's vectors for Chinese text are close to noise). Where the answer comes
from, first found wins:

1. the person's override, kept in the catalog ("this model covers: ...");
2. an installed model's manifest (its `languages`);
3. the table below: published model cards, by model name;
4. nothing: the model is unknown, and an unknown model's vectors always count (a wrong
   guess would throw away a good model's results; keeping a weak one costs only what plain
   fusion costs).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

from app.providers.model_store.manifest import MULTILINGUAL

Languages = tuple[str, ...]  # ISO 639-1 codes ("en", "zh"), or ("multilingual",)

_EN: Languages = ("en",)
_ZH: Languages = ("zh", "en")
_ALL: Languages = (MULTILINGUAL,)

# Lower-cased model name (after "PROVIDER:" and any "org/") -> what its model card says it
# covers. Ordered: the first pattern that matches wins, so the multilingual members of a
# family come before the family.
_TABLE: tuple[tuple[re.Pattern[str], Languages], ...] = tuple(
    (re.compile(pattern), languages)
    for pattern, languages in (
        # multilingual-e5-*, paraphrase-multilingual-*, gte-multilingual-*, Cohere's
        # embed-multilingual-*, granite-embedding-*-multilingual, ...
        (r"multilingual", _ALL),
        (r"bge-m3", _ALL),
        (r"snowflake-arctic-embed-[ml]-v2|snowflake-arctic-embed2", _ALL),
        (r"nomic-embed-text-v2", _ALL),
        (r"jina-embeddings-v3|jina-clip-v2", _ALL),
        (r"jina-embeddings-v2-base-zh", _ZH),
        (r"text-embedding-3|text-embedding-ada", _ALL),
        (r"voyage", _ALL),
        (r"qwen3-embedding|gte-qwen", _ALL),
        (r"embeddinggemma", _ALL),
        (r"(bge|gte)-(small|base|large)-zh", _ZH),
        # English-only
        (r"all-minilm|all-mpnet|paraphrase-minilm|paraphrase-mpnet|multi-qa-", _EN),
        (r"bge-(small|base|large)-en", _EN),
        (r"(^|[^a-z])e5-(small|base|large)(-v2)?($|[^a-z])", _EN),
        (r"gte-(small|base|large)($|[^a-z])", _EN),
        (r"nomic-embed-text", _EN),  # v1 and v1.5; v2 is above
        (r"mxbai-embed", _EN),
        (r"snowflake-arctic-embed", _EN),  # v1 and v1.5; v2.0 is above
        (r"jina-embeddings-v2-(small|base)-en", _EN),
        (r"embed-english", _EN),  # Cohere v3
        (r"granite-embedding-(30m|125m)-english", _EN),
    )
)


class LanguageSource(StrEnum):
    OVERRIDE = "override"  # the person said so
    INSTALLED = "installed"  # an installed model's manifest
    TABLE = "table"  # a known model's published card
    UNKNOWN = "unknown"


@dataclass(frozen=True, slots=True)
class ModelLanguages:
    """What an embedding model is declared to cover; `languages` is None when unknown."""

    languages: Languages | None
    source: LanguageSource

    def covers_any(self, languages: Iterable[str]) -> bool:
        """Whether the model covers one of `languages`; an unknown model covers them all."""
        if self.languages is None or MULTILINGUAL in self.languages:
            return True
        return any(language in self.languages for language in languages)


UNKNOWN = ModelLanguages(None, LanguageSource.UNKNOWN)


def model_name(model_id: str) -> str:
    name = model_id.partition(":")[2] or model_id
    return name.rsplit("/", 1)[-1].lower()


def table_languages(model_id: str | None) -> Languages | None:
    """What the table of known models says `model_id` (PROVIDER:MODEL) covers, if it knows."""
    if not model_id:
        return None
    name = model_name(model_id)
    for pattern, languages in _TABLE:
        if pattern.search(name):
            return languages
    return None


def declared_languages(
    model_id: str | None,
    *,
    override: Languages | None = None,
    installed: Languages | None = None,
) -> ModelLanguages:
    """What `model_id` covers: the person's `override`, else the `installed` model's
    manifest, else the table, else unknown."""
    if override:
        return ModelLanguages(override, LanguageSource.OVERRIDE)
    if installed:
        return ModelLanguages(installed, LanguageSource.INSTALLED)
    known = table_languages(model_id)
    return UNKNOWN if known is None else ModelLanguages(known, LanguageSource.TABLE)
