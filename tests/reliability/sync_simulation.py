"""A seeded simulation of linked-folder sync, Trinity-style: random changes to a real folder,
`trove sync` killed at random moments, restarted; then the base must equal a fresh index.

One seed, all of it drawn from `random.Random(seed)`:
- a folder of 3-6 small documents (Markdown with or without a heading of its own, plain
  text), some in subfolders, is linked to a base whose embedding model is served by
  `FakeApi` on 127.0.0.1, and indexed; names have one to four words (a plain document's
  title); a third of the seeds have chunks as long as the model reads and documents of
  several chunks, some one long paragraph (there the title takes room from chunks, and a
  longer name moves where they are cut);
- 1-3 rounds: 1-4 random changes (create, edit, rename, move to another or a new
  subfolder, delete), then a `trove sync` run that is SIGKILLed with probability 3/4:
  shortly after it starts, while it looks at the folder, while it indexes what it found,
  or at a uniform moment of a typical run;
- a last `trove sync`, not killed, must exit 0.
Then the judge: the linked folder's file items and a second base freshly indexed from the
same folder must agree exactly, file by file (path relative to the folder): status and
error code, title, and every chunk (offsets, token count, text, whether it has a vector),
and the material's title in the index (a rename keeps the vectors of unchanged chunks, so
what they were embedded with is not compared); nothing is left queued, running or deleting, no item is
there twice, and `doctor` (temporary files of any age counted) finds nothing.

File times are set on a clock an hour in the past that moves a second per write, so no
sync waits for a file to settle (sync_folder.RECENT_S) and every edit moves the mtime.

The runs are forks of a zygote that has imported the CLI (cli_zygote.py): a real `trove
sync` process from `main(argv)` on, killed by a real SIGKILL, that starts in ~30 ms
instead of ~1 s. Used by tests/reliability/test_sync_simulation.py and
tests/bench/sync_simulation.py.
"""

from __future__ import annotations

import os
import random
import shutil
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import apsw

from app.knowledge import doctor
from app.knowledge.jobs import runner
from app.knowledge.jobs.context import JobContext
from app.knowledge.jobs.reader_pool import InlineExtraction
from app.knowledge.jobs.sync_folder import FOLLOW_UP_S
from app.knowledge.service import KnowledgeService
from app.knowledge.types import ItemType
from tests.providers.fake_api import FakeApi
from tests.reliability.cli_zygote import Zygote

PROVIDER = "simapi"
KEY = "sk-sync-simulation"
KEY_ENV = "TROVE_KEY_SIMAPI"
MODEL = f"{PROVIDER}:embed-small"
BASE = "sim"
RUN_LIMIT_S = 60.0  # a sync run of a few small files that takes longer has hung
# (chunk size, overlap): far below the provider's input size (256 estimated tokens for an
# unknown model), and at it.
SMALL_CHUNKS = (40, 8)
FULL_CHUNKS = (256, 16)

_WORDS = [
    "amber", "basil", "cedar", "delta", "ember", "fjord", "garnet", "harbor", "iris",
    "juniper", "kelp", "lumen", "marsh", "nectar", "onyx", "pepper", "quill", "raven",
    "saffron", "tundra", "umber", "violet", "willow", "xenon", "yarrow", "zephyr",
]  # fmt: skip
_DIRS = ("", "", "notes", "notes/deep", "archive", "topics/sub")
_KINDS = ("md-titled", "md-plain", "txt", "txt-run")
_MOMENTS = ("start", "looking", "indexing", "uniform")
# Polled while a run goes (read-only, from this process): when it is worth a kill.
_TRIGGERS = {
    "looking": "SELECT count(*) FROM linked_folders WHERE state = 'syncing'",
    "indexing": "SELECT count(*) FROM jobs WHERE status = 'running' AND kind = 'index-documents'",
}


@dataclass(slots=True)
class SeedResult:
    seed: int
    rounds: int = 0
    kills: int = 0
    kill_moments: Counter[str] = field(default_factory=Counter)
    changes: Counter[str] = field(default_factory=Counter)
    violations: list[str] = field(default_factory=list)
    seconds: float = 0.0


