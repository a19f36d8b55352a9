"""Builds provider clients from plain settings records and registers them by provider id.

The catalog (app/knowledge) stores `ProviderSettings`; this module only turns them into
clients. A model id is `PROVIDER_ID:MODEL`, e.g. "siliconflow:BAAI/bge-m3" or
"local:all-MiniLM-L6-v2". Keys are looked up when a request is made, not when a client is
built, so a key changed in the settings applies to clients the registry already cached.

The "local" provider serves the built-in model and every model installed in the data
folder's `models/` (installed_models.py): "local:<id>" embeds or reranks with the model in
`models/<id>/`, whichever its manifest says it does.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final, Literal, Unpack, cast

import numpy as np

from app.providers.chat import CHAT_KINDS, ChatClient, ChatOptions
from app.providers.http import HttpOptions
from app.providers.installed_models import InstalledEmbedder, InstalledReranker, installed_folder
from app.providers.interfaces import (
    EMBEDDING_FAILED,
    INVALID_ARGUMENT,
    MODEL_NOT_AVAILABLE,
    ConnectionTester,
    Embedder,
    ProviderError,
    Reranker,
)
from app.providers.local_model import (
    LOCAL_MODEL_NAME,
    LOCAL_PROVIDER,
    LocalEmbedder,
)
from app.providers.model_store import install
from app.providers.model_store.manifest import ModelKind, load_manifest
from app.providers.openai_compat import OllamaEmbedder, OpenAICompatibleEmbedder, RerankClient
from app.providers.registry import ProviderRegistry
from app.providers.secrets import SecretStoreUnavailable

log = logging.getLogger(__name__)

ProviderKind = Literal["openai", "ollama", "rerank", "local"]
PROVIDER_KINDS: Final = ("openai", "ollama", "rerank", "local")
# What each kind can serve: an OpenAI-compatible vendor (SiliconFlow, Jina) usually serves
# /v1/rerank next to /v1/embeddings, so it registers both.
EMBEDDING_KINDS: Final = frozenset({"openai", "ollama", "local"})
RERANK_KINDS: Final = frozenset({"openai", "rerank"})

KeyLookup = Callable[[str], str | None]
PROBE_TEXT = "Trove dimension probe"


@dataclass
class ProviderSettings:
    """One configured provider, as the catalog stores it."""

    id: str
    kind: str
    display_name: str = ""
    base_url: str = ""
    enabled: bool = True
    models: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        # The id is the part before the first ":" of a model id, so it cannot hold one.
        if not self.id or ":" in self.id or self.id != self.id.strip():
            raise ProviderError(
                INVALID_ARGUMENT, f"a provider id is non-empty, without ':' or spaces: {self.id!r}"
            )

    @property
    def label(self) -> str:
        return self.display_name or self.id


def builtin_local_settings() -> ProviderSettings:
    return ProviderSettings(
        id=LOCAL_PROVIDER,
        kind="local",
        display_name="Built-in (offline)",
        models=[LOCAL_MODEL_NAME],
    )


class _Keys:
    """A per-request key source for one provider that survives a missing keychain."""

    def __init__(self, provider_id: str, get_key: KeyLookup) -> None:
        self._provider_id = provider_id
        self._get_key = get_key
        self.hint: str | None = None

    def __call__(self) -> str | None:
        try:
            return self._get_key(self._provider_id)
        except SecretStoreUnavailable as exc:
            # Keyless servers (LM Studio, vLLM) must keep working on a machine without a
            # keychain; a server that wants a key will answer 401 and show this hint.
            self.hint = exc.message
            return None


def _require_base_url(settings: ProviderSettings) -> str:
    if not settings.base_url.strip():
        raise ProviderError(INVALID_ARGUMENT, f"provider {settings.label!r} has no base URL")
    return settings.base_url


def _options(settings: ProviderSettings, keys: _Keys, overrides: HttpOptions) -> HttpOptions:
    options: HttpOptions = {"name": settings.label, "auth_hint": lambda: keys.hint}
    options.update(overrides)
    return options


def local_embedder(model: str, models_dir: Path | None) -> Embedder:
    """The built-in model, or the embedding model installed as `models_dir/<model>`."""
    if model == LOCAL_MODEL_NAME:
        return LocalEmbedder()
    if models_dir is None:
        raise ProviderError(
            MODEL_NOT_AVAILABLE,
            f"the built-in provider has only {LOCAL_MODEL_NAME!r}, not {model!r}",
        )
    return InstalledEmbedder(models_dir, model)


def local_reranker(model: str, models_dir: Path | None) -> Reranker:
    """The rerank model installed as `models_dir/<model>`."""
    if models_dir is None or model == LOCAL_MODEL_NAME:
        raise ProviderError(MODEL_NOT_AVAILABLE, f"no local rerank model {model!r} is installed")
    return InstalledReranker(models_dir, model)


def build_embedder(
    settings: ProviderSettings,
    model: str,
    get_key: KeyLookup,
    *,
    models_dir: Path | None = None,
    **options: Unpack[HttpOptions],
) -> Embedder:
    """The embedding client for `settings.id:model`; `models_dir`: where the local
    provider's installed models are."""
    model_id = f"{settings.id}:{model}"
    if not settings.enabled and settings.kind != "local":
        raise ProviderError(MODEL_NOT_AVAILABLE, f"provider {settings.label!r} is disabled")
    if settings.kind == "local":
        return local_embedder(model, models_dir)
    keys = _Keys(settings.id, get_key)
    if settings.kind == "openai":
        return OpenAICompatibleEmbedder(
            _require_base_url(settings),
            model,
            keys,
            model_id=model_id,
            **_options(settings, keys, options),
        )
    if settings.kind == "ollama":
        return OllamaEmbedder(
            _require_base_url(settings),
            model,
            keys,
            model_id=model_id,
            **_options(settings, keys, options),
        )
    raise ProviderError(
        MODEL_NOT_AVAILABLE, f"provider {settings.label!r} ({settings.kind}) has no embeddings"
    )


