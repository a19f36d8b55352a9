"""The JSON shapes the provider APIs answer with, checked by pydantic.

Only the fields Trove reads are declared; anything else a server adds is ignored. Types
are strict (a `true` is not an index, a `"0.5"` is not a score). A mismatch becomes
`malformed(...)` naming the field and what was wrong — never the value, which could be a
megabyte of floats or text a server echoed back (a key, say).
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from app.providers.http import malformed
from app.providers.interfaces import ProviderError

Answer = TypeVar("Answer", bound=BaseModel)


class _Shape(BaseModel):
    model_config = ConfigDict(strict=True, extra="ignore", frozen=True)


class EmbeddingRow(_Shape):
    # A JSON float list, or base64 of little-endian float32 (encoding_format "base64").
    embedding: list[float] | str
    # Servers may answer out of order; absent means the row's position.
    index: int | None = None


class OpenAIEmbeddings(_Shape):
    data: list[EmbeddingRow]


class OllamaEmbeddings(_Shape):
    embeddings: list[list[float]]


class ListedModel(_Shape):
    id: str | None = None  # OpenAI's /v1/models
    name: str | None = None  # Ollama's /api/tags
    model: str | None = None


class OpenAIModels(_Shape):
    # An entry of another shape is skipped, not fatal: the list is a convenience.
    data: list[ListedModel | Any]


class OllamaTags(_Shape):
    models: list[ListedModel | Any]


class RerankRow(_Shape):
    index: int = Field(ge=0)
    relevance_score: float = Field(allow_inf_nan=False)


class RerankAnswer(_Shape):
    # Jina, Cohere and SiliconFlow say "results"; Voyage says "data".
    results: list[RerankRow] | None = None
    data: list[RerankRow] | None = None

    def rows(self) -> list[RerankRow] | None:
        return self.results if self.results is not None else self.data


def parse_answer(shape: type[Answer], body: Any, name: str, what: str) -> Answer:
    """`body` as `shape`, or the ProviderError that says where it differs."""
    problem: ProviderError | None = None
    try:
        return shape.model_validate(body)
    except ValidationError as exc:
        problem = malformed(name, f"{what}: {_describe(exc)}")
    raise problem  # outside the except block: no ValidationError (with the body) chained


def _describe(exc: ValidationError) -> str:
    errors = exc.errors(include_input=False, include_url=False, include_context=False)
    first = errors[0]
    where = ".".join(str(part) for part in first["loc"] if _is_field(part)) or "the answer"
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return f"{where}: {first['msg']}{more}"


def _is_field(part: str | int) -> bool:
    """A field name or list position, not the tag pydantic adds per union member."""
    return isinstance(part, int) or (part.isidentifier() and part not in _TYPE_TAGS)


_TYPE_TAGS = frozenset({"str", "int", "float", "bool", "list", "dict", "any"})
