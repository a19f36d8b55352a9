"""embed-vectors: the vector stage of a base, after its documents became searchable.

index-documents writes a document's chunks and full text and marks it completed; chunks
whose vectors the base does not have yet are left to this job, one per base, claimed
after every other due job (catalog.jobs.CLAIM_ORDER). It takes the chunks without a
vector in id order, a batch at a time, reuses vectors the base already has for the same
text, embeds the rest and writes each batch as it comes. So:

- a crash loses at most the batch in flight; the job is of the `retry` kind and, run
  again, embeds only what is still missing (nothing is read again, nothing paid twice
  that was written);
- a normal exit hands it back between two batches (the runner);
- it works in slices of SLICE_S and queues itself again after each while other jobs are
  due, so new documents (whose reading comes first) and other bases' vectors are never
  held up by a large base's vectors; with nothing else due it goes on (up to RUN_MAX_S);
- pausing the base (vector_stage.py) stops it after the batch in flight.

While a document's vectors are missing it stays completed with the phase `embedding` and
the share of its chunks that have vectors; the phase goes when the last one is written.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from app.knowledge import vector_stage
from app.knowledge.catalog import Job
from app.knowledge.chunk_sizing import sizing_for
from app.knowledge.jobs.context import JobContext
from app.knowledge.jobs.errors import ItemFailure, JobCancelled, PollLater, RetryableFailure
from app.knowledge.jobs.index_documents import embed_batch, job_batch_size, text_hash
from app.knowledge.jobs.kinds import JobKind, policy_for, vectors_key
from app.knowledge.pipeline.indexing.token_count import ChunkSizing, embedding_input
from app.knowledge.pipeline.store.base_index import BaseIndex
from app.knowledge.pipeline.store.index_store import DimensionMismatchError, PendingChunk
from app.knowledge.pipeline.store.vector_codes import FloatMatrix
from app.knowledge.types import Base, ErrorCode, ItemPhase, ItemStatus, VectorStop
from app.providers.interfaces import ProviderError

log = logging.getLogger(__name__)

# How long one run works before it queues itself again if other work is due.
SLICE_S = 120.0
# The longest one run works when nothing else is due (well inside the job timeout, 30 min):
# every hand-over can move the stage to another process (the window's job process and a
# waiting `trove add` take turns), which first loads the model and runs cold passes.
RUN_MAX_S = 15 * 60.0
# When another process runs the base's vector stage, look again after this long.
BUSY_POLL_S = 5.0


def lease_key(base_id: str) -> str:
    """Held by the running vector job of a base, whichever process runs it."""
    return f"{JobKind.EMBED_VECTORS}-running:{base_id}"


def run(ctx: JobContext, job: Job) -> None:
    parts = ctx.parts
    base = parts.catalog.get_base(job.base_id)
    if base is None or base.embedding_model is None or base.dimensions is None:
        return  # deleted, or its model was taken away: there are no vectors to compute
    if _held(ctx, base.id):
        return  # resuming queues the stage again
    if not _take_lease(ctx, job):
        if not _queue_key_back(ctx, job):
            return  # another queued job waits for the stage already
        raise PollLater(BUSY_POLL_S, "another Trove process computes this base's vectors")
    store = parts.stores.get(base.id)
    progress = _Progress()
    try:
        store.ensure_vectors(base.dimensions)
        finished = _work(ctx, base, store, _Slice(ctx), progress)
    except RetryableFailure as exc:
        policy = policy_for(JobKind.EMBED_VECTORS)
        if not progress.batches and job.attempts >= policy.attempts:
            _stop(ctx, base, exc.code, exc.message)
            raise
        # A provider that stumbles once in a long run waits the first backoff and its
        # attempts start over (they count failed runs in a row).
        attempt = 1 if progress.batches else job.attempts
        delay = max(policy.backoff(attempt), exc.retry_after or 0.0)
        log.info("vectors of %r: %s: %s; again in %.1f s", base.name, exc.code, exc.message, delay)
        if not _queue_key_back(ctx, job):
            _hand_over(ctx, job, delay)
            return
        if progress.batches:
            raise PollLater(delay, f"{exc.code}: {exc.message}", fresh=True) from exc
        raise
    except ItemFailure as exc:
        _stop(ctx, base, exc.code, exc.message)
        raise
    except DimensionMismatchError as exc:
        _stop(ctx, base, ErrorCode.EMBEDDING_FAILED, str(exc))
        raise ItemFailure(ErrorCode.EMBEDDING_FAILED, str(exc)) from exc
    if not finished:
        if not _queue_key_back(ctx, job):
            return  # the queued job goes on from here
        raise PollLater(0.0, "the next slice of the vector stage", fresh=progress.batches > 0)
    vector_stage.set_stopped(parts.catalog, base.id, None)
    _settle_all(ctx, base, store)


def _hand_over(ctx: JobContext, job: Job, delay: float) -> None:
    """Another job of the stage is queued already (documents completed while this one ran):
    it takes over after the wait this one owed the provider, and this one ends."""
    ctx.parts.catalog.defer_queued_job(job.base_id, vectors_key(job.base_id), time.time() + delay)


def _held(ctx: JobContext, base_id: str) -> bool:
    """Paused by the person, or stopped by a provider error until the person resumes it
    (a job queued before the stop must not carry on)."""
    catalog = ctx.parts.catalog
    return (
        vector_stage.is_paused(catalog, base_id)
        or vector_stage.stopped(catalog, base_id) is not None
    )


def _take_lease(ctx: JobContext, job: Job) -> bool:
    catalog = ctx.parts.catalog
    holder = catalog.take_job_lease(job.id, lease_key(job.base_id))
    if holder is None:
        return True
    if catalog.job_owner_alive(holder):
        return False
    catalog.finish_job(holder.id, "abandoned", "its process is gone")
    return catalog.take_job_lease(job.id, lease_key(job.base_id)) is None


def _queue_key_back(ctx: JobContext, job: Job) -> bool:
    """Give the job the base's queue key again (and let go of the lease), so the next
    document that waits for vectors finds it queued instead of queueing another; False when
    another queued job has the key."""
    return ctx.parts.catalog.take_job_lease(job.id, vectors_key(job.base_id)) is None


class _Slice:
    """When a run hands the stage back: SLICE_S after it started if another job is due by
    then, else at the next check after that, at most RUN_MAX_S after its start."""

    def __init__(self, ctx: JobContext) -> None:
        self._ctx = ctx
        self._started = time.monotonic()
        self._until = self._started + SLICE_S

    def over(self) -> bool:
        now = time.monotonic()
        if now <= self._until:
            return False
        if now - self._started >= RUN_MAX_S or self._others_due():
            return True
        self._until = now + min(SLICE_S, RUN_MAX_S - (now - self._started))
        return False

    def _others_due(self) -> bool:
        try:
            due = self._ctx.parts.catalog.next_due_time()
        except Exception:  # the catalog is busy or a server unreachable: hand over as before
            log.debug("could not see whether other jobs are due", exc_info=True)
            return True
        return due is not None and due <= time.time()


@dataclass(slots=True)
class _Progress:
    batches: int = 0  # written by this run


@dataclass(slots=True)
class _Batch:
    """Chunks whose vectors are being made: those the base had by text, the rest embedded."""

    chunks: Sequence[PendingChunk]
    hashes: list[str]
    known: dict[str, np.ndarray]
    todo: dict[str, str]  # hash -> text, for the embedder
    embedded: Future[FloatMatrix] | None = None

    def submit(self, pool: ThreadPoolExecutor, embed: Embed, dims: int, recent: Vectors) -> None:
        """Send what is still missing to the embedder (the batch before may have made some)."""
        for h in [h for h in self.todo if h in recent]:
            self.known[h] = recent[h]
            del self.todo[h]
        if self.todo:
            self.embedded = pool.submit(embed_batch, embed, list(self.todo.values()), dims)

    def made(self) -> Vectors:
        """The new vectors, by hash (waits for the embedder)."""
        if self.embedded is None:
            return {}
        return dict(zip(self.todo, self.embedded.result(), strict=True))


Embed = Callable[[list[str]], object]
Vectors = dict[str, np.ndarray]


def _work(ctx: JobContext, base: Base, store: BaseIndex, span: _Slice, progress: _Progress) -> bool:
    """Embed and write batches until none is left (True) or the slice is over (False).

    A batch is written while the next one embeds: one after the other, the writes left both
    cores idle ~10 % of the time and the stage ran at ~0.8x of the model's own speed. The
    next batch is sent only once the one before is embedded, so a pause or a cancel during
    an embedding stops the stage after that batch, as before."""
    parts = ctx.parts
    assert base.embedding_model is not None and base.dimensions is not None
    try:
        embedder = parts.models.embedder(base.embedding_model)
    except ProviderError as exc:  # a provider removed, a model not installed here
        if exc.retryable:
            raise RetryableFailure(exc.code, exc.message, exc.retry_after) from exc
        raise ItemFailure(exc.code, exc.message) from exc
    batch_size = job_batch_size(embedder, parts.embed_batch_size)
    sizing = sizing_for(base, parts.models)
    embed, dims = embedder.embed, base.dimensions
    after = 0
    flight: _Batch | None = None  # sent to the embedder, not written yet
    # One thread: the provider sees one call at a time, as before.
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="trove-vectors") as pool:
        try:
            while True:
                ctx.raise_if_cancelled()
                following: _Batch | None = None
                # A run makes at least one batch, however short its slice.
                over = after > 0 and span.over()
                if not over and not _held(ctx, base.id):
                    pending = store.pending_vectors(after, batch_size)
                    if pending:
                        after = pending[-1].chunk_id
                        following = _prepare(store, pending, sizing)
                made: Vectors = {}
                if flight is not None:
                    made = flight.made()
                    if following is not None and (
                        ctx.cancelled() is not None or _held(ctx, base.id)
                    ):
                        following = None  # paused or cancelled while it embedded
                if following is not None:
                    following.submit(pool, embed, dims, made)
                if flight is not None:
                    _write(store, flight, made)
                    progress.batches += 1
                    _report(ctx, store, {c.item_id for c in flight.chunks})
                flight = following
                if flight is None:
                    ctx.raise_if_cancelled()  # handed back, not finished
                    return not over
        except JobCancelled:
            # The batch sent is paid for (a remote provider bills it): keep it.
            if flight is not None:
                with contextlib.suppress(RetryableFailure, ItemFailure):
                    _write(store, flight, flight.made())
            raise


def _prepare(store: BaseIndex, pending: Sequence[PendingChunk], sizing: ChunkSizing) -> _Batch:
    """Vectors for these chunks: those of the same text the base has; the rest to embed
    (each distinct text once)."""
    inputs = [embedding_input(sizing.header(c.title), c.text) for c in pending]
    hashes = [text_hash(text) for text in inputs]
    known = store.vectors_for_hashes(hashes)
    todo = {h: text for h, text in zip(hashes, inputs, strict=True) if h not in known}
    return _Batch(pending, hashes, known, todo)


def _write(store: BaseIndex, batch: _Batch, made: Vectors) -> None:
    """The batch's vectors, written in one transaction."""
    batch.known.update(made)
    matrix: FloatMatrix = np.stack([batch.known[h] for h in batch.hashes]).astype(
        np.float32, copy=False
    )
    store.add_vectors([c.chunk_id for c in batch.chunks], matrix)


