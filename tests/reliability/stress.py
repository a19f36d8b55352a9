"""Concurrency stress: threads add, delete, reindex and search two bases at once while the
real JobExecutor runs the queue, then the data dir is judged.

For `seconds`, `mutators_per_base` threads per base pick at random (seeded per thread):
add a note, add a file, add a folder, replace a file (`on_conflict=replace`: a deletion and
an add in one call), delete a root or a folder's child, reindex a settled item. `searchers`
threads search both bases (one hybrid, one BM25-only) for words that were added, and check
each result (ranks 1..n, offsets inside the chunk's material, never an item of another
base). Every mutation pokes the executor, as the GUI does after a service call. Then the
queue is drained and the judge checks: `doctor` clean, nothing left
preparing/processing/deleting, no job left, every completed document found by a search
for its own word, and no unexpected exception anywhere.

A TroveError a mutation can legitimately meet in a race is counted, not failed: e.g.
ITEM_NOT_FOUND (the item was deleted meanwhile) or INVALID_ARGUMENT "still processing"
(a reindex of an item that started working again). Anything else is a violation.

Used by tests/reliability/test_stress.py (a few seconds) and tests/bench/stress.py (long).
"""

from __future__ import annotations

import random
import re
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from PySide6.QtCore import QCoreApplication, QEventLoop, QMetaObject, Qt, QTimer

from app.knowledge.catalog import Job
from app.knowledge.jobs import runner
from app.knowledge.jobs.context import JobContext
from app.knowledge.jobs.reader_pool import InlineExtraction
from app.knowledge.material_paths import CONTAINER_TYPES
from app.knowledge.service import KnowledgeService
from app.knowledge.types import (
    ErrorCode,
    Item,
    ItemStatus,
    ItemType,
    OnConflict,
    SearchMode,
    SearchResponse,
    TroveError,
)
from app.runtime.executor import JobExecutor
from tests.fakes import FakeModels

# TroveErrors a mutation may meet when another thread got there first, with a pattern
# their message must match to count as that race (and not as a bug with the same code).
EXPECTED_RACES: dict[str, dict[ErrorCode, re.Pattern[str]]] = {
    "delete": {ErrorCode.ITEM_NOT_FOUND: re.compile(r"no such item")},
    "reindex": {
        ErrorCode.ITEM_NOT_FOUND: re.compile(r"no such item"),
        ErrorCode.INVALID_ARGUMENT: re.compile(r"cannot reindex while .* still"),
    },
}
KINDS = ("add_note", "add_file", "add_folder", "replace_file", "delete", "reindex")
WEIGHTS = (30, 18, 4, 6, 22, 20)
_WORD = re.compile(r"\bst[a-z]+q\b")  # the unique words this module writes end in "q"


def _word(rng: random.Random) -> str:
    syllables = "".join(
        rng.choice("bcdfghjklmnprstvz") + rng.choice("aeiou") for _ in range(rng.randint(3, 5))
    )
    return f"st{syllables}q"


@dataclass(slots=True)
class Figures:
    """What a stress run did and found."""

    seconds: float = 0.0
    ops: Counter[str] = field(default_factory=Counter)
    expected_errors: Counter[str] = field(default_factory=Counter)
    jobs: Counter[str] = field(default_factory=Counter)  # "kind:outcome"
    search_errors: list[str] = field(default_factory=list)
    violations: list[str] = field(default_factory=list)
    final_items: Counter[str] = field(default_factory=Counter)
    drain_seconds: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "seconds": round(self.seconds, 2),
            "drain_seconds": round(self.drain_seconds, 2),
            "ops": dict(sorted(self.ops.items())),
            "expected_errors": dict(sorted(self.expected_errors.items())),
            "jobs": dict(sorted(self.jobs.items())),
            "search_errors": len(self.search_errors),
            "violations": len(self.violations),
            "final_items": dict(sorted(self.final_items.items())),
        }


class _Corpus:
    """Source files on disk, each with one word found nowhere else."""

    def __init__(self, folder: Path, rng: random.Random, files: int, folders: int) -> None:
        self.words: dict[str, str] = {}  # absolute path of a file -> its word
        self.files: list[Path] = []
        self.folders: list[Path] = []
        for n in range(files):
            path = folder / "files" / f"doc{n:03d}.md"
            self.files.append(self._write(path, rng, f"Document {n}"))
        for n in range(folders):
            top = folder / "folders" / f"set{n:02d}"
            for m in range(3):
                self._write(top / f"part{m}.txt", rng, f"Part {m} of set {n}")
            self.folders.append(top)

    def _write(self, path: Path, rng: random.Random, title: str) -> Path:
        word = _word(rng)
        path.parent.mkdir(parents=True, exist_ok=True)
        filler = " ".join(_word(rng)[2:-1] for _ in range(rng.randint(20, 60)))
        path.write_text(f"# {title}\n\n{filler} {word} {filler}\n", encoding="utf-8")
        self.words[str(path.resolve())] = word
        return path


