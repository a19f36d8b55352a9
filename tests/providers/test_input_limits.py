"""A model's input size: the built-in model's own, a provider's probe, the table, 512.

The probes run against the loopback fake provider (Ollama's /api/show, vLLM's
max_model_len in /v1/models); the engine then sizes a base's chunks by it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from app.knowledge.chunk_sizing import ESTIMATE_SHARE, input_limit, sizing_for
from app.knowledge.pipeline.indexing.estimate import count_tokens
from app.knowledge.service import KnowledgeService
from app.providers.input_limits import (
    DEFAULT_INPUT_TOKENS,
    InputLimit,
    context_length_in,
    known_limit,
    table_limit,
)
from app.providers.local_model import LOCAL_MODEL_ID, MAX_TOKENS, tokenizer_path
from app.providers.openai_compat import OllamaEmbedder, OpenAICompatibleEmbedder
from app.providers.registry import ProviderRegistry
from tests.providers.conftest import KEY
from tests.providers.fake_api import MODELS, OLLAMA_SHOW, FakeApi


def test_the_built_in_model_is_measured_by_its_own_tokenizer() -> None:
    limit = known_limit(LOCAL_MODEL_ID)
    assert limit == InputLimit(MAX_TOKENS, 2, str(tokenizer_path()), "built-in")


@pytest.mark.parametrize(
    ("model_id", "tokens"),
    [
        ("ollama:all-minilm:latest", 256),
        ("openai:text-embedding-3-small", 8191),
        ("siliconflow:BAAI/bge-m3", 8192),
        ("siliconflow:BAAI/bge-large-zh-v1.5", 512),
        ("ollama:nomic-embed-text", 2048),
        ("openai:intfloat/multilingual-e5-small", 512),
        ("ollama:paraphrase-multilingual-minilm", 128),
    ],
)
def test_the_table_knows_published_input_sizes(model_id: str, tokens: int) -> None:
    assert table_limit(model_id) == InputLimit(tokens, 0, None, "table")


def test_an_unknown_model_reads_512_tokens() -> None:
    assert known_limit("openai:house-model-7") == InputLimit(
        DEFAULT_INPUT_TOKENS, 0, None, "default"
    )


def test_context_lengths_are_read_from_model_descriptions() -> None:
    assert context_length_in({"bert.context_length": 512, "bert.embedding_length": 384}) == 512
    assert context_length_in({"max_model_len": 8192}) == 8192
    assert context_length_in({"context_length": True, "max_model_len": "8192"}) is None
    assert context_length_in(["not", "a", "dict"]) is None


def test_ollama_tells_the_context_length_once() -> None:
    with FakeApi(context_lengths={"all-minilm:latest": 300}) as api:
        client = OllamaEmbedder(api.base_url, "all-minilm")
        assert client.input_limit() == InputLimit(300, 0, None, "probe")
        assert client.input_limit().tokens == 300
        assert api.hits(OLLAMA_SHOW) == 1


def test_a_server_that_cannot_say_leaves_it_to_the_table() -> None:
    with FakeApi() as api:
        client = OllamaEmbedder(api.base_url, "nomic-embed-text")
        assert client.input_limit() == InputLimit(2048, 0, None, "table")  # /api/show: 404


def test_vllm_max_model_len_is_the_probe() -> None:
    with FakeApi(api_key=KEY, context_lengths={"embed-small": 1024}) as api:
        client = OpenAICompatibleEmbedder(api.base_url, "embed-small", KEY)
        assert client.input_limit() == InputLimit(1024, 0, None, "probe")
        other = OpenAICompatibleEmbedder(api.base_url, "embed-large", KEY)
        assert other.input_limit().source == "default"
        assert api.hits(MODELS) == 2


def test_a_base_on_a_small_context_model_gets_chunks_that_fit_it(tmp_path: Path) -> None:
    """End to end: Ollama says 128 tokens; every chunk stays within the estimated share."""
    with FakeApi(dims=8, context_lengths={"all-minilm:latest": 128}) as api:
        registry = ProviderRegistry()
        registry.register_embedder("ollama", lambda m: OllamaEmbedder(api.base_url, m))
        service = KnowledgeService(tmp_path / "home", models=registry)
        base = service.create_base("small", embedding_model="ollama:all-minilm")
        limit = input_limit(service.parts.models, "ollama:all-minilm")
        assert limit.tokens == 128
        sizing = sizing_for(service.get_base(base.id), service.parts.models)
        assert sizing.limit == int(128 * ESTIMATE_SHARE)
        text = " ".join(f"Sentence {i} is about tides and the moon." for i in range(200))
        note = service.add_note(base.id, "Tides", text)
        service.run_pending_jobs(base.id)
        chunks = service.parts.stores.get(base.id).item_chunks(note.id)
        assert len(chunks) > 10
        assert all(count_tokens(c.text) <= sizing.limit for c in chunks)
        service.close()
