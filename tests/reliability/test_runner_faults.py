"""A failure inside the failure path never leaves a job running for ever.

Every catalog call of the job runner's outcome paths (the item's failure and its parent's
settling, finish / retry / requeue of the job row) is made to raise a storage fault —
BUSY, FULL, IOERR, ENOSPC — once (a retry must then record the real outcome) or always
(the job is released to recovery, or, when even that fails, given up by this process).
Afterwards no job row is running under a live owner, `run_job`, `drain` and the executor's
`drained` return in bounded time, and after the next start's recovery every item is
settled: failed with the code the person would have seen, or INDEXING_INTERRUPTED.
The last tests run the real CLI (`add --wait`) with the faults injected in the child.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from app.knowledge.catalog import Job
from app.knowledge.ingestion import delete_items
from app.knowledge.jobs import runner
from app.knowledge.jobs.context import JobContext
from app.knowledge.jobs.errors import ItemFailure, JobCancelled, RetryableFailure
from app.knowledge.jobs.owner import current_owner, owner_alive
from app.knowledge.jobs.reader_pool import InlineExtraction
from app.knowledge.jobs.recovery import job_items, recover
from app.knowledge.service import KnowledgeService
from app.knowledge.types import RUNNING_STATUSES, CancelReason, ErrorCode, Item, ItemStatus
from app.runtime.executor import JobExecutor
from tests.conftest import write_files
from tests.fakes import FakeModels
from tests.reliability.faults import ENV, FAULTS, Fault, inject

ROOT = Path(__file__).resolve().parents[2]
HOOK_DIR = Path(__file__).resolve().parent / "fault_hook"
FAULT_NAMES = sorted(FAULTS)
# Far above what any case needs (the slowest waits out two short write retries a few
# times), far below "never returns".
BOUND_S = 10.0

Handler = Callable[[JobContext, Job], None]


def _raising(make: Callable[[], BaseException]) -> Handler:
    def handler(ctx: JobContext, job: Job) -> None:
        raise make()

    return handler


def _deleted_meanwhile(ctx: JobContext, job: Job) -> None:
    """The person deleted the item while its job ran; the handler notices and stops."""
    delete_items(ctx.parts, job.base_id, [job.item_id or ""])
    raise JobCancelled(CancelReason.ITEM_GONE)


@dataclass(frozen=True)
class Scenario:
    """A handler outcome, the job it happens in, and what is recorded when writes land."""

    kind: str  # "note" (index-documents), "child" (a folder's file), "delete", "damaged"
    handler: Handler | None  # None: the real handler
    recorded: str  # run_job's result when every write lands
    code: str | None  # the item's error code then (None: not failed by this run)
    attempts: int = 1  # which attempt of the job this run is


SCENARIOS: dict[str, Scenario] = {
    "item-failure": Scenario(
        "note",
        _raising(lambda: ItemFailure(ErrorCode.EMPTY_INDEXABLE_TEXT, "no text")),
        "failed",
        ErrorCode.EMPTY_INDEXABLE_TEXT,
    ),
    "retryable-last-attempt": Scenario(
        "note",
        _raising(lambda: RetryableFailure(ErrorCode.FETCH_FAILED, "server said 503")),
        "failed",
        ErrorCode.FETCH_FAILED,
        attempts=3,
    ),
    "retryable-early": Scenario(
        "note",
        _raising(lambda: RetryableFailure(ErrorCode.FETCH_FAILED, "server said 503")),
        "queued",
        None,
    ),
    "unexpected-error": Scenario(
        "note", _raising(lambda: RuntimeError("a bug")), "failed", ErrorCode.READ_FAILED
    ),
    "disk-full-in-handler": Scenario(
        "note", _raising(FAULTS["enospc"]), "failed", ErrorCode.STORAGE_FULL
    ),
    "timeout": Scenario(
        "note",
        _raising(lambda: JobCancelled(CancelReason.TIMEOUT)),
        "abandoned",
        ErrorCode.INDEXING_INTERRUPTED,
    ),
    # A normal exit fails nothing: the job goes back to the queue (hand_back.py).
    "shutdown": Scenario(
        "note", _raising(lambda: JobCancelled(CancelReason.SHUTDOWN)), "queued", None
    ),
    "item-gone": Scenario("note", _deleted_meanwhile, "done", None),
    "success": Scenario("note", None, "done", None),
    "child-failure": Scenario(
        "child",
        _raising(lambda: ItemFailure(ErrorCode.EMPTY_INDEXABLE_TEXT, "no text")),
        "failed",
        ErrorCode.EMPTY_INDEXABLE_TEXT,
    ),
    "delete-error-early": Scenario(
        "delete", _raising(lambda: RuntimeError("rm failed")), "queued", None
    ),
    "delete-error-last-attempt": Scenario(
        "delete", _raising(lambda: RuntimeError("rm failed")), "failed", None, attempts=5
    ),
    "delete-shutdown": Scenario(
        "delete", _raising(lambda: JobCancelled(CancelReason.SHUTDOWN)), "queued", None
    ),
    "damaged-job": Scenario("damaged", None, "failed", ErrorCode.READ_FAILED),
}


@dataclass(frozen=True)
class Site:
    """One catalog call of the runner's outcome path, reached by one scenario."""

    scenario: str
    method: str
    status: str | None = None  # only calls writing this status
    parent: bool = False  # only calls about the item's parent (settle_parent)

    @property
    def id(self) -> str:
        which = "parent" if self.parent else self.status
        return f"{self.scenario}:{self.method}" + (f"({which})" if which else "")


