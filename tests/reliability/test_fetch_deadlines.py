"""Every URL fetch ends within one wall-clock deadline, and Ctrl-C stops a fetch cleanly.

The servers are raw sockets on 127.0.0.1 that misbehave on purpose: headers or body sent one
byte at a time with gaps shorter than the read timeout (a slow loris, which no per-read
timeout can catch), a listener whose accept queue is full so connects are never answered,
and one that accepts and then says nothing. Each runs for a bounded time and stops by itself.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from app.knowledge.pipeline.sources.web import (
    FetchCancelled,
    FetchError,
    FetchLimits,
    fetch_url,
    make_client,
)
from app.knowledge.service import KnowledgeService
from app.knowledge.types import ErrorCode
from tests.trickle import SLOW_HEADERS, TrickleServer, serving, unanswered_connects

DEADLINE = 1.5
# Bigger than any gap between bytes, so only the wall-clock deadline can end a slow loris.
LIMITS = FetchLimits(connect_timeout=5.0, read_timeout=3.0, total_timeout=DEADLINE)
# What a fetch may overrun its deadline by: a read waits in 0.1 s slices, plus scheduling
# on a busy machine.
MARGIN = 0.6
PROXY_VARS = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")

BODY_HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 10000\r\n\r\n"


@pytest.fixture(autouse=True)
def no_proxies(monkeypatch: pytest.MonkeyPatch) -> None:
    """A proxy from the environment would take these fetches elsewhere than 127.0.0.1."""
    for var in PROXY_VARS:
        monkeypatch.delenv(var, raising=False)


@pytest.fixture
def header_loris() -> Iterator[TrickleServer]:
    with serving(b"", SLOW_HEADERS, gap=0.05) as server:
        yield server


@pytest.fixture
def body_loris() -> Iterator[TrickleServer]:
    # Long gaps on purpose: a deadline checked only per body chunk overruns by one gap.
    with serving(BODY_HEAD, b"." * 10000, gap=1.2) as server:
        yield server


@pytest.fixture
def silent() -> Iterator[TrickleServer]:
    with serving(b"", b"", gap=0.0) as server:
        yield server


@pytest.fixture
def full_backlog() -> Iterator[str]:
    with unanswered_connects() as url:
        yield url


def timed_fetch_error(url: str, client: httpx.Client | None = None) -> tuple[FetchError, float]:
    started = time.monotonic()
    with pytest.raises(FetchError) as info:
        fetch_url(url, client=client, limits=LIMITS)
    return info.value, time.monotonic() - started


def assert_total_timeout(error: FetchError, elapsed: float) -> None:
    assert DEADLINE <= elapsed < DEADLINE + MARGIN, f"the fetch took {elapsed:.2f} s"
    assert error.code is ErrorCode.FETCH_FAILED
    assert error.retryable
    assert f"took longer than {DEADLINE:g} s" in error.message


# ---------------------------------------------------------------- deadlines


@pytest.mark.parametrize("pooled", [False, True], ids=["own-client", "make_client"])
def test_header_slow_loris_ends_at_the_deadline(header_loris: TrickleServer, pooled: bool) -> None:
    if pooled:
        with make_client(LIMITS) as client:
            error, elapsed = timed_fetch_error(header_loris.url(), client=client)
    else:
        error, elapsed = timed_fetch_error(header_loris.url())
    assert header_loris.requested.is_set()
    assert_total_timeout(error, elapsed)


def test_body_slow_loris_ends_at_the_deadline(body_loris: TrickleServer) -> None:
    error, elapsed = timed_fetch_error(body_loris.url())
    assert_total_timeout(error, elapsed)


def test_stalled_connect_ends_at_the_deadline(full_backlog: str) -> None:
    error, elapsed = timed_fetch_error(full_backlog)
    assert_total_timeout(error, elapsed)


def test_silent_server_ends_at_the_deadline(silent: TrickleServer) -> None:
    error, elapsed = timed_fetch_error(silent.url())
    assert silent.requested.is_set()
    assert_total_timeout(error, elapsed)


def test_a_read_timeout_shorter_than_the_deadline_still_applies(silent: TrickleServer) -> None:
    # Reads wait in short slices for the cancel check; the slices must add up to the
    # read timeout rather than restart it.
    started = time.monotonic()
    with pytest.raises(FetchError) as info:
        fetch_url(silent.url(), limits=FetchLimits(read_timeout=0.5, total_timeout=5.0))
    elapsed = time.monotonic() - started
    assert 0.5 <= elapsed < 0.5 + MARGIN, f"the fetch took {elapsed:.2f} s"
    assert info.value.retryable
    assert "sent no data for 0.5 s (read timeout)" in info.value.message


def test_a_proxy_from_the_environment_obeys_the_deadline(
    header_loris: TrickleServer, silent: TrickleServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The slow loris plays the proxy: the request for the other server goes to it.
    monkeypatch.setenv("HTTP_PROXY", header_loris.url())
    error, elapsed = timed_fetch_error(silent.url("/via-proxy"))
    assert header_loris.requested.is_set() and not silent.requested.is_set()
    assert_total_timeout(error, elapsed)


def test_a_cancelled_fetch_stops_within_a_poll(header_loris: TrickleServer) -> None:
    cancel_at = time.monotonic() + 0.5
    cancelled: Callable[[], bool] = lambda: time.monotonic() >= cancel_at  # noqa: E731
    with pytest.raises(FetchCancelled):
        fetch_url(header_loris.url(), limits=LIMITS, cancelled=cancelled)
    late = time.monotonic() - cancel_at
    assert 0 <= late < 0.4, f"the fetch went on {late:.2f} s after it was cancelled"


# ---------------------------------------------------------------- Ctrl-C in the CLI


def cli_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "TROVE_HOME" and k not in PROXY_VARS}
    env["QT_QPA_PLATFORM"] = "offscreen"
    return env


def trove(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "app", "--home", str(home), *args]
    return subprocess.run(
        cmd, capture_output=True, text=True, env=cli_env(), timeout=60, check=False
    )


def items(home: Path, base: str) -> list[dict[str, object]]:
    listed = trove(home, "item", "list", base, "--json")
    assert listed.returncode == 0, listed.stderr
    result: list[dict[str, object]] = json.loads(listed.stdout)
    return result


def wait_for(event: threading.Event, proc: subprocess.Popen[str], seconds: float) -> bool:
    """Whether `event` was set within `seconds`, giving up early if `proc` ends."""
    end = time.monotonic() + seconds
    while time.monotonic() < end and proc.poll() is None:
        if event.wait(0.05):
            return True
    return event.is_set()


def test_ctrl_c_during_a_slow_fetch_hands_the_item_back_to_the_queue(
    tmp_path: Path, header_loris: TrickleServer
) -> None:
    """Ctrl-C is a normal exit: it stops at once and fails nothing; the item waits in the
    queue for the next Trove process (the window, `trove resume`)."""
    home = tmp_path / "home"
    created = trove(home, "base", "create", "Web")
    assert created.returncode == 0, created.stderr
    cmd = [sys.executable, "-m", "app", "--home", str(home), "add", "Web", header_loris.url()]
    proc = subprocess.Popen(
        [*cmd, "--wait"],
        env=cli_env(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert wait_for(header_loris.requested, proc, 30), "the add never fetched the page"
        assert [i["status"] for i in items(home, "Web")] == ["processing"]
        proc.send_signal(signal.SIGINT)
        interrupted = time.monotonic()
        _, stderr = proc.communicate(timeout=10)
        took = time.monotonic() - interrupted
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert took < 5, f"the CLI needed {took:.1f} s to stop after Ctrl-C"
    assert proc.returncode == 130, stderr
    assert "trove resume Web" in stderr, stderr
    [item] = items(home, "Web")
    assert item["status"] == "processing" and item["errorCode"] is None, item
    svc = KnowledgeService(home)
    try:
        [job] = svc.catalog.list_jobs()
        assert (job.kind, job.status, job.owner) == ("index-documents", "queued", None)
        assert svc.get_item(item["id"]).phase is None  # shown as waiting, not "Reading"
    finally:
        svc.close()
