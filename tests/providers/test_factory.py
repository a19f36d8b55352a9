"""Settings records -> clients -> registry, and the dimension probe."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest
from keyring.backends import fail

from app.providers.factory import (
    ProviderSettings,
    build_embedder,
    build_reranker,
    check_connection,
    list_models,
    probe_dimensions,
    register_all,
)
from app.providers.interfaces import FloatMatrix, ProviderError
from app.providers.local_model import LOCAL_MODEL_ID, LocalEmbedder
from app.providers.openai_compat import OllamaEmbedder, OpenAICompatibleEmbedder, RerankClient
from app.providers.registry import ProviderRegistry
from app.providers.secrets import get_key
from tests.providers.conftest import KEY, UseKeyring
from tests.providers.fake_api import EMBEDDINGS, FakeApi


def no_key(provider_id: str) -> str | None:
    return None


def settings(api: FakeApi) -> list[ProviderSettings]:
    return [
        ProviderSettings("vendor", "openai", "Vendor", api.base_url, True, ["embed-small"]),
        ProviderSettings("ollama", "ollama", "Ollama", api.base_url, True, ["all-minilm"]),
        ProviderSettings("jina", "rerank", "Jina", api.base_url + "/v1", True, ["rr"]),
        ProviderSettings("off", "openai", "Disabled one", api.base_url, False, []),
        ProviderSettings("future", "grpc", "From a newer version", api.base_url),
    ]


def test_register_all_resolves_every_kind(api: FakeApi) -> None:
    registry = ProviderRegistry()
    register_all(registry, settings(api), lambda pid: KEY if pid in ("vendor", "jina") else None)

    vendor = registry.embedder("vendor:embed-small")
    assert isinstance(vendor, OpenAICompatibleEmbedder)
    assert vendor.model_id == "vendor:embed-small"
    assert vendor.embed(["x"]).shape == (1, 8)
    assert registry.embedder("vendor:embed-small") is vendor  # cached by the registry

    ollama = registry.embedder("ollama:all-minilm")
    assert isinstance(ollama, OllamaEmbedder)
    assert ollama.model_id == "ollama:all-minilm"

    reranker = registry.reranker("jina:rr")
    assert isinstance(reranker, RerankClient)
    assert reranker.model_id == "jina:rr"
    assert reranker.rerank("cat", ["cat", "dog"], 1) == [(0, 1.0)]
    # An OpenAI-compatible vendor may serve /v1/rerank too.
    assert isinstance(registry.reranker("vendor:rr"), RerankClient)


def test_builtin_local_provider_is_always_registered() -> None:
    registry = ProviderRegistry()
    register_all(registry, [], no_key)
    with pytest.raises(ProviderError) as info:
        registry.embedder("nobody:model")
    assert info.value.code == "MODEL_NOT_AVAILABLE"
    assert "local" in info.value.message
    try:
        embedder = registry.embedder(LOCAL_MODEL_ID)
    except ProviderError as exc:  # the optional extra is absent: a clear install hint
        assert exc.code == "MODEL_NOT_AVAILABLE" and "trove[local]" in exc.message
    else:
        assert isinstance(embedder, LocalEmbedder)
        assert embedder.model_id == LOCAL_MODEL_ID
    with pytest.raises(ProviderError) as other:
        registry.embedder("local:some-other-model")
    assert other.value.code == "MODEL_NOT_AVAILABLE"


def test_disabled_unknown_and_wrong_kind(api: FakeApi) -> None:
    registry = ProviderRegistry()
    register_all(registry, settings(api), no_key)
    with pytest.raises(ProviderError) as disabled:
        registry.embedder("off:m")
    assert disabled.value.code == "MODEL_NOT_AVAILABLE" and "disabled" in disabled.value.message
    with pytest.raises(ProviderError) as unknown:
        registry.embedder("future:m")
    assert unknown.value.code == "MODEL_NOT_AVAILABLE"
    with pytest.raises(ProviderError) as no_rerank:
        registry.reranker("ollama:m")
    assert no_rerank.value.code == "MODEL_NOT_AVAILABLE"
    with pytest.raises(ProviderError):
        registry.embedder("jina:rr")  # a rerank-only provider


def test_reserved_and_duplicate_ids(api: FakeApi) -> None:
    registry = ProviderRegistry()
    hijack = ProviderSettings("local", "openai", "Not the built-in", api.base_url)
    first = ProviderSettings("dup", "openai", "First", api.base_url)
    second = ProviderSettings("dup", "ollama", "Second", api.base_url)
    register_all(registry, [hijack, first, second], no_key)
    assert isinstance(registry.embedder("dup:m"), OpenAICompatibleEmbedder)
    with pytest.raises(ProviderError):
        registry.embedder("local:embed-small")


@pytest.mark.parametrize("bad", ["", "a:b", " padded "])
def test_settings_id_is_validated(bad: str) -> None:
    with pytest.raises(ProviderError) as info:
        ProviderSettings(bad, "openai")
    assert info.value.code == "INVALID_ARGUMENT"


def test_missing_base_url_is_invalid() -> None:
    with pytest.raises(ProviderError) as info:
        build_embedder(ProviderSettings("x", "openai"), "m", no_key)
    assert info.value.code == "INVALID_ARGUMENT"


def test_key_is_looked_up_per_request(api: FakeApi) -> None:
    current: dict[str, str] = {}
    registry = ProviderRegistry()
    register_all(registry, settings(api), lambda pid: current.get(pid))
    client = registry.embedder("vendor:embed-small")
    with pytest.raises(ProviderError) as info:
        client.embed(["x"])
    assert info.value.code == "PROVIDER_AUTH_FAILED"
    current["vendor"] = KEY  # the key is saved in the settings later
    assert client.embed(["x"]).shape == (1, 8)


def test_no_keychain_still_works_keyless_and_hints_on_401(
    use_keyring: UseKeyring, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_keyring(fail.Keyring())  # type: ignore[no-untyped-call]
    monkeypatch.delenv("TROVE_KEY_VENDOR", raising=False)
    with FakeApi() as keyless:
        client = build_embedder(
            ProviderSettings("vendor", "openai", "V", keyless.base_url), "m", get_key
        )
        assert client.embed(["x"]).shape == (1, 8)
    with FakeApi(api_key=KEY) as locked:
        client = build_embedder(
            ProviderSettings("vendor", "openai", "V", locked.base_url), "m", get_key
        )
        with pytest.raises(ProviderError) as info:
            client.embed(["x"])
        assert info.value.code == "PROVIDER_AUTH_FAILED"
        assert "TROVE_KEY_VENDOR" in info.value.message
        monkeypatch.setenv("TROVE_KEY_VENDOR", KEY)
        assert client.embed(["x"]).shape == (1, 8)
        assert locked.hits(EMBEDDINGS) == 2


def test_list_models_and_check_connection(api: FakeApi) -> None:
    vendor, ollama, jina, *_ = settings(api)

    def lookup(provider_id: str) -> str | None:
        return KEY

    assert list_models(vendor, lookup) == ["embed-large", "embed-small"]
    assert list_models(ollama, lookup) == ["all-minilm:latest", "nomic-embed-text:latest"]
    assert "8-dimensional" in check_connection(vendor, "embed-small", lookup)
    assert "all-minilm" in check_connection(ollama, "all-minilm", lookup)
    assert "rr" in check_connection(jina, "rr", lookup)


def test_build_reranker_for_disabled_provider(api: FakeApi) -> None:
    with pytest.raises(ProviderError) as info:
        build_reranker(
            ProviderSettings("off", "rerank", base_url=api.base_url, enabled=False), "r", no_key
        )
    assert info.value.code == "MODEL_NOT_AVAILABLE"


# dimension probe


class StubEmbedder:
    def __init__(self, matrix: FloatMatrix, model_id: str = "stub:m") -> None:
        self.model_id = model_id
        self.matrix = matrix
        self.calls: list[list[str]] = []

    def embed(self, texts: Sequence[str]) -> FloatMatrix:
        self.calls.append(list(texts))
        return self.matrix


def test_probe_dimensions_against_the_fake_server(api: FakeApi) -> None:
    with OpenAICompatibleEmbedder(api.base_url, "m", KEY, dimensions=24) as client:
        assert probe_dimensions(client) == 24
    assert api.hits(EMBEDDINGS) == 1


def test_probe_dimensions_rejects_bad_answers() -> None:
    ok = StubEmbedder(np.ones((1, 5), dtype=np.float32))
    assert probe_dimensions(ok) == 5
    assert len(ok.calls) == 1 and len(ok.calls[0]) == 1
    for bad in (
        np.ones((2, 5), dtype=np.float32),
        np.ones((1, 0), dtype=np.float32),
        np.ones(5, dtype=np.float32),
        np.full((1, 3), np.nan, dtype=np.float32),
    ):
        with pytest.raises(ProviderError) as info:
            probe_dimensions(StubEmbedder(bad))
        assert info.value.code == "EMBEDDING_FAILED"
