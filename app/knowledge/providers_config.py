"""Provider settings: stored in the catalog, keys in the keychain, clients in a registry.

The engine resolves `PROVIDER:MODEL` ids through a ProviderRegistry rebuilt from these
settings whenever they change.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from pathlib import Path
from typing import Unpack

from app.knowledge.catalog import Catalog
from app.knowledge.provider_errors import provider_failure
from app.knowledge.types import ErrorCode, TroveError
from app.providers import factory, secrets
from app.providers.chat import CHAT_KINDS, ChatClient, ChatOptions

# Re-exported: what each provider kind serves, for callers that may not import app.providers.
from app.providers.factory import EMBEDDING_KINDS as EMBEDDING_KINDS
from app.providers.factory import RERANK_KINDS as RERANK_KINDS
from app.providers.factory import ProviderSettings
from app.providers.http import (
    PROBE_TIMEOUTS,
    SEARCH_EMBED_TIMEOUTS,
    SEARCH_RERANK_TIMEOUTS,
    SEARCH_RETRY,
)
from app.providers.interfaces import NO_KEYCHAIN, ProviderError
from app.providers.local_model import LOCAL_PROVIDER
from app.providers.registry import ProviderRegistry

RESERVED_IDS = frozenset({LOCAL_PROVIDER})


def load_settings(catalog: Catalog) -> list[ProviderSettings]:
    settings: list[ProviderSettings] = []
    for row in catalog.list_provider_rows():
        try:
            settings.append(ProviderSettings(**row))
        except ProviderError:
            continue  # a malformed row (edited by hand) must not stop the app
    return settings


def build_registry(
    catalog: Catalog, *, models_dir: Path | None = None, for_search: bool = False
) -> ProviderRegistry:
    """The configured providers' clients, and the models installed in `models_dir` as
    "local:<id>"; `for_search`: with search's short deadlines and its in-call retry
    (indexing's clients make one attempt; the job runner retries)."""
    registry = ProviderRegistry()
    if not for_search:
        factory.register_all(
            registry, load_settings(catalog), secrets.get_key, models_dir=models_dir
        )
        return registry
    factory.register_all(
        registry,
        load_settings(catalog),
        secrets.get_key,
        models_dir=models_dir,
        rerank_options={"timeouts": SEARCH_RERANK_TIMEOUTS},
        timeouts=SEARCH_EMBED_TIMEOUTS,
        retry=SEARCH_RETRY,
    )
    return registry


def save_provider(
    catalog: Catalog,
    provider_id: str,
    kind: str,
    *,
    base_url: str = "",
    display_name: str = "",
    models: Sequence[str] = (),
    enabled: bool = True,
    key: str | None = None,
    all_or_nothing: bool = False,
) -> ProviderSettings:
    """Validate and store a provider; the key goes to the keychain (never to the catalog).

    When no keychain exists, the settings are still saved and the error (PROVIDER_AUTH_FAILED)
    names the environment variable that can hold the key instead: the window keeps what the
    person typed. With `all_or_nothing` (the CLI, where a half-done command is confusing) the
    key is stored first and a refusal saves nothing (KEYCHAIN_UNAVAILABLE).
    """
    if provider_id in RESERVED_IDS:
        raise TroveError(
            ErrorCode.INVALID_ARGUMENT, f"{provider_id!r} is the built-in provider's id"
        )
    if kind not in factory.PROVIDER_KINDS or kind == "local":
        kinds = ", ".join(k for k in factory.PROVIDER_KINDS if k != "local")
        raise TroveError(ErrorCode.INVALID_ARGUMENT, f"provider kind must be one of {kinds}")
    if not base_url.startswith(("http://", "https://")):
        raise TroveError(
            ErrorCode.INVALID_ARGUMENT, "the base URL must start with http:// or https://"
        )
    try:
        settings = ProviderSettings(
            provider_id, kind, display_name, base_url.rstrip("/"), enabled, list(models)
        )
    except ProviderError as exc:
        raise provider_failure(exc, ErrorCode.INVALID_ARGUMENT) from exc
    if key and all_or_nothing:
        _store_key(settings.id, key, ErrorCode.KEYCHAIN_UNAVAILABLE)
    catalog.upsert_provider_row(
        settings.id,
        settings.kind,
        settings.display_name,
        settings.base_url,
        settings.enabled,
        settings.models,
    )
    if key and not all_or_nothing:
        _store_key(settings.id, key, ErrorCode.PROVIDER_AUTH_FAILED)
    return settings


def _store_key(provider_id: str, key: str, unavailable: ErrorCode) -> None:
    try:
        secrets.set_key(provider_id, key)
    except secrets.SecretStoreUnavailable as exc:
        raise TroveError(unavailable, exc.message, {"reason": NO_KEYCHAIN, **exc.params}) from exc
    except ProviderError as exc:
        raise provider_failure(exc, ErrorCode.PROVIDER_AUTH_FAILED) from exc


def remove_provider(catalog: Catalog, provider_id: str) -> None:
    if not catalog.delete_provider_row(provider_id):
        raise TroveError(ErrorCode.INVALID_ARGUMENT, f"no provider named {provider_id!r}")
    with contextlib.suppress(ProviderError):  # no keychain: no stored key to remove
        secrets.delete_key(provider_id)


def find_settings(catalog: Catalog, provider_id: str) -> ProviderSettings:
    if provider_id == LOCAL_PROVIDER:
        return factory.builtin_local_settings()
    for settings in load_settings(catalog):
        if settings.id == provider_id:
            return settings
    raise TroveError(ErrorCode.INVALID_ARGUMENT, f"no provider named {provider_id!r}")


def provider_models(
    catalog: Catalog, provider_id: str, *, models_dir: Path | None = None
) -> list[str]:
    """The models a provider offers; the local provider's include those installed in
    `models_dir`."""
    settings = find_settings(catalog, provider_id)
    try:
        return factory.list_models(
            settings, secrets.get_key, models_dir=models_dir, timeouts=PROBE_TIMEOUTS
        )
    except ProviderError as exc:
        raise provider_failure(exc, ErrorCode.FETCH_FAILED) from exc


def check_provider(
    catalog: Catalog,
    provider_id: str,
    model: str | None = None,
    *,
    models_dir: Path | None = None,
) -> str:
    """One real call; returns a short message for the user or raises TroveError.
    `models_dir`: where the local provider's installed models are."""
    settings = find_settings(catalog, provider_id)
    chosen = model or (settings.models[0] if settings.models else None)
    if chosen is None:
        names = provider_models(catalog, provider_id, models_dir=models_dir)
        if not names:
            raise TroveError(ErrorCode.MODEL_NOT_AVAILABLE, f"{provider_id} offers no models")
        chosen = names[0]
    try:
        return factory.check_connection(
            settings, chosen, secrets.get_key, models_dir=models_dir, timeouts=PROBE_TIMEOUTS
        )
    except ProviderError as exc:
        raise provider_failure(exc, ErrorCode.FETCH_FAILED) from exc


# -- chat models (asking a base) ---------------------------------------------------------

CHAT_MODEL_SETTING = "ask.chat_model"


def chat_settings(catalog: Catalog, model_id: str) -> tuple[ProviderSettings, str]:
    """The provider of a chat model id `PROVIDER:MODEL`, and the model's name."""
    provider_id, sep, model = model_id.partition(":")
    if not sep or not provider_id or not model:
        raise TroveError(
            ErrorCode.INVALID_ARGUMENT, f"chat model ids look like PROVIDER:MODEL, got {model_id!r}"
        )
    settings = find_settings(catalog, provider_id)
    if settings.kind not in CHAT_KINDS:
        raise TroveError(
            ErrorCode.MODEL_NOT_AVAILABLE,
            f"provider {settings.label!r} ({settings.kind}) has no chat models; "
            "chat needs an openai or ollama provider",
        )
    if not settings.enabled:
        raise TroveError(ErrorCode.MODEL_NOT_AVAILABLE, f"provider {settings.label!r} is disabled")
    return settings, model


def chat_client(catalog: Catalog, model_id: str, **options: Unpack[ChatOptions]) -> ChatClient:
    settings, model = chat_settings(catalog, model_id)
    try:
        return factory.build_chat(settings, model, secrets.get_key, **options)
    except ProviderError as exc:
        raise provider_failure(exc, ErrorCode.CHAT_FAILED) from exc


def chat_models(catalog: Catalog) -> list[str]:
    """The chat model ids the configured providers name (their model lists)."""
    return [
        f"{s.id}:{model}"
        for s in load_settings(catalog)
        if s.kind in CHAT_KINDS and s.enabled
        for model in s.models
    ]


def check_chat(catalog: Catalog, model_id: str) -> str:
    """One short streamed chat call (`trove provider test NAME --chat MODEL`)."""
    settings, model = chat_settings(catalog, model_id)
    try:
        return factory.check_chat(settings, model, secrets.get_key)
    except ProviderError as exc:
        raise provider_failure(exc, ErrorCode.CHAT_FAILED) from exc
