"""A search answers, degraded, within a few seconds however its providers misbehave (issue 30).

A hybrid base embeds with one provider and reranks with another, both a healthy loopback
FakeApi while it is indexed. Then one of them is pointed at a server from tests/trickle.py
that sends its headers or its body one byte at a time (no read timeout can catch it), says
nothing at all, never answers the connect, or refuses it. The app's own search clients
(SEARCH_EMBED_TIMEOUTS, SEARCH_RERANK_TIMEOUTS: 1.5 + 3 s) must end the call and flag the
stage in `degraded`: through the engine, `trove search --json`, and `kb_search` of a real
`trove mcp` process over stdio. Before, a trickling embedder held a search as long as the
server kept going (the servers here give up after 20 s; the reporter's took > 200 s).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import keyring
import pytest
from mcp import ClientSession

from app.knowledge.jobs.reader_pool import InlineExtraction
from app.knowledge.service import KnowledgeService
from app.knowledge.types import ErrorCode, ItemStatus, SearchStage
from app.providers.http import SEARCH_EMBED_TIMEOUTS, SEARCH_RERANK_TIMEOUTS
from tests.integration.test_mcp import call, serve
from tests.providers.conftest import MemoryKeyring
from tests.providers.fake_api import FakeApi
from tests.trickle import SERVER_LIFETIME, SLOW_HEADERS, serving, unanswered_connects

EMBEDDER, RERANKER = "emb", "rr"
QUERY = "how much sun do tomatoes need"
DOCS = {
    "sun.md": "# Tomatoes\n\nTomatoes need full sun and regular watering in summer.",
    "rose.md": "# Roses\n\nPrune roses in late winter and feed them compost; roses like sun.",
    "shade.md": "# Ferns\n\nFerns need shade, not sun, and damp soil all year.",
}
BODY_HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 9999\r\n\r\n"
# The bound for a degraded search is 5 s; the assertion is three times that (a
# shared, loaded machine), far below what the servers keep going for.
SEARCH_WORST_S = SEARCH_EMBED_TIMEOUTS.total + SEARCH_RERANK_TIMEOUTS.total
BOUND = 15.0
assert SEARCH_WORST_S <= 5.0 and SERVER_LIFETIME > BOUND
MISBEHAVIOURS = ["header-trickle", "body-trickle", "silent", "unanswered", "refused"]
# What a trickling server sends at once, then a byte every 0.05 s.
TRICKLES = {"header-trickle": (b"", SLOW_HEADERS), "body-trickle": (BODY_HEAD, b" " * 9999)}


@pytest.fixture(autouse=True)
def memory_keyring() -> Iterator[MemoryKeyring]:
    previous = keyring.get_keyring()
    backend = MemoryKeyring()
    keyring.set_keyring(backend)
    yield backend
    keyring.set_keyring(previous)


@pytest.fixture(scope="module")
def api() -> Iterator[FakeApi]:
    with FakeApi(dims=8, models=("embed-small", "rerank-small")) as server:
        yield server


def _refused_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{sock.getsockname()[1]}"


@pytest.fixture(params=MISBEHAVIOURS)
def bad_url(request: pytest.FixtureRequest) -> Iterator[str]:
    """The base URL of a provider that never gives a whole answer."""
    kind = request.param
    if kind == "refused":
        yield _refused_url()
        return
    if kind == "unanswered":
        with unanswered_connects() as url:
            yield url.rstrip("/")
        return
    head, trickle = TRICKLES.get(kind, (b"", b""))  # else silent
    with serving(head, trickle, gap=0.05) as server:
        yield server.url("").rstrip("/")


def _providers(svc: KnowledgeService, *, embed_url: str, rerank_url: str) -> None:
    svc.save_provider(EMBEDDER, "openai", base_url=embed_url, models=["embed-small"])
    svc.save_provider(RERANKER, "rerank", base_url=rerank_url, models=["rerank-small"])


@pytest.fixture
def home(tmp_path: Path, api: FakeApi) -> tuple[Path, str]:
    """(data folder, base id) of a hybrid base with a reranker, indexed while both
    providers were healthy."""
    home, docs = tmp_path / "home", tmp_path / "docs"
    docs.mkdir()
    for name, text in DOCS.items():
        (docs / name).write_text(text, encoding="utf-8")
    svc = KnowledgeService(home, extraction=InlineExtraction())
    try:
        _providers(svc, embed_url=api.base_url, rerank_url=api.base_url)
        base = svc.create_base(
            "kb", embedding_model=f"{EMBEDDER}:embed-small", rerank_model=f"{RERANKER}:rerank-small"
        )
        svc.add(base.id, [docs])
        svc.run_pending_jobs(base.id)
        assert {i.status for i in svc.list_items(base.id)} == {ItemStatus.COMPLETED}
    finally:
        svc.close()
    return home, base.id


def _break(home: Path, api: FakeApi, stage: SearchStage, url: str) -> None:
    """Point the stage's provider at `url`, the other one at the healthy server."""
    svc = KnowledgeService(home, extraction=InlineExtraction())
    try:
        if stage is SearchStage.EMBEDDING:
            _providers(svc, embed_url=url, rerank_url=api.base_url)
        else:
            _providers(svc, embed_url=api.base_url, rerank_url=url)
    finally:
        svc.close()


