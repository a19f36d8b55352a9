from __future__ import annotations

import threading
from collections.abc import Callable

import pytest

from app.knowledge.locks import KeyedMutex

# Upper bound for waits that succeed immediately when the code is right; only reached (and
# the test failed) when something deadlocks.
BOUND = 10.0


def _run(target: Callable[[], None]) -> tuple[threading.Thread, list[BaseException]]:
    """Start ``target`` in a daemon thread, collecting its exception for the main thread."""
    errors: list[BaseException] = []

    def wrapper() -> None:
        try:
            target()
        except BaseException as exc:
            errors.append(exc)

    thread = threading.Thread(target=wrapper, daemon=True)
    thread.start()
    return thread, errors


def _join(thread: threading.Thread, errors: list[BaseException]) -> None:
    thread.join(BOUND)
    assert not thread.is_alive(), "thread did not finish: deadlock?"
    if errors:
        raise errors[0]


def test_different_keys_are_held_concurrently() -> None:
    mutex = KeyedMutex()
    # Both threads must be inside their critical sections at once to pass the barrier;
    # if different keys serialised, it would time out and break.
    barrier = threading.Barrier(2, timeout=BOUND)

    def hold(key: str) -> Callable[[], None]:
        def body() -> None:
            with mutex.lock(key):
                assert mutex.held_by_current_thread(key)
                barrier.wait()

        return body

    runs = [_run(hold("base-a")), _run(hold("base-b"))]
    for thread, errors in runs:
        _join(thread, errors)
    assert mutex._entries == {}


def test_same_key_excludes_other_threads() -> None:
    mutex = KeyedMutex()
    with mutex.lock("k"):
        # A bounded attempt from another thread can never succeed while we hold the key.
        def attempt() -> None:
            with mutex.lock("k", timeout=0.05):
                pass

        thread, errors = _run(attempt)
        thread.join(BOUND)
        assert not thread.is_alive()
        assert len(errors) == 1 and isinstance(errors[0], TimeoutError)


def test_same_key_waiter_blocks_until_release() -> None:
    mutex = KeyedMutex()
    about_to_lock = threading.Event()
    entered = threading.Event()
    owner_still_holding: list[bool] = []
    holding = [True]

    def waiter() -> None:
        about_to_lock.set()
        with mutex.lock("k"):
            owner_still_holding.append(holding[0])
            entered.set()

    with mutex.lock("k"):
        thread, errors = _run(waiter)
        assert about_to_lock.wait(BOUND)
        assert not entered.is_set()
        assert mutex.is_held("k")
        holding[0] = False  # the waiter must observe this: it may only run after release
    assert entered.wait(BOUND)
    _join(thread, errors)
    assert owner_still_holding == [False]
    assert mutex._entries == {}


def test_same_key_serialises_many_threads() -> None:
    mutex = KeyedMutex()
    inside = [0]
    max_inside = [0]
    total = [0]
    start = threading.Barrier(8, timeout=BOUND)

    def worker() -> None:
        start.wait()
        for _ in range(200):
            with mutex.lock("shared"):
                inside[0] += 1
                max_inside[0] = max(max_inside[0], inside[0])
                total[0] += 1
                inside[0] -= 1

    runs = [_run(worker) for _ in range(8)]
    for thread, errors in runs:
        _join(thread, errors)
    assert max_inside[0] == 1
    assert total[0] == 8 * 200
    assert mutex._entries == {}


def test_reentry_raises_instead_of_deadlocking() -> None:
    mutex = KeyedMutex()
    with mutex.lock("k"):
        with pytest.raises(RuntimeError, match=r"'k'.*not re-entrant"), mutex.lock("k"):
            pass  # pragma: no cover - never entered
        # The failed attempt must not disturb the outer hold.
        assert mutex.held_by_current_thread("k")
        assert mutex._entries["k"].refs == 1
        # Other keys may still be nested.
        with mutex.lock("other"):
            assert mutex.held_by_current_thread("other")
    assert mutex._entries == {}


def test_timeout_raises_timeout_error_naming_the_key() -> None:
    mutex = KeyedMutex()
    with mutex.lock("base-42"):

        def attempt() -> None:
            with mutex.lock("base-42", timeout=0.01):
                pass

        thread, errors = _run(attempt)
        thread.join(BOUND)
        assert len(errors) == 1
        assert isinstance(errors[0], TimeoutError)
        assert "base-42" in str(errors[0])
        # The timed-out waiter's reference is gone; only the holder remains.
        assert mutex._entries["base-42"].refs == 1
    assert mutex._entries == {}


def test_zero_timeout_acquires_free_key() -> None:
    mutex = KeyedMutex()
    with mutex.lock("k", timeout=0):
        assert mutex.held_by_current_thread("k")
    assert mutex._entries == {}


@pytest.mark.parametrize("timeout", [-1.0, float("nan")])
def test_invalid_timeout_is_refused(timeout: float) -> None:
    with pytest.raises(ValueError, match="timeout"):
        KeyedMutex().lock("k", timeout=timeout)


def test_huge_timeout_means_wait() -> None:
    mutex = KeyedMutex()
    with mutex.lock("k", timeout=float("inf")):
        assert mutex.is_held("k")


def test_is_held_and_held_by_current_thread() -> None:
    mutex = KeyedMutex()
    assert not mutex.is_held("k")
    assert not mutex.held_by_current_thread("k")
    observed: list[tuple[bool, bool]] = []
    with mutex.lock("k"):
        assert mutex.is_held("k")
        assert mutex.held_by_current_thread("k")
        assert not mutex.is_held("other")

        def look() -> None:
            observed.append((mutex.is_held("k"), mutex.held_by_current_thread("k")))

        _join(*_run(look))
    assert observed == [(True, False)]
    assert not mutex.is_held("k")
    assert not mutex.held_by_current_thread("k")


def test_exception_in_body_releases_and_cleans_up() -> None:
    mutex = KeyedMutex()
    with pytest.raises(KeyError), mutex.lock("k"):
        raise KeyError("boom")
    assert not mutex.is_held("k")
    assert mutex._entries == {}
    with mutex.lock("k"):  # still usable afterwards
        pass


def test_table_is_empty_after_many_keys() -> None:
    mutex = KeyedMutex()
    barrier = threading.Barrier(4, timeout=BOUND)

    def worker(offset: int) -> Callable[[], None]:
        def body() -> None:
            barrier.wait()
            for i in range(500):
                with mutex.lock(f"base-{(i + offset) % 37}"):
                    pass

        return body

    runs = [_run(worker(n)) for n in range(4)]
    for thread, errors in runs:
        _join(thread, errors)
    assert mutex._entries == {}


def test_context_manager_is_single_use() -> None:
    mutex = KeyedMutex()
    guard = mutex.lock("k")
    with guard:
        pass
    with pytest.raises(RuntimeError, match="entered twice"), guard:
        pass  # pragma: no cover - never entered
    assert mutex._entries == {}
