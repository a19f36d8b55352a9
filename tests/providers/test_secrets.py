"""API keys in keyring, tested against in-memory backends, never the real keychain."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import keyring
import keyring.errors
import pytest
from keyring.backends import fail, null

from app.providers import secrets
from app.providers.secrets import (
    SERVICE_NAME,
    SecretStoreUnavailable,
    delete_key,
    env_var_name,
    get_key,
    keychain_available,
    set_key,
)
from tests.providers.conftest import MemoryKeyring, UseKeyring


class LockedKeyring(MemoryKeyring):
    """A keychain that refuses every operation, echoing what it was given."""

    def get_password(self, service: str, username: str) -> str | None:
        raise keyring.errors.KeyringLocked("the keychain is locked")

    def set_password(self, service: str, username: str, password: str) -> None:
        raise keyring.errors.PasswordSetError(f"cannot store {password}")


@pytest.fixture
def memory(use_keyring: UseKeyring, monkeypatch: pytest.MonkeyPatch) -> MemoryKeyring:
    for name in ("TROVE_KEY_OPENAI", "TROVE_KEY_MY_VENDOR_2"):
        monkeypatch.delenv(name, raising=False)
    backend = MemoryKeyring()
    use_keyring(backend)
    return backend


def test_set_get_delete(memory: MemoryKeyring) -> None:
    assert get_key("openai") is None
    set_key("openai", "  sk-abc  ")
    assert memory.store == {(SERVICE_NAME, "openai"): "sk-abc"}
    assert get_key("openai") == "sk-abc"
    set_key("openai", "sk-new")
    assert get_key("openai") == "sk-new"
    delete_key("openai")
    assert get_key("openai") is None
    delete_key("openai")  # absent: not an error


def test_empty_key_deletes(memory: MemoryKeyring) -> None:
    set_key("openai", "sk-abc")
    set_key("openai", "   ")
    assert memory.store == {}


def test_env_var_name() -> None:
    assert env_var_name("openai") == "TROVE_KEY_OPENAI"
    assert env_var_name("my-vendor.2") == "TROVE_KEY_MY_VENDOR_2"
    assert env_var_name("硅基") == "TROVE_KEY___"


def test_env_var_wins_over_keychain(memory: MemoryKeyring, monkeypatch: pytest.MonkeyPatch) -> None:
    set_key("my-vendor.2", "from-keychain")
    monkeypatch.setenv("TROVE_KEY_MY_VENDOR_2", "from-env")
    assert get_key("my-vendor.2") == "from-env"


@pytest.mark.parametrize("backend", [fail.Keyring, null.Keyring])
def test_no_backend_is_a_clear_error(
    use_keyring: UseKeyring, monkeypatch: pytest.MonkeyPatch, backend: type
) -> None:
    monkeypatch.delenv("TROVE_KEY_OPENAI", raising=False)
    use_keyring(backend())
    assert not keychain_available()
    calls: list[Callable[[], object]] = [
        lambda: set_key("openai", "sk-1"),
        lambda: get_key("openai"),
        lambda: delete_key("openai"),
    ]
    for call in calls:
        with pytest.raises(SecretStoreUnavailable) as info:
            call()
        assert "No system keychain" in info.value.message
        assert "TROVE_KEY_OPENAI" in info.value.message
        assert info.value.env_var == "TROVE_KEY_OPENAI"
        assert "sk-1" not in info.value.message


def test_no_backend_falls_back_to_env_var(
    use_keyring: UseKeyring, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_keyring(fail.Keyring())  # type: ignore[no-untyped-call]
    monkeypatch.setenv("TROVE_KEY_OPENAI", "sk-env")
    assert get_key("openai") == "sk-env"


def test_locked_keychain_errors_do_not_echo_the_key(
    use_keyring: UseKeyring, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TROVE_KEY_OPENAI", raising=False)
    use_keyring(LockedKeyring())
    with pytest.raises(SecretStoreUnavailable) as info:
        set_key("openai", "sk-secret-value")
    assert "sk-secret-value" not in info.value.message
    assert info.value.__context__ is None
    with pytest.raises(SecretStoreUnavailable) as read:
        get_key("openai")
    assert "locked" in read.value.message


def test_blank_provider_id_is_invalid(memory: MemoryKeyring) -> None:
    with pytest.raises(Exception) as info:
        set_key(" ", "k")
    assert getattr(info.value, "code", None) == "INVALID_ARGUMENT"


def test_secrets_module_writes_no_files(memory: MemoryKeyring, tmp_path: Path) -> None:
    # The module's only persistence is keyring: nothing in it opens files.
    source = Path(secrets.__file__).read_text(encoding="utf-8")
    assert "open(" not in source and "write_text" not in source
    set_key("openai", "sk-file-check")
    assert list(tmp_path.iterdir()) == []