SITES = [
    Site("item-failure", "get_item"),
    Site("item-failure", "set_item_status"),
    Site("item-failure", "finish_job", "failed"),
    Site("retryable-last-attempt", "set_item_status"),
    Site("retryable-last-attempt", "finish_job", "failed"),
    Site("retryable-early", "retry_job"),
    Site("unexpected-error", "set_item_status"),
    Site("unexpected-error", "finish_job", "failed"),
    Site("disk-full-in-handler", "set_item_status"),
    Site("disk-full-in-handler", "finish_job", "failed"),
    Site("timeout", "set_item_status"),
    Site("timeout", "finish_job", "abandoned"),
    Site("shutdown", "hand_back_job"),
    Site("item-gone", "finish_job", "done"),
    Site("success", "set_item_status", "completed"),  # the handler's own status flip
    Site("success", "finish_job", "done"),
    Site("child-failure", "get_item", parent=True),
    Site("child-failure", "child_status_counts", parent=True),
    Site("child-failure", "set_item_status", parent=True),
    Site("delete-error-early", "retry_job"),
    Site("delete-error-last-attempt", "finish_job", "failed"),
    Site("delete-shutdown", "hand_back_job"),
    Site("damaged-job", "set_item_status"),
    Site("damaged-job", "finish_job", "failed"),
]


@pytest.fixture
def quick_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    """The runner's write retries without their pauses: the matrix has ~200 cases."""
    monkeypatch.setattr(runner, "WRITE_RETRY_DELAYS_S", (0.0, 0.0))


# -- setting a scenario up -----------------------------------------------------------------


def _claim(svc: KnowledgeService) -> Job:
    job = svc.catalog.claim_next_job(owner=current_owner())
    assert job is not None
    return job


def _run_all(svc: KnowledgeService) -> None:
    while (job := svc.catalog.claim_next_job(owner=current_owner())) is not None:
        assert runner.run_job(JobContext(svc.parts), job) == "done"


def _job_for(svc: KnowledgeService, tmp_path: Path, kind: str) -> tuple[Job, Item]:
    """The claimed job a scenario runs, and the item it is about."""
    base = svc.create_base("kb")
    if kind == "child":
        folder = write_files(tmp_path / "folder", {"only.txt": "the only words"})
        (root,) = svc.add(base.id, [folder]).added
        assert runner.run_job(JobContext(svc.parts), _claim(svc)) == "done"  # expand it
        job = _claim(svc)
        assert job.item_id is not None
        item = svc.get_item(job.item_id)
        assert item.parent_id == root.id
        return job, item
    note = svc.add_note(base.id, "Note", "some words to index")
    if kind == "delete":
        _run_all(svc)
        svc.delete_items(base.id, [note.id])
    elif kind == "damaged":
        svc.catalog._exec("UPDATE jobs SET kind = 'no-such-kind'")  # as a damaged file has it
    return _claim(svc), svc.get_item(note.id)


