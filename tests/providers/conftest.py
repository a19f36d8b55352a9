from __future__ import annotations

from collections.abc import Callable, Iterator

import keyring
import keyring.backend
import keyring.errors
import pytest

from app.providers.http import RetryPolicy, Timeouts
from tests.providers.fake_api import FakeApi

KEY = "sk-test-7f3a9c1e5b2d4a6f8e0c"


class Sleeps:
    """Stands in for time.sleep: records each requested wait and returns at once."""

    def __init__(self) -> None:
        self.calls: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.calls.append(seconds)


@pytest.fixture
def sleeps() -> Sleeps:
    return Sleeps()


@pytest.fixture
def api() -> Iterator[FakeApi]:
    with FakeApi(api_key=KEY) as server:
        yield server


FAST_TIMEOUTS = Timeouts(connect=2.0, read=0.3)
RETRY4 = RetryPolicy(max_attempts=4)


class MemoryKeyring(keyring.backend.KeyringBackend):
    """A keychain that lives in a dict for the length of one test."""

    priority = 1

    def __init__(self) -> None:
        super().__init__()  # type: ignore[no-untyped-call]  # keyring is untyped here
        self.store: dict[tuple[str, str], str] = {}

    def get_password(self, service: str, username: str) -> str | None:
        return self.store.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self.store[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        if (service, username) not in self.store:
            raise keyring.errors.PasswordDeleteError("not found")
        del self.store[(service, username)]


UseKeyring = Callable[[keyring.backend.KeyringBackend], None]


@pytest.fixture
def use_keyring() -> Iterator[UseKeyring]:
    """Installs a backend for one test and puts the previous one back afterwards, so no test
    ever reaches the real user keychain through keyring's own backend choice."""
    previous = keyring.get_keyring()
    yield keyring.set_keyring
    keyring.set_keyring(previous)