def _report(ctx: JobContext, store: BaseIndex, item_ids: set[str]) -> None:
    """Each touched document's share of chunks with vectors; done ones lose the phase."""
    for item_id, (done, total) in store.vector_progress(item_ids).items():
        if done >= total:
            ctx.progress(item_id, None, None)
            _clear_phase(ctx, item_id)
        else:
            ctx.progress(item_id, ItemPhase.EMBEDDING, 100.0 * done / max(1, total))


def _clear_phase(ctx: JobContext, item_id: str) -> None:
    """Written here and not only through progress: the runtime persists progress in steps,
    and a headless drain not at all."""
    catalog = ctx.parts.catalog
    item = catalog.get_item(item_id)
    if item is not None and item.status is ItemStatus.COMPLETED and item.phase is not None:
        catalog.set_item_phase(item_id, None)


def _settle_all(ctx: JobContext, base: Base, store: BaseIndex) -> None:
    """Every document of the base still marked as waiting for vectors loses the mark if
    it has them all (another process wrote them, or they were reused by text)."""
    waiting = ctx.parts.catalog.list_items(
        base.id, statuses=(ItemStatus.COMPLETED,), phase=ItemPhase.EMBEDDING
    )
    if waiting:
        _report(ctx, store, {i.id for i in waiting})
        for item_id in {i.id for i in waiting} - set(store.vector_progress(i.id for i in waiting)):
            _clear_phase(ctx, item_id)  # no chunks at all: nothing to wait for


def _stop(ctx: JobContext, base: Base, code: str, message: str) -> None:
    """Record why the stage gave up, for the window and `trove status`; the documents stay
    searchable by full text, and `trove resume` starts the stage again."""
    log.warning("vectors of %r stopped: %s: %s", base.name, code, message)
    vector_stage.set_stopped(ctx.parts.catalog, base.id, VectorStop(str(code), message))
