"""Remote embedding and rerank clients: OpenAI-compatible, Ollama, and the /v1/rerank shape.

Over-long inputs. A remote model's token limit is not discoverable, so every text is first cut
to `max_chars` characters (8,192 by default: about 2,000 English tokens, inside the context of
current embedding models). If the server still answers that an input is too long (HTTP 413, or
a 400/422/500 whose message says "too long" / "maximum context" ...), the batch is sent again
with the longest text's length halved, up to `shrink_retries` times (default 3: 8,192 -> 4,096
-> 2,048 -> 1,024 characters), and the client keeps the smaller limit for later calls. A long
input therefore loses its tail instead of failing its item. Empty texts are sent as one space,
since OpenAI rejects empty strings outright.
"""

from __future__ import annotations

import base64
import binascii
import logging
import math
import re
from collections.abc import Callable, Sequence
from types import TracebackType
from typing import Any, Literal, Self, TypeVar, Unpack

import numpy as np

from app.providers.answers import (
    ListedModel,
    OllamaEmbeddings,
    OllamaTags,
    OpenAIEmbeddings,
    OpenAIModels,
    RerankAnswer,
    parse_answer,
)
from app.providers.http import (
    HttpOptions,
    InputTooLong,
    KeySource,
    ProviderHttp,
    host_label,
    malformed,
)
from app.providers.input_limits import InputLimit, context_length_in, known_limit
from app.providers.interfaces import (
    BAD_URL,
    EMBEDDING_FAILED,
    INVALID_ARGUMENT,
    MODEL_MISSING,
    MODEL_NOT_AVAILABLE,
    WRONG_DIMENSIONS,
    FloatMatrix,
    ProviderError,
)

log = logging.getLogger(__name__)

DEFAULT_MAX_CHARS = 8192
DEFAULT_SHRINK_RETRIES = 3
# Below this, "too long" is not about length any more; report it instead of shrinking on.
MIN_SHRINK_CHARS = 64
PROBE_TEXT = "Trove connection test"
RERANK_PROBE_DOCUMENTS = (PROBE_TEXT, "an unrelated sentence")
# A connection test retries once: enough for a blip, short enough for someone waiting on it.
PROBE_ATTEMPTS = 2

# Paths below the API root (openai_api_root / ollama_root).
EMBEDDINGS_PATH = "/embeddings"
MODELS_PATH = "/models"
RERANK_PATH = "/rerank"
OLLAMA_EMBED_PATH = "/api/embed"
OLLAMA_TAGS_PATH = "/api/tags"
OLLAMA_SHOW_PATH = "/api/show"

EncodingFormat = Literal["float", "base64"]
T = TypeVar("T")


def _check_base_url(base_url: str) -> str:
    url = base_url.strip().rstrip("/")
    if not re.match(r"(?i)https?://[^/]+", url):
        raise ProviderError(
            INVALID_ARGUMENT,
            f"a provider base URL starts with http:// or https://, got {base_url!r}",
            reason=BAD_URL,
            params={"url": base_url},
        )
    return url


def openai_api_root(base_url: str) -> str:
    """`https://host` and `https://host/v1` both mean `https://host/v1`; `.../v4` is kept."""
    url = _check_base_url(base_url)
    return url if re.search(r"/v\d+$", url) else url + "/v1"


def ollama_root(base_url: str) -> str:
    url = _check_base_url(base_url)
    return re.sub(r"/(api|v1)$", "", url)


def _clip(text: str, limit: int) -> str:
    return text[:limit] if text.strip() else " "


def _vector(value: list[float] | str, name: str) -> FloatMatrix:
    """One embedding from a float list or a base64 string of little-endian float32."""
    if isinstance(value, str):
        try:
            raw = base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            raise malformed(name, "an embedding is neither a list nor valid base64") from None
        if len(raw) % 4:
            raise malformed(name, f"a base64 embedding has {len(raw)} bytes, not float32s")
        array = np.frombuffer(raw, dtype="<f4").astype(np.float32)
    else:
        array = np.asarray(value, dtype=np.float32)
    if array.size == 0:
        raise malformed(name, "an embedding is empty")
    if not np.isfinite(array).all():
        raise malformed(name, "an embedding holds NaN or infinite values")
    return array


def _stack(rows: Sequence[FloatMatrix], name: str) -> FloatMatrix:
    sizes = sorted({row.shape[0] for row in rows})
    if len(sizes) > 1:
        raise malformed(name, f"one answer mixes vector sizes {sizes}")
    return np.ascontiguousarray(np.stack(rows), dtype=np.float32)