def _site_fault(site: Site, fault: str, times: int | None, item: Item) -> Fault:
    def about_parent(args: tuple[object, ...], kwargs: dict[str, object]) -> bool:
        return bool(args) and args[0] == item.parent_id

    return Fault(
        site.method,
        fault,
        times,
        status=site.status,
        matches=about_parent if site.parent else None,
    )


# -- what must hold ----------------------------------------------------------------------


def assert_none_running_live(svc: KnowledgeService) -> None:
    """No job row says running under a live owner: nothing keeps a waiter waiting."""
    stuck = [j for j in svc.catalog.list_jobs(statuses=("running",)) if owner_alive(j.owner)]
    assert stuck == [], stuck


def assert_settled(svc: KnowledgeService) -> None:
    """After recovery: nothing runs, and every unsettled item has a queued job for it."""
    jobs = svc.catalog.list_jobs()
    assert [j for j in jobs if j.status == "running"] == []
    pending = {i for j in jobs if j.status == "queued" for i in job_items(j)}
    for base in svc.list_bases():
        for item in svc.list_items(base.id):
            if item.status in RUNNING_STATUSES or item.status is ItemStatus.DELETING:
                assert item.id in pending, (item.title, item.status)


def _in_handler(site: Site) -> bool:
    """The handler's own status write: its failure is an item failure the runner records."""
    return site.scenario == "success" and site.method == "set_item_status"


def _expected_codes(site: Site, fault: str, always: bool) -> set[str | None]:
    scenario = SCENARIOS[site.scenario]
    if _in_handler(site):
        return {ErrorCode.STORAGE_FULL if fault in ("full", "enospc") else ErrorCode.READ_FAILED}
    if not always:
        return {scenario.code}
    # The failure landed before the faulted job write, or recovery interrupted the item.
    return {scenario.code, ErrorCode.INDEXING_INTERRUPTED}


def _item_code(svc: KnowledgeService, item: Item) -> str | None:
    current = svc.catalog.get_item(item.id)
    if current is None or current.status is not ItemStatus.FAILED:
        return None
    return current.error_code


# -- the matrix: every call site x every fault, once and always -------------------------------


@pytest.mark.parametrize("always", [False, True], ids=["once", "always"])
@pytest.mark.parametrize("fault", FAULT_NAMES)
@pytest.mark.parametrize("site", SITES, ids=[s.id for s in SITES])
def test_a_fault_in_the_outcome_path_never_leaves_a_job_running(
    svc: KnowledgeService,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    quick_retries: None,
    site: Site,
    fault: str,
    always: bool,
) -> None:
    scenario = SCENARIOS[site.scenario]
    job, item = _job_for(svc, tmp_path, scenario.kind)
    job = dataclasses.replace(job, attempts=scenario.attempts)
    if scenario.handler is not None:
        monkeypatch.setitem(runner.HANDLERS, job.kind, scenario.handler)
    injected = _site_fault(site, fault, None if always else 1, item)
    lift = inject(svc.catalog, [injected])

    started = time.monotonic()
    result = runner.run_job(JobContext(svc.parts), job)
    assert time.monotonic() - started < BOUND_S
    assert injected.raised >= 1, "the fault was never reached: the site is not covered"
    if _in_handler(site):
        assert result == "failed"  # recorded: the failure write is another status
    elif always:
        assert result == runner.RELEASED
    else:
        assert result == scenario.recorded  # a second try recorded the real outcome
    assert_none_running_live(svc)

    lift()
    recover(svc.parts)  # what the next start does
    assert_settled(svc)
    assert _item_code(svc, item) in _expected_codes(site, fault, always)
    if site.parent:
        parent = svc.get_item(item.parent_id or "")
        assert parent.status is ItemStatus.FAILED, parent.status
        assert parent.error_code == ErrorCode.ALL_CHILDREN_FAILED


