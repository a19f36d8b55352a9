"""Provider API keys, kept in the OS keychain (keyring) and nowhere else.

Service name "Trove", user name = the provider id. Where the machine has no keychain backend
(keyring falls back to its fail or null backend, e.g. a headless Linux box without a Secret
Service), operations raise `SecretStoreUnavailable`, whose message names the environment
variable to use instead: `TROVE_KEY_<PROVIDER ID, upper-cased, other characters as _>`.
`get_key` reads that variable before the keychain, so it also overrides a stored key.
"""

from __future__ import annotations

import logging
import os
import re

import keyring
import keyring.backend
import keyring.errors
from keyring.backends import chainer, fail, null

from app.providers.http import scrub
from app.providers.interfaces import (
    INVALID_ARGUMENT,
    NO_KEYCHAIN,
    PROVIDER_AUTH_FAILED,
    ProviderError,
)

log = logging.getLogger(__name__)

SERVICE_NAME = "Trove"
ENV_PREFIX = "TROVE_KEY_"


class SecretStoreUnavailable(ProviderError):
    """No usable keychain; the message says which environment variable to set instead."""

    def __init__(self, provider_id: str, reason: str) -> None:
        self.env_var = env_var_name(provider_id)
        super().__init__(
            PROVIDER_AUTH_FAILED,
            f"No system keychain is available to store API keys ({reason}). "
            f"Set the environment variable {self.env_var} to the key instead.",
            reason=NO_KEYCHAIN,
            params={"env_var": self.env_var},
        )


def env_var_name(provider_id: str) -> str:
    return ENV_PREFIX + re.sub(r"[^A-Z0-9]", "_", provider_id.upper())


def _check_id(provider_id: str) -> None:
    if not provider_id or not provider_id.strip():
        raise ProviderError(INVALID_ARGUMENT, "a provider id is required to store its key")


def _backend_unusable(backend: keyring.backend.KeyringBackend) -> str | None:
    """Why the active backend cannot keep secrets, or None when it can."""
    if isinstance(backend, fail.Keyring):
        return "keyring found no backend"
    if isinstance(backend, null.Keyring):
        return "keyring is set to its null backend"
    if isinstance(backend, chainer.ChainerBackend) and not backend.backends:
        return "keyring found no backend"
    return None


def _backend(provider_id: str) -> keyring.backend.KeyringBackend:
    backend = keyring.get_keyring()
    reason = _backend_unusable(backend)
    if reason is not None:
        raise SecretStoreUnavailable(provider_id, reason)
    return backend


def keychain_available() -> bool:
    return _backend_unusable(keyring.get_keyring()) is None


def set_key(provider_id: str, key: str) -> None:
    """Store (or replace) the key; an empty key deletes it."""
    _check_id(provider_id)
    key = key.strip()
    if not key:
        delete_key(provider_id)
        return
    backend = _backend(provider_id)
    failure: str | None = None
    try:
        backend.set_password(SERVICE_NAME, provider_id, key)
    except keyring.errors.KeyringError as exc:
        failure = scrub(f"{type(exc).__name__}: {exc}", [key])
    # Raised outside the except block so the backend's exception, which may quote the key,
    # is not chained onto ours.
    if failure is not None:
        raise SecretStoreUnavailable(provider_id, f"the keychain refused to store it: {failure}")


def get_key(provider_id: str) -> str | None:
    """The environment override if set, else the stored key, else None."""
    _check_id(provider_id)
    from_env = os.environ.get(env_var_name(provider_id), "").strip()
    if from_env:
        return from_env
    backend = _backend(provider_id)
    failure: str | None = None
    try:
        return backend.get_password(SERVICE_NAME, provider_id) or None
    except keyring.errors.KeyringError as exc:
        failure = f"{type(exc).__name__}: {exc}"
    raise SecretStoreUnavailable(provider_id, f"the keychain refused to read it: {failure}")


def has_stored_key(provider_id: str) -> bool:
    """Whether the keychain holds a key for the provider (an environment variable does not
    count: nothing is stored then). False without a usable keychain."""
    _check_id(provider_id)
    backend = keyring.get_keyring()
    if _backend_unusable(backend) is not None:
        return False
    try:
        return bool(backend.get_password(SERVICE_NAME, provider_id))
    except keyring.errors.KeyringError:
        log.warning("the keychain refused to say whether %r has a key", provider_id)
        return False


def delete_key(provider_id: str) -> None:
    """Forget the stored key; deleting a key that is not there is not an error."""
    _check_id(provider_id)
    backend = _backend(provider_id)
    failure: str | None = None
    try:
        backend.delete_password(SERVICE_NAME, provider_id)
    except keyring.errors.PasswordDeleteError:
        pass
    except keyring.errors.KeyringError as exc:
        failure = f"{type(exc).__name__}: {exc}"
    if failure is not None:
        raise SecretStoreUnavailable(provider_id, f"the keychain refused to delete it: {failure}")
