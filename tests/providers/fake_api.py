"""A fake embedding/rerank provider on 127.0.0.1 that speaks the real wire formats.

    with FakeApi(api_key="sk-test", dims=8) as api:
        api.fail("/v1/embeddings", Fault.status(500), Fault.status(500))
        client = OpenAICompatibleEmbedder(api.base_url, "m", "sk-test", ...)
        client.embed(["a"])                     # succeeds on the third request
        assert api.hits("/v1/embeddings") == 3

Speaks /v1/embeddings (float or base64 answers, optionally out of order), /v1/models,
/v1/rerank (score = share of query words in the document; "results" or Voyage's "data"),
and Ollama's /api/embed and /api/tags. Vectors come from a hash of the text (`fake_vector`),
so tests can compute the expected rows. Faults are queued per path and consumed one per
request, before any other check; or `chooser(path, request)` picks one per request (by its
input, say, when requests arrive concurrently in no fixed order), before the queue.
"""

from __future__ import annotations

import base64
import collections
import hashlib
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

import numpy as np
import numpy.typing as npt

from tests.httpserver import LoopbackServer, Request, Response

EMBEDDINGS = "/v1/embeddings"
MODELS = "/v1/models"
RERANK = "/v1/rerank"
OLLAMA_EMBED = "/api/embed"
OLLAMA_TAGS = "/api/tags"
OLLAMA_SHOW = "/api/show"

_WORD = re.compile(r"\w+")


def fake_vector(text: str, dims: int) -> npt.NDArray[np.float32]:
    """The unit vector the fake server returns for text."""
    seed = int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "little")
    vec = np.random.default_rng(seed).standard_normal(dims).astype(np.float32)
    return vec / np.linalg.norm(vec)


def overlap_score(query: str, document: str) -> float:
    words = set(_WORD.findall(query.lower()))
    return len(words & set(_WORD.findall(document.lower()))) / max(1, len(words))


@dataclass(frozen=True)
class Fault:
    """One injected misbehaviour, consumed by the next request to its path."""

    kind: str
    status: int = 500
    retry_after: str | None = None
    dims: int = 0
    body: str = ""
    echo_auth: bool = False

    @classmethod
    def http(cls, status: int, *, body: str = "", echo_auth: bool = False) -> Fault:
        return cls("status", status=status, body=body, echo_auth=echo_auth)

    @classmethod
    def rate_limited(cls, retry_after: str | None) -> Fault:
        return cls("status", status=429, retry_after=retry_after)

    @classmethod
    def slow(cls) -> Fault:
        """Hold the answer until the test's server closes (beyond any client read timeout)."""
        return cls("slow")

    @classmethod
    def wrong_dims(cls, dims: int) -> Fault:
        return cls("dims", dims=dims)

    @classmethod
    def malformed_json(cls) -> Fault:
        return cls("malformed")

    @classmethod
    def wrong_shape(cls) -> Fault:
        return cls("shape")

    @classmethod
    def too_long(cls) -> Fault:
        return cls("status", status=413, body="input is too long: maximum context length exceeded")


@dataclass
class _State:
    faults: dict[str, collections.deque[Fault]] = field(
        default_factory=lambda: collections.defaultdict(collections.deque)
    )