def build_reranker(
    settings: ProviderSettings,
    model: str,
    get_key: KeyLookup,
    *,
    models_dir: Path | None = None,
    **options: Unpack[HttpOptions],
) -> Reranker:
    """The rerank client for `settings.id:model`; `models_dir` as for build_embedder."""
    if settings.kind == "local":
        return local_reranker(model, models_dir)
    if not settings.enabled:
        raise ProviderError(MODEL_NOT_AVAILABLE, f"provider {settings.label!r} is disabled")
    if settings.kind not in RERANK_KINDS:
        raise ProviderError(
            MODEL_NOT_AVAILABLE, f"provider {settings.label!r} ({settings.kind}) does not rerank"
        )
    keys = _Keys(settings.id, get_key)
    return RerankClient(
        _require_base_url(settings),
        model,
        keys,
        model_id=f"{settings.id}:{model}",
        **_options(settings, keys, options),
    )


def register_all(
    registry: ProviderRegistry,
    settings_list: Iterable[ProviderSettings],
    get_key: KeyLookup,
    *,
    models_dir: Path | None = None,
    rerank_options: HttpOptions | None = None,
    **options: Unpack[HttpOptions],
) -> None:
    """Register an embedder and/or reranker factory per provider id, plus the built-in one.

    `options` (timeouts, retry policy) apply to every HTTP client the factories build, with
    `rerank_options` taking precedence for the rerank clients; `models_dir` is where
    installed local models are (the data folder's `models/`).

    A disabled provider is registered too, so its models fail with "disabled" rather than
    "no such provider"; an unknown kind (a catalog from a newer version) is skipped.
    """
    seen: set[str] = set()
    reranking: HttpOptions = {**options, **(rerank_options or {})}
    for settings in [*settings_list, builtin_local_settings()]:
        if settings.id in seen:
            if settings.id != LOCAL_PROVIDER:
                log.warning("provider id %r is configured twice; the first one wins", settings.id)
            continue
        if settings.kind not in PROVIDER_KINDS:
            log.warning("provider %r has unknown kind %r; skipped", settings.id, settings.kind)
            continue
        if settings.id == LOCAL_PROVIDER and settings.kind != "local":
            log.warning("provider id %r is reserved for the built-in model; skipped", settings.id)
            continue
        seen.add(settings.id)
        if settings.kind in EMBEDDING_KINDS:
            registry.register_embedder(
                settings.id, _embedder_factory(settings, get_key, models_dir, options)
            )
        # Installed rerank models make the local provider a reranker too (it stays out of
        # RERANK_KINDS: the settings' rerank picker lists providers that rerank by API).
        if settings.kind in RERANK_KINDS or settings.kind == "local":
            registry.register_reranker(
                settings.id, _reranker_factory(settings, get_key, models_dir, reranking)
            )


def _embedder_factory(
    settings: ProviderSettings, get_key: KeyLookup, models_dir: Path | None, options: HttpOptions
) -> Callable[[str], Embedder]:
    def factory(model: str) -> Embedder:
        return build_embedder(settings, model, get_key, models_dir=models_dir, **options)

    return factory


def _reranker_factory(
    settings: ProviderSettings, get_key: KeyLookup, models_dir: Path | None, options: HttpOptions
) -> Callable[[str], Reranker]:
    def factory(model: str) -> Reranker:
        return build_reranker(settings, model, get_key, models_dir=models_dir, **options)

    return factory