@dataclass(slots=True)
class Tally:
    seeds: int = 0
    rounds: int = 0
    kills: int = 0
    kill_moments: Counter[str] = field(default_factory=Counter)
    changes: Counter[str] = field(default_factory=Counter)
    violations: list[str] = field(default_factory=list)
    failed_seeds: list[int] = field(default_factory=list)
    seconds: float = 0.0

    def add(self, result: SeedResult) -> None:
        self.seeds += 1
        self.rounds += result.rounds
        self.kills += result.kills
        self.kill_moments.update(result.kill_moments)
        self.changes.update(result.changes)
        self.violations.extend(f"seed {result.seed}: {v}" for v in result.violations)
        if result.violations:
            self.failed_seeds.append(result.seed)
        self.seconds += result.seconds

    def to_json(self) -> dict[str, Any]:
        return {
            "seeds": self.seeds,
            "rounds": self.rounds,
            "kills": self.kills,
            "killMoments": dict(sorted(self.kill_moments.items())),
            "changes": dict(sorted(self.changes.items())),
            "violations": len(self.violations),
            "failedSeeds": self.failed_seeds[:50],
            "seconds": round(self.seconds, 1),
            "secondsPerSeed": round(self.seconds / max(1, self.seeds), 3),
            "firstViolations": self.violations[:10],
        }


class _Folder:
    """The folder being synced: real files, written with mtimes on a clock of its own."""

    def __init__(self, root: Path, rng: random.Random, sentences: tuple[int, int]) -> None:
        self.root = root
        self.rng = rng
        self.sentences = sentences
        self.clock = time.time() - 3600.0
        self.serial = 0

    def files(self) -> list[str]:
        return sorted(p.relative_to(self.root).as_posix() for p in self.root.rglob("*.*"))

    def _stamp(self, path: Path) -> None:
        self.clock += 1.0
        os.utime(path, (self.clock, self.clock))

    def _text(self, kind: str) -> str:
        self.serial += 1
        rng = self.rng
        unique = f"mark{self.serial}q{rng.randrange(10**6)}"
        sentences = [
            " ".join(rng.choice(_WORDS) for _ in range(rng.randint(6, 12))).capitalize() + "."
            for _ in range(rng.randint(*self.sentences))
        ]
        sentences.insert(rng.randrange(len(sentences) + 1), f"The {unique} sign.")
        body = "\n\n".join(sentences) + "\n"
        if kind == "txt-run":  # one paragraph, no sentence ends: chunks are cut between words
            return " ".join(sentence.rstrip(".").lower() for sentence in sentences) + "\n"
        if kind == "md-titled":
            return f"# {rng.choice(_WORDS).capitalize()} {rng.choice(_WORDS)}\n\n{body}"
        return body

    def write(self, rel: str, text: str) -> None:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        self._stamp(path)

    def _new_name(self, kind: str, folder: str | None = None) -> str:
        self.serial += 1
        folder = self.rng.choice(_DIRS) if folder is None else folder
        # Names of one to four words: a plain document's title is its name, and a title
        # of more words takes more room from its chunks.
        words = [self.rng.choice(_WORDS) for _ in range(self.rng.randint(1, 4))]
        stem = f"{' '.join(words)}-{self.serial}"
        name = f"{stem}.{'md' if kind.startswith('md') else 'txt'}"
        return f"{folder}/{name}" if folder else name

    def create(self) -> None:
        kind = self.rng.choice(_KINDS)
        self.write(self._new_name(kind), self._text(kind))

    def edit(self, rel: str) -> None:
        path = self.root / rel
        text = path.read_text(encoding="utf-8")
        if self.rng.random() < 0.5:
            text += f"\nA later line, number {self.serial}, with {self.rng.choice(_WORDS)}.\n"
            self.serial += 1
        else:
            text = self._text("md-titled" if text.startswith("# ") else "md-plain")
        self.write(rel, text)

    def move(self, rel: str, *, same_folder: bool) -> None:
        source = self.root / rel
        suffix = source.suffix
        folder = str(Path(rel).parent.as_posix()) if same_folder else self.rng.choice(_DIRS)
        target_rel = self._new_name("txt" if suffix == ".txt" else "md", folder.strip("."))
        target = self.root / target_rel
        target.parent.mkdir(parents=True, exist_ok=True)
        source.rename(target)  # keeps its mtime, as a rename does

    def delete(self, rel: str) -> None:
        (self.root / rel).unlink()