class FakeApi:
    def __init__(
        self,
        *,
        api_key: str | None = None,
        dims: int = 8,
        models: tuple[str, ...] = ("embed-small", "embed-large"),
        ollama_models: tuple[str, ...] = ("nomic-embed-text:latest", "all-minilm:latest"),
        shuffle: bool = False,
        max_input_chars: int | None = None,
        rerank_shape: str = "results",
        context_lengths: dict[str, int] | None = None,
    ) -> None:
        self.api_key = api_key
        self.dims = dims
        self.models = models
        self.ollama_models = ollama_models
        self.shuffle = shuffle  # answer embeddings in reverse order, relying on `index`
        self.max_input_chars = max_input_chars  # longer inputs get a 413 "too long"
        self.rerank_shape = rerank_shape  # "results" (Jina/Cohere) or "data" (Voyage)
        self.rerank_scale = 1.0  # > 1 answers logits-like scores outside 0..1
        # model -> input size, told by /api/show (Ollama) and /v1/models (vLLM's max_model_len)
        self.context_lengths = dict(context_lengths or {})
        self._lock = threading.Lock()
        self._state = _State()
        self._gate = threading.Event()
        # Called under the server's lock, one request at a time; None: no fault from it.
        self.chooser: Callable[[str, Request], Fault | None] | None = None
        self.server = LoopbackServer()
        routes: dict[str, Callable[[Request], Response]] = {
            EMBEDDINGS: self._embeddings,
            MODELS: self._models,
            RERANK: self._rerank,
            OLLAMA_EMBED: self._ollama_embed,
            OLLAMA_TAGS: self._ollama_tags,
            OLLAMA_SHOW: self._ollama_show,
        }
        for path, handler in routes.items():
            self.server.route(path, self._guarded(path, handler))

    # lifecycle

    def __enter__(self) -> FakeApi:
        self.server.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._gate.set()
        self.server.close()

    @property
    def base_url(self) -> str:
        return self.server.base_url

    # programming

    def fail(self, path: str, *faults: Fault) -> None:
        with self._lock:
            self._state.faults[path].extend(faults)

    def hits(self, path: str) -> int:
        return self.server.hits(path)

    def requests(self, path: str) -> list[Request]:
        return self.server.requests(path)

    # dispatch

    def _guarded(
        self, path: str, handler: Callable[[Request], Response]
    ) -> Callable[[Request], Response]:
        def route(request: Request) -> Response:
            with self._lock:
                fault = self.chooser(path, request) if self.chooser is not None else None
                queue = self._state.faults[path]
                if fault is None and queue:
                    fault = queue.popleft()
            if fault is not None and fault.kind in ("status", "slow", "malformed", "shape"):
                return self._fault_response(request, fault)
            denied = self._check_key(request)
            if denied is not None:
                return denied
            response = handler(request) if fault is None else self._with_fault(request, fault)
            return response

        return route

    def _fault_response(self, request: Request, fault: Fault) -> Response:
        if fault.kind == "slow":
            return Response.json({"data": []}, gate=self._gate)
        if fault.kind == "malformed":
            return Response(body=b'{"data": [', content_type="application/json")
        if fault.kind == "shape":
            return Response.json({"object": "list", "items": "nope"})
        headers = [("Retry-After", fault.retry_after)] if fault.retry_after is not None else []
        message = fault.body or f"injected HTTP {fault.status}"
        if fault.echo_auth:
            # Real servers do this ("Incorrect API key provided: sk-...").
            message += f"; you sent Authorization: {request.headers.get('authorization', '')}"
        return Response.json({"error": {"message": message}}, status=fault.status, headers=headers)

    def _check_key(self, request: Request) -> Response | None:
        if self.api_key is None:
            return None
        sent = request.headers.get("authorization", "")
        if sent == f"Bearer {self.api_key}":
            return None
        return Response.json(
            {"error": {"message": f"Incorrect API key provided: {sent.removeprefix('Bearer ')}"}},
            status=401,
        )

    def _with_fault(self, request: Request, fault: Fault) -> Response:
        assert fault.kind == "dims"
        if request.path == OLLAMA_EMBED:
            texts = request.json()["input"]
            return Response.json(
                {"embeddings": [fake_vector(t, fault.dims).tolist() for t in texts]}
            )
        return self._embeddings(request, dims=fault.dims)

    # routes

    def _too_long(self, texts: list[str]) -> Response | None:
        if self.max_input_chars is not None and any(len(t) > self.max_input_chars for t in texts):
            return Response.json(
                {"error": {"message": "This model's maximum context length is 512 tokens"}},
                status=413,
            )
        return None

    def _embeddings(self, request: Request, dims: int | None = None) -> Response:
        payload = request.json()
        texts = payload["input"]
        if isinstance(texts, str):
            texts = [texts]
        if any(not t for t in texts):
            return Response.json({"error": {"message": "'$.input' is invalid"}}, status=400)
        too_long = self._too_long(texts)
        if too_long is not None:
            return too_long
        size = dims or payload.get("dimensions") or self.dims
        as_base64 = payload.get("encoding_format") == "base64"
        data: list[dict[str, Any]] = []
        for index, text in enumerate(texts):
            vec = fake_vector(text, size)
            embedding: Any = (
                base64.b64encode(vec.astype("<f4").tobytes()).decode("ascii")
                if as_base64
                else vec.tolist()
            )
            data.append({"object": "embedding", "index": index, "embedding": embedding})
        if self.shuffle:
            data.reverse()
        return Response.json(
            {"object": "list", "data": data, "model": payload["model"], "usage": {}}
        )

    def _models(self, request: Request) -> Response:
        data: list[dict[str, Any]] = []
        for m in self.models:
            entry: dict[str, Any] = {"id": m, "object": "model"}
            if m in self.context_lengths:
                entry["max_model_len"] = self.context_lengths[m]
            data.append(entry)
        return Response.json({"object": "list", "data": data})

    def _ollama_show(self, request: Request) -> Response:
        model = request.json()["model"]
        length = self.context_lengths.get(model, self.context_lengths.get(f"{model}:latest"))
        if length is None:
            return Response.json({"error": f"model '{model}' not found"}, status=404)
        info = {"general.architecture": "bert", "bert.context_length": length}
        return Response.json({"modelfile": "", "model_info": info})

    def _rerank(self, request: Request) -> Response:
        payload = request.json()
        query, documents = payload["query"], payload["documents"]
        too_long = self._too_long([query, *documents])
        if too_long is not None:
            return too_long
        scored = [
            {"index": i, "relevance_score": overlap_score(query, d) * self.rerank_scale}
            for i, d in enumerate(documents)
        ]
        scored.sort(key=lambda r: -r["relevance_score"])
        top_n = payload.get("top_n") or len(scored)
        return Response.json({self.rerank_shape: scored[:top_n], "model": payload["model"]})

    def _ollama_embed(self, request: Request) -> Response:
        payload = request.json()
        if payload["model"] not in self.ollama_models and (
            f"{payload['model']}:latest" not in self.ollama_models
        ):
            return Response.json(
                {"error": f'model "{payload["model"]}" not found, try pulling it first'},
                status=404,
            )
        texts = payload["input"]
        if isinstance(texts, str):
            texts = [texts]
        if self.max_input_chars is not None and any(len(t) > self.max_input_chars for t in texts):
            return Response.json(
                {"error": "the input length exceeds the context length"}, status=500
            )
        return Response.json(
            {
                "model": payload["model"],
                "embeddings": [fake_vector(t, self.dims).tolist() for t in texts],
            }
        )

    def _ollama_tags(self, request: Request) -> Response:
        return Response.json(
            {"models": [{"name": m, "model": m, "size": 1} for m in self.ollama_models]}
        )
