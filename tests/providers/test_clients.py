"""OpenAI-compatible, Ollama and rerank clients against the loopback fake provider."""

from __future__ import annotations

import numpy as np
import pytest

from app.providers.http import RetryPolicy
from app.providers.interfaces import ProviderError
from app.providers.openai_compat import (
    DEFAULT_MAX_CHARS,
    OllamaEmbedder,
    OpenAICompatibleEmbedder,
    RerankClient,
    ollama_root,
    openai_api_root,
)
from tests.httpserver import Response
from tests.providers.conftest import KEY, Sleeps
from tests.providers.fake_api import (
    EMBEDDINGS,
    MODELS,
    OLLAMA_EMBED,
    OLLAMA_TAGS,
    RERANK,
    FakeApi,
    Fault,
    fake_vector,
)

TEXTS = ["alpha", "beta gamma", "delta", "epsilon zeta eta", "theta"]


def expected(texts: list[str], dims: int = 8) -> np.ndarray:
    return np.stack([fake_vector(t, dims) for t in texts])


# OpenAI-compatible embeddings


@pytest.mark.parametrize("encoding", ["float", "base64"])
def test_embeddings_float_and_base64(api: FakeApi, encoding: str) -> None:
    with OpenAICompatibleEmbedder(
        api.base_url,
        "embed-small",
        KEY,
        encoding_format="base64" if encoding == "base64" else "float",
    ) as client:
        matrix = client.embed(TEXTS)
    assert matrix.dtype == np.float32
    assert matrix.shape == (5, 8)
    np.testing.assert_allclose(matrix, expected(TEXTS), rtol=1e-6)
    sent = api.requests(EMBEDDINGS)[0].json()
    assert sent["encoding_format"] == encoding
    assert sent["model"] == "embed-small"
    assert "dimensions" not in sent


def test_base64_bytes_are_little_endian_float32(api: FakeApi) -> None:
    with OpenAICompatibleEmbedder(api.base_url, "m", KEY, encoding_format="base64") as client:
        row = client.embed(["x"])[0]
    assert row.tobytes() == fake_vector("x", 8).astype("<f4").tobytes()


def test_batches_and_restores_order_by_index(sleeps: Sleeps) -> None:
    texts = [f"text number {i}" for i in range(10)]
    with (
        FakeApi(shuffle=True) as api,
        OpenAICompatibleEmbedder(api.base_url, "m", batch_size=4, sleep=sleeps) as client,
    ):
        matrix = client.embed(texts)
        batches = [r.json()["input"] for r in api.requests(EMBEDDINGS)]
    assert [len(b) for b in batches] == [4, 4, 2]
    assert [t for b in batches for t in b] == texts
    np.testing.assert_allclose(matrix, expected(texts), rtol=1e-6)


def test_dimensions_sent_only_when_given(api: FakeApi) -> None:
    with OpenAICompatibleEmbedder(api.base_url, "m", KEY, dimensions=16) as client:
        matrix = client.embed(["x"])
    assert matrix.shape == (1, 16)
    assert api.requests(EMBEDDINGS)[0].json()["dimensions"] == 16


def test_requested_dimensions_mismatch_fails(api: FakeApi) -> None:
    api.fail(EMBEDDINGS, Fault.wrong_dims(5))
    with (
        OpenAICompatibleEmbedder(api.base_url, "m", KEY, dimensions=16) as client,
        pytest.raises(ProviderError) as info,
    ):
        client.embed(["x"])
    assert info.value.code == "EMBEDDING_FAILED"
    assert "16" in info.value.message and "5" in info.value.message


def test_dimension_change_between_calls_fails(api: FakeApi) -> None:
    with OpenAICompatibleEmbedder(api.base_url, "m", KEY) as client:
        assert client.embed(["x"]).shape == (1, 8)
        api.fail(EMBEDDINGS, Fault.wrong_dims(12))
        with pytest.raises(ProviderError) as info:
            client.embed(["y"])
    assert info.value.code == "EMBEDDING_FAILED"
    assert "12-dimensional" in info.value.message and "earlier 8" in info.value.message
    assert api.hits(EMBEDDINGS) == 2


