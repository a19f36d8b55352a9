"""A queue that cannot be claimed from never spins, and a waiter always gets an answer.

The faults of test_runner_faults.py, moved to where the executor itself meets the catalog:
the claim (`claim_next_job`: on a full disk its COMMIT raises), the counts a worker reads
after a claim and when it ends (`job_counts`), and logging's teardown (a log file on a full
disk). BUSY, FULL, IOERR and ENOSPC each, once (the next round must carry on as if nothing
happened) and always (the executor says `stalled` after STALL_AFTER rounds, keeps trying
with a doubling pause, and drains once the fault is gone). Then the real CLI: `add --wait`
with the claim failing in the child returns within a bound, exit 1, one line that says
why, every unfinished item named, no traceback; `trove resume` afterwards finishes it all.
"""

from __future__ import annotations

import errno
import logging
import os
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import apsw
import pytest
from pytestqt.qtbot import QtBot

from app.knowledge import logs
from app.knowledge.jobs.reader_pool import InlineExtraction
from app.knowledge.service import KnowledgeService
from app.knowledge.types import RUNNING_STATUSES, ItemStatus
from app.runtime import executor as executor_module
from app.runtime.executor import STALL_AFTER, JobExecutor, QueueStall, trouble_pause
from tests.conftest import write_files
from tests.fakes import FakeModels
from tests.reliability.faults import Fault, inject
from tests.reliability.test_runner_faults import FAULT_NAMES, _trove

DOCS = {f"doc{i}.md": f"# Doc {i}\n\nword{i} and more words" for i in range(4)}
# Generous: the stall comes after 0.5 + 1 s of pauses; a hang is what this catches.
BOUND_S = 20.0


@pytest.fixture
def svc(tmp_path: Path) -> Iterator[KnowledgeService]:
    service = KnowledgeService(
        tmp_path / "home", models=FakeModels(), extraction=InlineExtraction()
    )
    yield service
    service.close()


def _queue_docs(svc: KnowledgeService, tmp_path: Path) -> str:
    base = svc.create_base("kb")
    svc.add(base.id, [write_files(tmp_path / "docs", DOCS)])
    return base.id


def _completed_docs(svc: KnowledgeService, base_id: str) -> int:
    return sum(
        1
        for i in svc.list_items(base_id)
        if i.status is ItemStatus.COMPLETED and i.source.endswith(".md")
    )


