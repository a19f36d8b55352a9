"""Entities, enums, error codes and search result types shared by every layer."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, TypedDict

from app.providers import interfaces as _provider
from app.providers.interfaces import ConnectionOk as ConnectionOk
from app.providers.model_info import LanguageSource as LanguageSource
from app.providers.model_info import ModelLanguages as ModelLanguages
from app.providers.model_store import errors as _model_store
from app.providers.model_store.manifest import MULTILINGUAL as MULTILINGUAL


class BaseStatus(StrEnum):
    COMPLETED = "completed"
    FAILED = "failed"


class IndexBackend(StrEnum):
    """Where a base's index lives: this machine's SQLite file, or a PostgreSQL server."""

    SQLITE = "sqlite"
    POSTGRES = "postgres"


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


class LowRelevance(StrEnum):
    """Why a search's results are only loosely related to its query."""

    # Full text found none of the words, and the best vector match is below the level at
    # which the base's embedding model puts related text (app/knowledge/relevance.py).
    WEAK_MATCH = "weak-match"
    # Full text found none of the words; how similar related text is under this embedding
    # model is not known, so the results found by meaning may or may not be related.
    NO_WORD_MATCH = "no-word-match"


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
    # A base on a PostgreSQL server that cannot be reached or refuses the login.
    SERVER_UNAVAILABLE = "SERVER_UNAVAILABLE"
    # The catalog (catalog.sqlite) cannot be read at all.
    CATALOG_DAMAGED = "CATALOG_DAMAGED"
    # An added source the base already has (AddReport.skipped; never an item's error).
    ALREADY_IN_BASE = "ALREADY_IN_BASE"
    # -- portable bases (export / import) --
    # An export file that fails its checksums, is cut short or is no Trove base at all.
    ARCHIVE_DAMAGED = "ARCHIVE_DAMAGED"
    # An export file written by a newer Trove (params: version, supported).
    ARCHIVE_NEWER_FORMAT = "ARCHIVE_NEWER_FORMAT"
    # An export file holding what no Trove export does: code inside its index (triggers,
    # views, computed columns), objects Trove's schema lacks. Made to attack, or by hand.
    ARCHIVE_UNSAFE = "ARCHIVE_UNSAFE"
    # A source that came with an imported base: it names a file, folder or page of the
    # computer the base came from, so Trove does not read it (reindex uses the base's copies).
    IMPORTED_SOURCE = "IMPORTED_SOURCE"
    # An export, import or copy the person cancelled; nothing of it is left.
    CANCELLED = "CANCELLED"
    # Text recognition (OCR) of scanned pages and pictures.
    OCR_UNAVAILABLE = "OCR_UNAVAILABLE"  # the `ocr` extra is not installed
    IMAGE_TOO_LARGE = "IMAGE_TOO_LARGE"  # an image bomb: more pixels than Trove decodes
    OCR_FAILED = "OCR_FAILED"  # the recognition worker crashed or ran out of memory
    # Asking a base (app/knowledge/ask): the chat model failed or is down, asked to wait
    # longer than a person waits, or the passages do not fit its context; an answer whose
    # stream broke off (its partial text is kept).
    CHAT_FAILED = "CHAT_FAILED"
    CHAT_RATE_LIMITED = "CHAT_RATE_LIMITED"
    CHAT_CONTEXT_OVERFLOW = "CHAT_CONTEXT_OVERFLOW"
    ANSWER_INTERRUPTED = "ANSWER_INTERRUPTED"