@pytest.mark.parametrize("base", ["{url}", "{url}/", "{url}/v1", "{url}/v1/", "  {url}/v1  "])
def test_base_url_with_or_without_v1(api: FakeApi, base: str) -> None:
    with OpenAICompatibleEmbedder(base.format(url=api.base_url), "m", KEY) as client:
        client.embed(["x"])
    assert api.hits(EMBEDDINGS) == 1


def test_api_roots() -> None:
    assert openai_api_root("https://api.openai.com") == "https://api.openai.com/v1"
    assert openai_api_root("https://api.openai.com/v1/") == "https://api.openai.com/v1"
    assert openai_api_root("https://open.bigmodel.cn/api/paas/v4") == (
        "https://open.bigmodel.cn/api/paas/v4"
    )
    assert ollama_root("http://127.0.0.1:11434/") == "http://127.0.0.1:11434"
    assert ollama_root("http://127.0.0.1:11434/api") == "http://127.0.0.1:11434"
    with pytest.raises(ProviderError):
        openai_api_root("")


def test_empty_input_list_makes_no_request(api: FakeApi) -> None:
    with OpenAICompatibleEmbedder(api.base_url, "m", KEY) as client:
        assert client.embed([]).shape[0] == 0
    assert api.hits(EMBEDDINGS) == 0


def test_empty_strings_are_sent_as_a_space(api: FakeApi) -> None:
    with OpenAICompatibleEmbedder(api.base_url, "m", KEY) as client:
        matrix = client.embed(["", "x"])
    assert matrix.shape == (2, 8)
    assert api.requests(EMBEDDINGS)[0].json()["input"] == [" ", "x"]


def test_list_models(api: FakeApi) -> None:
    with OpenAICompatibleEmbedder(api.base_url + "/v1", "m", KEY) as client:
        assert client.list_models() == ["embed-large", "embed-small"]
    assert api.hits(MODELS) == 1


def test_test_connection_reports_dimensions(api: FakeApi) -> None:
    with OpenAICompatibleEmbedder(api.base_url, "embed-small", KEY) as client:
        message = client.test_connection()
    assert "embed-small" in message and "8-dimensional" in message


def test_test_connection_bad_key() -> None:
    with (
        FakeApi(api_key="right") as api,
        OpenAICompatibleEmbedder(api.base_url, "m", "wrong") as client,
        pytest.raises(ProviderError) as info,
    ):
        client.test_connection()
    assert info.value.code == "PROVIDER_AUTH_FAILED"


# over-long inputs


def test_inputs_are_cut_to_max_chars_before_sending(api: FakeApi) -> None:
    long_text = "word " * 5000
    with OpenAICompatibleEmbedder(api.base_url, "m", KEY) as client:
        matrix = client.embed([long_text, "short"])
    sent = api.requests(EMBEDDINGS)[0].json()["input"]
    assert len(sent[0]) == DEFAULT_MAX_CHARS
    assert sent[1] == "short"
    np.testing.assert_allclose(matrix[0], fake_vector(long_text[:DEFAULT_MAX_CHARS], 8), rtol=1e-6)


def test_max_chars_is_configurable(api: FakeApi) -> None:
    with OpenAICompatibleEmbedder(api.base_url, "m", KEY, max_chars=100) as client:
        client.embed(["y" * 1000])
    assert len(api.requests(EMBEDDINGS)[0].json()["input"][0]) == 100


def test_413_retries_once_with_halved_texts(sleeps: Sleeps) -> None:
    with (
        FakeApi(max_input_chars=3000) as api,
        OpenAICompatibleEmbedder(api.base_url, "m", max_chars=4000, sleep=sleeps) as client,
    ):
        matrix = client.embed(["a" * 3500, "short"])
        sent = [r.json()["input"] for r in api.requests(EMBEDDINGS)]
        assert matrix.shape == (2, 8)
        assert [len(t) for t in sent[0]] == [3500, 5]
        assert [len(t) for t in sent[1]] == [1750, 5]
        assert api.hits(EMBEDDINGS) == 2
        # The smaller limit is kept, so the next long text costs no extra request.
        client.embed(["b" * 3500])
        assert api.hits(EMBEDDINGS) == 3
    assert sleeps.calls == []