class _Calls:
    """When a wrapped catalog method was called (its fault raised or not)."""

    def __init__(self) -> None:
        self.times: list[float] = []
        self._lock = threading.Lock()

    def count(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
        with self._lock:
            self.times.append(time.monotonic())
        return True


# -- the claim ----------------------------------------------------------------------------------


@pytest.mark.parametrize("fault", FAULT_NAMES)
def test_a_claim_that_always_fails_stalls_backs_off_and_recovers(
    qtbot: QtBot, svc: KnowledgeService, tmp_path: Path, fault: str
) -> None:
    base_id = _queue_docs(svc, tmp_path)
    calls = _Calls()
    injected = Fault("claim_next_job", fault, None, matches=calls.count)
    lift = inject(svc.catalog, [injected])
    executor = JobExecutor(svc, max_workers=2)
    drained: list[bool] = []
    executor.drained.connect(lambda: drained.append(True))
    started = time.monotonic()
    with qtbot.waitSignal(executor.stalled, timeout=int(BOUND_S * 1000)) as stalled:
        executor.start()
    assert time.monotonic() - started < BOUND_S
    stall = stalled.args[0]
    assert isinstance(stall, QueueStall)
    assert stall.failures >= STALL_AFTER
    assert type(stall.error).__name__ in {"BusyError", "FullError", "IOError", "OSError"}
    assert drained == []  # nothing was processed: never "drained"

    # It keeps trying, each pause at least as long as the schedule says (a crashing claim
    # used to start a new worker every second for ever).
    qtbot.waitUntil(lambda: len(calls.times) >= STALL_AFTER + 1, timeout=int(BOUND_S * 1000))
    gaps = [b - a for a, b in zip(calls.times, calls.times[1:], strict=False)]
    for n, gap in enumerate(gaps[:STALL_AFTER], start=1):
        assert gap >= trouble_pause(n) * 0.9, (n, gaps)
    assert executor.running_count == 0

    lift()  # space is back: the next retry claims, and the queue drains
    with qtbot.waitSignal(executor.drained, timeout=int(BOUND_S * 1000)):
        pass
    executor.shutdown()
    assert _completed_docs(svc, base_id) == len(DOCS)
    assert svc.catalog.job_counts() == (0, 0)


@pytest.mark.parametrize("fault", FAULT_NAMES)
def test_a_claim_that_fails_once_only_delays_the_queue(
    qtbot: QtBot, svc: KnowledgeService, tmp_path: Path, fault: str
) -> None:
    base_id = _queue_docs(svc, tmp_path)
    injected = Fault("claim_next_job", fault, 1, after=2)  # after two jobs ran
    inject(svc.catalog, [injected])
    executor = JobExecutor(svc, max_workers=2)
    stalls: list[QueueStall] = []
    executor.stalled.connect(stalls.append)
    with qtbot.waitSignal(executor.drained, timeout=int(BOUND_S * 1000)):
        executor.start()
    executor.shutdown()
    assert injected.raised == 1
    assert stalls == []
    assert _completed_docs(svc, base_id) == len(DOCS)


def test_the_pause_doubles_up_to_a_minute() -> None:
    pauses = [trouble_pause(n) for n in range(1, 12)]
    assert pauses[:4] == [0.5, 1.0, 2.0, 4.0]
    assert pauses[-1] == executor_module.TROUBLE_MAX_PAUSE_S == 60.0
    assert pauses == sorted(pauses)


def test_a_success_older_than_a_failure_does_not_end_its_streak(
    svc: KnowledgeService, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A worker's end-of-round counts can wait on a lock while another worker's claim
    fails: that older success must not end the streak, or the next failure warns again
    (it did in CI on a loaded machine: the warning twice in one `add --wait`)."""
    executor = JobExecutor(svc, max_workers=2)
    real_counts = svc.catalog.job_counts

    def counts_while_a_claim_fails(*args: Any, **kwargs: Any) -> tuple[int, int]:
        executor._note_trouble(apsw.BusyError("database is locked"))  # the other worker
        return real_counts(*args, **kwargs)

    monkeypatch.setattr(svc.catalog, "job_counts", counts_while_a_claim_fails)
    caplog.set_level(logging.WARNING, logger=executor_module.__name__)
    with executor._lock:
        executor._workers = 1  # the worker that ends this round
    executor._report_idle("empty")
    monkeypatch.setattr(svc.catalog, "job_counts", real_counts)
    executor._note_trouble(apsw.BusyError("database is locked"))  # the streak goes on
    executor.shutdown()
    warned = [r for r in caplog.records if "cannot be read or claimed" in r.getMessage()]
    assert len(warned) == 1, [r.getMessage() for r in warned]
    assert executor._failures == 2


# -- the worker loop's own catalog reads -----------------------------------------------------------


@pytest.mark.parametrize("fault", FAULT_NAMES)
def test_a_worker_whose_counts_fail_still_ends_and_the_queue_drains(
    qtbot: QtBot, svc: KnowledgeService, tmp_path: Path, fault: str
) -> None:
    """The counts a worker reads as it ends (and after each claim) raise: before, the
    worker died inside its own error handler, still counted as working, and `drained` never
    came. Now that round counts as a failed one and the next round carries on."""
    base_id = _queue_docs(svc, tmp_path)
    injected = Fault("job_counts", fault, 2)
    inject(svc.catalog, [injected])
    executor = JobExecutor(svc, max_workers=2)
    with qtbot.waitSignal(executor.drained, timeout=int(BOUND_S * 1000)):
        executor.start()
    executor.shutdown()
    assert injected.raised == 2
    assert _completed_docs(svc, base_id) == len(DOCS)
    assert svc.catalog.job_counts() == (0, 0)


@pytest.mark.parametrize("fault", FAULT_NAMES)
def test_counts_that_always_fail_stall_instead_of_hanging(
    qtbot: QtBot, svc: KnowledgeService, tmp_path: Path, fault: str
) -> None:
    base_id = _queue_docs(svc, tmp_path)
    lift = inject(svc.catalog, [Fault("job_counts", fault, None)])
    executor = JobExecutor(svc, max_workers=2)
    with qtbot.waitSignal(executor.stalled, timeout=int(BOUND_S * 1000)):
        executor.start()
    lift()
    with qtbot.waitSignal(executor.drained, timeout=int(BOUND_S * 1000)):
        pass
    executor.shutdown()
    assert _completed_docs(svc, base_id) == len(DOCS)


# -- logging's teardown ----------------------------------------------------------------------------


@pytest.fixture
def restore_logging() -> Iterator[None]:
    yield
    logs.reset_logging()


def test_logging_teardown_on_a_full_disk_is_quiet(
    tmp_path: Path, restore_logging: None, capsys: pytest.CaptureFixture[str]
) -> None:
    """The log file lives on a full disk (/dev/full: every write ENOSPC): the last flush
    of its handler at the end of a command raised OSError 28 out of reset_logging."""
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full on this system")
    home = tmp_path / "home"
    (home / logs.LOGS_DIR).mkdir(parents=True)
    os.symlink("/dev/full", logs.log_file_path(home))
    assert logs.configure_logging(home) is not None
    logging.getLogger("app.test").error("a line the full disk refuses")
    logs.reset_logging()  # must not raise
    assert "a line the full disk refuses" in capsys.readouterr().err  # the terminal got it


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EIO, errno.EDQUOT])
def test_logging_teardown_survives_any_failing_flush(
    tmp_path: Path, restore_logging: None, monkeypatch: pytest.MonkeyPatch, code: int
) -> None:
    home = tmp_path / "home"
    assert logs.configure_logging(home) is not None
    logging.getLogger("app.test").error("written")

    def refuse(self: logging.StreamHandler) -> None:  # type: ignore[type-arg]
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr(logging.StreamHandler, "flush", refuse)
    logs.reset_logging()
    monkeypatch.undo()
    assert not [h for h in logging.getLogger().handlers if getattr(h, "_trove_handler", False)]


# -- the real CLI --------------------------------------------------------------------------------


@pytest.mark.parametrize("fault", FAULT_NAMES)
def test_add_wait_returns_when_the_claim_keeps_failing_and_resume_finishes(
    tmp_path: Path, fault: str
) -> None:
    home = tmp_path / "home"
    folder = write_files(tmp_path / "docs", DOCS)
    assert _trove(home, "base", "create", "kb").returncode == 0
    # The folder's expansion and two files are claimed, then every claim fails.
    faults: list[dict[str, object]] = [
        {"method": "claim_next_job", "fault": fault, "times": None, "after": 3}
    ]
    started = time.monotonic()
    out = _trove(home, "add", "kb", str(folder), "--wait", faults=faults)
    took = time.monotonic() - started
    assert out.returncode == 1, out.stderr
    assert took < 60, took
    assert "Traceback" not in out.stderr, out.stderr
    assert "no job could be taken from the queue" in out.stderr
    assert "trove resume kb" in out.stderr
    if fault in ("full", "enospc"):
        assert "error: STORAGE_FULL:" in out.stderr
    # At most two files ran (three claims went through, one was the folder's expansion);
    # each of the others is named.
    match = re.search(r"indexed (\d+) document\(s\), 0 failed, (\d+) unfinished", out.stderr)
    assert match is not None, out.stderr
    done, left = int(match[1]), int(match[2])
    assert done + left == len(DOCS) and left >= 2, out.stderr
    unfinished = [line for line in out.stderr.splitlines() if line.startswith("unfinished: ")]
    assert len(unfinished) == left and all("still queued" in line for line in unfinished)
    assert out.stderr.count("cannot be read or claimed from") <= 1  # said once, not per try

    resumed = _trove(home, "resume", "kb")
    assert resumed.returncode == 0, resumed.stderr
    svc = KnowledgeService(home, extraction=InlineExtraction())
    try:
        (base,) = svc.list_bases()
        assert _completed_docs(svc, base.id) == len(DOCS)
        assert not [i for i in svc.list_items(base.id) if i.status in RUNNING_STATUSES]
    finally:
        svc.close()
    doctor = _trove(home, "doctor")
    assert doctor.returncode == 0, doctor.stdout
