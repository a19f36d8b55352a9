"""Provider chaos: a folder of 60 files is indexed through a configured OpenAI-compatible
provider (the loopback FakeApi) that misbehaves on purpose, while the real JobExecutor runs
five index jobs at once.

Each file gets a misbehaviour script, drawn with a seeded random: the faults its successive
embedding requests meet (then the server answers properly). A script names the item's
outcome and, for every fault, the least time before the next request: the client makes one
attempt per job run (no retry of its own), so that is the job's retry backoff, or the
server's Retry-After when it is longer. Faults are chosen by the file a request is for, so
concurrency cannot shuffle them. The checks:

- every item ends completed or failed, never stuck, with the script's code
  (EMBEDDING_FAILED for malformed, misshapen and wrong-dimension answers and for a server
  that never recovers; PROVIDER_AUTH_FAILED for a 401);
- the server saw exactly the requests the script allows (no retry of what must not be
  retried, nothing given up early), and the gaps between a file's requests, measured at
  the server, are at least the waits above, and not wildly more;
- afterwards `doctor` is clean and every completed file is found by a hybrid search.
"""

from __future__ import annotations

import itertools
import json
import random
import re
import threading
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import keyring
import pytest
from pytestqt.qtbot import QtBot

from app.knowledge import providers_config
from app.knowledge.catalog import Catalog
from app.knowledge.jobs.kinds import POLICIES, JobKind
from app.knowledge.jobs.reader_pool import InlineExtraction
from app.knowledge.service import KnowledgeService
from app.knowledge.types import ErrorCode, ItemStatus, ItemType, SearchMode
from app.providers import secrets
from app.providers.factory import build_embedder
from app.providers.http import Timeouts
from app.providers.interfaces import Embedder
from app.providers.registry import ProviderRegistry
from app.runtime.executor import JobExecutor
from tests.httpserver import Request
from tests.providers.conftest import KEY, MemoryKeyring
from tests.providers.fake_api import EMBEDDINGS, FakeApi, Fault

SEED = 20240613
FILES = 60
PROVIDER = "chaos"
MODEL = f"{PROVIDER}:embed-small"
READ_TIMEOUT = 0.3
JOB = POLICIES[JobKind.INDEX_DOCUMENTS]
# How much later than its least wait a retry may come (a busy machine, the executor's
# timer); far less than any mistaken wait (a Retry-After ignored, a cap of 60 s).
SLACK = 4.0
# Both ends of a gap are read on the server's clock, which only sees a request once its
# handler thread has read it; allow for the clock's granularity, nothing more.
EARLY = 0.01
_FILE = re.compile(r"Chaos file (\d+)\b")


@dataclass(frozen=True)
class Step:
    """A fault, and how long the job must then wait before it asks again (its retry
    backoff, or the Retry-After when that is longer).

    After a timeout the gap the server sees can be shorter than read timeout + wait: the
    client's timeout starts when it has sent the request, and the server notes the arrival
    only when its handler thread gets to it, later on a busy machine. So the wait alone is
    the least gap, and the timeout counts only towards the most."""

    fault: Fault
    wait: float

    @property
    def least(self) -> float:
        return self.wait

    @property
    def most(self) -> float:
        return self.wait + (READ_TIMEOUT if self.fault.kind == "slow" else 0.0) + SLACK


def backoff(job_attempt: int) -> float:
    return JOB.backoff(job_attempt)


E500, E502, E503 = Fault.http(500), Fault.http(502), Fault.http(503)
SLOW = Fault.slow()
RA = Fault.rate_limited("2")  # Retry-After in seconds, the common form; above backoff(1)
RA_503 = Fault("status", status=503, retry_after="3")  # above backoff(2)
# name -> (steps, outcome: None = completed, else the item's error code)
SCRIPTS: dict[str, tuple[list[Step], ErrorCode | None]] = {
    "clean": ([], None),
    "retry-after": ([Step(RA, 2.0)], None),
    "429-no-retry-after": ([Step(Fault.rate_limited(None), backoff(1))], None),
    "5xx-twice": ([Step(E500, backoff(1)), Step(E502, backoff(2))], None),
    "timeout": ([Step(SLOW, backoff(1))], None),
    "mixed": ([Step(SLOW, backoff(1)), Step(RA_503, 3.0)], None),
    "never-recovers": (
        [
            Step(E503, backoff(1)),
            Step(Fault.rate_limited(None), backoff(2)),
            Step(E500, 0.0),  # the job's last attempt: the item fails
        ],
        ErrorCode.EMBEDDING_FAILED,
    ),
    "malformed-json": ([Step(Fault.malformed_json(), 0.0)], ErrorCode.EMBEDDING_FAILED),
    "wrong-shape": ([Step(Fault.wrong_shape(), 0.0)], ErrorCode.EMBEDDING_FAILED),
    "wrong-dimensions": ([Step(Fault.wrong_dims(5), 0.0)], ErrorCode.EMBEDDING_FAILED),
    "auth-401": ([Step(Fault.http(401), 0.0)], ErrorCode.PROVIDER_AUTH_FAILED),
}


def draw_scripts(rng: random.Random) -> list[str]:
    """One script per file: every script twice, the rest drawn at random (mostly benign,
    as a flaky but working provider is)."""
    names = [*SCRIPTS, *SCRIPTS]
    weights = [6 if SCRIPTS[n][1] is None else 1 for n in SCRIPTS]
    names += rng.choices(list(SCRIPTS), weights, k=FILES - len(names))
    rng.shuffle(names)
    return names


