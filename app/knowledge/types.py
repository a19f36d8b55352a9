"""Entities, enums, error codes and search result types shared by every layer."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, TypedDict


class BaseStatus(StrEnum):
    COMPLETED = "completed"
    FAILED = "failed"


class ItemType(StrEnum):
    FILE = "file"
    DIRECTORY = "directory"
    URL = "url"
    SITEMAP = "sitemap"
    NOTE = "note"


class ItemStatus(StrEnum):
    PREPARING = "preparing"
    PROCESSING = "processing"
    COMPLETED = "completed"
    FAILED = "failed"
    DELETING = "deleting"


RUNNING_STATUSES = frozenset({ItemStatus.PREPARING, ItemStatus.PROCESSING})
SETTLED_STATUSES = frozenset({ItemStatus.COMPLETED, ItemStatus.FAILED})


class ItemPhase(StrEnum):
    READING = "reading"
    EMBEDDING = "embedding"
    WRITING = "writing"
    WAITING = "waiting"


# Why a running job stops early (its cancel check's answer).
class CancelReason(StrEnum):
    ITEM_GONE = "item-gone"  # deleted or settled meanwhile: nothing to record
    TIMEOUT = "timeout"  # the job ran past its policy's timeout
    SHUTDOWN = "shutdown"  # Trove is closing


class SearchMode(StrEnum):
    BM25 = "bm25"
    VECTOR = "vector"
    HYBRID = "hybrid"


class SearchStage(StrEnum):
    """The search stages that call a provider, so they can fail on their own."""

    EMBEDDING = "embedding"
    RERANK = "rerank"


class ScoreKind(StrEnum):
    # relevance: comparable similarity (vector cosine, rerank score); the threshold applies.
    # ranking: only meaningful as an order (BM25, RRF); the threshold never applies.
    RELEVANCE = "relevance"
    RANKING = "ranking"


class ErrorCode(StrEnum):
    EMPTY_INDEXABLE_TEXT = "EMPTY_INDEXABLE_TEXT"
    INDEXING_INTERRUPTED = "INDEXING_INTERRUPTED"
    SOURCE_MISSING = "SOURCE_MISSING"
    UNSUPPORTED_FILE_TYPE = "UNSUPPORTED_FILE_TYPE"
    FILE_TOO_LARGE = "FILE_TOO_LARGE"
    READ_FAILED = "READ_FAILED"
    EMBEDDING_FAILED = "EMBEDDING_FAILED"
    RERANK_FAILED = "RERANK_FAILED"
    PROVIDER_AUTH_FAILED = "PROVIDER_AUTH_FAILED"
    # No usable OS keychain to keep an API key in (the CLI's `provider add --key-stdin`).
    KEYCHAIN_UNAVAILABLE = "KEYCHAIN_UNAVAILABLE"
    FETCH_FAILED = "FETCH_FAILED"
    ALL_CHILDREN_FAILED = "ALL_CHILDREN_FAILED"
    # Trove's own data dir refused a write: the disk (or quota) is full, or it is read-only.
    STORAGE_FULL = "STORAGE_FULL"
    STORAGE_READ_ONLY = "STORAGE_READ_ONLY"
    # Errors of operations rather than items.
    BASE_FAILED = "BASE_FAILED"
    BASE_NOT_FOUND = "BASE_NOT_FOUND"
    BASE_AMBIGUOUS = "BASE_AMBIGUOUS"
    ITEM_NOT_FOUND = "ITEM_NOT_FOUND"
    NO_SEARCHABLE_TOKEN = "NO_SEARCHABLE_TOKEN"
    ILLEGAL_TRANSITION = "ILLEGAL_TRANSITION"
    INVALID_ARGUMENT = "INVALID_ARGUMENT"
    MODEL_NOT_AVAILABLE = "MODEL_NOT_AVAILABLE"
    UNSAFE_PATH = "UNSAFE_PATH"
    # A base's index file is damaged (restore rebuilds it from the base's own copies).
    INDEX_CORRUPT = "INDEX_CORRUPT"
    # The catalog (catalog.sqlite) cannot be read at all.
    CATALOG_DAMAGED = "CATALOG_DAMAGED"


class TroveError(Exception):
    """An expected failure with a stable code that the UI translates and the CLI prints."""

    def __init__(self, code: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"


class IllegalTransitionError(TroveError):
    def __init__(self, item_id: str, old: ItemStatus | None, new: ItemStatus) -> None:
        super().__init__(
            ErrorCode.ILLEGAL_TRANSITION,
            f"item {item_id}: illegal status change {old or 'new'} -> {new}",
        )
        self.old = old
        self.new = new


DEFAULT_DOCUMENT_COUNT = 10
DEFAULT_CHUNK_SIZE = 512
DEFAULT_CHUNK_OVERLAP = 64


@dataclass(frozen=True, slots=True)
class Base:
    id: str
    name: str
    embedding_model: str | None
    dimensions: int | None
    rerank_model: str | None
    document_count: int
    threshold: float | None
    chunk_size: int
    chunk_overlap: int
    status: BaseStatus
    status_reason: str | None
    created_at: float
    updated_at: float
    # The person allows agent tools (kb_manage) to add, delete and refresh items.
    agent_writes: bool = False

    @property
    def has_vectors(self) -> bool:
        return (
            self.status is BaseStatus.COMPLETED
            and self.embedding_model is not None
            and self.dimensions is not None
        )


@dataclass(frozen=True, slots=True)
class Item:
    id: str
    base_id: str
    parent_id: str | None
    type: ItemType
    source: str
    title: str
    relative_path: str | None
    status: ItemStatus
    phase: ItemPhase | None
    progress: float | None
    error_code: str | None
    error_message: str | None
    chunk_count: int
    size: int | None
    content_hash: str | None
    created_at: float
    updated_at: float
    options: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class WorkCounts:
    """Where a base's documents (folders and sitemaps aside) stand in indexing, counted in
    SQL for progress displays: a window that shows another base, or another process's
    work, still tells how far it is."""

    settled: int = 0  # completed or failed
    settled_bytes: int = 0
    pending: int = 0  # preparing or processing
    pending_bytes: int = 0  # of the pending ones whose size is known
    unsized: int = 0  # pending ones without a known size (web pages, notes)
    partial_bytes: float = 0.0  # the share of pending sizes already embedded or being written
    preparing: int = 0  # folders and sitemaps still being expanded
    deleting: int = 0
    queued_jobs: int = 0
    running_jobs: int = 0


@dataclass(frozen=True, slots=True)
class SearchResult:
    rank: int
    score: float
    score_kind: ScoreKind
    item_id: str
    source: str
    title: str
    concept_id: str
    char_start: int
    char_end: int
    text: str
    page: int | None = None

    def to_json(self) -> dict[str, object]:
        return {
            "rank": self.rank,
            "score": self.score,
            "scoreKind": str(self.score_kind),
            "itemId": self.item_id,
            "source": self.source,
            "title": self.title,
            "conceptId": self.concept_id,
            "charStart": self.char_start,
            "charEnd": self.char_end,
            "page": self.page,
            "text": self.text,
        }


@dataclass(slots=True)
class SearchMetrics:
    embedding_ms: float = 0.0
    vector_search_ms: float = 0.0
    vector_hit_count: int = 0
    bm25_search_ms: float = 0.0
    bm25_hit_count: int = 0
    fusion_ms: float = 0.0
    final_count: int = 0
    rerank_ms: float = 0.0
    total_ms: float = 0.0

    def to_json(self) -> dict[str, float | int]:
        return {
            "embeddingMs": round(self.embedding_ms, 3),
            "vectorSearchMs": round(self.vector_search_ms, 3),
            "vectorHitCount": self.vector_hit_count,
            "bm25SearchMs": round(self.bm25_search_ms, 3),
            "bm25HitCount": self.bm25_hit_count,
            "fusionMs": round(self.fusion_ms, 3),
            "finalCount": self.final_count,
            "rerankMs": round(self.rerank_ms, 3),
            "totalMs": round(self.total_ms, 3),
        }


@dataclass(frozen=True, slots=True)
class Degradation:
    """A provider stage that failed or was skipped; the results stand without it.

    `code` is the error the stage would have raised on its own, `message` what went wrong
    and what the search did instead (English, for logs, the CLI and agents)."""

    stage: SearchStage
    code: ErrorCode
    message: str

    def to_json(self) -> dict[str, str]:
        return {"stage": str(self.stage), "code": str(self.code), "message": self.message}


@dataclass(slots=True)
class SearchResponse:
    query: str
    mode: SearchMode
    results: list[SearchResult] = field(default_factory=list)
    metrics: SearchMetrics = field(default_factory=SearchMetrics)
    reranked: bool = False
    # Empty for a search that ran every stage of its mode.
    degraded: list[Degradation] = field(default_factory=list)

    def degraded_json(self) -> list[dict[str, str]]:
        return [d.to_json() for d in self.degraded]


# -- what the facade hands back (public value types live here, not in the modules that make them)


class OnConflict(StrEnum):
    SKIP = "skip"
    REPLACE = "replace"


@dataclass(slots=True)
class AddReport:
    added: list[Item] = field(default_factory=list)
    # (source, reason) for sources the base already has: reported, never duplicated silently.
    skipped: list[tuple[str, str]] = field(default_factory=list)
    # (source, item id) for items replaced by a new copy (on_conflict=replace).
    replaced: list[tuple[str, str]] = field(default_factory=list)
    # (source, message) for sources that could not be admitted at all.
    errors: list[tuple[str, str]] = field(default_factory=list)


@dataclass(slots=True)
class RebuildReport:
    restored: int = 0
    skipped_missing_source_count: int = 0
    unverifiable: int = 0


@dataclass(frozen=True, slots=True)
class StoredChunk:
    id: int
    item_id: str
    seq: int
    char_start: int
    char_end: int
    text: str
    page: int | None
    relative_path: str
    title: str


class BaseSettings(TypedDict, total=False):
    """A new base's models and retrieval settings; what is left out takes its default."""

    embedding_model: str | None
    rerank_model: str | None
    document_count: int
    threshold: float | None
    chunk_size: int
    chunk_overlap: int


class BaseChanges(TypedDict, total=False):
    """Settings to change on a base; what is left out keeps its value. The embedding model
    is not one of them: changing it means a rebuild (restore_base / enable_embedding)."""

    name: str
    rerank_model: str | None
    document_count: int
    threshold: float | None
    chunk_size: int
    chunk_overlap: int