class _Shrinker:
    """Clips texts to a length limit and halves it while the server says they are too long."""

    def __init__(self, max_chars: int, retries: int) -> None:
        if max_chars < 1:
            raise ValueError("max_chars must be positive")
        self.limit = max_chars
        self.retries = max(0, retries)

    def run(self, texts: Sequence[str], send: Callable[[list[str]], T], name: str) -> T:
        batch = [_clip(t, self.limit) for t in texts]
        for shrink in range(self.retries + 1):
            try:
                return send(batch)
            except InputTooLong as exc:
                longest = max(len(t) for t in batch)
                if shrink == self.retries or longest <= MIN_SHRINK_CHARS:
                    raise ProviderError(
                        EMBEDDING_FAILED,
                        f"{exc.message} (still too long after cutting inputs to {longest} "
                        "characters)",
                    ) from None
                limit = max(MIN_SHRINK_CHARS, longest // 2)
            log.info("%s: input too long, retrying with texts cut to %d characters", name, limit)
            # Later calls start from the smaller limit rather than paying for the 413 again.
            self.limit = min(self.limit, limit)
            batch = [t[:limit] for t in batch]
        raise AssertionError("unreachable")


class _RemoteClient:
    def __init__(self, http: ProviderHttp) -> None:
        self._http = http

    @property
    def name(self) -> str:
        return self._http.name

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


class _RemoteEmbedder(_RemoteClient):
    """Batching, clipping and dimension bookkeeping shared by the remote embedders."""

    def __init__(
        self,
        http: ProviderHttp,
        model: str,
        *,
        model_id: str,
        dimensions: int | None,
        batch_size: int,
        max_chars: int,
        shrink_retries: int,
    ) -> None:
        super().__init__(http)
        if not model:
            raise ProviderError(INVALID_ARGUMENT, "an embedding model name is required")
        if batch_size < 1:
            raise ProviderError(INVALID_ARGUMENT, "batch_size must be at least 1")
        if dimensions is not None and dimensions < 1:
            raise ProviderError(INVALID_ARGUMENT, "dimensions must be positive")
        self.model = model
        self.model_id = model_id
        self.dimensions = dimensions
        self.batch_size = batch_size
        self._shrinker = _Shrinker(max_chars, shrink_retries)
        self._seen_dims: int | None = None
        self._input_limit: InputLimit | None = None

    def input_limit(self) -> InputLimit:
        """The model's input size: asked of the server once (see input_limits.py); a server
        that does not say, or cannot be asked, leaves it to the table."""
        if self._input_limit is None:
            try:
                probed = self._probe_context_length()
            except ProviderError as exc:
                log.info("%s: no input size for %s (%s)", self.name, self.model, exc.message)
                probed = None
            self._input_limit = known_limit(self.model_id, probed)
        return self._input_limit

    def _probe_context_length(self) -> int | None:
        return None

    @property
    def max_chars(self) -> int:
        return self._shrinker.limit

    def embed(self, texts: Sequence[str]) -> FloatMatrix:
        return self._embed(texts, attempts=None)

    def _embed(self, texts: Sequence[str], attempts: int | None) -> FloatMatrix:
        if not texts:
            return np.zeros((0, self._seen_dims or self.dimensions or 0), dtype=np.float32)
        parts = []
        for start in range(0, len(texts), self.batch_size):
            batch = texts[start : start + self.batch_size]
            matrix = self._shrinker.run(batch, lambda b: self._request(b, attempts), self.name)
            parts.append(self._check_dims(matrix))
        return parts[0] if len(parts) == 1 else np.concatenate(parts)

    def _check_dims(self, matrix: FloatMatrix) -> FloatMatrix:
        dims = int(matrix.shape[1])
        if self.dimensions is not None and dims != self.dimensions:
            raise ProviderError(
                EMBEDDING_FAILED,
                f"{self.name}: asked {self.model} for {self.dimensions}-dimensional vectors, "
                f"got {dims}",
                reason=WRONG_DIMENSIONS,
                params={"model": self.model, "got": dims, "expected": self.dimensions},
            )
        if self._seen_dims is not None and dims != self._seen_dims:
            raise ProviderError(
                EMBEDDING_FAILED,
                f"{self.name}: {self.model} returned {dims}-dimensional vectors, earlier "
                f"{self._seen_dims}",
                reason=WRONG_DIMENSIONS,
                params={"model": self.model, "got": dims, "expected": self._seen_dims},
            )
        self._seen_dims = dims
        return matrix

    def _request(self, batch: list[str], attempts: int | None) -> FloatMatrix:
        raise NotImplementedError


class OpenAICompatibleEmbedder(_RemoteEmbedder):
    """POST {base}/v1/embeddings: OpenAI, SiliconFlow, Jina, LM Studio, vLLM, llama.cpp ..."""

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: KeySource = None,
        *,
        dimensions: int | None = None,
        batch_size: int = 64,
        encoding_format: EncodingFormat = "float",
        max_chars: int = DEFAULT_MAX_CHARS,
        shrink_retries: int = DEFAULT_SHRINK_RETRIES,
        model_id: str | None = None,
        **options: Unpack[HttpOptions],
    ) -> None:
        root = openai_api_root(base_url)
        super().__init__(
            ProviderHttp(root, api_key=api_key, **options),
            model,
            model_id=model_id or f"openai:{model}",
            dimensions=dimensions,
            batch_size=batch_size,
            max_chars=max_chars,
            shrink_retries=shrink_retries,
        )
        self.encoding_format: EncodingFormat = encoding_format

    def _request(self, batch: list[str], attempts: int | None) -> FloatMatrix:
        payload = openai_embeddings_payload(
            self.model, batch, self.encoding_format, self.dimensions
        )
        body = self._http.post_json(EMBEDDINGS_PATH, payload, attempts=attempts)
        return parse_openai_embeddings(body, len(batch), self.name)

    def list_models(self) -> list[str]:
        return parse_openai_models(self._http.get_json(MODELS_PATH), self.name)

    def _probe_context_length(self) -> int | None:
        body = self._http.get_json(MODELS_PATH, attempts=1)
        entries = body.get("data") if isinstance(body, dict) else None
        for entry in entries if isinstance(entries, list) else []:
            if isinstance(entry, dict) and entry.get("id") == self.model:
                return context_length_in(entry)
        return None

    def test_connection(self) -> str:
        # Embedding one text checks the address, the key, the model and the vector size at
        # once; /v1/models is optional (Jina has none) so it proves less.
        matrix = self._embed([PROBE_TEXT], attempts=PROBE_ATTEMPTS)
        return embeddings_ok(self.name, self.model, matrix)