class ErrorReason(StrEnum):
    """Why a provider call failed, finer than its code: TroveError.params["reason"]."""

    CONNECTION_REFUSED = _provider.CONNECTION_REFUSED
    HOST_NOT_FOUND = _provider.HOST_NOT_FOUND
    CONNECTION_FAILED = _provider.CONNECTION_FAILED
    TIMED_OUT = _provider.TIMED_OUT
    KEY_REJECTED = _provider.KEY_REJECTED
    KEY_MISSING = _provider.KEY_MISSING
    NOT_FOUND = _provider.NOT_FOUND
    MODEL_MISSING = _provider.MODEL_MISSING
    NO_MODELS = _provider.NO_MODELS
    HTTP_STATUS = _provider.HTTP_STATUS
    NOT_JSON = _provider.NOT_JSON
    MALFORMED = _provider.MALFORMED
    WRONG_DIMENSIONS = _provider.WRONG_DIMENSIONS
    BAD_URL = _provider.BAD_URL
    NO_KEYCHAIN = _provider.NO_KEYCHAIN
    ANSWER_TIME_LIMIT = _provider.ANSWER_TIME_LIMIT
    ANSWER_SIZE_LIMIT = _provider.ANSWER_SIZE_LIMIT
    # Local models (downloads, imports, removals); params in model_store/errors.py.
    MODEL_IN_USE = "model_in_use"  # params: model, bases
    CHECKSUM_MISMATCH = _model_store.CHECKSUM_MISMATCH
    SIZE_MISMATCH = _model_store.SIZE_MISMATCH
    NOT_A_MODEL = _model_store.NOT_A_MODEL
    MODEL_BUSY = _model_store.BUSY
    MODEL_FILE_OPEN = _model_store.OPEN
    DISK_FULL = _model_store.DISK_FULL
    HUB_UNREACHABLE = _model_store.HUB_UNREACHABLE
    NOT_A_FOLDER = _model_store.NOT_A_FOLDER
    NO_MANIFEST = _model_store.NO_MANIFEST
    FILES_MISSING = _model_store.FILES_MISSING
    BAD_MANIFEST = _model_store.BAD_MANIFEST


# Names and numbers an error's sentence needs (a provider, an HTTP status, a model, a count),
# so a caller that speaks another language can say it without parsing the English message.
# Provider failures carry "reason" (an ErrorReason).
ErrorParams = dict[str, str | int]


