"""The small interfaces the engine uses to embed and rerank.

Concrete clients (OpenAI-compatible, Ollama, the built-in offline model, /v1/rerank) plug
in behind these; tests use deterministic fakes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
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

# Why a provider call failed, finer than its code: stable strings the window turns into a
# sentence in the person's language (the English message stays for logs and the CLI).
CONNECTION_REFUSED = "connection_refused"  # nothing listens at the address
HOST_NOT_FOUND = "host_not_found"  # the host name does not resolve
CONNECTION_FAILED = "connection_failed"  # any other failure to connect or to get an answer
TIMED_OUT = "timed_out"
KEY_REJECTED = "key_rejected"  # 401/403 with a key
KEY_MISSING = "key_missing"  # 401/403 without one
NOT_FOUND = "not_found"  # 404: an unknown model or a wrong base URL
MODEL_MISSING = "model_missing"  # the provider lists models, and not this one
NO_MODELS = "no_models"  # the provider lists no model at all
HTTP_STATUS = "http_status"  # another error status; params: status, server
NOT_JSON = "not_json"  # a 2xx answer whose body is not JSON
MALFORMED = "malformed"  # JSON, but not of the documented shape
WRONG_DIMENSIONS = "wrong_dimensions"  # params: got, expected
BAD_URL = "bad_url"
NO_KEYCHAIN = "no_keychain"  # params: env_var
# A chat answer cut off by the caller's limits (code ANSWER_INTERRUPTED; the part that came
# is kept): its time (params: seconds) or its size (params: chars).
ANSWER_TIME_LIMIT = "answer_time_limit"
ANSWER_SIZE_LIMIT = "answer_size_limit"

# A reason's parameters: names and numbers the sentence needs (provider, status, model...).
ErrorParams = dict[str, str | int]


class ProviderError(Exception):
    """A provider call failed; `code` is one of the engine's stable error codes.

    `retryable`: a passing failure, worth trying again later; `retry_after`: the seconds
    the server asked to be left alone for, if it said. `reason` (one of the constants above)
    and `params` say what happened without words, for callers that speak other languages.
    """

    def __init__(
        self,
        code: str,
        message: str,
        *,
        retryable: bool = False,
        retry_after: float | None = None,
        reason: str | None = None,
        params: ErrorParams | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.retryable = retryable
        self.retry_after = retry_after
        self.reason = reason
        self.params: ErrorParams = dict(params or {})


@dataclass(frozen=True, slots=True)
class ConnectionOk:
    """A connection test that worked: what answered, so a window can say it in the person's
    language; `message` is the English sentence the CLI prints for the same test."""

    provider: str
    model: str
    dimensions: int | None  # an embedding model's vector size; None for a reranker
    message: str
    local: bool = False  # the built-in offline model, not a server


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