class OllamaEmbedder(_RemoteEmbedder):
    """POST {base}/api/embed of a local Ollama server."""

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: KeySource = None,
        *,
        dimensions: int | None = None,
        batch_size: int = 64,
        max_chars: int = DEFAULT_MAX_CHARS,
        shrink_retries: int = DEFAULT_SHRINK_RETRIES,
        model_id: str | None = None,
        **options: Unpack[HttpOptions],
    ) -> None:
        options.setdefault("name", f"Ollama at {host_label(base_url)}")
        super().__init__(
            ProviderHttp(ollama_root(base_url), api_key=api_key, **options),
            model,
            model_id=model_id or f"ollama:{model}",
            dimensions=dimensions,
            batch_size=batch_size,
            max_chars=max_chars,
            shrink_retries=shrink_retries,
        )

    def _request(self, batch: list[str], attempts: int | None) -> FloatMatrix:
        payload = ollama_embed_payload(self.model, batch, self.dimensions)
        body = self._http.post_json(OLLAMA_EMBED_PATH, payload, attempts=attempts)
        return parse_ollama_embeddings(body, len(batch), self.name)

    def list_models(self) -> list[str]:
        return parse_ollama_tags(self._http.get_json(OLLAMA_TAGS_PATH), self.name)

    def _probe_context_length(self) -> int | None:
        body = self._http.post_json(OLLAMA_SHOW_PATH, {"model": self.model}, attempts=1)
        return context_length_in(body.get("model_info")) if isinstance(body, dict) else None

    def test_connection(self) -> str:
        require_ollama_model(self.list_models(), self.model, self.name)
        matrix = self._embed([PROBE_TEXT], attempts=PROBE_ATTEMPTS)
        return embeddings_ok(self.name, self.model, matrix)


# Requests and answers of each API, shared by the sync clients here and the window's async
# probes (app/providers/async_probe.py), so both speak and parse exactly the same way.


def openai_embeddings_payload(
    model: str, batch: list[str], encoding_format: EncodingFormat, dimensions: int | None
) -> dict[str, Any]:
    payload: dict[str, Any] = {"model": model, "input": batch, "encoding_format": encoding_format}
    if dimensions is not None:
        payload["dimensions"] = dimensions
    return payload


def parse_openai_embeddings(body: Any, count: int, name: str) -> FloatMatrix:
    data = parse_answer(OpenAIEmbeddings, body, name, "the embeddings answer").data
    if len(data) != count:
        raise malformed(name, f"{len(data)} embeddings for {count} inputs")
    rows: list[FloatMatrix | None] = [None] * count
    for position, item in enumerate(data):
        # Servers may answer out of order; `index` says which input a vector belongs to.
        index = position if item.index is None else item.index
        if not 0 <= index < count or rows[index] is not None:
            raise malformed(name, f"bad or repeated embedding index {index!r}")
        rows[index] = _vector(item.embedding, name)
    return _stack([row for row in rows if row is not None], name)


def parse_openai_models(body: Any, name: str) -> list[str]:
    data = parse_answer(OpenAIModels, body, name, "the model list").data
    return sorted({e.id for e in data if isinstance(e, ListedModel) and e.id is not None})