class TroveError(Exception):
    """An expected failure with a stable code that the UI translates and the CLI prints.

    `message` is English for logs, the CLI and agents; `params` hold its variable parts."""

    def __init__(self, code: ErrorCode, message: str, params: ErrorParams | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.params: ErrorParams = dict(params or {})

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"


class AmbiguousBaseError(TroveError):
    """Several bases answer to what was asked for; `choices` are their (id, name) pairs, so
    a window can offer them without reading the English message."""

    def __init__(self, message: str, choices: list[tuple[str, str]]) -> None:
        super().__init__(ErrorCode.BASE_AMBIGUOUS, message, {"count": len(choices)})
        self.choices = list(choices)


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

# What the OCR models bundled with the `ocr` extra read (PP-OCR's Chinese model reads
# English too); a base may narrow it, not widen it.
OCR_LANGUAGES = ("ch", "en")
DEFAULT_OCR_MAX_PAGES = 100


@dataclass(frozen=True, slots=True)
class OcrSettings:
    """A base's text recognition of scanned pages and pictures.

    `enabled` None: on when the `ocr` extra is installed (the default)."""

    enabled: bool | None = None
    languages: tuple[str, ...] = OCR_LANGUAGES
    max_pages: int = DEFAULT_OCR_MAX_PAGES


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
    ocr: OcrSettings = field(default_factory=OcrSettings)
    # Where the index lives; for PostgreSQL, the server's address without its password.
    backend: IndexBackend = IndexBackend.SQLITE
    dsn: str | None = None
    # The person lets web pages that agents add (and those of imported bases) reach this
    # computer and its local network (loopback, private and link-local addresses).
    agent_private_urls: bool = False

    @property
    def has_vectors(self) -> bool:
        return (
            self.status is BaseStatus.COMPLETED
            and self.embedding_model is not None
            and self.dimensions is not None
        )


# The option that marks an item written by an import (Item.imported).
IMPORTED_OPTION = "imported"


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

    @property
    def imported(self) -> bool:
        """It came with an imported base: its source names a place on the computer it came
        from, shown and never read (app/knowledge/imported_sources.py)."""
        return bool((self.options or {}).get(IMPORTED_OPTION))


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
    # The chunk's text was recognised from a scanned page or a picture (OCR).
    ocr: bool = False

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
            "ocr": self.ocr,
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
    # The share of the base's chunks that have vectors when the vectors were searched
    # (0..1; below 1 while the vector stage is still at work). None: no vector stage ran.
    vector_coverage: float | None = None

    def to_json(self) -> dict[str, float | int]:
        coverage = (
            {}
            if self.vector_coverage is None
            else {"vectorCoverage": round(self.vector_coverage, 4)}
        )
        return {
            **coverage,
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
    and what the search did instead (English, for logs, the CLI and agents), `params` the
    provider failure's reason and names (TroveError.params). `not_asked`: the stage was
    skipped because an earlier one failed."""

    stage: SearchStage
    code: ErrorCode
    message: str
    params: ErrorParams = field(default_factory=dict)
    not_asked: bool = False

    def to_json(self) -> dict[str, str]:
        return {"stage": str(self.stage), "code": str(self.code), "message": self.message}


@dataclass(slots=True)
class SearchResponse:
    query: str
    # The mode the results come from: BM25 when a hybrid search lost its embedder.
    mode: SearchMode
    results: list[SearchResult] = field(default_factory=list)
    metrics: SearchMetrics = field(default_factory=SearchMetrics)
    reranked: bool = False
    # Empty for a search that ran every stage of its mode.
    degraded: list[Degradation] = field(default_factory=list)
    # Set when the results are only loosely related to the query (None: they are not, or
    # there are none).
    low_relevance: LowRelevance | None = None
    # The best cosine similarity of a vector hit (None: no vector stage ran or found any).
    best_similarity: float | None = None
    # The mode asked for, when the search had to answer in another (see `degraded`).
    requested_mode: SearchMode | None = None

    def degraded_json(self) -> list[dict[str, str]]:
        return [d.to_json() for d in self.degraded]

    def relevance_json(self) -> dict[str, object]:
        """`lowRelevance`, and its reason when set, for the CLI's and agents' JSON."""
        return low_relevance_json(self.low_relevance)


def low_relevance_json(low: LowRelevance | None) -> dict[str, object]:
    data: dict[str, object] = {"lowRelevance": low is not None}
    if low is not None:
        data["lowRelevanceReason"] = str(low)
    return data


@dataclass(frozen=True, slots=True)
class BaseHit:
    """A result of a search over several bases: its rank in the merged list (1 = best) and
    its base; `result.rank` stays its rank within its own base."""

    rank: int
    base: Base
    result: SearchResult


@dataclass(frozen=True, slots=True)
class BaseFailure:
    """A base a search over several bases could not search (failed, index damaged...)."""

    base: Base
    code: str
    message: str

    def to_json(self) -> dict[str, str]:
        return {"baseId": self.base.id, "code": self.code, "message": self.message}


@dataclass(slots=True)
class MultiSearchResponse:
    """One query over several bases: the merged hits, each base's own response (in the
    order the bases were asked) and the bases that could not be searched."""

    query: str
    hits: list[BaseHit] = field(default_factory=list)
    searched: list[tuple[Base, SearchResponse]] = field(default_factory=list)
    failures: list[BaseFailure] = field(default_factory=list)
    total_ms: float = 0.0

    @property
    def low_relevance(self) -> LowRelevance | None:
        """Set when every base that gave a hit says its results are only loosely related;
        the careful reason (NO_WORD_MATCH) when any of them could not judge more."""
        contributing = {hit.base.id for hit in self.hits}
        reasons = {r.low_relevance for b, r in self.searched if b.id in contributing}
        if not reasons or None in reasons:
            return None
        if reasons == {LowRelevance.WEAK_MATCH}:
            return LowRelevance.WEAK_MATCH
        return LowRelevance.NO_WORD_MATCH

    @property
    def degraded(self) -> list[tuple[Base, Degradation]]:
        return [(b, d) for b, r in self.searched for d in r.degraded]


# -- what the facade hands back (public value types live here, not in the modules that make them)


class OnConflict(StrEnum):
    SKIP = "skip"
    REPLACE = "replace"


class SkipReason(str):
    """Why an added source was skipped: the English reason (what the CLI and agents print),
    carrying its stable code and, for a copy of another source, that source."""

    code: ErrorCode
    same_as: str | None

    def __new__(cls, text: str, code: ErrorCode, same_as: str | None = None) -> SkipReason:
        reason = super().__new__(cls, text)
        reason.code = code
        reason.same_as = same_as
        return reason


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
    # Where each skipped item came from (a gone original of a folder indexed in place, or
    # the file whose copy under raw/ is missing), in the base's order.
    missing_sources: list[str] = field(default_factory=list)


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
    ocr: bool = False


class BaseSettings(TypedDict, total=False):
    """A new base's models and retrieval settings; what is left out takes its default."""

    embedding_model: str | None
    rerank_model: str | None
    document_count: int
    threshold: float | None
    chunk_size: int
    chunk_overlap: int
    ocr_enabled: bool | None
    ocr_languages: tuple[str, ...]
    ocr_max_pages: int
    backend: IndexBackend
    # A PostgreSQL connection string (libpq URI or key=value); its password goes to the
    # keychain, the rest is kept with the base.
    dsn: str | None
    # False: the rerank model need not be configured here (a base made from an archive).
    check_models: bool


class BaseChanges(TypedDict, total=False):
    """Settings to change on a base; what is left out keeps its value. The embedding model
    is not one of them: changing it means a rebuild (restore_base / enable_embedding)."""

    name: str
    rerank_model: str | None
    document_count: int
    threshold: float | None
    chunk_size: int
    chunk_overlap: int
    ocr_enabled: bool | None
    ocr_languages: tuple[str, ...]
    ocr_max_pages: int


# -- portable bases and copies between bases ------------------------------------------------


@dataclass(frozen=True, slots=True)
class ExportReport:
    """What `export_base` wrote: the file, and what it holds."""

    path: str
    items: int
    files: int
    chunks: int
    vectors: int
    bytes: int
    # Originals asked for (with_originals) that are gone or lead outside their folder:
    # their items travel with text and index only.
    originals_gone: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class ImportReport:
    """The base an import created; `model_available` False means its vectors are kept but
    its embedding model is not configured here (search runs on full text until it is, or
    until the base is restored with another model)."""

    base: Base
    items: int
    files: int
    chunks: int
    vectors: int
    model_available: bool


@dataclass(frozen=True, slots=True)
class TransferReport:
    """Items copied (or moved) into another base: `copied` are the new items' ids;
    `vectors_reused` the chunks whose stored vectors came along (same embedding model), and
    `reindexing` the new items queued to be indexed with the target's own model."""

    copied: list[str]
    vectors_reused: int
    reindexing: int
    removed_from_source: int


# -- asking a base (app/knowledge/ask) -----------------------------------------------------


class AnswerState(StrEnum):
    COMPLETE = "complete"
    INTERRUPTED = "interrupted"  # the stream broke off; the text is what arrived
    CANCELLED = "cancelled"  # the person stopped it; the text is what arrived


@dataclass(frozen=True, slots=True)
class AskSource:
    """A passage given to the chat model as `[number]`, and the base that holds it."""

    number: int
    base_id: str
    result: SearchResult

    def to_json(self) -> dict[str, object]:
        return {"number": self.number, "baseId": self.base_id, **self.result.to_json()}


@dataclass(frozen=True, slots=True)
class Citation:
    """A marker `[number]` in an answer, resolved to the exact span of its passage."""

    number: int
    source: AskSource

    def to_json(self) -> dict[str, object]:
        r = self.source.result
        return {
            "marker": self.number,
            "baseId": self.source.base_id,
            "itemId": r.item_id,
            "conceptId": r.concept_id,
            "title": r.title,
            "charStart": r.char_start,
            "charEnd": r.char_end,
            "page": r.page,
        }


@dataclass(slots=True)
class AskMetrics:
    rewrite_ms: float = 0.0  # 0 when the question was not rewritten
    retrieval_ms: float = 0.0
    first_token_ms: float | None = None  # from the start of the ask; None: no token came
    total_ms: float = 0.0
    passages: int = 0  # passages that fit the chat model's context
    context_tokens: int = 0  # the estimated tokens of the prompt sent
    dropped_markers: int = 0  # markers citing no passage, removed from the answer

    def to_json(self) -> dict[str, object]:
        return {
            "rewriteMs": round(self.rewrite_ms, 1),
            "retrievalMs": round(self.retrieval_ms, 1),
            "firstTokenMs": None if self.first_token_ms is None else round(self.first_token_ms, 1),
            "totalMs": round(self.total_ms, 1),
            "passages": self.passages,
            "contextTokens": self.context_tokens,
            "droppedMarkers": self.dropped_markers,
        }


@dataclass(slots=True)
class AskTurn:
    """One question and its answer, as kept in a base's conversation."""

    base_id: str
    question: str
    query: str  # what was searched: the question, or its rewrite
    answer: str  # markers citing no passage already removed
    sources: list[AskSource]
    chat_model: str
    state: AnswerState = AnswerState.COMPLETE
    id: int | None = None
    created_at: float = 0.0

    @property
    def rewritten(self) -> bool:
        return self.query != self.question


@dataclass(slots=True)
class AskAnswer:
    """What an ask gives back: the turn, its citations, its timings, and the failure that
    ended it early (its partial text is still in `turn.answer`)."""

    turn: AskTurn
    citations: list[Citation]
    metrics: AskMetrics
    error: TroveError | None = None

    def to_json(self) -> dict[str, object]:
        data: dict[str, object] = {
            "question": self.turn.question,
            "query": self.turn.query,
            "rewritten": self.turn.rewritten,
            "answer": self.turn.answer,
            "state": str(self.turn.state),
            "chatModel": self.turn.chat_model,
            "citations": [c.to_json() for c in self.citations],
            "sources": [s.to_json() for s in self.turn.sources],
            "metrics": self.metrics.to_json(),
        }
        if self.error is not None:
            data["error"] = {"code": str(self.error.code), "message": self.error.message}
        return data


@dataclass(frozen=True, slots=True)
class VectorStop:
    """Why a base's vector stage gave up (a rejected key, a model of another size...); it
    starts again with `trove resume` or the window's Resume."""

    code: str
    message: str


@dataclass(frozen=True, slots=True)
class VectorStatus:
    """How far a base's vectors are (jobs/embed_vectors.py): its documents are searchable
    by full text before their vectors exist."""

    has_model: bool
    chunks: int
    vectors: int
    waiting_documents: int  # completed, some of their chunks still without vectors
    paused: bool
    stopped: VectorStop | None

    @property
    def coverage(self) -> float:
        return min(1.0, self.vectors / self.chunks) if self.chunks else 1.0

    @property
    def done(self) -> bool:
        return not self.has_model or self.waiting_documents == 0

    def to_json(self) -> dict[str, object]:
        return {
            "hasModel": self.has_model,
            "chunks": self.chunks,
            "vectors": self.vectors,
            "coverage": round(self.coverage, 4),
            "waitingDocuments": self.waiting_documents,
            "paused": self.paused,
            "stopped": None
            if self.stopped is None
            else {"code": self.stopped.code, "message": self.stopped.message},
        }