@pytest.mark.parametrize("fault", FAULT_NAMES)
def test_when_even_the_release_fails_run_job_returns_and_the_next_start_recovers(
    svc: KnowledgeService, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fault: str
) -> None:
    job, item = _job_for(svc, tmp_path, "note")
    monkeypatch.setitem(runner.HANDLERS, job.kind, SCENARIOS["item-failure"].handler)
    lift = inject(
        svc.catalog,
        [Fault(m, fault, None) for m in ("set_item_status", "finish_job", "release_job")],
    )
    started = time.monotonic()
    # Real pauses between the tries: a persistent fault costs a bounded moment per write.
    assert runner.run_job(JobContext(svc.parts), job) == runner.UNRECORDED
    assert time.monotonic() - started < BOUND_S
    # Nothing could be written: the row names this process until it exits.
    (row,) = svc.catalog.list_jobs(statuses=("running",))
    assert row.owner == current_owner()
    lift()
    # The next start runs in another process: this one's pid is then dead.
    monkeypatch.setattr("app.knowledge.catalog.routing.owner_alive", lambda owner: False)
    recover(svc.parts)
    assert_settled(svc)
    assert _item_code(svc, item) == ErrorCode.INDEXING_INTERRUPTED


@pytest.mark.parametrize("fault", FAULT_NAMES)
def test_drain_returns_when_every_outcome_write_fails(
    svc: KnowledgeService, tmp_path: Path, quick_retries: None, fault: str
) -> None:
    base = svc.create_base("kb")
    folder = write_files(tmp_path / "docs", FOLDER)
    svc.add(base.id, [folder])
    faults = [Fault(m, fault, None) for m in ("finish_job", "retry_job", "hand_back_job")]
    faults.append(Fault("set_item_status", fault, None, status="failed"))
    lift = inject(svc.catalog, faults)
    started = time.monotonic()
    ran = svc.run_pending_jobs(base.id)
    assert time.monotonic() - started < BOUND_S
    assert ran == 3  # the folder's expansion and its two files, each run once
    assert_none_running_live(svc)
    lift()
    recover(svc.parts)
    assert_settled(svc)
    items = _by_name(svc, base.id)
    assert items["good.md"].status is ItemStatus.COMPLETED
    assert items["blank.txt"].error_code == ErrorCode.INDEXING_INTERRUPTED


# -- the real executor -------------------------------------------------------------------------


FOLDER = {"good.md": "# Good\n\nplenty of words here", "blank.txt": "   \n"}


@pytest.fixture
def folder_svc(tmp_path: Path) -> Iterator[tuple[KnowledgeService, str]]:
    service = KnowledgeService(
        tmp_path / "home", models=FakeModels(), extraction=InlineExtraction()
    )
    base = service.create_base("kb")
    service.add(base.id, [write_files(tmp_path / "docs", FOLDER)])
    yield service, base.id
    service.close()


def _drain_executor(qtbot: QtBot, executor: JobExecutor, start: bool) -> None:
    with qtbot.waitSignal(executor.drained, timeout=int(BOUND_S * 1000)):
        executor.start() if start else executor.schedule()
    assert executor.running_count == 0


def _by_name(svc: KnowledgeService, base_id: str) -> dict[str, Item]:
    return {Path(i.source).name: i for i in svc.list_items(base_id)}


@pytest.mark.parametrize("fault", FAULT_NAMES)
def test_executor_records_the_real_failure_after_one_failed_write(
    qtbot: QtBot, folder_svc: tuple[KnowledgeService, str], fault: str
) -> None:
    svc, base_id = folder_svc
    injected = Fault("set_item_status", fault, 1, status="failed")
    inject(svc.catalog, [injected])
    executor = JobExecutor(svc, max_workers=2)
    _drain_executor(qtbot, executor, start=True)
    executor.shutdown()
    assert injected.raised == 1
    assert svc.catalog.job_counts() == (0, 0)  # every outcome was recorded
    items = _by_name(svc, base_id)
    assert items["blank.txt"].error_code == ErrorCode.EMPTY_INDEXABLE_TEXT
    assert items["good.md"].status is ItemStatus.COMPLETED