def ollama_embed_payload(model: str, batch: list[str], dimensions: int | None) -> dict[str, Any]:
    # truncate=True makes Ollama cut to the model's context itself; the clipping of the
    # embedders still bounds the request size.
    payload: dict[str, Any] = {"model": model, "input": batch, "truncate": True}
    if dimensions is not None:
        payload["dimensions"] = dimensions
    return payload


def parse_ollama_embeddings(body: Any, count: int, name: str) -> FloatMatrix:
    embeddings = parse_answer(OllamaEmbeddings, body, name, "the embeddings answer").embeddings
    if len(embeddings) != count:
        raise malformed(name, f"{len(embeddings)} embeddings for {count} inputs")
    return _stack([_vector(row, name) for row in embeddings], name)


def parse_ollama_tags(body: Any, name: str) -> list[str]:
    models = parse_answer(OllamaTags, body, name, "/api/tags").models
    listed = (e.name or e.model for e in models if isinstance(e, ListedModel))
    return sorted({model for model in listed if model})


def require_ollama_model(available: Sequence[str], model: str, name: str) -> None:
    """Ollama lists `name:tag`; a model asked for without a tag means `:latest`."""
    wanted = model if ":" in model else f"{model}:latest"
    if not any(listed in (model, wanted) for listed in available):
        raise ProviderError(
            MODEL_NOT_AVAILABLE,
            f"{name} has no model {model!r}; run `ollama pull {model}`",
            reason=MODEL_MISSING,
            params={"provider": name, "model": model},
        )


def embeddings_ok(name: str, model: str, matrix: FloatMatrix) -> str:
    return f"Connected to {name}: {model} returns {matrix.shape[1]}-dimensional vectors."


def _unit_scores(scores: list[float]) -> list[float]:
    """Relevance in 0..1: some servers (TEI, raw cross-encoders) answer logits instead."""
    if all(0.0 <= s <= 1.0 for s in scores):
        return scores
    return [1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, s)))) for s in scores]


class RerankClient(_RemoteClient):
    """POST {base}/v1/rerank in the Jina / Cohere / SiliconFlow / Voyage shape."""

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: KeySource = None,
        *,
        max_chars: int = DEFAULT_MAX_CHARS,
        shrink_retries: int = DEFAULT_SHRINK_RETRIES,
        model_id: str | None = None,
        **options: Unpack[HttpOptions],
    ) -> None:
        super().__init__(ProviderHttp(openai_api_root(base_url), api_key=api_key, **options))
        if not model:
            raise ProviderError(INVALID_ARGUMENT, "a rerank model name is required")
        self.model = model
        self.model_id = model_id or f"rerank:{model}"
        self._shrinker = _Shrinker(max_chars, shrink_retries)

    def rerank(self, query: str, documents: Sequence[str], top_n: int) -> list[tuple[int, float]]:
        return self._rerank(query, documents, top_n, attempts=None)

    def _rerank(
        self, query: str, documents: Sequence[str], top_n: int, attempts: int | None
    ) -> list[tuple[int, float]]:
        top_n = min(top_n, len(documents))
        if top_n <= 0:
            return []

        def send(texts: list[str]) -> Any:
            payload = rerank_payload(self.model, texts[0], texts[1:], top_n)
            return self._http.post_json(RERANK_PATH, payload, attempts=attempts)

        body = self._shrinker.run([query, *documents], send, self.name)
        return parse_rerank(body, len(documents), top_n, self.name)

    def test_connection(self) -> str:
        documents = list(RERANK_PROBE_DOCUMENTS)
        ranked = self._rerank(PROBE_TEXT, documents, len(documents), attempts=PROBE_ATTEMPTS)
        return rerank_ok(self.name, self.model, ranked)


def rerank_payload(model: str, query: str, documents: list[str], top_n: int) -> dict[str, Any]:
    return {"model": model, "query": query, "documents": documents, "top_n": top_n}


def parse_rerank(body: Any, count: int, top_n: int, name: str) -> list[tuple[int, float]]:
    items = parse_answer(RerankAnswer, body, name, "the rerank answer").rows()
    if items is None:
        raise malformed(name, "no 'results' (or 'data') list in the rerank answer")
    best: dict[int, float] = {}
    for item in items:
        if item.index >= count:
            raise malformed(name, f"bad rerank index {item.index!r}")
        best[item.index] = max(item.relevance_score, best.get(item.index, -math.inf))
    indexes = list(best)
    scores = _unit_scores([best[i] for i in indexes])
    ranked = sorted(zip(indexes, scores, strict=True), key=lambda p: (-p[1], p[0]))
    return ranked[:top_n]


def rerank_ok(name: str, model: str, ranked: list[tuple[int, float]]) -> str:
    if not ranked:
        raise malformed(name, "the rerank answer was empty")
    return f"Connected to {name}: rerank model {model} answered."
