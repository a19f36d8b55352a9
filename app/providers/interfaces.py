"""The small interfaces the engine uses to embed and rerank.

Concrete clients (OpenAI-compatible, Ollama, the built-in offline model, /v1/rerank) plug
in behind these; tests use deterministic fakes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np
import numpy.typing as npt

FloatMatrix = npt.NDArray[np.float32]

# The engine's stable error codes that providers raise (strings, so this layer stays below it).
PROVIDER_AUTH_FAILED = "PROVIDER_AUTH_FAILED"
EMBEDDING_FAILED = "EMBEDDING_FAILED"
MODEL_NOT_AVAILABLE = "MODEL_NOT_AVAILABLE"
FETCH_FAILED = "FETCH_FAILED"
INVALID_ARGUMENT = "INVALID_ARGUMENT"


class ProviderError(Exception):
    """A provider call failed; `code` is one of the engine's stable error codes.

    `retryable`: a passing failure, worth trying again later; `retry_after`: the seconds
    the server asked to be left alone for, if it said.
    """

    def __init__(
        self,
        code: str,
        message: str,
        *,
        retryable: bool = False,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.retryable = retryable
        self.retry_after = retry_after


class Embedder(Protocol):
    model_id: str

    def embed(self, texts: Sequence[str]) -> FloatMatrix:
        """One row per text, in order."""
        ...


class Reranker(Protocol):
    model_id: str

    def rerank(self, query: str, documents: Sequence[str], top_n: int) -> list[tuple[int, float]]:
        """(index into documents, relevance score in 0..1), best first, at most top_n."""
        ...


class ConnectionTester(Protocol):
    def test_connection(self) -> str:
        """A short human message on success; raises ProviderError otherwise."""
        ...


class ModelResolver(Protocol):
    def embedder(self, model_id: str) -> Embedder: ...

    def reranker(self, model_id: str) -> Reranker: ...