class Plan:
    """Serves each file's script and records when its requests arrived."""

    def __init__(self, scripts: list[str]) -> None:
        self.scripts = scripts
        self.arrivals: dict[int, list[float]] = {n: [] for n in range(len(scripts))}
        self.other_requests = 0
        self.lock = threading.Lock()

    def choose(self, path: str, request: Request) -> Fault | None:
        if path != EMBEDDINGS:
            return None
        texts = request.json().get("input", [])
        found = {int(m[1]) for t in texts for m in _FILE.finditer(str(t))}
        if len(found) != 1:
            self.other_requests += 1  # the dimension probe, search queries
            return None
        (number,) = found
        arrivals = self.arrivals[number]
        arrivals.append(time.monotonic())
        steps = SCRIPTS[self.scripts[number]][0]
        index = len(arrivals) - 1
        return steps[index].fault if index < len(steps) else None


@pytest.fixture
def memory_keyring() -> Iterator[MemoryKeyring]:
    previous = keyring.get_keyring()
    backend = MemoryKeyring()
    keyring.set_keyring(backend)
    yield backend
    keyring.set_keyring(previous)


def _registry(catalog: Catalog) -> ProviderRegistry:
    """The configured provider's client (its settings from the catalog, its key from the
    keychain, the app's retry policy), with a test-sized read timeout."""
    settings = providers_config.find_settings(catalog, PROVIDER)
    registry = ProviderRegistry()

    def embedder(model: str) -> Embedder:
        return build_embedder(
            settings,
            model,
            secrets.get_key,
            timeouts=Timeouts(connect=2.0, read=READ_TIMEOUT),
        )

    registry.register_embedder(PROVIDER, embedder)
    return registry


def test_every_item_settles_with_the_right_code_and_retries_keep_their_distance(
    qtbot: QtBot, tmp_path: Path, memory_keyring: MemoryKeyring
) -> None:
    started = time.monotonic()
    scripts = draw_scripts(random.Random(SEED))
    plan = Plan(scripts)
    folder = tmp_path / "chaos"
    folder.mkdir()
    for n in range(FILES):
        (folder / f"file{n:02d}.md").write_text(
            f"# Chaos file {n}\n\nChaos file {n} holds the word chaosword{n}x.\n", encoding="utf-8"
        )
    home = tmp_path / "home"
    with FakeApi(api_key=KEY, dims=8) as api:
        setup = KnowledgeService(home, extraction=InlineExtraction())
        try:
            setup.save_provider(
                PROVIDER, "openai", base_url=api.base_url, models=["embed-small"], key=KEY
            )
            registry = _registry(setup.catalog)
        finally:
            setup.close()
        svc = KnowledgeService(home, models=registry, extraction=InlineExtraction())
        try:
            base = svc.create_base("chaos", embedding_model=MODEL)
            api.chooser = plan.choose
            svc.add(base.id, [folder])
            executor = JobExecutor(svc, max_workers=5)
            with qtbot.waitSignal(executor.drained, timeout=60_000):
                executor.start()
            executor.shutdown()
            api.chooser = None
            items = {
                int(Path(i.source).stem.removeprefix("file")): i
                for i in svc.list_items(base.id)
                if i.type is ItemType.FILE
            }
            assert len(items) == FILES
            outcomes = Counter(
                f"{i.status}:{i.error_code}" if i.error_code else str(i.status)
                for i in items.values()
            )
            print(json.dumps({"files": FILES, "outcomes": dict(outcomes)}))

            problems: list[str] = []
            for number, name in enumerate(scripts):
                code = SCRIPTS[name][1]
                item = items[number]
                got = (item.status, item.error_code)
                want = (ItemStatus.COMPLETED, None) if code is None else (ItemStatus.FAILED, code)
                if got != want:
                    problems.append(f"file {number} ({name}): {got} {item.error_message}")
                problems.extend(_check_requests(number, name, plan.arrivals[number]))
            assert problems == [], "\n".join(problems)

            root = next(i for i in svc.list_items(base.id) if i.type is ItemType.DIRECTORY)
            assert svc.get_item(root.id).status is ItemStatus.COMPLETED  # some children did
            assert not svc.catalog.list_jobs(base.id, ("queued", "running"))
            assert svc.doctor().clean
            for number, item in items.items():
                if item.status is ItemStatus.COMPLETED:
                    response = svc.search(base.id, f"chaosword{number}x")
                    assert response.mode is SearchMode.HYBRID
                    assert item.id in {r.item_id for r in response.results[:3]}
            failed = [i for i in items.values() if i.status is ItemStatus.FAILED]
            assert all(KEY not in (i.error_message or "") for i in failed)
        finally:
            svc.close()
    assert time.monotonic() - started < 20.0


def _check_requests(number: int, name: str, arrivals: list[float]) -> list[str]:
    """The requests the script allows, spaced at least as it says (and not wildly more)."""
    steps, code = SCRIPTS[name]
    expected = len(steps) + (1 if code is None else 0)
    if len(arrivals) != expected:
        return [f"file {number} ({name}): {len(arrivals)} requests, expected {expected}"]
    problems = []
    gaps = [later - earlier for earlier, later in itertools.pairwise(arrivals)]
    for index, (step, gap) in enumerate(zip(steps, gaps, strict=False)):
        if gap < step.least - EARLY or gap > step.most:
            problems.append(
                f"file {number} ({name}): request {index + 2} came {gap:.2f} s after "
                f"{step.fault.kind} {step.fault.status}; expected {step.least:.2f} to "
                f"{step.most:.2f} s"
            )
    return problems
