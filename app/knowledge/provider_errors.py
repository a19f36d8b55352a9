"""Turn a provider failure into the engine's error with a stable code."""

from __future__ import annotations

from app.knowledge.types import ErrorCode, TroveError
from app.providers.interfaces import ProviderError


def provider_failure(exc: ProviderError, fallback: ErrorCode) -> TroveError:
    try:
        code = ErrorCode(exc.code)
    except ValueError:
        code = fallback
    return TroveError(code, exc.message)
