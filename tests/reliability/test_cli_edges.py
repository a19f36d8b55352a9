"""Edges of the CLI the disk-full round found: each says what happened in one line.

- `--home` that is no folder (`/dev/null`): INVALID_ARGUMENT, not a NotADirectoryError
  traceback;
- a full stdout (`> /dev/full`): the output could not be written, not "STORAGE_FULL ...
  data folder" (the data folder is fine);
- SIGTERM during `add --wait`: ends as Ctrl-C does (exit 143), the reader processes shut
  down, and no "resource_tracker: 5 leaked semaphore objects" (the reader pool's queues,
  reported by the tracker of a process that died without shutting its pool down);
- a retry of a failed fetch says that it comes, and when.
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from app.knowledge.jobs import runner
from app.knowledge.jobs.context import JobContext
from app.knowledge.jobs.errors import RetryableFailure
from app.knowledge.jobs.owner import current_owner
from app.knowledge.jobs.reader_pool import InlineExtraction
from app.knowledge.service import KnowledgeService
from app.knowledge.types import ErrorCode
from tests.fakes import FakeModels
from tests.httpserver import LoopbackServer, Response
from tests.unit.make_files import make_pdf

ROOT = Path(__file__).resolve().parents[2]
PROXY_VARS = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "TROVE_HOME" and k not in PROXY_VARS}
    env["QT_QPA_PLATFORM"] = "offscreen"
    return env


def trove(
    home: Path | str, *args: str, stdout: int | None = subprocess.PIPE
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "app", "--home", str(home), *args],
        cwd=ROOT,
        env=_env(),
        stdout=stdout,
        stderr=subprocess.PIPE,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "alpha.md").write_text("# Alpha\n\nThe alphaword lives here.\n", encoding="utf-8")
    assert trove(home, "base", "create", "kb").returncode == 0
    assert trove(home, "add", "kb", str(docs), "--wait").returncode == 0
    return home


# -- a data folder that cannot be one ------------------------------------------------------------


@pytest.mark.parametrize("where", ["/dev/null", "/dev/null/below"])
def test_a_home_that_is_no_folder_is_said_in_one_line(where: str) -> None:
    if not os.path.exists("/dev/null"):
        pytest.skip("no /dev/null here")
    run = trove(where, "base", "list")
    assert run.returncode == 1, run.stderr
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1, run.stderr
    assert lines[0].startswith("error: INVALID_ARGUMENT: the data folder") and where in lines[0]


# -- stdout on a full disk -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [("search", "kb", "alphaword"), ("search", "kb", "alphaword", "--json"), ("base", "list")],
    ids=["search", "search-json", "base-list"],
)
def test_a_full_stdout_is_not_blamed_on_the_data_folder(home: Path, args: tuple[str, ...]) -> None:
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full here")
    with open("/dev/full", "w") as full:
        run = trove(home, *args, stdout=full.fileno())
    assert run.returncode == 1, run.stderr
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1, run.stderr
    assert lines[0].startswith("error: the output could not be written"), lines[0]
    assert "STORAGE_FULL" not in run.stderr and "data folder:" not in run.stderr
    assert trove(home, *args).returncode == 0  # the same command with a working stdout


# -- SIGTERM during add --wait ---------------------------------------------------------------------


def _reader_workers(proc: psutil.Process) -> list[psutil.Process]:
    found = []
    for child in proc.children(recursive=True):
        try:
            if "spawn_main" in " ".join(child.cmdline()):
                found.append(child)
        except psutil.Error:
            continue
    return found


@pytest.fixture
def pdfs(tmp_path: Path) -> Iterator[Path]:
    folder = tmp_path / "pdfs"
    folder.mkdir()
    for n in range(30):  # read by the reader processes, long enough to be caught at it
        make_pdf(folder / f"p{n:02d}.pdf", [f"pageword{n} and more words " * 60] * 12)
    yield folder


def test_sigterm_ends_add_wait_like_ctrl_c_without_leaked_semaphores(
    home: Path, pdfs: Path
) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "app", "--home", str(home), "add", "kb", str(pdfs), "--wait"],
        cwd=ROOT,
        env=_env(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        watched = psutil.Process(proc.pid)
        deadline = time.monotonic() + 60
        while not _reader_workers(watched) and proc.poll() is None:
            assert time.monotonic() < deadline, "no reader process ever started"
            time.sleep(0.05)
        assert proc.poll() is None, "it finished before it could be stopped"
        workers = _reader_workers(watched)
        proc.send_signal(signal.SIGTERM)
        # communicate() waits for every holder of the pipes: the resource tracker too,
        # which prints its leak report as it exits.
        _, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 128 + signal.SIGTERM, stderr
    assert "interrupted" in stderr
    assert "leaked semaphore" not in stderr, stderr
    assert "Traceback" not in stderr, stderr
    _gone, alive = psutil.wait_procs(workers, timeout=5)
    assert alive == [], alive


# -- a retry says when it comes ----------------------------------------------------------------------


@pytest.fixture
def svc(tmp_path: Path) -> Iterator[KnowledgeService]:
    service = KnowledgeService(tmp_path / "svc", models=FakeModels(), extraction=InlineExtraction())
    yield service
    service.close()


def test_a_retry_is_announced_with_its_time(
    svc: KnowledgeService, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    base = svc.create_base("kb")
    note = svc.add_note(base.id, "Slow page", "words")
    job = svc.catalog.claim_next_job(owner=current_owner())
    assert job is not None

    def tarpit(ctx: JobContext, job: object) -> None:
        raise RetryableFailure(ErrorCode.FETCH_FAILED, "took longer than 60 s")

    monkeypatch.setitem(runner.HANDLERS, job.kind, tarpit)
    with caplog.at_level(logging.WARNING, logger=runner.__name__):
        assert runner.run_job(JobContext(svc.parts), job) == "queued"
    (record,) = [r for r in caplog.records if "trying again" in r.getMessage()]
    message = record.getMessage()
    assert message.startswith(f"{svc.get_item(note.id).source}: FETCH_FAILED: took longer")
    assert "trying again in 1 s (at " in message and "attempt 2 of 3" in message


def test_add_wait_says_that_a_failed_fetch_is_tried_again(tmp_path: Path) -> None:
    calls = {"n": 0}

    def flaky(_request: object) -> Response:
        calls["n"] += 1
        if calls["n"] == 1:
            return Response.text("busy", status=503)
        return Response.text(
            "<html><title>Page</title><p>pageword here</p></html>", content_type="text/html"
        )

    home = tmp_path / "home"
    assert trove(home, "base", "create", "web").returncode == 0
    with LoopbackServer() as server:
        server.route("/page", flaky)
        run = trove(home, "add", "web", server.url("/page"), "--wait")
    assert run.returncode == 0, run.stderr
    (said,) = [line for line in run.stderr.splitlines() if "trying again in" in line]
    assert server.url("/page") in said and "FETCH_FAILED" in said and "attempt 2 of 3" in said
    assert "indexed 1 document(s), 0 failed" in run.stderr
