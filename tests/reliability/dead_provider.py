"""A knowledge base indexed through a loopback provider (FakeApi), then searched while its
embedding or rerank endpoint is dead in one of three ways: the port refuses connections, the
server answers HTTP 500, or it never answers (the client's short read timeout fires).

Shared by the engine, CLI/MCP and window tests of degraded search and by the latency bench.
"""

from __future__ import annotations

import socket
from collections.abc import Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from pathlib import Path

from app.knowledge import providers_config, query
from app.knowledge.catalog import Catalog
from app.knowledge.jobs.reader_pool import InlineExtraction
from app.knowledge.service import KnowledgeService
from app.knowledge.types import ItemStatus, SearchMode, SearchResponse
from app.providers import secrets
from app.providers.factory import build_embedder, build_reranker
from app.providers.http import RetryPolicy, Timeouts
from app.providers.interfaces import Embedder, Reranker
from app.providers.registry import ProviderRegistry
from tests.httpserver import Request
from tests.providers.fake_api import EMBEDDINGS, RERANK, FakeApi, Fault

PROVIDER = "acme"
EMBED_MODEL = f"{PROVIDER}:embed-small"
RERANK_MODEL = f"{PROVIDER}:rerank-small"
READ_TIMEOUT = 0.5
RETRY = RetryPolicy(max_attempts=2, base_delay=0.05, max_delay=0.1)
# What one dead stage may cost at most with the policy above: every attempt times out.
STAGE_WORST_S = RETRY.max_attempts * READ_TIMEOUT + RETRY.backoff(1)
QUERY = "how much sun do tomatoes need"

DOCS = {
    "sun.md": "# Tomatoes\n\nTomatoes need full sun and regular watering in summer.",
    "rose.md": "# Roses\n\nPrune roses in late winter and feed them compost in spring; "
    "roses like sun.",
    "bread.md": "# Bread\n\nA sourdough starter needs flour, water and patience.",
    "shade.md": "# Ferns\n\nFerns need shade, not sun, and damp soil all year.",
}


class Outage(StrEnum):
    REFUSED = "refused"
    HTTP_500 = "http500"
    TIMEOUT = "timeout"


@dataclass(frozen=True)
class World:
    home: Path
    base_id: str


def dead_url() -> str:
    """A loopback URL nobody listens on: connecting is refused at once."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def index_base(tmp_path: Path, api: FakeApi) -> World:
    """A hybrid base with a reranker, indexed while the provider is healthy."""
    home = tmp_path / "home"
    docs = tmp_path / "docs"
    docs.mkdir()
    for name, text in DOCS.items():
        (docs / name).write_text(text, encoding="utf-8")
    svc = KnowledgeService(home, extraction=InlineExtraction())
    try:
        svc.save_provider(
            PROVIDER, "openai", base_url=api.base_url, models=["embed-small", "rerank-small"]
        )
        base = svc.create_base("kb", embedding_model=EMBED_MODEL, rerank_model=RERANK_MODEL)
        svc.add(base.id, [docs])
        svc.run_pending_jobs(base.id)
        assert {i.status for i in svc.list_items(base.id)} == {ItemStatus.COMPLETED}
    finally:
        svc.close()
    return World(home, base.id)


def break_path(api: FakeApi, path: str, outage: Outage) -> str:
    """Make `path` of the provider dead; the base URL the stage's client must then use."""
    if outage is Outage.REFUSED:
        return dead_url()
    fault = Fault.http(500) if outage is Outage.HTTP_500 else Fault.slow()
    previous = api.chooser

    def choose(asked: str, request: Request) -> Fault | None:
        if asked == path:
            return fault
        return previous(asked, request) if previous is not None else None

    api.chooser = choose
    return api.base_url


def registry(
    catalog: Catalog,
    *,
    embed_url: str,
    rerank_url: str,
    with_embedder: bool = True,
    with_reranker: bool = True,
) -> ProviderRegistry:
    """The configured provider's clients with test-sized timeouts, each stage at its URL;
    a stage left out has no client at all (as when its provider was removed)."""
    settings = providers_config.find_settings(catalog, PROVIDER)
    options = {"timeouts": Timeouts(connect=2.0, read=READ_TIMEOUT), "retry": RETRY}
    models = ProviderRegistry()

    def embedder(model: str) -> Embedder:
        return build_embedder(
            replace(settings, base_url=embed_url), model, secrets.get_key, **options
        )

    def reranker(model: str) -> Reranker:
        return build_reranker(
            replace(settings, base_url=rerank_url), model, secrets.get_key, **options
        )

    if with_embedder:
        models.register_embedder(PROVIDER, embedder)
    if with_reranker:
        models.register_reranker(PROVIDER, reranker)
    return models


def open_service(
    world: World, api: FakeApi, *, embed: Outage | None = None, rerank: Outage | None = None
) -> KnowledgeService:
    """A service on the indexed base whose embedder and/or reranker is dead."""
    embed_url = break_path(api, EMBEDDINGS, embed) if embed else api.base_url
    rerank_url = break_path(api, RERANK, rerank) if rerank else api.base_url
    setup = KnowledgeService(world.home, extraction=InlineExtraction())
    try:
        models = registry(setup.catalog, embed_url=embed_url, rerank_url=rerank_url)
    finally:
        setup.close()
    return KnowledgeService(world.home, models=models, extraction=InlineExtraction())


def unreranked(
    svc: KnowledgeService, base_id: str, text: str, mode: SearchMode, embedder: Embedder | None
) -> SearchResponse:
    """What the engine answers for `mode` with no reranker at all: the reference order."""
    base = svc.get_base(base_id)
    return query.search(
        base,
        text,
        store=svc.parts.stores.get_if_exists(base.id),
        items=svc.catalog.get_items,
        embedder=embedder,
        reranker=None,
        mode=mode,
    )


def ranking(response: SearchResponse) -> Sequence[tuple[str, float]]:
    return [(r.item_id, round(r.score, 9)) for r in response.results]
