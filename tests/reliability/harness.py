"""Crash injection: run the real CLI, SIGKILL it at a random moment, recover, check.

One round: `python -m app --home HOME add|reindex|delete ...` runs in its own session and
the CLI process alone gets SIGKILL (as from the OOM killer or `kill -9 PID`) at a seeded
random moment: half the rounds after a delay between 0 and the action's typical run time
(measured once, unkilled), half within 50 ms of a piece of work showing up in the catalog
(folder expansion, reading, embedding/writing, deletion): those windows are a few percent
of a run, which is mostly interpreter start-up and reading.

Its descendants (reader workers, multiprocessing's resource_tracker), taken by pid just
before the kill and from its session just after, must then be gone within
ORPHAN_DEADLINE seconds on their own: a survivor is a violation (and is killed). Only
then does a fresh KnowledgeService on the same home run startup recovery and drain the
queue, and the round is judged: `doctor` finds nothing, no item is left
preparing/processing/deleting, and every completed document is found by a search for its
own word.

`pair_share` rounds run `add` and `delete --all` in two processes at once (a GUI and a
terminal on one data dir), killing either, both or neither.

The base has an embedding model served by `FakeApi` on 127.0.0.1, so vectors are written
(and killed mid-write) too. Used by tests/reliability/test_crash_recovery.py and by
tests/bench/crash_rounds.py.
"""

from __future__ import annotations

import contextlib
import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

import apsw
import psutil

from app.knowledge import doctor
from app.knowledge.jobs.reader_pool import InlineExtraction
from app.knowledge.jobs.recovery import RecoveryReport
from app.knowledge.service import KnowledgeService
from app.knowledge.types import ItemStatus, ItemType, SearchMode
from tests.providers.fake_api import FakeApi
from tests.unit.make_files import make_docx, make_html, make_pdf, make_text

PROVIDER = "crashapi"
KEY = "sk-crash-harness"
KEY_ENV = "TROVE_KEY_CRASHAPI"
MODEL = f"{PROVIDER}:embed-small"
BASE_NAME = "crashbase"
# How long a CLI may go on after the other process of a pair ended (a run takes seconds).
PAIR_PATIENCE = 30.0
# How long a killed CLI's reader workers may outlive it.
ORPHAN_DEADLINE = 5.0
ROOT = Path(__file__).resolve().parents[2]

# Kill moments relative to work seen in the catalog (polled while the CLI runs).
_TRIGGERS = {
    "prepare": "SELECT count(*) FROM jobs WHERE status = 'running' "
    "AND kind IN ('prepare-root', 'reindex-subtree')",
    # The first documents go to the reader pool, whose workers may still be starting.
    "read": "SELECT count(*) FROM items WHERE phase = 'reading'",
    "embed": "SELECT count(*) FROM items WHERE phase IN ('embedding', 'writing')",
    "delete": "SELECT count(*) FROM jobs WHERE status = 'running' AND kind = 'delete-subtree'",
}
# `add --on-conflict replace` deletes the previous copy of the folder while indexing.
_ACTION_TRIGGERS = {
    "add": ("prepare", "read", "embed", "embed", "delete"),
    "reindex": ("prepare", "read", "embed", "embed"),
    "delete": ("delete",),
}

# The order job kinds are named in when several run at the moment of the kill.
_KIND_ORDER = ("delete-subtree", "reindex-subtree", "prepare-root", "index-documents")


def _word(rng: random.Random, length: int) -> str:
    return "".join(rng.choice("bcdfghjklmnprstvz") + rng.choice("aeiou") for _ in range(length))


