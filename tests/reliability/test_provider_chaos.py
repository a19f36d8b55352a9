"""Provider chaos: a folder of 40 files is indexed through a configured OpenAI-compatible
provider (the loopback FakeApi) that misbehaves on purpose, while the real JobExecutor runs.

Reading never waits for the provider: every file becomes searchable by its words whatever
the provider does. Its vectors come from the base's vector stage (jobs/embed_vectors.py),
one batch of chunks per request, and the provider answers those requests from a script:
transient faults (5xx, 429 with and without Retry-After, a read timeout), then answers that
cannot be retried (malformed JSON, a 401, vectors of the wrong size), each followed by the
person's resume. The checks:

- the server saw exactly the requests the script allows (no retry of what must not be
  retried, nothing given up early), and the gap after each fault, measured at the server,
  is at least the wait the stage owes it, and not wildly more: the job's backoff for a
  failed run (doubling with the failed runs in a row), the first backoff when the run had
  written a batch before (its attempts start over), or the server's Retry-After when longer;
- a fault that cannot be retried stops the stage with its code (EMBEDDING_FAILED,
  PROVIDER_AUTH_FAILED), fails no document, and the next resume goes on where it stopped;
- at the end every chunk has its vector, `doctor` is clean, every file is found by a hybrid
  search, and no message holds the key.
"""

from __future__ import annotations

import itertools
import json
import re
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import keyring
import pytest
from pytestqt.qtbot import QtBot

from app.knowledge import providers_config
from app.knowledge.catalog import Catalog
from app.knowledge.jobs.kinds import POLICIES, JobKind
from app.knowledge.jobs.reader_pool import InlineExtraction
from app.knowledge.service import KnowledgeService
from app.knowledge.types import ErrorCode, ItemPhase, ItemStatus, ItemType, SearchMode
from app.providers import secrets
from app.providers.factory import build_embedder
from app.providers.http import Timeouts
from app.providers.interfaces import Embedder
from app.providers.registry import ProviderRegistry
from app.runtime.executor import JobExecutor
from tests.httpserver import Request
from tests.providers.conftest import KEY, MemoryKeyring
from tests.providers.fake_api import EMBEDDINGS, FakeApi, Fault

FILES = 40
BATCH = 4  # chunks per embedding request: ten requests for the folder
PROVIDER = "chaos"
MODEL = f"{PROVIDER}:embed-small"
READ_TIMEOUT = 0.3
# The stage's policy, with backoffs short enough for the suite (Retry-After is the server's).
POLICY = replace(
    POLICIES[JobKind.EMBED_VECTORS], attempts=4, backoff_initial_s=0.2, backoff_max_s=1.0
)
# How much later than its least wait a request may come (a busy machine, the executor's
# timer); far less than any mistaken wait (a Retry-After ignored).
SLACK = 4.0
# Both ends of a gap are read on the server's clock; allow for its granularity.
EARLY = 0.01
WAIT_MS = 60_000
_FILE = re.compile(r"Chaos file (\d+)\b")


@dataclass(frozen=True)
class Step:
    """What the server does with one embedding request of the stage (None: answers well),
    and how long the stage must then wait before its next request."""

    fault: Fault | None
    wait: float = 0.0
    stops: ErrorCode | None = None  # the stage stops here with this code (resumed after)

    @property
    def most(self) -> float:
        return (
            self.wait + (READ_TIMEOUT if self.fault and self.fault.kind == "slow" else 0.0) + SLACK
        )


OK = Step(None)
B = POLICY.backoff  # the wait after the n-th failed run in a row
SCRIPT: list[Step] = [
    OK,
    Step(Fault.http(500), B(1)),  # after a written batch: the first backoff, attempts reset
    Step(Fault.rate_limited("2"), max(B(1), 2.0)),  # a failed run: Retry-After is longer
    Step(Fault.slow(), B(2)),  # the read timeout: a second failed run in a row
    Step(Fault.http(502), B(3)),  # a third
    OK,  # the fourth run writes a batch: its attempts start over
    OK,
    Step(Fault.rate_limited(None), B(1)),
    OK,
    Step(Fault.malformed_json(), stops=ErrorCode.EMBEDDING_FAILED),
    OK,
    Step(Fault.http(401), stops=ErrorCode.PROVIDER_AUTH_FAILED),
    Step(Fault.wrong_dims(5), stops=ErrorCode.EMBEDDING_FAILED),
    Step(Fault.wrong_shape(), stops=ErrorCode.EMBEDDING_FAILED),
]


