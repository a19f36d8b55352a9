"""Deterministic stand-ins for embedding and rerank providers."""

from __future__ import annotations

import hashlib
import re
import threading
from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt

from app.providers.interfaces import ProviderError

_WORD = re.compile(r"\w+")


def _word_vector(word: str, dims: int) -> npt.NDArray[np.float32]:
    seed = int.from_bytes(hashlib.sha256(word.encode()).digest()[:8], "little")
    return np.random.default_rng(seed).standard_normal(dims).astype(np.float32)


class FakeEmbedder:
    """Bag-of-words random projections: texts sharing words get similar vectors."""

    def __init__(self, model_id: str = "fake:bow", dims: int = 16) -> None:
        self.model_id = model_id
        self.dims = dims
        self.calls: list[list[str]] = []
        self.lock = threading.Lock()
        self.before_embed: Callable[[Sequence[str]], None] | None = None
        self.fail_with: ProviderError | None = None

    @property
    def texts_embedded(self) -> list[str]:
        return [t for call in self.calls for t in call]

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        with self.lock:
            self.calls.append(list(texts))
        if self.before_embed is not None:
            self.before_embed(texts)
        if self.fail_with is not None:
            raise self.fail_with
        rows = []
        for text in texts:
            vec = np.zeros(self.dims, dtype=np.float32)
            for word in _WORD.findall(text.lower()):
                vec += _word_vector(word, self.dims)
            if not vec.any():
                vec[0] = 1.0
            rows.append(vec / np.linalg.norm(vec))
        return np.stack(rows)


class FakeReranker:
    """Scores a document by the share of query words it contains; records what it saw."""

    def __init__(self, model_id: str = "fake:rerank") -> None:
        self.model_id = model_id
        self.calls: list[tuple[str, list[str], int]] = []
        self.scorer: Callable[[str, str], float] | None = None

    def rerank(self, query: str, documents: Sequence[str], top_n: int) -> list[tuple[int, float]]:
        self.calls.append((query, list(documents), top_n))
        words = set(_WORD.findall(query.lower()))
        scored = []
        for index, doc in enumerate(documents):
            if self.scorer is not None:
                score = self.scorer(query, doc)
            else:
                score = len(words & set(_WORD.findall(doc.lower()))) / max(1, len(words))
            scored.append((index, score))
        scored.sort(key=lambda p: -p[1])
        return scored[:top_n]


class FakeModels:
    """A ModelResolver over one fake embedder and one fake reranker."""

    def __init__(self, dims: int = 16) -> None:
        self.embedder_instance = FakeEmbedder(dims=dims)
        self.reranker_instance = FakeReranker()

    def embedder(self, model_id: str) -> FakeEmbedder:
        if not model_id.startswith("fake:"):
            raise ProviderError("MODEL_NOT_AVAILABLE", f"unknown model {model_id}")
        return self.embedder_instance

    def reranker(self, model_id: str) -> FakeReranker:
        if not model_id.startswith("fake:"):
            raise ProviderError("MODEL_NOT_AVAILABLE", f"unknown model {model_id}")
        return self.reranker_instance