def probe_dimensions(embedder: Embedder, text: str = PROBE_TEXT) -> int:
    """Embed one text to learn the model's vector size (stored on the base at creation)."""
    matrix = np.asarray(embedder.embed([text]))
    if matrix.ndim != 2 or matrix.shape[0] != 1 or matrix.shape[1] < 1:
        raise ProviderError(
            EMBEDDING_FAILED,
            f"{embedder.model_id} answered a probe with shape {matrix.shape}, expected (1, d)",
        )
    if not np.isfinite(matrix).all():
        raise ProviderError(EMBEDDING_FAILED, f"{embedder.model_id} answered NaN or infinity")
    return int(matrix.shape[1])


def list_models(
    settings: ProviderSettings,
    get_key: KeyLookup,
    *,
    models_dir: Path | None = None,
    **options: Unpack[HttpOptions],
) -> list[str]:
    """The model names the provider offers, for the settings page's model picker; the local
    provider's are the built-in model and the usable models installed in `models_dir`."""
    if settings.kind == "local":
        return [LOCAL_MODEL_NAME, *installed_model_ids(models_dir)]
    keys = _Keys(settings.id, get_key)
    merged = _options(settings, keys, options)
    url = _require_base_url(settings)
    client: OpenAICompatibleEmbedder | OllamaEmbedder
    if settings.kind == "ollama":
        client = OllamaEmbedder(url, "-", keys, **merged)
    elif settings.kind in ("openai", "rerank"):
        client = OpenAICompatibleEmbedder(url, "-", keys, **merged)
    else:
        raise ProviderError(INVALID_ARGUMENT, f"unknown provider kind {settings.kind!r}")
    with client:
        return client.list_models()


def installed_model_ids(models_dir: Path | None) -> list[str]:
    """The ids of the models installed in `models_dir` that can be used, in folder order."""
    if models_dir is None:
        return []
    return [
        folder.id
        for folder in install.installed(models_dir)
        if folder.manifest is not None and not folder.problem
    ]


def check_connection(
    settings: ProviderSettings,
    model: str,
    get_key: KeyLookup,
    *,
    models_dir: Path | None = None,
    **options: Unpack[HttpOptions],
) -> str:
    """One real call with `model`; a short message for the settings page, or ProviderError.
    `models_dir`: where the local provider's installed models are."""
    client: ConnectionTester
    if _reranks(settings, model, models_dir):
        client = cast(
            ConnectionTester,
            build_reranker(settings, model, get_key, models_dir=models_dir, **options),
        )
    else:
        client = cast(
            ConnectionTester,
            build_embedder(settings, model, get_key, models_dir=models_dir, **options),
        )
    try:
        return client.test_connection()
    finally:
        close = getattr(client, "close", None)
        if callable(close):
            close()


def _reranks(settings: ProviderSettings, model: str, models_dir: Path | None) -> bool:
    """Whether a connection test of `model` is a rerank call: a provider that only reranks,
    or an installed local model whose manifest says it reranks."""
    if settings.kind != "local":
        return settings.kind not in EMBEDDING_KINDS
    if models_dir is None or model == LOCAL_MODEL_NAME:
        return False
    try:
        folder = installed_folder(models_dir, model)
        return load_manifest(folder).kind is ModelKind.RERANK
    except ProviderError:
        return False  # the embedder then says what is wrong with the folder


def build_chat(
    settings: ProviderSettings,
    model: str,
    get_key: KeyLookup,
    **options: Unpack[ChatOptions],
) -> ChatClient:
    """The streaming chat client for `settings.id:model` (OpenAI-compatible or Ollama)."""
    if not settings.enabled:
        raise ProviderError(MODEL_NOT_AVAILABLE, f"provider {settings.label!r} is disabled")
    if settings.kind not in CHAT_KINDS:
        raise ProviderError(
            MODEL_NOT_AVAILABLE, f"provider {settings.label!r} ({settings.kind}) has no chat models"
        )
    keys = _Keys(settings.id, get_key)
    return ChatClient(
        settings.kind,
        _require_base_url(settings),
        model,
        keys,
        name=settings.label,
        auth_hint=lambda: keys.hint,
        **options,
    )


def check_chat(
    settings: ProviderSettings, model: str, get_key: KeyLookup, **options: Unpack[ChatOptions]
) -> str:
    """One short streamed chat call with `model`; a message for the person, or ProviderError."""
    client = build_chat(settings, model, get_key, **options)
    try:
        return client.test_connection()
    finally:
        client.close()