class Plan:
    """Serves the script to the vector stage's requests and records when they arrived."""

    def __init__(self) -> None:
        self.arrivals: list[float] = []
        self.other_requests = 0
        self.lock = threading.Lock()
        self.log: list[str] = []  # what each request of the stage met, for a failure's message

    def choose(self, path: str, request: Request) -> Fault | None:
        if path != EMBEDDINGS:
            return None
        texts = request.json().get("input", [])
        if not any(_FILE.search(str(t)) for t in texts):
            self.other_requests += 1  # the dimension probe, search queries
            return None
        with self.lock:
            self.arrivals.append(time.monotonic())
            index = len(self.arrivals) - 1
        fault = SCRIPT[index].fault if index < len(SCRIPT) else None
        self.log.append(f"{index}: {len(texts)} text(s) -> {fault.kind if fault else 'ok'}")
        return fault


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


def _drain(qtbot: QtBot, svc: KnowledgeService) -> None:
    executor = JobExecutor(svc, max_workers=3)
    with qtbot.waitSignal(executor.drained, timeout=WAIT_MS):
        executor.start()
    executor.shutdown()


def test_the_vector_stage_rides_out_a_misbehaving_provider(
    qtbot: QtBot, tmp_path: Path, memory_keyring: MemoryKeyring, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(POLICIES, JobKind.EMBED_VECTORS, POLICY)
    started = time.monotonic()
    plan = Plan()
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
        svc = KnowledgeService(
            home, models=registry, extraction=InlineExtraction(), embed_batch_size=BATCH
        )
        try:
            base = svc.create_base("chaos", embedding_model=MODEL)
            api.chooser = plan.choose
            svc.add(base.id, [folder])
            stops: list[str] = []
            for _ in range(len(SCRIPT)):  # each stop is resumed, as a person would
                _drain(qtbot, svc)
                files = [i for i in svc.list_items(base.id) if i.type is ItemType.FILE]
                assert {i.status for i in files} == {ItemStatus.COMPLETED}  # never failed
                stop = svc.vector_status(base.id).stopped
                if stop is None:
                    break
                stops.append(stop.code)
                assert KEY not in stop.message
                assert svc.resume_vectors(base.id)
            api.chooser = None
            print(json.dumps({"requests": len(plan.arrivals), "stops": stops}))

            assert stops == [s.stops for s in SCRIPT if s.stops is not None], " | ".join(plan.log)
            problems = _check_requests(plan.arrivals)
            assert problems == [], "\n".join(problems)
            status = svc.vector_status(base.id)
            assert status.vectors == status.chunks == FILES and status.waiting_documents == 0
            assert not svc.catalog.list_jobs(base.id, ("queued", "running"))
            assert svc.doctor().clean
            for number in range(FILES):
                response = svc.search(base.id, f"chaosword{number}x")
                assert response.mode is SearchMode.HYBRID
                assert response.results and response.results[0].title == f"Chaos file {number}"
            assert all(i.phase is not ItemPhase.EMBEDDING for i in svc.list_items(base.id))
        finally:
            svc.close()
    assert time.monotonic() - started < 60.0


def _check_requests(arrivals: list[float]) -> list[str]:
    """The requests the script allows, spaced at least as it says (and not wildly more)."""
    stops = sum(1 for s in SCRIPT if s.stops is not None)
    # Ten batches: one per answered request of the script, the rest answered after it.
    answered = sum(1 for s in SCRIPT if s.fault is None)
    expected = len(SCRIPT) + FILES // BATCH - answered
    if len(arrivals) != expected:
        return [f"{len(arrivals)} requests, expected {expected} ({stops} stops)"]
    problems = []
    for index, (step, (earlier, later)) in enumerate(
        zip(SCRIPT, itertools.pairwise(arrivals), strict=False)
    ):
        if step.fault is None or step.stops is not None:
            continue  # an answered request, or a stop the test resumed at once
        gap = later - earlier
        if gap < step.wait - EARLY or gap > step.most:
            problems.append(
                f"request {index + 2} came {gap:.2f} s after {step.fault.kind} "
                f"{step.fault.status}; expected {step.wait:.2f} to {step.most:.2f} s"
            )
    return problems
