"""KnowledgeService: the facade every caller uses (GUI, CLI, agent tools).

It owns the engine's parts and delegates each public method to the module that holds the
logic; it holds no domain logic of its own.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import (
    AsyncGenerator,
    Callable,
    Collection,
    Iterable,
    Iterator,
    Mapping,
    Sequence,
)
from collections.abc import Set as AbstractSet
from concurrent.futures import Future
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Unpack

import apsw

from app.knowledge import (
    admin,
    coverage,
    ingestion,
    linked_folders,
    model_manager,
    multi_search,
    path_safety,
    providers_config,
    query,
    relevance,
    server_import,
    vector_stage,
)
from app.knowledge import doctor as integrity
from app.knowledge.ask import citations as ask_citations
from app.knowledge.ask import engine as ask_engine
from app.knowledge.ask import service_glue as asking
from app.knowledge.ask import turns
from app.knowledge.ask.context import Budget
from app.knowledge.ask.engine import AskPlan as AskPlan
from app.knowledge.catalog import Catalog
from app.knowledge.data_layout import DataLayout
from app.knowledge.engine import EngineParts, Extraction
from app.knowledge.folder_watch import FolderWatch
from app.knowledge.jobs import recovery, runner
from app.knowledge.jobs.context import JobContext, ProgressCallback
from app.knowledge.jobs.errors import STORAGE_READ_ONLY_MESSAGE, index_corrupt, storage_failure
from app.knowledge.jobs.job_queue import JobQueue
from app.knowledge.jobs.kinds import JobKind
from app.knowledge.jobs.queue import queue_vectors
from app.knowledge.jobs.reader_pool import shared_pool
from app.knowledge.locks import KeyedMutex
from app.knowledge.material_paths import CONTAINER_TYPES, in_place

# The model manager's value types, for callers that take them from the facade.
from app.knowledge.model_manager import HubEndpoint as HubEndpoint
from app.knowledge.model_manager import ModelDownload as ModelDownload
from app.knowledge.model_manager import ModelDownloadCancelled as ModelDownloadCancelled
from app.knowledge.model_manager import ModelImport as ModelImport
from app.knowledge.model_manager import ModelListing as ModelListing
from app.knowledge.model_manager import ModelState as ModelState
from app.knowledge.ocr.settings import ocr_installed, ocr_on
from app.knowledge.pipeline.readers.registry import SUPPORTED_EXTENSIONS
from app.knowledge.pipeline.store.base_index import BaseIndex
from app.knowledge.pipeline.store.index_store import (
    CORRUPTION_ERRORS,
    MaterialInfo,
)
from app.knowledge.pipeline.store.registry import StoreRegistry
from app.knowledge.portable import export, importer, staging, transfer
from app.knowledge.portable.archive import TransferCancelled
from app.knowledge.provider_errors import provider_failure
from app.knowledge.server_index import catalog_opener, server_lookup
from app.knowledge.source_origin import Origin as Origin

# Linked folders' value types, for callers that take them from the facade.
from app.knowledge.sync_types import LinkedFolder as LinkedFolder
from app.knowledge.sync_types import SyncChanges as SyncChanges
from app.knowledge.sync_types import SyncState as SyncState
from app.knowledge.types import (
    AddReport,
    AmbiguousBaseError,
    AnswerState,
    AskAnswer,
    AskTurn,
    Base,
    BaseChanges,
    BaseSettings,
    Citation,
    ConnectionOk,
    ErrorCode,
    ExportReport,
    ImportReport,
    Item,
    ItemPhase,
    ItemStatus,
    ModelLanguages,
    MultiSearchResponse,
    OnConflict,
    RebuildReport,
    SearchMode,
    SearchResponse,
    StoredChunk,
    TransferReport,
    TroveError,
    WorkCounts,
)
from app.knowledge.types import (
    VectorStatus as VectorStatus,
)
from app.knowledge.types import (
    VectorStop as VectorStop,
)
from app.providers import async_probe, execution, secrets
from app.providers.chat import ChatOptions
from app.providers.factory import ProviderSettings, builtin_local_settings
from app.providers.interfaces import Embedder, ModelResolver, ProviderError, Reranker
from app.providers.local_model import LOCAL_MODEL_ID, local_model_available
from app.providers.model_store.manifest import MODELS_DIR
from app.providers.model_store.manifest import ModelKind as ModelKind

log = logging.getLogger(__name__)


class KnowledgeService:
    def __init__(
        self,
        home: Path,
        *,
        models: ModelResolver | None = None,
        embed_batch_size: int | None = None,
        extraction: Extraction | None = None,
        related_levels: Mapping[str, float] | None = None,
    ) -> None:
        """`extraction` defaults to the process-wide pool of reader worker processes;
        `related_levels` to the measured cosine levels of related text per embedding model
        (relevance.RELATED_LEVELS), which decide when results are only loosely related."""
        layout = DataLayout(home)
        # Detected once at start: a read-only folder is opened read-only, so reads work.
        self.read_only = layout.read_only()
        if self.read_only:
            log.info("data folder %s is read-only: searching only", home)
        else:
            layout.bases_dir.mkdir(parents=True, exist_ok=True)
        catalog = Catalog(layout.catalog_path, read_only=self.read_only)
        catalog.use_servers(catalog_opener(catalog))
        # Models installed as local:<id> (app/providers/installed_models.py).
        models_dir = layout.home / MODELS_DIR
        # A local model measured faster on an accelerator is measured once, not every start.
        execution.remember_in(None if self.read_only else layout.home / execution.PLACEMENT_FILE)
        # Injected models (tests, benchmarks) stay fixed; otherwise the configured providers.
        self._fixed_models = models is not None
        self.parts = EngineParts(
            layout=layout,
            catalog=catalog,
            stores=StoreRegistry(
                layout.base_dir, read_only=self.read_only, servers=server_lookup(catalog)
            ),
            mutex=KeyedMutex(),
            models=models or providers_config.build_registry(catalog, models_dir=models_dir),
            embed_batch_size=embed_batch_size,
            extraction=extraction or shared_pool(),
        )
        # Searches use clients of their own that give up sooner (see SEARCH_RETRY); the same
        # provider settings, so both registries are rebuilt together.
        self._search_models: ModelResolver = models or providers_config.build_registry(
            catalog, models_dir=models_dir, for_search=True
        )
        self.related_levels: Mapping[str, float] = (
            relevance.RELATED_LEVELS if related_levels is None else related_levels
        )
        self._checked_stores: set[str] = set()
        self._checked_lock = threading.Lock()
        # The runtime's way to the queue (claims, counts, releases, phases).
        self.jobs = JobQueue(self.parts)
        # Watching linked folders, while a front end asks for it (start_watching).
        self._watch: FolderWatch | None = None

    def _require_writable(self) -> None:
        """Refuse a change up front in a read-only data folder, naming the folder."""
        if self.read_only:
            raise TroveError(
                ErrorCode.STORAGE_READ_ONLY,
                STORAGE_READ_ONLY_MESSAGE.format(
                    detail=f"read-only: {self.layout.home}", then="run the command again"
                ),
            )

    @property
    def catalog(self) -> Catalog:
        return self.parts.catalog

    @property
    def layout(self) -> DataLayout:
        return self.parts.layout

    def warm_up(self) -> list[Future[int]]:
        """Start the document reader processes in the background (the window calls this at
        start, so a first import does not pay for their start-up); futures of their pids."""
        return self.parts.extraction.warm()

    def close(self) -> None:
        self.stop_watching()
        self.parts.stores.close_all()
        self.parts.catalog.close()

    # -- bases -------------------------------------------------------------------------

    def create_base(self, name: str, **settings: Unpack[BaseSettings]) -> Base:
        """A new base; settings left out take their defaults (types.BaseSettings)."""
        self._require_writable()
        base = admin.create_base(self.parts, name, settings)
        self.catalog.watch_new_servers()
        return base

    def update_base(self, base_id: str, **changes: Unpack[BaseChanges]) -> Base:
        """Rename or change retrieval settings; arguments left out keep their values.
        The embedding model changes through restore_base / enable_embedding instead."""
        self._require_writable()
        return admin.update_base(self.parts, base_id, changes)

    def ocr_available(self) -> bool:
        """Whether the `ocr` extra (text recognition of scans and pictures) is installed."""
        return ocr_installed()

    def ocr_on(self, base: Base) -> bool:
        """Whether the base recognises text in scans and pictures (its setting, else
        on when the extra is installed)."""
        return ocr_on(base.ocr)

    def attach_base(self, dsn: str, base_id: str | None = None) -> Base:
        """Use a base another desktop created on a PostgreSQL server (`base_id` chooses
        one when the server holds several)."""
        self._require_writable()
        base = admin.attach_base(self.parts, dsn, base_id)
        self.catalog.watch_new_servers()
        return base

    def watch_server_changes(self, changed: Callable[[str], None]) -> None:
        """Call `changed(base id)` (on another thread) when the items of a base on a
        PostgreSQL server change there, whichever desktop changed them."""
        self.catalog.watch_servers(changed)

    def open_server_bases(self) -> None:
        """Connect to every server base now (waits on the network; the headless runner)."""
        self.catalog.open_servers()

    def stop_watching_server_changes(self) -> None:
        self.catalog.stop_watching_servers()

    def detach_base(self, base_id: str) -> None:
        """Stop using a server base here; it stays on the server for everyone else."""
        self._require_writable()
        admin.detach_base(self.parts, base_id)
        with self._checked_lock:
            self._checked_stores.discard(base_id)

    def delete_base(self, base_id: str) -> None:
        self._require_writable()
        admin.delete_base(self.parts, base_id)
        with self._checked_lock:
            self._checked_stores.discard(base_id)

    def list_bases(self) -> list[Base]:
        return self.catalog.list_bases()

    def get_base(self, base_id: str) -> Base:
        return self.catalog.require_base(base_id)

    def set_agent_writes(self, base_id: str, enabled: bool) -> Base:
        """Allow (or stop) agent tools adding, deleting and refreshing items in a base."""
        self._require_writable()
        self.catalog.require_base(base_id)
        return self.catalog.update_base(base_id, agent_writes=int(enabled))

    def set_agent_private_urls(self, base_id: str, enabled: bool) -> Base:
        """Let web pages that agents add to a base (and those of an imported base) reach this
        computer and the local network, or (the default) only public internet addresses."""
        self._require_writable()
        self.catalog.require_base(base_id)
        return self.catalog.update_base(base_id, agent_private_urls=int(enabled))

    def resolve_base(self, ref: str) -> Base:
        """A base by id, or by a name that only one base has."""
        base = self.catalog.get_base(ref)
        if base is not None:
            return base
        named = self.catalog.find_bases_by_name(ref)
        if len(named) == 1:
            return named[0]
        if not named:
            raise TroveError(ErrorCode.BASE_NOT_FOUND, f"no knowledge base with id or name {ref!r}")
        ids = ", ".join(b.id for b in named)
        raise AmbiguousBaseError(
            f"{len(named)} knowledge bases are named {ref!r}; use an id ({ids})",
            [(b.id, b.name) for b in named],
        )

    # -- items -------------------------------------------------------------------------

    def list_items(self, base_id: str) -> list[Item]:
        return self.catalog.list_items(base_id)

    def item_changes(
        self, base_id: str, since: float, known: AbstractSet[str] | None = None
    ) -> tuple[list[Item], set[str]]:
        """The items changed at or after `since` (their updated_at), and the ids of every
        item the base has now: what a view of a big base needs to follow it without reading
        every row again.

        `known`, the ids the view shows: when the base has as many items as those and the
        changed ones together, nothing went (a new item is always among the changed), so
        the ids are not read at all (40,000 of them, several times a second, during a
        library's import). A deletion and an addition between the two reads can make the
        answer one read late; the view's periodic full read settles it."""
        changed = self.catalog.list_items(base_id, changed_since=since)
        if known is not None:
            ids = set(known).union(item.id for item in changed)
            if self.catalog.count_items(base_id) == len(ids):
                return changed, ids
        return changed, self.catalog.item_ids(base_id)

    def get_item(self, item_id: str) -> Item:
        return self.catalog.require_item(item_id)

    def find_item(self, item_id: str) -> Item | None:
        """The item, or None when it does not exist (any more)."""
        return self.catalog.get_item(item_id)

    def has_in_place_files(self, base_id: str) -> bool:
        """Does the base hold files indexed in place (a linked folder's, with no copy)?"""
        return any(in_place(i) for i in self.catalog.list_items(base_id))

    def items(self, item_ids: Iterable[str]) -> dict[str, Item]:
        """The items of these ids that exist, by id."""
        return self.catalog.get_items(item_ids)

    def count_items(self, base_id: str, status: ItemStatus | None = None) -> int:
        return self.catalog.count_items(base_id, status)

    def child_status_counts(self, parent_id: str) -> dict[ItemStatus, int]:
        """How many of a folder's or sitemap's children are in each status."""
        return self.catalog.child_status_counts(parent_id)

    def work_counts(self) -> dict[str, WorkCounts]:
        """How far every base with content is in indexing, with its queued and running jobs
        (any process's): what progress displays show for bases and work they do not watch."""
        counts = self.catalog.work_counts()
        for base_id, (queued, running) in self.catalog.job_counts_by_base().items():
            was = counts.get(base_id, WorkCounts())
            counts[base_id] = replace(was, queued_jobs=queued, running_jobs=running)
        return counts

    def activity(self, base_id: str) -> recovery.Activity:
        """Which processes work on the queue, and what of the base's work nobody claimed."""
        return recovery.activity(self.catalog, base_id)

    def find_material(self, base_id: str, relative_path: str) -> MaterialInfo | None:
        """The indexed material at a path under raw/ (a Concept ID), if the index has one."""
        base = self.catalog.require_base(base_id)
        store = self._store_if_exists(base)
        return store.material_by_path(relative_path) if store is not None else None

    def item_chunks(self, base_id: str, item_id: str) -> list[StoredChunk]:
        """The chunks of one indexed item, in order (empty when it has none yet)."""
        base = self.catalog.require_base(base_id)
        store = self._store_if_exists(base)
        return store.item_chunks(item_id) if store is not None else []

    @staticmethod
    def supported_extensions() -> frozenset[str]:
        """The file name extensions Trove can read (".md", ".pdf", ...), lower case."""
        return SUPPORTED_EXTENSIONS

    def material_file(self, base_id: str, relative_path: str) -> Path:
        """The file of a material under raw/; raises UnsafePathError for anything outside it."""
        return path_safety.resolve_below(self.layout.raw_dir(base_id), relative_path)

    def add(
        self,
        base_id: str,
        sources: Sequence[str | Path],
        *,
        on_conflict: OnConflict = OnConflict.SKIP,
        folder_options: dict[str, object] | None = None,
    ) -> AddReport:
        """Add files and folders; conflicts with what the base has are reported, not duplicated."""
        self._require_writable()
        return ingestion.add_paths(
            self.parts, base_id, sources, on_conflict=on_conflict, folder_options=folder_options
        )

    def add_urls(
        self,
        base_id: str,
        urls: Sequence[str],
        *,
        sitemap: bool = False,
        on_conflict: OnConflict = OnConflict.SKIP,
        origin: Origin = Origin.PERSON,
    ) -> AddReport:
        """Add web pages (or sitemaps); `origin` says who asks (an agent's may reach only
        public addresses unless the base allows more: source_origin.py)."""
        self._require_writable()
        return ingestion.add_urls(
            self.parts, base_id, urls, sitemap=sitemap, on_conflict=on_conflict, origin=origin
        )

    def add_note(self, base_id: str, title: str, text: str) -> Item:
        self._require_writable()
        return ingestion.add_note(self.parts, base_id, title, text)

    def update_note(self, base_id: str, item_id: str, title: str, text: str) -> Item:
        """Replace a settled note's title and text and index it again (refused while it is
        being indexed or deleted)."""
        self._require_writable()
        return ingestion.update_note(self.parts, base_id, item_id, title, text)

    def delete_items(self, base_id: str, item_ids: Sequence[str] | None = None) -> list[str]:
        """Mark items (all when None) deleting and queue their removal."""
        self._require_writable()
        return ingestion.delete_items(self.parts, base_id, item_ids)

    def reindex(self, base_id: str, item_ids: Sequence[str] | None = None) -> list[Item]:
        """Re-acquire sources and index again; refused up front when it cannot run."""
        self._require_writable()
        return ingestion.reindex(self.parts, base_id, item_ids)

    def resume_interrupted(self, base_id: str) -> list[Item]:
        """Recover, then put the items a crash interrupted back to work (their sources still
        there), without paying again for the vectors they had embedded."""
        self._require_writable()
        self.recover()
        resumed = ingestion.resume_interrupted(self.parts, base_id)
        if not vector_stage.is_paused(self.catalog, base_id):
            self.resume_vectors(base_id)
        return resumed

    def restore_base(self, base_id: str, embedding_model: str | None = None) -> RebuildReport:
        """Rebuild a base from its own copies, optionally with another embedding model."""
        self._require_writable()
        base = self.catalog.require_base(base_id)
        model = embedding_model if embedding_model is not None else base.embedding_model
        return admin.rebuild_from_copies(self.parts, base_id, model or None)

    def enable_embedding(self, base_id: str, embedding_model: str) -> RebuildReport:
        """Give a BM25-only base an embedding model and backfill vectors for every item."""
        self._require_writable()
        return admin.rebuild_from_copies(
            self.parts, base_id, embedding_model, require_no_model=True
        )

    def recover(self) -> recovery.RecoveryReport:
        """Startup recovery: fail interrupted items, resume deletions."""
        self._require_writable()
        report = recovery.recover(self.parts)
        staging.clean_leftovers(self.layout, {b.id for b in self.catalog.list_bases()})
        return report

    def doctor(self, base_id: str | None = None, repair: bool = False) -> integrity.DoctorResult:
        """Check that catalog, indexes and raw/ files agree (one base, or all when None);
        with `repair`, fix what can be fixed and check again."""
        if repair:
            self._require_writable()
        return integrity.run(self.parts, base_id, repair=repair)

    # -- portable bases and copies between bases (app/knowledge/portable) ----------------

    def export_base(
        self,
        base_id: str,
        path: Path,
        *,
        progress: Callable[[int, int], None] | None = None,
        cancelled: Callable[[], bool] | None = None,
        strip_sources: bool = False,
        with_originals: bool = False,
    ) -> ExportReport:
        """Write the base to one `.trovebase` file (via FILE.part, renamed when complete);
        `progress(done, total)` counts bytes; `cancelled()` True stops it (CANCELLED);
        `strip_sources` leaves out the paths of its files and folders on this computer;
        `with_originals` carries the originals of linked folders' files (indexed in place)."""
        with _cancellable():
            return export.export_base(
                self.parts,
                base_id,
                path,
                progress=progress,
                cancelled=cancelled,
                strip_sources=strip_sources,
                with_originals=with_originals,
            )

    def import_base(
        self,
        path: Path,
        *,
        name: str | None = None,
        progress: Callable[[int, int], None] | None = None,
        cancelled: Callable[[], bool] | None = None,
        dsn: str | None = None,
    ) -> ImportReport:
        """A new base from a `.trovebase` file, verified before it becomes visible; it never
        replaces a base (a taken name gets " (2)"). With `dsn`, the new base lives on that
        PostgreSQL server."""
        self._require_writable()
        with _cancellable():
            if dsn is not None:
                report = server_import.import_to_server(
                    self.parts, path, dsn, name=name, progress=progress, cancelled=cancelled
                )
                self.catalog.watch_new_servers()
                return report
            return importer.import_base(
                self.parts, path, name=name, progress=progress, cancelled=cancelled
            )

    def copy_items(
        self, base_id: str, item_ids: Sequence[str], target_id: str, *, move: bool = False
    ) -> TransferReport:
        """Copy items (with everything inside them) into another base, their vectors too
        when both bases use the same embedding model; `move` then deletes the originals."""
        self._require_writable()
        moved_links: list[tuple[LinkedFolder, str]] = []
        if move:
            linked_folders.check_movable(self.parts, base_id, item_ids)
            moved_links = linked_folders.links_of(self.parts, base_id, item_ids)
        with _cancellable():
            report = transfer.copy_items(self.parts, base_id, item_ids, target_id, move=move)
        # A moved linked folder stays linked in its new base.
        carried = linked_folders.carry_links(self.parts, moved_links, target_id, report.copied)
        if carried and self._watch is not None:
            self._watch.refresh()
        return report

    def run_pending_jobs(
        self, base_id: str | None = None, progress: ProgressCallback | None = None
    ) -> int:
        """Run the queue in the calling thread until it is empty (the headless path)."""
        ctx = JobContext(self.parts)
        if progress is not None:
            ctx.progress = progress
        return runner.drain(ctx, base_id)

    # -- linked folders (kept in sync; see linked_folders.py) ---------------------------

    def add_linked_folders(
        self,
        base_id: str,
        folders: Sequence[str | Path],
        *,
        ignore_patterns: Sequence[str] = (),
        folder_options: dict[str, object] | None = None,
    ) -> AddReport:
        """Add folders kept in sync with their sources (a folder already added is linked)."""
        self._require_writable()
        report = linked_folders.add_linked(
            self.parts, base_id, folders, ignore_patterns, folder_options
        )
        if self._watch is not None:
            self._watch.refresh()
        return report

    def link_folder(
        self, base_id: str, item_id: str, ignore_patterns: Sequence[str] = ()
    ) -> LinkedFolder:
        """Keep a folder item in sync with its source folder (and sync it now)."""
        self._require_writable()
        link = linked_folders.link(self.parts, base_id, item_id, ignore_patterns)
        if self._watch is not None:
            self._watch.refresh()
        return link

    def unlink_folder(self, base_id: str, item_id: str) -> None:
        self._require_writable()
        linked_folders.unlink(self.parts, base_id, item_id)
        if self._watch is not None:
            self._watch.refresh()

    def request_sync(self, base_id: str, item_ids: Sequence[str] | None = None) -> list[str]:
        """Queue a sync of linked folders (all of the base's when None); returns their ids."""
        self._require_writable()
        return linked_folders.request_sync(self.parts, base_id, item_ids)

    def linked_folders(self, base_id: str | None = None) -> list[LinkedFolder]:
        return self.catalog.list_links(base_id)

    def sync_states(
        self, base_id: str, watching: frozenset[str] = frozenset()
    ) -> dict[str, SyncState]:
        """Each linked folder of a base by item id: its sync state and last changes."""
        return linked_folders.sync_states(self.parts, base_id, watching)

    def sync_log(self, item_id: str) -> list[SyncChanges]:
        """A linked folder's recent syncs, newest first."""
        return self.catalog.sync_log(item_id)

    def sync_changes_since(self, item_id: str, since: float) -> SyncChanges:
        return linked_folders.changes_since(self.parts, item_id, since)

    def start_watching(self, on_queued: Callable[[str], None] | None = None) -> FolderWatch:
        """Watch linked folders (and run scheduled page refreshes) until stop_watching or
        close; syncs every linked folder once now. `on_queued(base_id)` is called, on the
        watch's thread, after it queues work (the runtime wakes its executor)."""
        if self._watch is None:
            self._watch = FolderWatch(self.parts, on_queued)
            self._watch.start()
        return self._watch

    def stop_watching(self) -> None:
        if self._watch is not None:
            self._watch.stop()
            self._watch = None

    def watching(self) -> frozenset[str]:
        """Ids of the linked folders being watched by this process."""
        return self._watch.watching() if self._watch is not None else frozenset()

    def set_refresh(self, base_id: str, item_id: str, interval_s: float | None) -> None:
        """Refresh a web page or sitemap item every `interval_s` seconds (None: never)."""
        self._require_writable()
        linked_folders.set_refresh(self.parts, base_id, item_id, interval_s)

    def refresh_interval(self, item_id: str) -> float | None:
        return self.catalog.refresh_interval(item_id)

    def refresh_now(self, base_id: str, item_id: str) -> None:
        """Queue a conditional re-fetch of a web page or sitemap item's pages."""
        self._require_writable()
        linked_folders.refresh_now(self.parts, base_id, item_id)

    # -- providers ---------------------------------------------------------------------

    def list_providers(self) -> list[ProviderSettings]:
        """Configured providers, then the built-in offline one."""
        return [*providers_config.load_settings(self.catalog), builtin_local_settings()]

    def save_provider(
        self,
        provider_id: str,
        kind: str,
        *,
        base_url: str = "",
        display_name: str = "",
        models: Sequence[str] = (),
        enabled: bool = True,
        key: str | None = None,
        all_or_nothing: bool = False,
    ) -> ProviderSettings:
        self._require_writable()
        try:
            return providers_config.save_provider(
                self.catalog,
                provider_id,
                kind,
                base_url=base_url,
                display_name=display_name,
                models=models,
                enabled=enabled,
                key=key,
                all_or_nothing=all_or_nothing,
            )
        finally:
            self._reload_providers()

    def remove_provider(self, provider_id: str) -> None:
        self._require_writable()
        providers_config.remove_provider(self.catalog, provider_id)
        self._reload_providers()

    def offline_model(self) -> str | None:
        """The built-in offline embedding model's id, when its files and runtime are here."""
        return LOCAL_MODEL_ID if local_model_available() else None

    def provider_models(self, provider_id: str) -> list[str]:
        """The models a provider offers; the built-in one's include the installed models."""
        return providers_config.provider_models(
            self.catalog, provider_id, models_dir=self.layout.home / MODELS_DIR
        )

    def provider_key_stored(self, provider_id: str) -> bool:
        """Whether the keychain holds an API key for the provider (it may block: call it off
        the GUI thread)."""
        return secrets.has_stored_key(provider_id)

    def check_provider(self, provider_id: str, model: str | None = None) -> str:
        """One real call with `model` (an installed local model too); a short message."""
        return providers_config.check_provider(
            self.catalog, provider_id, model, models_dir=self.layout.home / MODELS_DIR
        )

    async def probe_models(
        self,
        kind: str,
        base_url: str,
        *,
        key: str | None = None,
        provider_id: str | None = None,
        name: str | None = None,
    ) -> list[str]:
        """The models a provider offers, for settings that need not be saved yet (the window's
        form), awaited on the caller's asyncio loop. Without `key`, the key stored for
        `provider_id` is used."""
        try:
            return await async_probe.list_models(
                kind, base_url, key, provider_id=provider_id, name=name
            )
        except ProviderError as exc:
            raise provider_failure(exc, ErrorCode.FETCH_FAILED) from exc

    async def probe_connection(
        self,
        kind: str,
        base_url: str,
        *,
        key: str | None = None,
        provider_id: str | None = None,
        model: str | None = None,
        name: str | None = None,
    ) -> ConnectionOk:
        """check_provider for unsaved settings, awaited on the caller's asyncio loop: one real
        call with `model` (default: the first model the provider lists)."""
        try:
            return await async_probe.test_connection(
                kind, base_url, key, model, provider_id=provider_id, name=name
            )
        except ProviderError as exc:
            raise provider_failure(exc, ErrorCode.FETCH_FAILED) from exc

    def model_languages(self, model_id: str) -> ModelLanguages:
        """The languages `model_id` (PROVIDER:MODEL) covers as far as Trove knows, and who
        said so: the person (set_model_languages), an installed model's manifest, the table
        of known models, or nobody (unknown: its vectors always count in hybrid search)."""
        return coverage.declared(self.catalog, self.layout.home / MODELS_DIR, model_id)

    def set_model_languages(self, model_id: str, languages: Sequence[str] | None) -> ModelLanguages:
        """Say which languages an embedding model covers ("en", "zh", ... or
        "multilingual"), overriding what Trove knows of it; None or [] forgets the override."""
        self._require_writable()
        coverage.set_override(self.catalog, model_id, languages)
        return self.model_languages(model_id)

    # -- local models ------------------------------------------------------------------

    def list_models(self) -> list[ModelListing]:
        """Local models: the built-in one, the catalog's (installed or not), then models
        imported from elsewhere, each with the bases that use it. Reads the disk: call it
        off the GUI thread."""
        return model_manager.list_models(
            self.layout.home, self.catalog, writable=not self.read_only
        )

    def download_model(
        self,
        model_id: str,
        *,
        progress: model_manager.Progress | None = None,
        cancel: model_manager.Cancel | None = None,
        mirror: str | None = None,
        force: bool = False,
    ) -> ModelDownload:
        """Download a catalog model (`local:<id>` or `<id>`) from the hub, or `mirror`, and
        install it. Slow: call it off the GUI thread. `progress(done, total)` follows every
        chunk received (bytes; total 0 until known; called often: throttle before drawing),
        from the calling thread; `cancel()`, checked between chunks, stops it
        with ModelDownloadCancelled, keeping what was fetched for the next download to
        resume. A usable install returns at once (`already_installed`) unless `force`."""
        self._require_writable()
        try:
            return model_manager.download_model(
                self.layout.home,
                self.catalog,
                model_id,
                progress=progress,
                cancel=cancel,
                mirror=mirror,
                force=force,
            )
        finally:
            self._reload_providers()

    def import_model(self, folder: Path) -> ModelImport:
        """Install the model a folder holds (`trove-model.json` and the files it names), for
        machines without access to the hub."""
        self._require_writable()
        try:
            return model_manager.import_model(self.layout.home, self.catalog, folder)
        finally:
            self._reload_providers()

    def remove_model(self, model_id: str) -> None:
        """Delete an installed model; refused (INVALID_ARGUMENT, reason model_in_use, the
        bases named) while a base uses it."""
        self._require_writable()
        try:
            model_manager.remove_model(self.layout.home, self.catalog, model_id)
        finally:
            self._reload_providers()

    def model_mirror(self) -> HubEndpoint:
        """Where model downloads go, where that choice comes from, and the stored mirror."""
        return model_manager.hub_endpoint(self.catalog)

    def set_model_mirror(self, url: str | None) -> HubEndpoint:
        """Store a mirror of the Hugging Face hub (None: huggingface.co again)."""
        self._require_writable()
        return model_manager.set_hub_endpoint(self.catalog, url)

    def _reload_providers(self) -> None:
        if not self._fixed_models:
            models_dir = self.layout.home / MODELS_DIR
            self.parts.models = providers_config.build_registry(self.catalog, models_dir=models_dir)
            self._search_models = providers_config.build_registry(
                self.catalog, models_dir=models_dir, for_search=True
            )

    # -- search ------------------------------------------------------------------------

    def search(
        self,
        base_id: str,
        text: str,
        *,
        top_k: int | None = None,
        mode: SearchMode | None = None,
        fusion: str | None = None,
        exclude: Collection[str] = (),
    ) -> SearchResponse:
        """The one search contract (DESIGN.md section 6).

        `exclude`: item ids whose subtrees are left out (the window's deletions that can
        still be undone). `mode` and `fusion` ("rrf": the reference application's plain
        RRF) exist for benchmarks only; callers leave them alone and get the derived mode.
        """
        base = self.catalog.require_base(base_id)
        try:
            store = self._store_if_exists(base)
            effective = mode or query.derive_mode(base)
            embedder = self._embedder(base, effective) if effective is not SearchMode.BM25 else None
            reranker = self._reranker(base) if base.rerank_model else None
            response = query.search(
                base,
                text,
                store=store,
                items=query.without_subtrees(self.catalog.get_items, frozenset(exclude)),
                embedder=embedder,
                reranker=reranker,
                top_k=top_k,
                mode=mode,
                fusion=fusion,
                languages=self._languages(base) if effective is SearchMode.HYBRID else None,
                related_level=relevance.related_level(self.related_levels, base.embedding_model),
            )
            if store is not None and response.mode is not SearchMode.BM25:
                response.metrics.vector_coverage = self._vector_coverage(base, store)
            return response
        except CORRUPTION_ERRORS as exc:
            raise index_corrupt(base, exc) from exc

    def _vector_coverage(self, base: Base, store: BaseIndex) -> float:
        """The share of chunks with vectors; counted only while the vector stage has work
        (counting a large index costs more than a search)."""
        if not self.catalog.vectors_waiting(base.id):
            return 1.0
        chunks = store.chunk_count()
        return min(1.0, store.vector_count() / chunks) if chunks else 1.0

    # -- the vector stage (jobs/embed_vectors.py) ---------------------------------------

    def vector_status(self, base_id: str) -> VectorStatus:
        """How far the base's vectors are, whether their stage is paused or stopped."""
        base = self.catalog.require_base(base_id)
        store = self._store_if_exists(base)
        chunks = store.chunk_count() if store is not None else 0
        vectors = store.vector_count() if store is not None else 0
        waiting = len(
            self.catalog.list_items(
                base_id, statuses=(ItemStatus.COMPLETED,), phase=ItemPhase.EMBEDDING
            )
        )
        return VectorStatus(
            has_model=base.embedding_model is not None,
            chunks=chunks,
            vectors=vectors,
            waiting_documents=waiting,
            paused=vector_stage.is_paused(self.catalog, base_id),
            stopped=vector_stage.stopped(self.catalog, base_id),
        )

    def pending_documents(self, base_id: str) -> int:
        """Documents (and folders being expanded) of the base not searchable yet."""
        return self.catalog.count_items(base_id, ItemStatus.PROCESSING) + self.catalog.count_items(
            base_id, ItemStatus.PREPARING
        )

    def vectors_paused(self, base_id: str) -> bool:
        return vector_stage.is_paused(self.catalog, base_id)

    def vectors_stopped(self, base_id: str) -> VectorStop | None:
        """Why the base's vector stage gave up, if it did (until resumed)."""
        return vector_stage.stopped(self.catalog, base_id)

    def pause_vectors(self, base_id: str) -> None:
        """Stop computing the base's vectors after the batch in flight, until resumed (a
        restart keeps it paused). Its documents stay searchable by full text."""
        self._require_writable()
        self.catalog.require_base(base_id)
        vector_stage.set_paused(self.catalog, base_id, True)
        for job in self.catalog.list_jobs(base_id, statuses=("queued",)):
            if job.kind == JobKind.EMBED_VECTORS:
                self.catalog.finish_job(job.id, "done")

    def resume_vectors(self, base_id: str) -> bool:
        """Compute the base's missing vectors again (after a pause, or a stop: a rejected
        key, a provider gone); whether there is work for the stage."""
        self._require_writable()
        base = self.catalog.require_base(base_id)
        vector_stage.set_paused(self.catalog, base_id, False)
        vector_stage.set_stopped(self.catalog, base_id, None)
        if base.embedding_model is None or not self.catalog.vectors_waiting(base_id):
            return False
        return queue_vectors(self.parts, base_id)

    def search_many(
        self, base_ids: Sequence[str] | None, text: str, *, top_k: int | None = None
    ) -> MultiSearchResponse:
        """One query over several bases (None: every base), merged by rank with each hit's
        base named (multi_search). A base that cannot be searched is listed in `failures`;
        when none can be, its error is raised. At most `top_k` hits, by default the largest
        document count of the bases searched."""
        if base_ids is None:
            bases = self.list_bases()
        else:
            bases = [self.catalog.require_base(base_id) for base_id in base_ids]
        return multi_search.search_many(
            bases, text, lambda base: self.search(base.id, text, top_k=top_k), top_k
        )

    def _languages(self, base: Base) -> ModelLanguages | None:
        return self.model_languages(base.embedding_model) if base.embedding_model else None

    def _embedder(self, base: Base, mode: SearchMode) -> Embedder | None:
        if not base.embedding_model:
            return None
        try:
            return self._search_models.embedder(base.embedding_model)
        except ProviderError as exc:
            if mode is SearchMode.VECTOR:  # nothing else could answer
                raise provider_failure(exc, ErrorCode.MODEL_NOT_AVAILABLE) from exc
            # A removed or disabled provider is a dead one too: hybrid degrades to BM25.
            return query.UnavailableModel(base.embedding_model, exc)

    def _reranker(self, base: Base) -> Reranker:
        assert base.rerank_model is not None
        try:
            return self._search_models.reranker(base.rerank_model)
        except ProviderError as exc:
            return query.UnavailableModel(base.rerank_model, exc)

    def _store_if_exists(self, base: Base) -> BaseIndex | None:
        store = self.parts.stores.get_if_exists(base.id)
        with self._checked_lock:
            first_open = base.id not in self._checked_stores
            self._checked_stores.add(base.id)
        if first_open:
            self._report_invisible_contents(base, store)
        return store

    def _report_invisible_contents(self, base: Base, store: BaseIndex | None) -> None:
        """An empty index under completed items means index.sqlite was lost or replaced."""
        completed = sum(
            1
            for item in self.catalog.list_items(base.id, statuses=[ItemStatus.COMPLETED])
            if item.type not in CONTAINER_TYPES
        )
        materials = store.material_count() if store is not None else 0
        if completed and not materials:
            log.error(
                "knowledge base %s (%s): the index has no materials but the catalog has %d "
                "completed items; searches will find nothing until the base is restored",
                base.id,
                base.name,
                completed,
            )

    # -- asking a base -----------------------------------------------------------------

    def ask(
        self,
        base_ids: Sequence[str],
        question: str,
        *,
        chat_model: str | None = None,
        on_token: Callable[[str], None] | None = None,
        cancel: threading.Event | None = None,
        remember: bool = True,
        context_tokens: int | None = None,
        history: bool = True,
        chat_options: ChatOptions | None = None,
        answer_seconds: float | None = None,
    ) -> AskAnswer:
        """Answer `question` from the passages of `base_ids` (the first one's conversation),
        streaming pieces to `on_token` in this thread (the CLI). A stream that breaks, or
        that runs past `answer_seconds` (default five minutes) or the answer's size limit,
        keeps its partial answer (`error` set); a failure before any token raises
        TroveError."""
        plan = self.prepare_ask(
            base_ids,
            question,
            chat_model=chat_model,
            context_tokens=context_tokens,
            history=history,
            chat_options=chat_options,
            answer_seconds=answer_seconds,
        )
        answer = asking.answer(
            self.catalog, plan, on_token=on_token, cancel=cancel, options=chat_options or {}
        )
        if remember and not self.read_only:
            self.save_ask_turn(answer.turn)
        return answer

    def prepare_ask(
        self,
        base_ids: Sequence[str],
        question: str,
        *,
        chat_model: str | None = None,
        context_tokens: int | None = None,
        history: bool = True,
        chat_options: ChatOptions | None = None,
        answer_seconds: float | None = None,
    ) -> AskPlan:
        """Rewrite (when the base says so), retrieve and assemble: everything before the
        answer streams. Blocking (network, disk): call it off the GUI thread.
        `answer_seconds`: how long the answer may stream (default five minutes)."""
        model = asking.chat_model(self.catalog, chat_model)
        budget = Budget.for_context(context_tokens) if context_tokens else Budget()
        search = asking.searcher(
            base_ids,
            lambda base_id, text: self.search(base_id, text),
            lambda ids, text: self.search_many(ids, text),
        )
        return asking.prepare(
            self.catalog,
            base_ids,
            question,
            model,
            search,
            budget=budget,
            history=history,
            options=chat_options or {},
            answer_seconds=answer_seconds,
        )

    def stream_answer(self, plan: AskPlan) -> AsyncGenerator[str, None]:
        """The answer's pieces, awaited on the caller's asyncio loop (the window's qasync
        loop: the GUI thread never waits on the network)."""
        return asking.stream(self.catalog, plan)

    @staticmethod
    def shrink_ask(plan: AskPlan) -> AskPlan:
        """The plan with half the context, for a chat model that found the prompt too long."""
        return ask_engine.shrink(plan)

    @staticmethod
    def finish_ask(
        plan: AskPlan, text: str, state: AnswerState, error: TroveError | None = None
    ) -> AskAnswer:
        """Resolve an answer's citations (markers citing no passage are dropped and counted)."""
        return ask_engine.finish(plan, text, state, error)

    @staticmethod
    def citation_spans(text: str) -> list[tuple[int, int, list[int]]]:
        """Where an answer's markers are: (start, end, numbers), for making links."""
        return ask_citations.spans(text)

    @staticmethod
    def turn_citations(turn: AskTurn) -> list[Citation]:
        """A kept turn's citations, resolved to its sources."""
        return ask_citations.resolve(turn.answer, turn.sources)

    def save_ask_turn(self, turn: AskTurn) -> AskTurn:
        self._require_writable()
        return turns.save(self.catalog, turn)

    def ask_turns(self, base_id: str) -> list[AskTurn]:
        """The base's conversation, oldest turn first."""
        return turns.load(self.catalog, base_id)

    def clear_ask_turns(self, base_id: str) -> int:
        self._require_writable()
        return self.catalog.clear_ask_turns(base_id)

    def ask_rewrite(self, base_id: str) -> bool:
        """Whether the base rewrites a question into a standalone query before retrieval."""
        return self.catalog.ask_rewrite(base_id)

    def set_ask_rewrite(self, base_id: str, rewrite: bool) -> None:
        self._require_writable()
        self.catalog.require_base(base_id)
        self.catalog.set_ask_rewrite(base_id, rewrite)

    def chat_models(self) -> list[str]:
        """The chat model ids the configured openai/ollama providers list."""
        return providers_config.chat_models(self.catalog)

    def chosen_chat_model(self) -> str | None:
        return self.catalog.get_setting(providers_config.CHAT_MODEL_SETTING)

    def choose_chat_model(self, model_id: str | None) -> None:
        """Remember the chat model the window or `trove ask --model` used last."""
        if model_id is not None:
            providers_config.chat_settings(self.catalog, model_id)
        if not self.read_only:
            self.catalog.set_setting(providers_config.CHAT_MODEL_SETTING, model_id)

    def check_chat(self, model_id: str) -> str:
        """One short streamed chat call; a message for the person, or TroveError."""
        return providers_config.check_chat(self.catalog, model_id)


@contextmanager
def _cancellable() -> Iterator[None]:
    """A cancelled export, import or copy surfaces as a TroveError with its own code."""
    try:
        yield
    except TransferCancelled as exc:
        raise TroveError(ErrorCode.CANCELLED, "cancelled; nothing was kept") from exc


def open_service(home: Path) -> KnowledgeService:
    """KnowledgeService(home) for an application start: a full disk or a read-only data
    folder is reported as a TroveError (STORAGE_FULL / STORAGE_READ_ONLY) to show the person."""
    try:
        return KnowledgeService(home)
    except (OSError, apsw.Error) as exc:
        failure = storage_failure(exc, home, then="restart Trove")
        if failure is None:
            raise
        raise TroveError(ErrorCode(failure.code), failure.message) from exc
