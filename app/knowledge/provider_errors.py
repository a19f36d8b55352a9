"""Turn a provider failure into the engine's error with a stable code."""

from __future__ import annotations

from app.knowledge.types import ErrorCode, ErrorParams, TroveError
from app.providers.interfaces import ProviderError


def provider_params(exc: ProviderError) -> ErrorParams:
    """The failure's reason and names, as TroveError.params hold them."""
    return {"reason": exc.reason, **exc.params} if exc.reason else dict(exc.params)


def provider_failure(exc: ProviderError, fallback: ErrorCode) -> TroveError:
    try:
        code = ErrorCode(exc.code)
    except ValueError:
        code = fallback
    return TroveError(code, exc.message, provider_params(exc))
