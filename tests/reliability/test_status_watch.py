"""`trove status BASE --watch` while another process indexes, and after that process dies.

Real processes: `trove add --wait` indexes a folder whose embeddings the fake provider
holds back, so the documents, searchable by their words at once, wait for their vectors for
as long as the test wants; `status --watch` runs beside it (the vector stage is work in
progress too). The add is then SIGKILLed (and left unreaped for a while: a zombie runs
nothing either). The watch must notice within seconds, run the recovery the executor
runs for a dead owner (the vector stage is queued again, no document fails), say in one
line what happened and how to finish, and exit 1.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO

import pytest

from app.knowledge.jobs import recovery
from app.knowledge.jobs.reader_pool import InlineExtraction
from app.knowledge.service import KnowledgeService
from app.knowledge.types import ItemStatus, ItemType
from tests.httpserver import Request
from tests.providers.fake_api import EMBEDDINGS, FakeApi, Fault

ROOT = Path(__file__).resolve().parents[2]
PROVIDER = "watchapi"
KEY = "sk-watch-test"
KEY_ENV = "TROVE_KEY_WATCHAPI"
BASE = "watched"
FILES = 20
# From the kill to the watch's exit; it polls every 0.5 s.
WATCH_EXIT_BOUND = 20.0


def _wait_until(condition: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(0.05)  # polling other processes' progress


class Held:
    """Holds every embedding request until released: the indexing process is alive and
    busy for as long as the test needs (a bounded wait, never past the test)."""

    def __init__(self) -> None:
        self.release = threading.Event()

    def __call__(self, path: str, request: Request) -> Fault | None:
        if path == EMBEDDINGS:
            self.release.wait(60)
        return None


@pytest.fixture
def held() -> Held:
    return Held()


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch, held: Held) -> Iterator[FakeApi]:
    monkeypatch.setenv(KEY_ENV, KEY)
    with FakeApi(api_key=KEY, dims=8) as server:
        try:
            yield server
        finally:
            held.release.set()  # before the server closes: a held request ends first


@pytest.fixture
def home(tmp_path: Path, api: FakeApi, held: Held) -> Path:
    home = tmp_path / "home"
    svc = KnowledgeService(home, extraction=InlineExtraction())
    try:
        svc.save_provider(PROVIDER, "openai", base_url=api.base_url, models=["embed"])
        svc.create_base(BASE, embedding_model=f"{PROVIDER}:embed")  # probes the dimension
    finally:
        svc.close()
    api.chooser = held  # from now on, embeddings wait for the test
    return home


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir()
    for i in range(FILES):
        (folder / f"doc{i:02}.md").write_text(
            f"# Document {i}\n\nThe word marker{i} appears here and nowhere else.\n",
            encoding="utf-8",
        )
    return folder


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "TROVE_HOME"}
    env.update({KEY_ENV: KEY, "QT_QPA_PLATFORM": "offscreen"})
    return env


def _start(home: Path, out: IO[bytes], err: IO[bytes], *args: str) -> subprocess.Popen[bytes]:
    # Its own session, so a leftover can be cleaned up by group.
    return subprocess.Popen(
        [sys.executable, "-m", "app", "--home", str(home), *args],
        cwd=ROOT,
        env=_env(),
        stdin=subprocess.DEVNULL,
        stdout=out,
        stderr=err,
        start_new_session=True,
    )


def _run(home: Path, *args: str, timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "app", "--home", str(home), *args],
        cwd=ROOT,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)


def _service(home: Path) -> KnowledgeService:
    return KnowledgeService(home, extraction=InlineExtraction())


def _embedding(svc: KnowledgeService, base_id: str) -> int:
    return sum(1 for i in svc.list_items(base_id) if i.phase is not None)


def test_watch_ends_when_the_indexing_process_is_killed(
    tmp_path: Path, home: Path, folder: Path, held: Held
) -> None:
    svc = _service(home)
    base_id = svc.resolve_base(BASE).id
    logs = {name: tmp_path / f"{name}.log" for name in ("add", "watch", "watch-err")}
    with (
        logs["add"].open("wb") as add_log,
        logs["watch"].open("wb") as watch_out,
        logs["watch-err"].open("wb") as watch_err,
    ):
        add = _start(home, add_log, add_log, "add", BASE, str(folder), "--wait")
        watch: subprocess.Popen[bytes] | None = None
        try:
            _wait_until(lambda: _embedding(svc, base_id) > 0, 60, "items being indexed")
            watch = _start(home, watch_out, watch_err, "status", BASE, "--watch")

            def screens() -> int:
                return logs["watch"].read_text(encoding="utf-8").count(f"{BASE} ({base_id}):")

            # While the add lives, the watch keeps redrawing and does not give up.
            _wait_until(lambda: screens() >= 4, 30, "the watch to redraw")
            assert watch.poll() is None and add.poll() is None
            assert "vectors: " in logs["watch"].read_text(encoding="utf-8")

            os.kill(add.pid, signal.SIGKILL)  # the CLI alone, as the OOM killer would
            killed_at = time.monotonic()
            returncode = watch.wait(timeout=WATCH_EXIT_BOUND)
            took = time.monotonic() - killed_at
        finally:
            for proc in (add, watch):
                if proc is not None:
                    _stop(proc)
    errors = logs["watch-err"].read_text(encoding="utf-8")
    print(f"watch exited {took:.2f} s after the kill: {errors.strip()}")
    assert returncode == 1, errors
    # Recovery's own log record may come first (as after any crash); the watch's verdict
    # is the last line.
    message = errors.splitlines(keepends=True)[-1]
    stopped = re.fullmatch(
        rf"the process indexing '{BASE}' stopped \(pid {add.pid} is gone\); no item was "
        rf"interrupted; (?:(\d+) queued item\(s\) and )?the vector stage of (\d+) searchable "
        rf"document\(s\) will run the next time Trove runs its queue \(the window, or: "
        rf"trove resume {base_id}\)\n",
        message,
    )
    assert stopped is not None, errors

    # The dead process's running work was recovered: nothing runs, nothing spins without
    # a job, nothing failed; the vector stage (and what it never started) is queued.
    items = [i for i in svc.list_items(base_id) if i.type is ItemType.FILE]
    assert not any(i.status is ItemStatus.FAILED for i in items)
    assert svc.catalog.job_counts(base_id)[1] == 0
    assert recovery.activity(svc.catalog, base_id).jobless == 0
    queued = [i for i in items if i.status is ItemStatus.PROCESSING]
    waiting = [i for i in items if i.phase is not None and i.status is ItemStatus.COMPLETED]
    assert len(queued) == int(stopped.group(1) or 0)
    assert len(waiting) == int(stopped.group(2)) >= 1

    # The hint finishes the job: resume runs the queue, the vector stage included.
    held.release.set()
    done = _run(home, "resume", base_id, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "(100 %)" in done.stderr, done.stderr
    files = [i for i in svc.list_items(base_id) if i.type is ItemType.FILE]
    svc.close()
    assert {(i.status, i.phase) for i in files} == {(ItemStatus.COMPLETED, None)}
    assert took < WATCH_EXIT_BOUND


def test_watch_ends_when_queued_work_has_no_process(home: Path, folder: Path, held: Held) -> None:
    # Queued by a process that died before its executor claimed anything: no job names
    # an owner, so the watch can only see that nobody claims due work.
    svc = _service(home)
    base_id = svc.resolve_base(BASE).id
    svc.add(base_id, [folder])
    svc.close()
    started = time.monotonic()
    watch = _run(home, "status", BASE, "--watch", timeout=60)
    took = time.monotonic() - started
    print(f"watch exited after {took:.2f} s: {watch.stderr.strip()}")
    assert watch.returncode == 1, watch.stderr
    assert watch.stderr.splitlines(keepends=True)[-1] == (
        f"the process indexing '{BASE}' stopped (no Trove process is working on it); "
        "no item was interrupted; 1 queued item(s) will run the next time Trove runs its queue "
        f"(the window, or: trove resume {base_id})\n"
    )
    assert took < 30

    # The hint finishes the job: resume runs what was left queued and reports it.
    held.release.set()
    resumed = _run(home, "resume", base_id, timeout=120)
    assert resumed.returncode == 0, resumed.stderr
    assert "resuming 1 unfinished item(s)" in resumed.stderr
    assert f"indexed {FILES} document(s), 0 failed" in resumed.stderr
    svc = _service(home)
    try:
        assert {i.status for i in svc.list_items(base_id)} == {ItemStatus.COMPLETED}
    finally:
        svc.close()