def test_injected_413_then_success(api: FakeApi) -> None:
    api.fail(EMBEDDINGS, Fault.too_long())
    with OpenAICompatibleEmbedder(api.base_url, "m", KEY) as client:
        client.embed(["z" * 2000])
    sizes = [len(r.json()["input"][0]) for r in api.requests(EMBEDDINGS)]
    assert sizes == [2000, 1000]


def test_400_maximum_context_message_also_shrinks(api: FakeApi) -> None:
    api.fail(
        EMBEDDINGS,
        Fault.http(400, body="This model's maximum context length is 8192 tokens, you asked 9000"),
    )
    with OpenAICompatibleEmbedder(api.base_url, "m", KEY) as client:
        client.embed(["z" * 2000])
    assert api.hits(EMBEDDINGS) == 2


def test_still_too_long_after_shrinking_fails_clearly(sleeps: Sleeps) -> None:
    with (
        FakeApi(max_input_chars=10) as api,
        OpenAICompatibleEmbedder(
            api.base_url, "m", max_chars=1000, shrink_retries=1, sleep=sleeps
        ) as client,
        pytest.raises(ProviderError) as info,
    ):
        client.embed(["q" * 1000])
    assert info.value.code == "EMBEDDING_FAILED"
    assert "too long" in info.value.message
    assert api.hits(EMBEDDINGS) == 2


# Ollama


def test_ollama_embed_and_tags(sleeps: Sleeps) -> None:
    with FakeApi(dims=6) as api, OllamaEmbedder(api.base_url, "nomic-embed-text") as client:
        matrix = client.embed(TEXTS)
        np.testing.assert_allclose(matrix, expected(TEXTS, 6), rtol=1e-6)
        sent = api.requests(OLLAMA_EMBED)[0].json()
        assert sent["model"] == "nomic-embed-text"
        assert sent["input"] == TEXTS
        assert client.list_models() == ["all-minilm:latest", "nomic-embed-text:latest"]
        assert api.hits(OLLAMA_TAGS) == 1
        assert client.model_id == "ollama:nomic-embed-text"


def test_ollama_test_connection() -> None:
    with FakeApi(dims=6) as api:
        with OllamaEmbedder(api.base_url + "/", "all-minilm") as client:
            assert "6-dimensional" in client.test_connection()
        with (
            OllamaEmbedder(api.base_url, "missing-model") as client,
            pytest.raises(ProviderError) as info,
        ):
            client.test_connection()
        assert info.value.code == "MODEL_NOT_AVAILABLE"
        assert "ollama pull missing-model" in info.value.message


def test_ollama_unknown_model_on_embed() -> None:
    with (
        FakeApi() as api,
        OllamaEmbedder(api.base_url, "missing") as client,
        pytest.raises(ProviderError) as info,
    ):
        client.embed(["x"])
    assert info.value.code == "MODEL_NOT_AVAILABLE"
    assert "not found" in info.value.message
    assert api.hits(OLLAMA_EMBED) == 1


def test_ollama_too_long_500_shrinks_instead_of_retrying(sleeps: Sleeps) -> None:
    with (
        FakeApi(max_input_chars=1000) as api,
        OllamaEmbedder(api.base_url, "all-minilm", sleep=sleeps) as client,
    ):
        assert client.embed(["w" * 1500]).shape == (1, 8)
        assert api.hits(OLLAMA_EMBED) == 2
    assert sleeps.calls == []


def test_ollama_batches_and_retries(sleeps: Sleeps) -> None:
    with (
        FakeApi() as api,
        OllamaEmbedder(
            api.base_url,
            "all-minilm",
            batch_size=2,
            sleep=sleeps,
            retry=RetryPolicy(max_attempts=2),
        ) as client,
    ):
        api.fail(OLLAMA_EMBED, Fault.http(503))
        matrix = client.embed(TEXTS)
        np.testing.assert_allclose(matrix, expected(TEXTS), rtol=1e-6)
        assert api.hits(OLLAMA_EMBED) == 4
    assert sleeps.calls == [0.5]


# rerank

DOCS = ["the cat sat", "dogs bark loudly", "a cat and a dog", "nothing here"]


