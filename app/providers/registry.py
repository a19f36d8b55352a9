"""Resolves a model id `PROVIDER:MODEL` to an embedding or rerank client.

Providers register a factory per provider name; an id naming no registered provider
fails with MODEL_NOT_AVAILABLE and says which providers exist.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping

from app.providers.interfaces import Embedder, ProviderError, Reranker

EmbedderFactory = Callable[[str], Embedder]
RerankerFactory = Callable[[str], Reranker]

MODEL_NOT_AVAILABLE = "MODEL_NOT_AVAILABLE"


def split_model_id(model_id: str) -> tuple[str, str]:
    provider, sep, model = model_id.partition(":")
    if not sep or not provider or not model:
        raise ProviderError(
            "INVALID_ARGUMENT", f"model ids look like PROVIDER:MODEL, got {model_id!r}"
        )
    return provider, model


class ProviderRegistry:
    def __init__(self) -> None:
        self._embedder_factories: dict[str, EmbedderFactory] = {}
        self._reranker_factories: dict[str, RerankerFactory] = {}
        self._embedders: dict[str, Embedder] = {}
        self._rerankers: dict[str, Reranker] = {}
        self._lock = threading.Lock()

    def register_embedder(self, provider: str, factory: EmbedderFactory) -> None:
        self._embedder_factories[provider] = factory

    def register_reranker(self, provider: str, factory: RerankerFactory) -> None:
        self._reranker_factories[provider] = factory

    def embedder(self, model_id: str) -> Embedder:
        provider, model = split_model_id(model_id)
        factory = self._embedder_factories.get(provider)
        if factory is None:
            raise self._missing("embedding", provider, self._embedder_factories)
        with self._lock:
            if model_id not in self._embedders:
                self._embedders[model_id] = factory(model)
            return self._embedders[model_id]

    def reranker(self, model_id: str) -> Reranker:
        provider, model = split_model_id(model_id)
        factory = self._reranker_factories.get(provider)
        if factory is None:
            raise self._missing("rerank", provider, self._reranker_factories)
        with self._lock:
            if model_id not in self._rerankers:
                self._rerankers[model_id] = factory(model)
            return self._rerankers[model_id]

    @staticmethod
    def _missing(kind: str, provider: str, known: Mapping[str, object]) -> ProviderError:
        names = ", ".join(sorted(known)) or "none configured yet"
        return ProviderError(
            MODEL_NOT_AVAILABLE, f"no {kind} provider named {provider!r} (available: {names})"
        )
