"""The engine's parts, built once by `KnowledgeService` and shared by every job and facade.

This is the composition root: it names what the engine is made of and imports nothing that
uses it (jobs, ingestion, admin, service), so every other module may depend on it.
"""

from __future__ import annotations

import concurrent.futures as cf
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from app.knowledge.catalog import Catalog
from app.knowledge.data_layout import DataLayout
from app.knowledge.locks import KeyedMutex
from app.knowledge.pipeline.sources.address_policy import Resolver, system_resolver
from app.knowledge.pipeline.sources.sitemap import SitemapLimits
from app.knowledge.pipeline.sources.web import FetchLimits
from app.knowledge.pipeline.store.registry import StoreRegistry
from app.knowledge.types import CancelReason
from app.providers.interfaces import ModelResolver

T = TypeVar("T")


class Extraction(Protocol):
    """Where documents are read and chunked (app/knowledge/jobs/reader_pool.py)."""

    def run(
        self, fn: Callable[..., T], *args: Any, cancelled: Callable[[], CancelReason | None]
    ) -> T: ...

    def shutdown(self) -> None: ...

    def warm(self) -> list[cf.Future[int]]: ...


@dataclass(slots=True)
class EngineParts:
    layout: DataLayout
    catalog: Catalog
    stores: StoreRegistry
    mutex: KeyedMutex
    models: ModelResolver
    # Where documents are read and chunked: worker processes in the app, inline in tests.
    extraction: Extraction
    # Texts per embedding call; None lets the embedder say (`preferred_batch_size`: the
    # built-in model measured its own), else DEFAULT_EMBED_BATCH_SIZE.
    embed_batch_size: int | None = None
    max_file_bytes: int = 200 * 1024 * 1024
    fetch_limits: FetchLimits = field(default_factory=FetchLimits)
    sitemap_limits: SitemapLimits = field(default_factory=SitemapLimits)
    # How restricted fetches resolve names (address_policy.py); tests give a fake one.
    resolve_host: Resolver = system_resolver