class SyncSimulation:
    """Seeds against one data folder per seed, one zygote and one provider for all."""

    def __init__(self, workdir: Path, api: FakeApi, zygote: Zygote) -> None:
        self.workdir = workdir
        self.api = api
        self.zygote = zygote
        self.typical_s = 0.3  # a sync run's time, learned from the runs not killed
        self._unkilled: list[float] = []

    # -- a seed ---------------------------------------------------------------------------

    def run_seed(self, seed: int) -> SeedResult:
        result = SeedResult(seed)
        started = time.monotonic()
        rng = random.Random(seed)
        place = self.workdir / f"seed-{seed}"
        shutil.rmtree(place, ignore_errors=True)
        home = place / "home"
        # Chunks far below the model's input size, or as long as it reads: then the title
        # repeated in front of chunks takes room from them, and a new title moves them.
        chunking = rng.choice((SMALL_CHUNKS, SMALL_CHUNKS, FULL_CHUNKS))
        folder = _Folder(place / "folder", rng, (2, 9) if chunking == SMALL_CHUNKS else (8, 45))
        for _ in range(rng.randint(3, 6)):
            folder.create()
        base_id = self._link(home, folder.root, chunking)
        for number in range(rng.randint(1, 3)):
            result.rounds += 1
            self._change(folder, rng, result)
            self._sync(home, place / f"sync-{number}.log", rng, result, kill=rng.random() < 0.75)
        code = self._sync(home, place / "sync-last.log", rng, result, kill=False)
        if code != 0:
            log = (place / "sync-last.log").read_text(encoding="utf-8", errors="replace")
            result.violations.append(f"the last sync exited {code}: {log[-1500:]}")
        result.violations.extend(self._judge(home, base_id, folder.root, chunking))
        result.seconds = time.monotonic() - started
        if not result.violations:
            shutil.rmtree(place, ignore_errors=True)
        return result

    def _service(self, home: Path) -> KnowledgeService:
        return KnowledgeService(home, extraction=InlineExtraction())

    def _link(self, home: Path, folder: Path, chunking: tuple[int, int]) -> str:
        svc = self._service(home)
        try:
            svc.save_provider(
                PROVIDER, "openai", base_url=self.api.base_url, models=["embed-small"]
            )
            size, overlap = chunking
            base = svc.create_base(
                BASE, embedding_model=MODEL, chunk_size=size, chunk_overlap=overlap
            )
            svc.add_linked_folders(base.id, [folder])
            # The first sync waits a second for the folder's first indexing to end: on a
            # clock that second ahead, the queue drains at once.
            runner.drain(JobContext(svc.parts), base.id, clock=lambda: time.time() + FOLLOW_UP_S)
            return base.id
        finally:
            svc.close()

    def _change(self, folder: _Folder, rng: random.Random, result: SeedResult) -> None:
        for _ in range(rng.randint(1, 4)):
            files = folder.files()
            what = rng.choice(("create", "edit", "rename", "move", "delete")) if files else "create"
            if what == "delete" and len(files) <= 1:
                what = "create"  # an empty folder syncs to nothing: not much of a test
            result.changes[what] += 1
            if what == "create":
                folder.create()
            elif what == "edit":
                folder.edit(rng.choice(files))
            elif what == "delete":
                folder.delete(rng.choice(files))
            else:
                folder.move(rng.choice(files), same_folder=what == "rename")

    def _sync(
        self, home: Path, log: Path, rng: random.Random, result: SeedResult, *, kill: bool
    ) -> int | None:
        """One `trove sync` run; SIGKILLed at a drawn moment when `kill`. Its exit code, or
        None when it was killed."""
        moment = rng.choice(_MOMENTS) if kill else ""
        delay = rng.uniform(0.0, 0.15 if moment == "start" else 0.03)
        if moment == "uniform":
            delay = rng.uniform(0.0, self.typical_s)
        began = time.monotonic()
        run = self.zygote.spawn(["--home", str(home), "sync", BASE], log)
        if kill and self._moment_came(home, run, moment, delay):
            self.zygote.kill(run)
            result.kills += 1
            result.kill_moments[moment] += 1
            return None
        code = self.zygote.wait(run, RUN_LIMIT_S)
        if code is None:
            self.zygote.kill(run)
            result.violations.append(f"a sync run did not end within {RUN_LIMIT_S:.0f} s")
            return None
        if not kill:
            self._unkilled.append(time.monotonic() - began)
            recent = sorted(self._unkilled[-50:])
            self.typical_s = recent[len(recent) // 2]
        if kill:
            result.kill_moments["ended-first"] += 1
        return code

    def _moment_came(self, home: Path, run: Any, moment: str, delay: float) -> bool:
        """Wait for the moment to kill; False when the run ended first."""
        trigger = _TRIGGERS.get(moment)
        if trigger is not None:
            conn = apsw.Connection(str(home / "trove.sqlite"), flags=apsw.SQLITE_OPEN_READONLY)
            conn.set_busy_timeout(5000)
            try:
                deadline = time.monotonic() + RUN_LIMIT_S
                while not run.ended.is_set() and time.monotonic() < deadline:
                    row = conn.execute(trigger).fetchone()
                    if row and row[0]:
                        break
                    # Polling another process's progress through its catalog.
                    run.ended.wait(0.002)
            finally:
                conn.close()
        return not run.ended.wait(delay)

    # -- the judge --------------------------------------------------------------------------

    def _judge(
        self, home: Path, base_id: str, folder: Path, chunking: tuple[int, int]
    ) -> list[str]:
        svc = self._service(home)
        try:
            violations = self._leftovers(svc, base_id)
            size, overlap = chunking
            fresh = svc.create_base(
                "fresh", embedding_model=MODEL, chunk_size=size, chunk_overlap=overlap
            )
            svc.add(fresh.id, [folder])
            svc.run_pending_jobs(fresh.id)
            synced = _snapshot(svc, base_id, folder)
            expected = _snapshot(svc, fresh.id, folder)
            for rel in sorted(set(synced) | set(expected)):
                got, want = synced.get(rel), expected.get(rel)
                if got != want:
                    violations.append(f"{rel}: synced {_brief(got)} != fresh {_brief(want)}")
            report = doctor.check(svc.parts, base_id, tmp_grace=0.0)
            violations.extend(f"doctor: {p.code} {p.detail}" for p in report.problems)
            return violations
        finally:
            svc.close()

    @staticmethod
    def _leftovers(svc: KnowledgeService, base_id: str) -> list[str]:
        found = []
        busy = svc.catalog.list_jobs(base_id, statuses=("queued", "running"))
        found.extend(f"job left {j.status}: {j.kind}" for j in busy)
        items = svc.list_items(base_id)
        sources = Counter(i.source for i in items if i.type is ItemType.FILE)
        found.extend(f"{s} is in the base {n} times" for s, n in sources.items() if n > 1)
        roots = [i for i in items if i.type is ItemType.DIRECTORY]
        found.extend(f"root is {r.status}" for r in roots if str(r.status) != "completed")
        stray = [i for i in items if i.type is ItemType.FILE and str(i.status) != "completed"]
        found.extend(f"{i.source} is {i.status} ({i.error_code})" for i in stray)
        for root_id, state in svc.sync_states(base_id).items():
            if state.link.syncing or state.link.last_error:
                found.append(
                    f"link {root_id}: syncing={state.link.syncing} {state.link.last_error}"
                )
        return found


def _snapshot(svc: KnowledgeService, base_id: str, folder: Path) -> dict[str, Any]:
    """Per file (path relative to the folder): what the base holds for it."""
    store = svc.parts.stores.get(base_id)
    conn = store._reader()
    found: dict[str, Any] = {}
    for item in svc.list_items(base_id):
        if item.type is not ItemType.FILE:
            continue
        rel = Path(item.source).relative_to(folder).as_posix()
        material = conn.execute(
            "SELECT title, char_count FROM materials WHERE item_id = ?", (item.id,)
        ).fetchone()
        # A renamed file keeps the vectors (and so the hashes of what was embedded) of its
        # unchanged chunks: they are compared for presence, not for the title in front.
        chunks = [
            (int(r[0]), int(r[1]), int(r[2]), int(r[3]), str(r[4]), bool(r[5]))
            for r in conn.execute(
                "SELECT c.seq, c.char_start, c.char_end, c.token_count, c.text, "
                "v.id IS NOT NULL FROM chunks c LEFT JOIN vectors v ON v.id = c.id "
                "WHERE c.item_id = ? ORDER BY c.seq",
                (item.id,),
            )
        ]
        found[rel] = {
            "status": str(item.status),
            "error": item.error_code,
            "title": item.title,
            "material": tuple(material) if material else None,
            "chunks": chunks,
            "vectors": sum(1 for c in chunks if c[5]),
        }
    return found


def _brief(entry: dict[str, Any] | None) -> str:
    if entry is None:
        return "nothing"
    chunks = entry["chunks"]
    return (
        f"{entry['status']}/{entry['error']} title={entry['title']!r} "
        f"material={entry['material']} chunks={len(chunks)} "
        f"first={chunks[0][1:4] if chunks else None} vectors={entry['vectors']}"
    )


def run_seeds(simulation: SyncSimulation, seeds: range) -> Tally:
    tally = Tally()
    for seed in seeds:
        tally.add(simulation.run_seed(seed))
    return tally
