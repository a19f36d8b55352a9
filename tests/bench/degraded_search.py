"""Latency of a hybrid search (with reranker) while a provider is dead, against healthy.

    python tests/bench/degraded_search.py [--runs N]

A base of a few notes is indexed through the loopback FakeApi; then each scenario opens a
service whose embedder and/or reranker endpoint refuses connections, answers HTTP 500, or
never answers, runs one untimed search (building the clients) and times N more. Two client policies:

- "test": the tests' short patience (read timeout 0.5 s, 2 attempts, 0.05 s backoff);
- "app": the clients the app builds for searches from the catalog (SEARCH_EMBED_TIMEOUTS,
  SEARCH_RETRY): HTTP 500, and an embedder that never answers (its 1.5 s deadline).

A search that raises is timed too and reported with its error code (the old behaviour).
Prints one JSON line: per scenario the median and max milliseconds, the outcome and the
`degraded` stages.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import keyring

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from app.knowledge.jobs.reader_pool import InlineExtraction
from app.knowledge.service import KnowledgeService
from app.knowledge.types import TroveError
from tests.providers.conftest import MemoryKeyring
from tests.providers.fake_api import EMBEDDINGS, RERANK, FakeApi
from tests.reliability.dead_provider import (
    QUERY,
    Outage,
    World,
    break_path,
    index_base,
    open_service,
)


def _time_one(svc: KnowledgeService, world: World) -> tuple[float, str, list[str]]:
    started = time.perf_counter()
    try:
        response = svc.search(world.base_id, QUERY)
    except TroveError as exc:
        return (time.perf_counter() - started) * 1000.0, f"failed {exc.code}", []
    elapsed = (time.perf_counter() - started) * 1000.0
    stages = [f"{d.stage}:{d.code}" for d in response.degraded]
    return elapsed, f"{len(response.results)} results", stages


def _app_service(world: World, api: FakeApi, embed: Outage | None) -> KnowledgeService:
    """The catalog's provider with the app's own search clients (nothing injected)."""
    if embed is Outage.REFUSED:
        raise ValueError("the app policy runs against the configured URL only")
    if embed is not None:
        break_path(api, EMBEDDINGS, embed)
    return KnowledgeService(world.home, extraction=InlineExtraction())


def _scenario(
    world: World,
    api: FakeApi,
    runs: int,
    *,
    embed: Outage | None = None,
    rerank: Outage | None = None,
    app_policy: bool = False,
) -> dict[str, Any]:
    times: list[float] = []
    outcome, stages = "", []
    api.chooser = None
    if app_policy:
        svc = _app_service(world, api, embed)
    else:
        svc = open_service(world, api, embed=embed, rerank=rerank)
    try:
        _time_one(svc, world)  # builds the clients (an httpx client costs tens of ms)
        for _ in range(runs):
            elapsed, outcome, stages = _time_one(svc, world)
            times.append(elapsed)
    finally:
        svc.close()
    api.chooser = None
    return {
        "medianMs": round(statistics.median(times), 1),
        "maxMs": round(max(times), 1),
        "outcome": outcome,
        "degraded": stages,
    }


def run(runs: int) -> dict[str, Any]:
    previous = keyring.get_keyring()
    keyring.set_keyring(MemoryKeyring())
    try:
        with tempfile.TemporaryDirectory() as tmp, FakeApi(dims=8) as api:
            world = index_base(Path(tmp), api)
            out: dict[str, Any] = {"runs": runs, "healthy": _scenario(world, api, runs)}
            for outage in Outage:
                out[f"deadEmbedder.{outage}"] = _scenario(world, api, runs, embed=outage)
                out[f"deadReranker.{outage}"] = _scenario(world, api, runs, rerank=outage)
                out[f"bothDead.{outage}"] = _scenario(world, api, runs, embed=outage, rerank=outage)
            out["app.healthy"] = _scenario(world, api, runs, app_policy=True)
            for outage in (Outage.HTTP_500, Outage.TIMEOUT):
                out[f"app.deadEmbedder.{outage}"] = _scenario(
                    world, api, runs, embed=outage, app_policy=True
                )
            out["requests"] = {"embeddings": api.hits(EMBEDDINGS), "rerank": api.hits(RERANK)}
            return out
    finally:
        keyring.set_keyring(previous)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    print(json.dumps(run(args.runs)))


if __name__ == "__main__":
    main()