class StressRun:
    def __init__(
        self,
        workdir: Path,
        *,
        seed: int = 1,
        mutators_per_base: int = 2,
        searchers: int = 2,
        max_workers: int = 4,
    ) -> None:
        self.rng = random.Random(seed)
        self.seed = seed
        self.mutators_per_base = mutators_per_base
        self.searchers = searchers
        self.service = KnowledgeService(
            workdir / "home", models=FakeModels(), extraction=InlineExtraction()
        )
        self.corpus = _Corpus(workdir / "corpus", self.rng, files=40, folders=6)
        self.vector_base = self.service.create_base(
            "vectors", embedding_model="fake:bow", chunk_size=64, chunk_overlap=8
        ).id
        self.plain_base = self.service.create_base("plain", chunk_size=64, chunk_overlap=8).id
        self.bases = (self.vector_base, self.plain_base)
        self.executor = JobExecutor(self.service, max_workers=max_workers)
        self.figures = Figures()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._words: dict[str, list[str]] = {b: [] for b in self.bases}

    # -- bookkeeping -------------------------------------------------------------------

    def _count(self, counter: Counter[str], key: str) -> None:
        with self._lock:
            counter[key] += 1

    def _violation(self, text: str) -> None:
        with self._lock:
            self.figures.violations.append(text)

    def _remember(self, base_id: str, word: str) -> None:
        with self._lock:
            self._words[base_id].append(word)

    def _poke(self) -> None:
        """Tell the executor (on the GUI thread) that there is work, as the GUI does."""
        QMetaObject.invokeMethod(self.executor, "schedule", Qt.ConnectionType.QueuedConnection)

    # -- mutators ----------------------------------------------------------------------

    def _mutate(self, base_id: str, rng: random.Random) -> None:
        while not self._stop.is_set():
            kind = rng.choices(KINDS, WEIGHTS)[0]
            try:
                done = getattr(self, f"_{kind}")(base_id, rng)
            except TroveError as exc:
                pattern = EXPECTED_RACES.get(kind, {}).get(ErrorCode(exc.code))
                if pattern is not None and pattern.search(exc.message):
                    self._count(self.figures.expected_errors, f"{kind}:{exc.code}")
                else:
                    self._violation(f"{kind} raised {exc}")
                continue
            except Exception as exc:
                self._violation(f"{kind} raised {type(exc).__name__}: {exc}")
                continue
            if done:
                self._count(self.figures.ops, kind)
                self._poke()

    def _add_note(self, base_id: str, rng: random.Random) -> bool:
        word = _word(rng)
        self.service.add_note(base_id, f"Note {word[:6]}", f"A note that mentions {word} once.")
        self._remember(base_id, word)
        return True

    def _add_file(self, base_id: str, rng: random.Random) -> bool:
        path = rng.choice(self.corpus.files)
        report = self.service.add(base_id, [path])
        if report.added:
            self._remember(base_id, self.corpus.words[str(path.resolve())])
        return bool(report.added or report.skipped)

    def _add_folder(self, base_id: str, rng: random.Random) -> bool:
        folder = rng.choice(self.corpus.folders)
        report = self.service.add(base_id, [folder])
        for path in folder.iterdir():
            self._remember(base_id, self.corpus.words[str(path.resolve())])
        return bool(report.added or report.skipped)

    def _replace_file(self, base_id: str, rng: random.Random) -> bool:
        path = rng.choice(self.corpus.files)
        report = self.service.add(base_id, [path], on_conflict=OnConflict.REPLACE)
        self._remember(base_id, self.corpus.words[str(path.resolve())])
        return bool(report.added)

    def _pick(
        self, base_id: str, rng: random.Random, statuses: tuple[ItemStatus, ...]
    ) -> Item | None:
        items = [i for i in self.service.list_items(base_id) if i.status in statuses]
        return rng.choice(items) if items else None

    def _delete(self, base_id: str, rng: random.Random) -> bool:
        item = self._pick(base_id, rng, (*_SETTLED, ItemStatus.PROCESSING, ItemStatus.PREPARING))
        if item is None:
            return False
        self.service.delete_items(base_id, [item.id])
        return True

    def _reindex(self, base_id: str, rng: random.Random) -> bool:
        item = self._pick(base_id, rng, _SETTLED)
        if item is None:
            return False
        self.service.reindex(base_id, [item.id])
        return True

    # -- searchers ---------------------------------------------------------------------

    def _search(self, rng: random.Random) -> None:
        while not self._stop.is_set():
            base_id = rng.choice(self.bases)
            with self._lock:
                words = self._words[base_id]
                word = rng.choice(words) if words else "document"
            query = word if rng.random() < 0.7 else f"{word} note part document"
            try:
                response = self.service.search(base_id, query)
            except Exception as exc:  # zero tolerance: a search never errors here
                with self._lock:
                    self.figures.search_errors.append(f"{query!r}: {type(exc).__name__}: {exc}")
                continue
            self._count(self.figures.ops, "search")
            self._check_results(base_id, response)

    def _check_results(self, base_id: str, response: SearchResponse) -> None:
        results = response.results
        if [r.rank for r in results] != list(range(1, len(results) + 1)):
            self._violation(f"search ranks {[r.rank for r in results]}")
        expected = SearchMode.HYBRID if base_id == self.vector_base else SearchMode.BM25
        if response.mode is not expected:
            self._violation(f"search mode {response.mode} in base {base_id}")
        items = self.service.catalog.get_items(r.item_id for r in results)
        for r in results:
            if not 0 <= r.char_start <= r.char_end or r.char_end - r.char_start < len(
                r.text.strip()
            ):
                self._violation(f"result offsets {r.char_start}..{r.char_end} for {r.text!r}")
            item = items.get(r.item_id)  # gone since: deleted after the search read it
            if item is not None and item.base_id != base_id:
                self._violation(f"base {base_id} returned item {item.id} of {item.base_id}")

    # -- the run -----------------------------------------------------------------------

    def run(self, seconds: float, *, drain_timeout: float = 120.0) -> Figures:
        app = QCoreApplication.instance() or QCoreApplication([])
        assert app is not None
        original = runner.run_job
        figures = self.figures

        def counted(ctx: JobContext, job: Job, **kwargs: Any) -> str:
            outcome = original(ctx, job, **kwargs)
            self._count(figures.jobs, f"{job.kind}:{outcome}")
            return outcome

        runner.run_job = counted  # the executor calls runner.run_job through the module
        threads = [
            threading.Thread(
                target=self._mutate,
                args=(base_id, random.Random(f"{self.seed}-{base_id}-{n}")),
                name=f"mutate-{n}",
            )
            for base_id in self.bases
            for n in range(self.mutators_per_base)
        ] + [
            threading.Thread(
                target=self._search, args=(random.Random(f"{self.seed}-s{n}"),), name=f"search-{n}"
            )
            for n in range(self.searchers)
        ]
        try:
            self.executor.start()
            started = time.monotonic()
            for thread in threads:
                thread.start()
            _loop_until(lambda: time.monotonic() - started >= seconds, seconds + 5)
            self._stop.set()
            _loop_until(lambda: not any(t.is_alive() for t in threads), 60)
            figures.seconds = time.monotonic() - started
            drain_started = time.monotonic()
            self._poke()
            drained = _loop_until(self._drained, drain_timeout)
            figures.drain_seconds = time.monotonic() - drain_started
            if not drained:
                self._violation(f"the queue did not drain in {drain_timeout:.0f} s")
        finally:
            self._stop.set()
            for thread in threads:
                thread.join(timeout=60)
            self.executor.shutdown()
            runner.run_job = original
        self._judge()
        return figures

    def close(self) -> None:
        self.executor.deleteLater()
        self.service.close()

    def _drained(self) -> bool:
        return self.executor.running_count == 0 and self.service.catalog.job_counts() == (0, 0)

    def _judge(self) -> None:
        svc = self.service
        report = svc.doctor().report
        for problem in report.problems:
            self._violation(f"doctor: {problem.code} {problem.item_id} {problem.detail}")
        left = svc.catalog.list_jobs(statuses=("queued", "running"))
        if left:
            self._violation(f"{len(left)} jobs left queued or running")
        for base_id in self.bases:
            for item in svc.list_items(base_id):
                self.figures.final_items[f"{item.type}:{item.status}"] += 1
                if item.status not in _SETTLED:
                    self._violation(f"item {item.id} ({item.type}) left {item.status}")
                elif item.status is ItemStatus.FAILED and item.type not in CONTAINER_TYPES:
                    self._violation(
                        f"item {item.id} failed: {item.error_code} {item.error_message}"
                    )
                elif item.status is ItemStatus.COMPLETED and item.type not in CONTAINER_TYPES:
                    self._check_found(base_id, item)

    def _check_found(self, base_id: str, item: Item) -> None:
        if item.type is ItemType.NOTE:
            match = _WORD.search(item.source)
            word = match[0] if match else None
        else:
            word = self.corpus.words.get(item.source)
        if word is None:
            self._violation(f"item {item.id} has no known word ({item.source[:80]!r})")
            return
        hits = self.service.search(base_id, word, mode=SearchMode.BM25, top_k=50).results
        if item.id not in {r.item_id for r in hits}:
            self._violation(f"completed item {item.id} not found by its word {word}")


_SETTLED = (ItemStatus.COMPLETED, ItemStatus.FAILED)


def _loop_until(done: Callable[[], bool], timeout: float) -> bool:
    """Run the Qt event loop (queued executor calls, job-finished signals) until `done()`
    holds or `timeout` seconds pass; checked every 20 ms. True when it held."""
    deadline = time.monotonic() + timeout
    loop = QEventLoop()
    timer = QTimer()
    timer.setInterval(20)

    def check() -> None:
        if done() or time.monotonic() >= deadline:
            loop.quit()

    timer.timeout.connect(check)
    timer.start()
    if not done():
        loop.exec()
    timer.stop()
    return done()