@pytest.mark.parametrize("fault", FAULT_NAMES)
def test_executor_drains_when_no_job_end_can_be_recorded(
    qtbot: QtBot,
    folder_svc: tuple[KnowledgeService, str],
    quick_retries: None,
    fault: str,
) -> None:
    svc, base_id = folder_svc
    methods = ("finish_job", "retry_job", "hand_back_job", "release_job")
    faults = [Fault(m, fault, None) for m in methods]
    faults.append(Fault("set_item_status", fault, None, status="failed"))
    lift = inject(svc.catalog, faults)
    executor = JobExecutor(svc, max_workers=2)
    _drain_executor(qtbot, executor, start=True)  # the given-up jobs do not count
    # Nothing could be written: the rows still name this process.
    assert len(svc.catalog.list_jobs(statuses=("running",))) == 3

    lift()  # the catalog takes writes again: the executor releases its given-up jobs
    _drain_executor(qtbot, executor, start=False)
    executor.shutdown()
    assert_none_running_live(svc)
    recover(svc.parts)
    assert_settled(svc)
    items = _by_name(svc, base_id)
    assert items["blank.txt"].error_code == ErrorCode.INDEXING_INTERRUPTED
    assert items["good.md"].status is ItemStatus.COMPLETED


def test_executor_releases_jobs_whose_end_cannot_be_written(
    qtbot: QtBot, folder_svc: tuple[KnowledgeService, str]
) -> None:
    svc, base_id = folder_svc
    lift = inject(svc.catalog, [Fault("finish_job", "full", None)])
    executor = JobExecutor(svc, max_workers=2)
    _drain_executor(qtbot, executor, start=True)  # real pauses between the write tries
    executor.shutdown()
    released = svc.catalog.list_jobs(statuses=("running",))
    assert len(released) == 3 and all(j.owner is None for j in released)
    lift()
    recover(svc.parts)
    assert_settled(svc)
    items = _by_name(svc, base_id)
    assert items["blank.txt"].error_code == ErrorCode.EMPTY_INDEXABLE_TEXT  # landed first
    assert items["good.md"].status is ItemStatus.COMPLETED


# -- the real CLI, faults injected in the child process --------------------------------------


def _trove(
    home: Path, *args: str, faults: list[dict[str, object]] | None = None
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("TROVE_HOME", ENV)}
    env["QT_QPA_PLATFORM"] = "offscreen"
    if faults is not None:
        env[ENV] = json.dumps(faults)
        env["PYTHONPATH"] = os.pathsep.join([str(HOOK_DIR), str(ROOT)])
    return subprocess.run(
        [sys.executable, "-m", "app", "--home", str(home), *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=90,  # bounded: a hang fails the test instead of stalling the suite
        check=False,
    )


CLI_CASES = {
    # The failure write meets a busy catalog once: the retry records the real code.
    "busy-once": (
        [{"method": "set_item_status", "fault": "busy", "times": 1, "status": "failed"}],
        ErrorCode.EMPTY_INDEXABLE_TEXT,
    ),
    # The disk is full for every outcome write and for the release: nothing is recorded.
    "full-always": (
        [
            {"method": "set_item_status", "fault": "full", "times": None, "status": "failed"},
            *(
                {"method": m, "fault": "full", "times": None}
                for m in ("finish_job", "retry_job", "hand_back_job", "release_job")
            ),
        ],
        ErrorCode.INDEXING_INTERRUPTED,
    ),
}


@pytest.mark.parametrize("case", sorted(CLI_CASES))
def test_add_wait_returns_and_fails_with_a_fault_in_the_failure_path(
    tmp_path: Path, case: str
) -> None:
    faults, code = CLI_CASES[case]
    home = tmp_path / "home"
    folder = write_files(tmp_path / "docs", FOLDER)
    assert _trove(home, "base", "create", "kb").returncode == 0
    started = time.monotonic()
    out = _trove(home, "add", "kb", str(folder), "--wait", faults=faults)
    assert out.returncode == 1, out.stderr
    assert time.monotonic() - started < 60
    assert "Traceback" not in out.stderr
    if code is ErrorCode.INDEXING_INTERRUPTED:
        assert "1 unfinished" in out.stderr and "INDEXING_INTERRUPTED" in out.stderr
    else:
        assert f"failed: {folder / 'blank.txt'}: {code}" in out.stderr

    svc = KnowledgeService(home, extraction=InlineExtraction())  # the next start
    try:
        svc.recover()
        assert_settled(svc)
        (base,) = svc.list_bases()
        items = _by_name(svc, base.id)
        assert items["blank.txt"].error_code == code
        assert items["good.md"].status is ItemStatus.COMPLETED
    finally:
        svc.close()
