"""Several real writers on one base at once, as people use Trove: the window, two or three
terminals and an AI agent.

One round, on a fresh base of one data folder:
- three `python -m app add BASE DIR DIR --wait` processes (each with its reader workers),
- one `python -m app mcp` session (kept open across rounds, as an agent host keeps it) whose
  `kb_manage add ... wait=true` adds two folders,
- this process's own `KnowledgeService` + `JobExecutor` (the window's job runtime) adding two
  folders,
all started together. The folders overlap: four of the six are added by two writers, so the
cross-process conflict check (a source the base already has is skipped) is raced too; and
each writer also adds a loose file of its own named `readme.md`, so the writers race for
the same material name under `raw/`.

A round is bounded (`ROUND_LIMIT`); then it is judged: every writer returned in time and
reported success, no item failed (in particular not with "database is locked"), nothing is
left queued, running, preparing or processing, each folder and each document is in the base
exactly once, the doctor finds nothing, and every document is found by its own word.

Used by tests/reliability/test_multiprocess.py and tests/bench/multiprocess.py.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from app.knowledge.service import KnowledgeService
from app.knowledge.types import ItemStatus, ItemType, SearchMode
from app.runtime.executor import JobExecutor
from tests.unit.make_files import make_docx, make_html, make_pdf, make_text

ROOT = Path(__file__).resolve().parents[2]
FOLDERS = 6
# Writer -> the folders it adds (indexes into the round's folders); each folder twice.
CLI_WRITERS = {"cli-1": (0, 1), "cli-2": (1, 2), "cli-3": (2, 3)}
MCP_FOLDERS = (3, 4)
WINDOW_FOLDERS = (4, 5)
WRITERS = (*CLI_WRITERS, "mcp", "window")
_ADDS = Counter(i for picks in (*CLI_WRITERS.values(), MCP_FOLDERS, WINDOW_FOLDERS) for i in picks)
OVERLAPS = sum(n - 1 for n in _ADDS.values())  # skips a round must report
ROUND_LIMIT = 120.0  # seconds for every writer of a round to return
MCP_TIMEOUT = 90.0
LOCK_WORDS = ("locked", "busy")

# Waits for `predicate` for at most `timeout` seconds while this process's event loop runs
# (qtbot.waitUntil in tests, a processEvents loop in the bench); True if it held.
WaitUntil = Callable[[Callable[[], bool], float], bool]


@dataclass(slots=True)
class Round:
    number: int
    seconds: float = 0.0
    documents: int = 0
    violations: list[str] = field(default_factory=list)
    hangs: list[str] = field(default_factory=list)
    lock_failures: int = 0
    skipped: int = 0  # sources a writer found already in the base (the overlap worked)


@dataclass(slots=True)
class Tally:
    rounds: int = 0
    documents: int = 0
    violations: list[str] = field(default_factory=list)
    hangs: list[str] = field(default_factory=list)
    lock_failures: int = 0
    skipped: int = 0
    round_seconds: list[float] = field(default_factory=list)

    def add(self, result: Round) -> None:
        self.rounds += 1
        self.documents += result.documents
        self.violations.extend(f"round {result.number}: {v}" for v in result.violations)
        self.hangs.extend(f"round {result.number}: {h}" for h in result.hangs)
        self.lock_failures += result.lock_failures
        self.skipped += result.skipped
        self.round_seconds.append(result.seconds)

    def to_json(self) -> dict[str, Any]:
        ordered = sorted(self.round_seconds) or [0.0]
        return {
            "rounds": self.rounds,
            "documents": self.documents,
            "lockFailures": self.lock_failures,
            "hangs": len(self.hangs),
            "violations": len(self.violations),
            "overlapSkips": self.skipped,
            "roundSecondsMedian": round(ordered[len(ordered) // 2], 2),
            "roundSecondsMax": round(ordered[-1], 2),
            "firstViolations": self.violations[:10],
            "firstHangs": self.hangs[:10],
        }


# -- the agent -------------------------------------------------------------------------------


class McpSession:
    """One `trove mcp` process and its client session; its event loop runs in a thread."""

    def __init__(self, home: Path, log: IO[str]) -> None:
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._stop: asyncio.Event | None = None
        self._client: ClientSession | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._main, args=(home, log), daemon=True)
        self._thread.start()
        if not self._ready.wait(MCP_TIMEOUT):
            raise RuntimeError("the MCP server did not start")
        if self._error is not None:
            raise self._error

    def _main(self, home: Path, log: IO[str]) -> None:
        try:
            self._loop.run_until_complete(self._session(home, log))
        except BaseException as exc:
            self._error = exc
        finally:
            self._ready.set()
            self._loop.close()

    async def _session(self, home: Path, log: IO[str]) -> None:
        self._stop = asyncio.Event()
        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "app", "--home", str(home), "mcp"],
            cwd=str(ROOT),
            env=_child_env(),
        )
        async with (
            stdio_client(params, errlog=log) as (read, write),
            ClientSession(read, write, read_timeout_seconds=None) as client,
        ):
            await client.initialize()
            self._client = client
            self._ready.set()
            await self._stop.wait()

    def call(self, tool: str, arguments: dict[str, Any]) -> Future[dict[str, Any]]:
        """Start a tool call; the future holds its structured result (errors included)."""
        assert self._client is not None
        client = self._client

        async def run() -> dict[str, Any]:
            result = await client.call_tool(tool, arguments)
            data = result.structured_content or {}
            if result.is_error:
                return {"error": data.get("error", data)}
            return dict(data)

        return asyncio.run_coroutine_threadsafe(run(), self._loop)

    def close(self) -> None:
        if self._stop is not None and not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(MCP_TIMEOUT)


def _child_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "TROVE_HOME"}
    env["QT_QPA_PLATFORM"] = "offscreen"
    return env


# -- the corpus ------------------------------------------------------------------------------


def make_folder(folder: Path, rng: random.Random, used: set[str]) -> dict[Path, str]:
    """Five small documents (md, txt, html and a pdf or docx, one in a subfolder), each with a
    word found nowhere else in the run. Returns path -> that word."""
    vocabulary = ["soil", "river", "lamp", "cedar", "harbour", "copper", "meadow", "quartz"]
    words: dict[Path, str] = {}

    def unique() -> str:
        while True:
            word = "mpq" + "".join(
                rng.choice("bcdfghjklmnprstvz") + rng.choice("aeiou") for _ in range(4)
            )
            if word not in used:
                used.add(word)
                return word

    def prose(word: str) -> list[str]:
        lines = [
            " ".join(rng.choice(vocabulary) for _ in range(10)).capitalize() + "."
            for _ in range(rng.randint(3, 8))
        ]
        lines.insert(rng.randrange(len(lines) + 1), f"The {word} marker.")
        return lines

    (folder / "sub").mkdir(parents=True, exist_ok=True)
    kinds = ["md", "sub/md", "txt", "html", rng.choice(["pdf", "docx"])]
    for n, kind in enumerate(kinds):
        word = unique()
        body = prose(word)
        if kind == "md":
            path = make_text(folder / f"note{n}.md", f"# Note {n}\n\n" + "\n\n".join(body) + "\n")
        elif kind == "sub/md":
            path = make_text(folder / "sub" / f"deep{n}.md", "\n\n".join(body) + "\n")
        elif kind == "txt":
            path = make_text(folder / f"plain{n}.txt", "\n".join(body) + "\n")
        elif kind == "html":
            path = make_html(
                folder / f"page{n}.html",
                title=f"Page {n}",
                body="".join(f"<p>{s}</p>" for s in body),
            )
        elif kind == "pdf":
            path = folder / f"report{n}.pdf"
            make_pdf(path, ["\n".join(body)])
        else:
            path = folder / f"memo{n}.docx"
            make_docx(path, body, heading=f"Memo {n}")
        words[path.resolve()] = word
    return words


def make_loose(folder: Path, rng: random.Random, used: set[str]) -> dict[Path, str]:
    """One `readme.md` per writer, each in a folder of its own: same name, other text."""
    words: dict[Path, str] = {}
    for writer in WRITERS:
        word = "mpl" + "".join(rng.choice("bcdfghjklmnprstvz") + rng.choice("aeiou")
                               for _ in range(4))  # fmt: skip
        while word in used:
            word += rng.choice("aeiou")
        used.add(word)
        (folder / writer).mkdir(parents=True, exist_ok=True)
        path = make_text(folder / writer / "readme.md", f"# Readme\n\nThe {word} of {writer}.\n")
        words[path.resolve()] = word
    return words


# -- one run ---------------------------------------------------------------------------------


class MultiWriterRun:
    """Rounds of concurrent writers on one data folder (see the module docstring)."""

    def __init__(self, workdir: Path, wait_until: WaitUntil, *, seed: int = 1) -> None:
        self.workdir = workdir
        self.home = workdir / "home"
        self.logs = workdir / "logs"
        self.logs.mkdir(parents=True, exist_ok=True)
        self.wait_until = wait_until
        self.rng = random.Random(seed)
        self.used_words: set[str] = set()
        # The window's side: the default extraction (reader worker processes), as the app.
        self.service = KnowledgeService(self.home)
        self.executor = JobExecutor(self.service)
        self.executor.start()
        self._mcp_log = (self.logs / "mcp.log").open("w", encoding="utf-8")
        self.mcp = McpSession(self.home, self._mcp_log)

    def close(self) -> None:
        try:
            self.mcp.close()
        finally:
            self._mcp_log.close()
            self.executor.shutdown()
            self.service.close()

    # -- a round ------------------------------------------------------------------------

    def round(self, number: int) -> Round:
        result = Round(number)
        base = self.service.create_base(f"mp-{number}", chunk_size=96, chunk_overlap=16)
        self.service.set_agent_writes(base.id, True)
        folders = [self.workdir / "corpus" / f"r{number}" / f"f{i}" for i in range(FOLDERS)]
        words: dict[Path, str] = {}
        for folder in folders:
            words.update(make_folder(folder, self.rng, self.used_words))
        loose_dir = self.workdir / "corpus" / f"r{number}" / "loose"
        words.update(make_loose(loose_dir, self.rng, self.used_words))
        loose = {w: loose_dir / w / "readme.md" for w in WRITERS}
        result.documents = len(words)

        started = time.monotonic()
        procs = {
            name: self._spawn(name, base.name, [*(folders[i] for i in picks), loose[name]], number)
            for name, picks in CLI_WRITERS.items()
        }
        agent = self.mcp.call(
            "kb_manage",
            {
                "baseId": base.id,
                "action": "add",
                "sources": [*(str(folders[i]) for i in MCP_FOLDERS), str(loose["mcp"])],
                "wait": True,
            },
        )
        window = self.service.add(base.id, [*(folders[i] for i in WINDOW_FOLDERS), loose["window"]])
        result.skipped += len(window.skipped)
        if window.errors:
            result.violations.append(f"window add errors: {window.errors}")
        self.executor.schedule()

        deadline = started + ROUND_LIMIT

        def writers_done() -> bool:
            return (
                all(p.poll() is not None for p in procs.values())
                and agent.done()
                and not self._busy(base.id)
            )

        self.wait_until(writers_done, max(0.0, deadline - time.monotonic()))
        result.seconds = time.monotonic() - started
        self._collect_cli(procs, number, result)
        self._collect_agent(agent, result)
        if self._busy(base.id):
            result.hangs.append(f"items still in progress after {ROUND_LIMIT:.0f} s")
            # Let the stragglers finish (or not) before judging, without blocking forever.
            self.wait_until(lambda: not self._busy(base.id), 30.0)
        self._judge(base.id, folders, words, result)
        return result

    def _spawn(
        self, name: str, base_name: str, folders: list[Path], number: int
    ) -> subprocess.Popen[bytes]:
        command = [
            sys.executable, "-m", "app", "--home", str(self.home),
            "add", base_name, *map(str, folders), "--wait",
        ]  # fmt: skip
        log = (self.logs / f"r{number}-{name}.log").open("wb")
        try:
            # Its own session: a hung writer and its reader workers are killed together.
            return subprocess.Popen(
                command, cwd=ROOT, env=_child_env(), stdin=subprocess.DEVNULL,
                stdout=log, stderr=log, start_new_session=True,
            )  # fmt: skip
        finally:
            log.close()

    def _collect_cli(
        self, procs: dict[str, subprocess.Popen[bytes]], number: int, result: Round
    ) -> None:
        for name, proc in procs.items():
            if proc.poll() is None:
                result.hangs.append(
                    f"{name} (`add --wait`) still running after {ROUND_LIMIT:.0f} s"
                )
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            output = (self.logs / f"r{number}-{name}.log").read_text("utf-8", "replace")
            result.skipped += sum(1 for line in output.splitlines() if line.startswith("skipped "))
            if proc.returncode not in (0, -signal.SIGKILL):
                result.violations.append(f"{name} exited {proc.returncode}: {output[-1500:]}")
            if "Traceback" in output:
                result.violations.append(f"{name} printed a traceback: {output[-1500:]}")

    def _collect_agent(self, agent: Future[dict[str, Any]], result: Round) -> None:
        if not agent.done():
            result.hangs.append(f"kb_manage add still waiting after {ROUND_LIMIT:.0f} s")
            # The session stays usable; the call ends when its own wait runs out.
            return
        answer = agent.result()
        if "error" in answer:
            result.violations.append(f"kb_manage failed: {answer['error']}")
            return
        result.skipped += len(answer.get("skipped", []))
        if answer.get("errors"):
            result.violations.append(f"kb_manage errors: {answer['errors']}")
        if answer.get("processing") != "done":
            result.violations.append(f"kb_manage answered processing={answer.get('processing')}")
        unfinished = [i for i in answer.get("items", []) if i.get("status") != "completed"]
        if unfinished:
            result.violations.append(f"kb_manage answered with unfinished items: {unfinished}")

    def _busy(self, base_id: str) -> bool:
        counts = self.service.catalog.job_counts(base_id)
        if any(counts):
            return True
        return any(
            i.status not in (ItemStatus.COMPLETED, ItemStatus.FAILED)
            for i in self.service.list_items(base_id)
        )

    # -- judging ------------------------------------------------------------------------

    def _judge(
        self, base_id: str, folders: list[Path], words: dict[Path, str], result: Round
    ) -> None:
        items = self.service.list_items(base_id)
        for item in items:
            if item.status is ItemStatus.FAILED:
                said = f"{item.error_code}: {item.error_message}"
                if any(w in said.lower() for w in LOCK_WORDS):
                    result.lock_failures += 1
                result.violations.append(f"{item.type} {item.title!r} failed: {said}")
            elif item.status is not ItemStatus.COMPLETED:
                result.violations.append(f"{item.type} {item.title!r} left {item.status}")
        roots = Counter(
            Path(i.source).resolve() for i in items if i.type is ItemType.DIRECTORY
            and i.parent_id is None
        )  # fmt: skip
        for folder in folders:
            if roots[folder.resolve()] != 1:
                result.violations.append(f"folder {folder.name} in the base {roots[folder]} times")
        materials = Counter(i.relative_path for i in items if i.relative_path)
        shared = sorted(p for p, n in materials.items() if n > 1)
        if shared:
            result.violations.append(f"items share a material name: {shared[:5]}")
        files = Counter(Path(i.source).resolve() for i in items if i.type is ItemType.FILE)
        for path in words:
            if files[path] != 1:
                result.violations.append(f"{path.name} in the base {files[path]} times")
        by_path = {Path(i.source).resolve(): i.id for i in items if i.type is ItemType.FILE}
        for path, word in words.items():
            if path not in by_path:
                continue
            hits = {
                r.item_id for r in self.service.search(base_id, word, mode=SearchMode.BM25).results
            }
            if by_path[path] not in hits:
                result.violations.append(f"{path.name} not found by its word {word!r}")
        report = self.service.doctor(base_id).report
        result.violations.extend(f"doctor: {p.code} {p.detail}" for p in report.problems)


def main_json(tally: Tally, **extra: Any) -> str:
    return json.dumps({**tally.to_json(), **extra})
