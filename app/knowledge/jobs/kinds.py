"""Job kinds and their policies (DESIGN.md section 5)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class JobKind(StrEnum):
    PREPARE_ROOT = "prepare-root"
    INDEX_DOCUMENTS = "index-documents"
    DELETE_SUBTREE = "delete-subtree"
    REINDEX_SUBTREE = "reindex-subtree"
    CHECK_FILE_PROCESSING_RESULT = "check-file-processing-result"
    # Linked folders and scheduled page refresh (jobs/sync_folder.py, jobs/refresh_pages.py).
    SYNC_FOLDER = "sync-folder"
    REFRESH_PAGES = "refresh-pages"
    # The vector stage of a base (jobs/embed_vectors.py): documents are searchable by full
    # text first, their vectors come after, claimed after every other due job
    # (catalog.jobs.CLAIM_ORDER).
    EMBED_VECTORS = "embed-vectors"


class Recovery(StrEnum):
    # abandon: after a crash the item fails (never silently re-spend paid embedding calls)
    ABANDON = "abandon"
    # retry: the job runs again after a restart (a deletion always finishes)
    RETRY = "retry"


@dataclass(frozen=True, slots=True)
class JobPolicy:
    recovery: Recovery
    concurrency: int = 1
    attempts: int = 1
    backoff_initial_s: float = 1.0
    backoff_max_s: float = 30.0
    timeout_s: float = 30 * 60

    def backoff(self, attempt: int) -> float:
        """Delay before attempt `attempt + 1` (attempt counts from 1)."""
        return float(min(self.backoff_max_s, self.backoff_initial_s * 2 ** (attempt - 1)))


POLICIES: dict[JobKind, JobPolicy] = {
    JobKind.PREPARE_ROOT: JobPolicy(Recovery.ABANDON, concurrency=2),
    JobKind.INDEX_DOCUMENTS: JobPolicy(Recovery.ABANDON, concurrency=5, attempts=3),
    JobKind.DELETE_SUBTREE: JobPolicy(Recovery.RETRY, concurrency=1, attempts=5),
    JobKind.REINDEX_SUBTREE: JobPolicy(Recovery.ABANDON, concurrency=1),
    JobKind.CHECK_FILE_PROCESSING_RESULT: JobPolicy(Recovery.ABANDON, concurrency=2),
    # A sync only looks and queues work; cut short, the next one looks again.
    JobKind.SYNC_FOLDER: JobPolicy(Recovery.ABANDON, concurrency=2),
    JobKind.REFRESH_PAGES: JobPolicy(Recovery.ABANDON, concurrency=2),
    # Each batch of vectors is written as it comes, so a crash loses at most the batch in
    # flight: after one, the job simply runs again and embeds only what is still missing.
    # A run ends well before the timeout (embed_vectors.SLICE_S while other jobs are due,
    # RUN_MAX_S otherwise) and queues itself again, so it never runs into the timeout.
    JobKind.EMBED_VECTORS: JobPolicy(
        Recovery.RETRY, concurrency=1, attempts=5, backoff_initial_s=2.0, backoff_max_s=120.0
    ),
}


# A job row of a kind this Trove does not know (a damaged catalog, a newer Trove): it is
# never run, and after a crash it is abandoned, not retried.
UNKNOWN_KIND_POLICY = JobPolicy(Recovery.ABANDON, concurrency=1)


def known_kind(kind: str) -> bool:
    return kind in JobKind.__members__.values()


def policy_for(kind: str) -> JobPolicy:
    return POLICIES[JobKind(kind)] if known_kind(kind) else UNKNOWN_KIND_POLICY


def index_key(item_id: str) -> str:
    return f"{JobKind.INDEX_DOCUMENTS}:{item_id}"


def check_key(item_id: str) -> str:
    return f"{JobKind.CHECK_FILE_PROCESSING_RESULT}:{item_id}"


def prepare_key(item_id: str) -> str:
    return f"{JobKind.PREPARE_ROOT}:{item_id}"


def vectors_key(base_id: str) -> str:
    return f"{JobKind.EMBED_VECTORS}:{base_id}"