def _wait_any(procs: Iterable[subprocess.Popen[bytes]], seconds: float) -> None:
    """Sleep `seconds`, or less once every process has ended."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and any(p.poll() is None for p in procs):
        time.sleep(min(0.01, max(0.0, deadline - time.monotonic())))


def _wait_all(procs: dict[str, subprocess.Popen[bytes]], seconds: float) -> list[str]:
    """Wait for every process; the names of those still running after `seconds`."""
    deadline = time.monotonic() + seconds
    for proc in procs.values():
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=max(0.0, deadline - time.monotonic()))
    return [name for name, proc in procs.items() if proc.poll() is None]


def make_corpus(folder: Path, seed: int = 7) -> dict[str, str]:
    """12 small files (md, txt, html, pdf, docx), two in a subfolder; each holds one word
    found nowhere else. Returns file name -> that word."""
    rng = random.Random(seed)
    vocabulary = [_word(rng, rng.randint(2, 4)) for _ in range(300)]

    def prose(sentences: int) -> list[str]:
        return [
            " ".join(rng.choice(vocabulary) for _ in range(rng.randint(8, 16))).capitalize() + "."
            for _ in range(sentences)
        ]

    (folder / "sub").mkdir(parents=True, exist_ok=True)
    words: dict[str, str] = {}
    names = [f"note{i}.md" for i in range(3)] + ["sub/deep.md"]
    names += [f"plain{i}.txt" for i in range(2)] + ["sub/plain.txt"]
    names += ["page0.html", "page1.html", "report0.pdf", "report1.pdf", "memo.docx"]
    for name in names:
        unique = "uniq" + _word(rng, 4)
        words[Path(name).name] = unique
        body = prose(rng.randint(6, 14))
        body.insert(rng.randrange(len(body)), f"The {unique} marker.")
        path = folder / name
        if name.endswith(".md"):
            make_text(path, f"# {Path(name).stem}\n\n" + "\n\n".join(body) + "\n")
        elif name.endswith(".txt"):
            make_text(path, "\n\n".join(body) + "\n")
        elif name.endswith(".html"):
            make_html(path, title=path.stem, body="".join(f"<p>{s}</p>" for s in body))
        elif name.endswith(".pdf"):
            half = len(body) // 2
            make_pdf(path, ["\n".join(body[:half]), "\n".join(body[half:])])
        else:
            make_docx(path, body, heading=path.stem)
    return words


def _is_reader_worker(proc: psutil.Process) -> bool:
    try:
        return any("spawn_main" in part for part in proc.cmdline())
    except psutil.Error:
        return False


def _describe(proc: psutil.Process) -> str:
    try:
        return f"{proc.pid} (ppid {proc.ppid()}) {' '.join(proc.cmdline())[:120]}"
    except psutil.Error:
        return str(proc.pid)


def _gone(proc: psutil.Process) -> bool:
    # A zombie is dead (its memory is freed); who reaps it is up to its new parent.
    try:
        return not proc.is_running() or proc.status() == psutil.STATUS_ZOMBIE
    except psutil.Error:
        return True


def _in_session(session: int) -> list[psutil.Process]:
    """The live processes of a process group (the killed CLI's session)."""
    found = []
    for proc in psutil.process_iter():
        try:
            if os.getpgid(proc.pid) == session and not _gone(proc):
                found.append(proc)
        except (OSError, psutil.Error):
            continue  # gone meanwhile
    return found


@dataclass(slots=True)
class KillCheck:
    """What a kill left behind: the descendants it had and how long the last one lived on."""

    descendants: int = 0
    workers: int = 0  # of them reader workers (the rest: resource_tracker)
    worst_s: float = 0.0
    survivors: list[str] = field(default_factory=list)


def kill_and_check(proc: subprocess.Popen[bytes], deadline: float = ORPHAN_DEADLINE) -> KillCheck:
    """SIGKILL the CLI process alone, then wait up to `deadline` seconds for every one of
    its descendants to end by itself; those still alive are named and killed."""
    try:
        before = psutil.Process(proc.pid).children(recursive=True)
    except psutil.Error:
        before = []  # it ended just now
    # Told apart now: once the parent is gone, a worker may be gone within a millisecond.
    workers = {p.pid for p in before if _is_reader_worker(p)}
    os.kill(proc.pid, signal.SIGKILL)
    killed_at = time.monotonic()
    proc.wait()  # reaped: its pid no longer looks alive to owner checks
    # A worker spawned after the sample is still in the CLI's session (it never leaves it).
    late = _in_session(proc.pid)
    workers.update(p.pid for p in late if _is_reader_worker(p))
    watched = {p.pid: p for p in [*before, *late]}
    check = KillCheck(len(watched), len(workers))
    alive = dict(watched)
    while alive:
        for pid, child in list(alive.items()):
            if _gone(child):
                del alive[pid]
                check.worst_s = max(check.worst_s, time.monotonic() - killed_at)
        if not alive or time.monotonic() - killed_at > deadline:
            break
        time.sleep(0.01)  # polling other processes' exit; nothing to wait on across parents
    for child in alive.values():
        check.survivors.append(_describe(child))
        with contextlib.suppress(psutil.Error):
            child.kill()
    if alive:
        check.worst_s = time.monotonic() - killed_at
    return check


@dataclass(slots=True)
class Outcome:
    action: str
    killed: bool
    delay: float
    elapsed: float
    returncode: int | None
    phase: str = ""
    violations: list[str] = field(default_factory=list)
    stuck: int = 0
    hung: list[str] = field(default_factory=list)  # CLIs that never returned (pair rounds)
    kill_checks: list[KillCheck] = field(default_factory=list)

    def checked(self, check: KillCheck, who: str) -> None:
        self.kill_checks.append(check)
        self.violations.extend(
            f"{who}: reader process outlived its killed parent by > {ORPHAN_DEADLINE:.0f} s: {s}"
            for s in check.survivors
        )


@dataclass(slots=True)
class Tally:
    rounds: int = 0
    kills: int = 0
    violations: list[str] = field(default_factory=list)
    hangs: list[str] = field(default_factory=list)
    stuck_items: int = 0
    kills_by_phase: Counter[str] = field(default_factory=Counter)
    rounds_by_action: Counter[str] = field(default_factory=Counter)
    recovered: Counter[str] = field(default_factory=Counter)
    # Kills whose CLI had reader workers / any descendant, and the longest a descendant
    # lived on after its parent was killed.
    kills_with_workers: int = 0
    kills_with_descendants: int = 0
    worst_orphan_s: float = 0.0
    seconds: float = 0.0

    def add(self, outcome: Outcome, recovered: RecoveryReport | None) -> None:
        self.rounds += 1
        self.kills += int(outcome.killed)
        self.violations.extend(f"round {self.rounds}: {v}" for v in outcome.violations)
        self.hangs.extend(f"round {self.rounds}: {h}" for h in outcome.hung)
        self.stuck_items += outcome.stuck
        self.kills_by_phase[outcome.phase] += 1
        self.rounds_by_action[outcome.action] += 1
        for check in outcome.kill_checks:
            self.kills_with_workers += int(check.workers > 0)
            self.kills_with_descendants += int(check.descendants > 0)
            self.worst_orphan_s = max(self.worst_orphan_s, check.worst_s)
        if recovered is not None:
            self.recovered["interrupted_items"] += recovered.interrupted_items
            self.recovered["requeued_jobs"] += recovered.requeued_jobs
            self.recovered["abandoned_jobs"] += recovered.abandoned_jobs
            self.recovered["resumed_deletions"] += recovered.resumed_deletions


class CrashHarness:
    def __init__(
        self, workdir: Path, api: FakeApi, *, seed: int = 1, pair_share: float = 0.0
    ) -> None:
        self.home = workdir / "home"
        self.corpus = workdir / "corpus"
        self.logs = workdir / "logs"
        self.logs.mkdir(parents=True, exist_ok=True)
        self.words = make_corpus(self.corpus)
        self.api = api
        self.rng = random.Random(seed)
        self.pair_share = pair_share  # rounds that run two processes at once
        self.typical: dict[str, float] = {}
        self.sessions: set[int] = set()  # process group ids of every CLI started
        self.env = {k: v for k, v in os.environ.items() if k != "TROVE_HOME"}
        self.env.update({KEY_ENV: KEY, "QT_QPA_PLATFORM": "offscreen"})
        os.environ[KEY_ENV] = KEY  # this process's services embed queries through the API
        svc = self.service()
        try:
            svc.save_provider(PROVIDER, "openai", base_url=api.base_url, models=["embed-small"])
            self.base_id = svc.create_base(
                BASE_NAME, embedding_model=MODEL, chunk_size=96, chunk_overlap=16
            ).id
        finally:
            svc.close()

    def service(self) -> KnowledgeService:
        # The configured providers (the fake API) and inline reading: no worker processes.
        return KnowledgeService(self.home, extraction=InlineExtraction())

    # -- running the CLI --------------------------------------------------------------

    def command(self, action: str) -> list[str]:
        args = {
            "add": ["add", BASE_NAME, str(self.corpus), "--wait", "--on-conflict", "replace"],
            "reindex": ["reindex", BASE_NAME],
            "delete": ["delete", BASE_NAME, "--all"],
        }[action]
        return [sys.executable, "-m", "app", "--home", str(self.home), *args]

    def run_cli(self, action: str, kill_after: float | None, *, trigger: str = "") -> Outcome:
        """Run one CLI command and SIGKILL it (see kill_and_check) `kill_after` seconds after
        it starts, or, with a `trigger` (see _TRIGGERS), that long after the catalog shows the
        trigger's work running: short windows that a delay from the start rarely hits."""
        log = self.logs / f"{action}.log"
        started = time.monotonic()
        check: KillCheck | None = None
        with log.open("wb") as out:
            proc = self._spawn(action, out)
            try:
                if kill_after is None:
                    proc.wait(timeout=120)
                elif self._wait_for_moment(proc, kill_after, trigger):
                    check = kill_and_check(proc)
            finally:
                if proc.poll() is None:
                    os.killpg(proc.pid, signal.SIGKILL)  # a hang (or an error): all of it
                proc.wait()  # reaped: its pid no longer looks alive to owner checks
        elapsed = time.monotonic() - started
        outcome = Outcome(action, check is not None, kill_after or 0.0, elapsed, proc.returncode)
        if check is not None:
            outcome.checked(check, action)
        elif proc.returncode != 0:
            detail = log.read_text(encoding="utf-8", errors="replace")[-2000:]
            outcome.phase = "finished"
            outcome.violations.append(f"{action} exited {proc.returncode} unkilled: {detail}")
        return outcome

    def _spawn(self, action: str, out: IO[bytes]) -> subprocess.Popen[bytes]:
        # Its own session: its reader workers can be found (and cleaned up) by group.
        proc = subprocess.Popen(
            self.command(action),
            cwd=ROOT,
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=out,
            start_new_session=True,
        )
        self.sessions.add(proc.pid)
        return proc

    def stray_processes(self) -> list[str]:
        """Processes (not zombies) still alive in the sessions of the CLIs this harness ran."""
        stray = []
        for proc in psutil.process_iter(["pid", "name", "status"]):
            try:
                if os.getpgid(proc.pid) in self.sessions and proc.status() != psutil.STATUS_ZOMBIE:
                    stray.append(f"{proc.pid} {proc.name()}")
            except (OSError, psutil.Error):
                continue  # gone meanwhile
        return stray

    def run_pair(self) -> Outcome:
        """`add` and, a little later, `delete --all` in a second process (the GUI and a
        terminal on one data dir); each is killed at a random moment or left to finish."""
        t_add, t_delete = self.typical["add"], self.typical["delete"]
        second_at = self.rng.uniform(0.0, t_add)
        plan = {
            "add": self.rng.uniform(0.0, t_add) if self.rng.random() < 0.7 else None,
            "delete": second_at + self.rng.uniform(0.0, t_delete)
            if self.rng.random() < 0.7
            else None,
        }
        procs: dict[str, subprocess.Popen[bytes]] = {}
        killed: set[str] = set()
        checks: list[tuple[KillCheck, str]] = []
        started = time.monotonic()
        with (
            (self.logs / "pair-add.log").open("wb") as out_a,
            (self.logs / "pair-delete.log").open("wb") as out_d,
        ):
            try:
                procs["add"] = self._spawn("add", out_a)
                events = sorted(
                    [(second_at, "start", "delete")]
                    + [(at, "kill", name) for name, at in plan.items() if at is not None]
                )
                for at, what, name in events:
                    left = started + at - time.monotonic()
                    if left > 0:
                        _wait_any(procs.values(), left)
                    if what == "start":
                        procs[name] = self._spawn(name, out_d)
                    elif name in procs and procs[name].poll() is None:
                        checks.append((kill_and_check(procs[name]), f"pair {name}"))
                        killed.add(name)
                hung = _wait_all(procs, PAIR_PATIENCE)
            finally:
                for proc in procs.values():
                    if proc.poll() is None:
                        os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait()
        outcome = Outcome("add+delete", bool(killed), second_at, time.monotonic() - started, None)
        outcome.phase = "pair:" + ("+".join(sorted(killed)) + " killed" if killed else "finished")
        for check, who in checks:
            outcome.checked(check, who)
        outcome.hung = [
            f"`{name}` still waiting {PAIR_PATIENCE:.0f} s after the other process ended"
            for name in hung
        ]
        return outcome

    def _wait_for_moment(self, proc: subprocess.Popen[bytes], delay: float, trigger: str) -> bool:
        """Wait until it is time to kill; False when the process ended first."""
        if not trigger:
            try:
                proc.wait(timeout=delay)
                return False
            except subprocess.TimeoutExpired:
                return True
        deadline = time.monotonic() + 120
        conn = apsw.Connection(str(self.home / "trove.sqlite"), flags=apsw.SQLITE_OPEN_READONLY)
        conn.set_busy_timeout(5000)
        try:
            while proc.poll() is None and time.monotonic() < deadline:
                if self._reached(conn, trigger):
                    try:
                        proc.wait(timeout=delay)
                        return False
                    except subprocess.TimeoutExpired:
                        return True
                time.sleep(0.005)  # polling another process's progress through the catalog
        finally:
            conn.close()
        return proc.poll() is None

    @staticmethod
    def _reached(conn: apsw.Connection, trigger: str) -> bool:
        row = conn.execute(_TRIGGERS[trigger]).fetchone()
        return bool(row and row[0])

    def calibrate(self) -> None:
        """Time one unkilled run of each action (they also must leave a clean home)."""
        for action in ("add", "reindex", "delete"):
            outcome = self.run_cli(action, None)
            assert not outcome.violations, outcome.violations
            self.typical[action] = outcome.elapsed
            _, violations, _ = self.recover_and_check()
            assert not violations, violations

    # -- one round --------------------------------------------------------------------

    def next_action(self) -> str:
        svc = self.service()
        try:
            live = [i for i in svc.list_items(self.base_id) if i.status is not ItemStatus.DELETING]
        finally:
            svc.close()
        if not live:
            return "add"  # deleted (or never added): add the corpus again
        roll = self.rng.random()
        return "reindex" if roll < 0.45 else "delete" if roll < 0.8 else "add"

    def round(self) -> tuple[Outcome, RecoveryReport | None]:
        if self.rng.random() < self.pair_share:
            outcome = self.run_pair()
            recovered, violations, stuck = self.recover_and_check()
            outcome.violations.extend(violations)
            outcome.stuck = stuck
            return outcome, recovered
        action = self.next_action()
        if self.rng.random() < 0.5:
            # Anywhere between the start and the typical run time (most land in start-up
            # and in reading, which dominate the run).
            outcome = self.run_cli(action, self.rng.uniform(0.0, self.typical[action]))
        else:
            # Soon after a given piece of work starts: expanding the folder, the short burst
            # of embedding and writing, or a deletion.
            trigger = self.rng.choice(_ACTION_TRIGGERS[action])
            delay = self.rng.uniform(0.0, 0.05)
            outcome = self.run_cli(action, delay, trigger=trigger)
        if outcome.violations and not outcome.killed:
            return outcome, None  # it failed by itself: the log says why
        if not outcome.killed:
            outcome.phase = "finished"
        recovered, violations, stuck = self.recover_and_check(outcome)
        outcome.violations.extend(violations)
        outcome.stuck = stuck
        return outcome, recovered

    def recover_and_check(
        self, outcome: Outcome | None = None
    ) -> tuple[RecoveryReport, list[str], int]:
        svc = self.service()
        try:
            if outcome is not None and outcome.killed:
                outcome.phase = self._phase(svc)
            recovered = svc.recover()
            svc.run_pending_jobs()
            violations, stuck = self.judge(svc)
            return recovered, violations, stuck
        finally:
            svc.close()

    def _phase(self, svc: KnowledgeService) -> str:
        """What the killed process was doing, read from the catalog it left behind."""
        running = {j.kind for j in svc.catalog.list_jobs(statuses=("running",))}
        if not running:
            queued = svc.catalog.list_jobs(statuses=("queued",))
            return "queued" if queued else "idle"
        kind = next(k for k in _KIND_ORDER if k in running)
        if kind != "index-documents":
            return kind
        phases = {
            str(i.phase)
            for i in svc.list_items(self.base_id)
            if i.status is ItemStatus.PROCESSING and i.phase is not None
        }
        for phase in ("writing", "embedding", "reading"):
            if phase in phases:
                return f"{kind}:{phase}"
        return kind

    def judge(
        self, svc: KnowledgeService, *, tmp_grace: float | None = None
    ) -> tuple[list[str], int]:
        violations: list[str] = []
        report = (
            svc.doctor().report
            if tmp_grace is None
            else doctor.check(svc.parts, tmp_grace=tmp_grace)
        )
        violations.extend(f"doctor: {p.code} {p.item_id or ''} {p.detail}" for p in report.problems)
        items = svc.list_items(self.base_id)
        stuck = [i for i in items if i.status not in (ItemStatus.COMPLETED, ItemStatus.FAILED)]
        violations.extend(f"stuck: {i.type} {i.title!r} is {i.status}" for i in stuck)
        completed = {
            Path(i.source).name: i.id
            for i in items
            if i.type is ItemType.FILE and i.status is ItemStatus.COMPLETED
        }
        for name, item_id in completed.items():
            hits = {
                r.item_id
                for r in svc.search(self.base_id, self.words[name], mode=SearchMode.BM25).results
            }
            if item_id not in hits:
                violations.append(f"search: {name} ({item_id}) not found by its word")
        if completed:
            response = svc.search(self.base_id, next(iter(self.words.values())))  # hybrid
            if response.mode is not SearchMode.HYBRID:
                violations.append(f"search: mode {response.mode}, expected hybrid")
        return violations, len(stuck)

    def settle(self) -> list[str]:
        """After the last round: reindex everything unkilled; every document must complete."""
        svc = self.service()
        try:
            if any(i.status is not ItemStatus.DELETING for i in svc.list_items(self.base_id)):
                svc.reindex(self.base_id)
            else:
                svc.add(self.base_id, [self.corpus])
            svc.run_pending_jobs()
            violations, _ = self.judge(svc, tmp_grace=0.0)  # leftover temp files count now
            leaves = [i for i in svc.list_items(self.base_id) if i.type is ItemType.FILE]
            if len(leaves) != len(self.words):
                violations.append(f"settle: {len(leaves)} documents, expected {len(self.words)}")
            failed = [i for i in leaves if i.status is not ItemStatus.COMPLETED]
            violations.extend(f"settle: {i.title!r} {i.status} {i.error_code}" for i in failed)
            return violations
        finally:
            svc.close()

    def leftover_temp_files(self) -> int:
        raw = self.home / "bases" / self.base_id / "raw"
        return sum(1 for p in raw.rglob(".tmp-*.part")) if raw.exists() else 0


def run_rounds(harness: CrashHarness, rounds: int) -> Tally:
    tally = Tally()
    started = time.monotonic()
    for _ in range(rounds):
        outcome, recovered = harness.round()
        tally.add(outcome, recovered)
    tally.seconds = time.monotonic() - started
    return tally