EXPECTED = {
    # An embedder that did not answer costs the search its wait once: the reranker is not
    # asked after it, and says so.
    SearchStage.EMBEDDING: [
        ("embedding", ErrorCode.EMBEDDING_FAILED),
        ("rerank", ErrorCode.RERANK_FAILED),
    ],
    SearchStage.RERANK: [("rerank", ErrorCode.RERANK_FAILED)],
}


@pytest.mark.parametrize("stage", [SearchStage.EMBEDDING, SearchStage.RERANK])
def test_a_search_answers_degraded_in_seconds_whatever_its_provider_does(
    home: tuple[Path, str], api: FakeApi, bad_url: str, stage: SearchStage
) -> None:
    folder, base_id = home
    _break(folder, api, stage, bad_url)
    svc = KnowledgeService(folder, extraction=InlineExtraction())  # the app's own clients
    try:
        started = time.monotonic()
        response = svc.search(base_id, QUERY)
        elapsed = time.monotonic() - started
    finally:
        svc.close()
    assert elapsed < BOUND, f"the search took {elapsed:.1f} s"
    assert [(str(d.stage), d.code) for d in response.degraded] == EXPECTED[stage]
    assert "Tomatoes" in [r.title for r in response.results]
    assert not response.reranked


def _cli_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != "TROVE_HOME"}


@pytest.mark.parametrize(
    ("stage", "misbehaviour"),
    [(SearchStage.EMBEDDING, "header-trickle"), (SearchStage.RERANK, "body-trickle")],
)
def test_cli_search_answers_degraded_in_seconds(
    home: tuple[Path, str], api: FakeApi, stage: SearchStage, misbehaviour: str
) -> None:
    folder, _ = home
    head, trickle = TRICKLES[misbehaviour]
    with serving(head, trickle, gap=0.05) as server:
        _break(folder, api, stage, server.url("").rstrip("/"))
        proc = subprocess.Popen(
            [sys.executable, "-m", "app", "--home", str(folder), "search", "kb", QUERY, "--json"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=_cli_env(),
        )
        try:
            # Timed from the provider's request on: starting Python is not the search.
            assert server.requested.wait(60), "the search never called the provider"
            asked = time.monotonic()
            stdout, stderr = proc.communicate(timeout=120)
            elapsed = time.monotonic() - asked
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
    assert proc.returncode == 0, stderr
    assert elapsed < BOUND, f"trove search took {elapsed:.1f} s after calling the provider"
    data = json.loads(stdout)
    assert "Tomatoes" in [r["title"] for r in data["results"]]
    assert [(d["stage"], d["code"]) for d in data["degraded"]] == EXPECTED[stage]


def test_kb_search_of_trove_mcp_answers_degraded_in_seconds(
    home: tuple[Path, str], api: FakeApi
) -> None:
    folder, base_id = home
    with serving(b"", SLOW_HEADERS, gap=0.05) as server:
        _break(folder, api, SearchStage.EMBEDDING, server.url("").rstrip("/"))
        took: list[float] = []

        async def body(client: ClientSession) -> None:
            started = time.monotonic()
            data = await call(client, "kb_search", {"query": QUERY, "baseIds": [base_id]})
            took.append(time.monotonic() - started)
            assert data["results"][0]["title"] == "Tomatoes"
            assert [(d["stage"], d["code"]) for d in data["degraded"]] == [
                (stage, str(code)) for stage, code in EXPECTED[SearchStage.EMBEDDING]
            ]

        serve(folder, body)
        assert server.requested.is_set()
    assert took and took[0] < BOUND, f"kb_search took {took[0]:.1f} s"