@pytest.mark.parametrize("shape", ["results", "data"])
def test_rerank_both_shapes(shape: str) -> None:
    with FakeApi(api_key=KEY, rerank_shape=shape) as api:
        with RerankClient(api.base_url, "rerank-1", KEY) as client:
            ranked = client.rerank("cat dog", DOCS, 3)
        sent = api.requests(RERANK)[0].json()
    assert sent == {"model": "rerank-1", "query": "cat dog", "documents": DOCS, "top_n": 3}
    assert ranked[0] == (2, 1.0)
    assert len(ranked) == 3
    assert {i for i, _ in ranked[1:]} == {0, 1}
    assert all(0.0 <= s <= 1.0 for _, s in ranked)
    assert [s for _, s in ranked] == sorted((s for _, s in ranked), reverse=True)


def test_rerank_logits_are_squashed_into_unit_range() -> None:
    with FakeApi() as api:
        api.rerank_scale = 10.0
        with RerankClient(api.base_url + "/v1", "r") as client:
            ranked = client.rerank("cat dog", DOCS, 4)
    assert ranked[0][0] == 2
    assert all(0.0 <= s <= 1.0 for _, s in ranked)


def test_rerank_empty_documents_makes_no_request(api: FakeApi) -> None:
    with RerankClient(api.base_url, "r", KEY) as client:
        assert client.rerank("q", [], 5) == []
    assert api.hits(RERANK) == 0


def test_rerank_bad_index_is_malformed(api: FakeApi) -> None:
    api.fail(RERANK, Fault.wrong_shape())
    with RerankClient(api.base_url, "r", KEY) as client, pytest.raises(ProviderError) as info:
        client.rerank("q", ["a"], 1)
    assert info.value.code == "EMBEDDING_FAILED"
    assert api.hits(RERANK) == 1


def test_rerank_retries_and_test_connection(api: FakeApi, sleeps: Sleeps) -> None:
    api.fail(RERANK, Fault.rate_limited("2"))
    with RerankClient(
        api.base_url, "rerank-1", KEY, sleep=sleeps, retry=RetryPolicy(max_attempts=2)
    ) as client:
        assert "rerank-1" in client.test_connection()
    assert sleeps.calls == [2.0]
    assert api.hits(RERANK) == 2


@pytest.mark.parametrize(
    ("data", "expected_text"),
    [
        ([{"index": 0, "embedding": [1.0, 2.0]}, {"index": 1, "embedding": [1.0]}], "mixes"),
        ([{"index": 0, "embedding": "not base64!"}], "base64"),
        ([{"index": 0, "embedding": "AAAAAAA="}], "float32"),
        ([{"index": 0, "embedding": [1.0, None]}], "data.0.embedding.1: Input should be a valid"),
        ([{"index": 0, "embedding": []}], "empty"),
        ([{"index": 0, "embedding": [1.0, 1e400]}], "infinite"),
        ([{"index": 0, "embedding": [1.0]}, {"index": 0, "embedding": [1.0]}], "index"),
        ([{"index": 5, "embedding": [1.0]}, {"index": 1, "embedding": [1.0]}], "index"),
    ],
)
def test_bad_embedding_payloads_fail_without_retry(
    api: FakeApi, data: list[dict[str, object]], expected_text: str
) -> None:
    api.server.route(EMBEDDINGS, Response.json({"object": "list", "data": data}))
    with (
        OpenAICompatibleEmbedder(api.base_url, "m", KEY) as client,
        pytest.raises(ProviderError) as info,
    ):
        client.embed(["a", "b"][: len(data)])
    assert info.value.code == "EMBEDDING_FAILED"
    assert expected_text in info.value.message
    assert api.hits(EMBEDDINGS) == 1


def test_fewer_embeddings_than_inputs_fails(api: FakeApi) -> None:
    api.server.route(EMBEDDINGS, Response.json({"data": [{"index": 0, "embedding": [1.0]}]}))
    with (
        OpenAICompatibleEmbedder(api.base_url, "m", KEY) as client,
        pytest.raises(ProviderError) as info,
    ):
        client.embed(["a", "b"])
    assert "1 embeddings for 2 inputs" in info.value.message
