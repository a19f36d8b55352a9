"""index-documents: read -> chunk -> embed -> write, then flip the item to completed.

The base mutex is held only for the final write and status flip, never while reading
files or calling the embedding provider.
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import numpy.typing as npt

from app.knowledge import path_safety
from app.knowledge.catalog import Job
from app.knowledge.chunk_sizing import sizing_for
from app.knowledge.folder_scan import led_outside
from app.knowledge.imported_sources import is_imported
from app.knowledge.jobs.context import JobContext
from app.knowledge.jobs.errors import ItemFailure, JobCancelled, RetryableFailure
from app.knowledge.jobs.kinds import policy_for
from app.knowledge.jobs.paid_vectors import PaidVectors, is_scratch, scratch_name
from app.knowledge.jobs.parents import settle_parent
from app.knowledge.jobs.queue import queue_check, queue_vectors
from app.knowledge.material_paths import (
    IN_PLACE_WHY,
    NOT_CARRIED,
    in_place,
    material_path,
    stored_files,
)
from app.knowledge.ocr import tasks as ocr_tasks
from app.knowledge.ocr.settings import ocr_installed, ocr_on
from app.knowledge.pages import main_page
from app.knowledge.pipeline.indexing.spans import (
    Spans,
    iter_spans,
    span_count,
    texts_from_file,
    texts_from_text,
)
from app.knowledge.pipeline.indexing.token_count import ChunkSizing, embedding_input
from app.knowledge.pipeline.readers.document import page_at as page_at  # re-exported
from app.knowledge.pipeline.readers.errors import ReaderError
from app.knowledge.pipeline.readers.image import OCR_MISSING_MESSAGE
from app.knowledge.pipeline.sources.snapshot import page_document
from app.knowledge.pipeline.sources.web import FetchCancelled, FetchError, fetch_url
from app.knowledge.pipeline.store.base_index import BaseIndex
from app.knowledge.pipeline.store.index_store import (
    ChunkRecord,
    DimensionMismatchError,
    UnitRecord,
    passage_ranges,
)
from app.knowledge.pipeline.store.vector_codes import FloatMatrix
from app.knowledge.pipeline.text_extraction import (
    ExtractedFile,
    ExtractFailure,
    chunk_spans,
    extract_to_file,
)
from app.knowledge.source_origin import address_policy
from app.knowledge.types import (
    Base,
    CancelReason,
    ErrorCode,
    Item,
    ItemPhase,
    ItemStatus,
    ItemType,
    TroveError,
)
from app.providers.interfaces import ProviderError

log = logging.getLogger(__name__)


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


TEMP_SUFFIX = ".part"
# Texts per embedding call when neither the settings nor the embedder say (DESIGN.md: 10):
# a failed remote request is cheap to repeat, and progress moves often.
DEFAULT_EMBED_BATCH_SIZE = 10


def temp_prefix(target: Path) -> str:
    """How the temporary files of writes to `target` start (beside it, in its folder).

    Named after the target, so the leftovers of a write that a crash cut short can be
    found and removed with their item (recovery, deletion); a hash keeps the name short.
    """
    return ".tmp-" + hashlib.sha256(target.name.encode("utf-8")).hexdigest()[:12] + "-"


def remove_temp_files(raw: Path, item: Item, *, keep_paid: bool = False) -> int:
    """Remove what interrupted writes of the item's files left under raw/; returns how many.
    With `keep_paid`, the record of vectors already paid for stays (paid_vectors.py).

    Only for an item no live job works on: its writes cannot be in flight.
    """
    removed = 0
    for rel in stored_files(item):
        try:
            target = path_safety.resolve_below(raw, rel)
        except path_safety.UnsafePathError:
            continue
        prefix = temp_prefix(target)
        for leftover in target.parent.glob(prefix + "*" + TEMP_SUFFIX):
            if keep_paid and is_scratch(leftover.name, prefix):
                continue
            leftover.unlink(missing_ok=True)
            removed += 1
    return removed


def write_material(target: Path, text: str) -> None:
    """Write atomically: a crash leaves the old material or the new one, never half."""
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=temp_prefix(target), suffix=TEMP_SUFFIX)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def copy_file(source: Path, target: Path) -> None:
    """Copy atomically, like write_material."""
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=temp_prefix(target), suffix=TEMP_SUFFIX)
    os.close(fd)
    try:
        shutil.copyfile(source, tmp)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


@dataclass(slots=True)
class Acquired:
    """A material's chunks as spans, and where their texts are read from."""

    title: str
    page_starts: tuple[int, ...]
    char_count: int
    spans: Spans
    # The texts of spans (in order) of the material; a fresh stream each call (a file is
    # read again).
    texts_of: Callable[[Spans], Iterator[str]]
    # Files this job wrote under raw/, removed again if the item is deleted meanwhile.
    written: list[Path] = field(default_factory=list)
    # Scratch files (a worker's copy of the text) removed when the job ends, however.
    scratch: list[Path] = field(default_factory=list)
    # Embedded in front of chunks that do not show the title (see ChunkSizing.header).
    header: str = ""
    # Full-text passages, when they are not the chunks (see text_extraction.passage_units).
    unit_spans: Spans | None = None
    # Ranges of the material recognised from page images (OCR): their chunks are marked.
    ocr_spans: tuple[tuple[int, int], ...] = ()

    def texts(self) -> Iterator[str]:
        """The chunk texts, in span order."""
        return self.texts_of(self.spans)

    def records(self) -> Iterator[ChunkRecord]:
        """The chunks to write, streamed: at most one chunk's text is held at a time."""
        for (start, end, tokens), text in zip(iter_spans(self.spans), self.texts(), strict=True):
            yield ChunkRecord(
                start,
                end,
                text,
                tokens,
                self.hash_of(text),
                main_page(self.page_starts, start, end),
                ocr=_mostly_recognised(self.ocr_spans, start, end),
            )

    def unit_records(self) -> Iterator[UnitRecord] | None:
        """The passages to write, streamed like the chunks (None: each chunk is one)."""
        if self.unit_spans is None:
            return None
        units = [(start, end) for start, end, _ in iter_spans(self.unit_spans)]
        ranges = passage_ranges([(a, b) for a, b, _ in iter_spans(self.spans)], units)
        texts = self.texts_of(self.unit_spans)
        return (
            UnitRecord(start, end, text, first, last)
            for (start, end), (first, last), text in zip(units, ranges, texts, strict=True)
            if first >= 0  # a passage no chunk reaches (none in real text) finds nothing
        )

    def embedding_inputs(self) -> Iterator[str]:
        """What is embedded for each chunk, in span order (a fresh stream each call)."""
        return (embedding_input(self.header, text) for text in self.texts())

    def hash_of(self, text: str) -> str:
        """A chunk's hash, under which its vector is kept and reused: of what is embedded."""
        return text_hash(embedding_input(self.header, text))

    @property
    def chunk_count(self) -> int:
        return span_count(self.spans)


def _mostly_recognised(ocr_spans: tuple[tuple[int, int], ...], start: int, end: int) -> bool:
    """A chunk is marked OCR when most of it was recognised (its overlap from a page
    before does not count)."""
    inside = sum(max(0, min(end, b) - max(start, a)) for a, b in ocr_spans)
    return inside * 2 > end - start


def _require_chunks(spans: Spans) -> None:
    """Checked before anything is written: no empty material ever reaches raw/."""
    if not spans:
        raise ItemFailure(
            ErrorCode.EMPTY_INDEXABLE_TEXT,
            "no text could be extracted from this source (is it empty, or only images?)",
        )


class RecognitionNeeded(Exception):
    """The file has pages to recognise from their images before it can be indexed."""

    def __init__(self, source: Path, pages: tuple[int, ...]) -> None:
        super().__init__(f"{len(pages)} page(s) to recognise")
        self.source = source
        self.pages = pages


@dataclass(frozen=True, slots=True)
class Recognition:
    """What this run does about pages without a text layer."""

    wanted: bool  # submit such pages to text recognition (first run, OCR on)
    pages_file: Path | None = None  # the recognised pages (the run after recognition)


def run(ctx: JobContext, job: Job) -> None:
    parts = ctx.parts
    item = parts.catalog.get_item(job.item_id or "")
    if item is None or item.status is not ItemStatus.PROCESSING:
        return  # deleted or settled meanwhile: nothing to do
    base = parts.catalog.require_base(item.base_id)

    ctx.progress(item.id, ItemPhase.READING, None)
    sizing = sizing_for(base, parts.models)
    # An imported item's source names another computer's file or page: never read it,
    # whatever queued this job (imported_sources.py); its copy under raw/ is the text.
    reacquire = bool(job.payload.get("reacquire", True)) and not is_imported(item)
    ocr_folder = ocr_tasks.work_dir(parts.layout, base.id, item.id)
    recognition = Recognition(wanted=ocr_on(base.ocr))
    if job.payload.get("recognised"):
        recognition = Recognition(False, ocr_tasks.pages_path(ocr_folder))
    try:
        got = acquire(ctx, base, item, sizing, reacquire=reacquire, recognition=recognition)
    except RecognitionNeeded as need:
        _submit_recognition(ctx, base, item, need, reacquire=reacquire)
        return
    except BaseException as exc:
        if recognition.pages_file is not None and not _handed_back(exc):
            ocr_tasks.discard(ocr_folder)
        raise
    paid = _paid_vectors(ctx, base, item)
    retried = False
    try:
        _index(ctx, base, item, got, paid)
    except RetryableFailure:
        _forget_if_gone(ctx, item, got)
        # The runner queues the job again: its next run reuses the batches paid for.
        retried = job.attempts < policy_for(job.kind).attempts
        raise
    except JobCancelled as exc:
        _forget_if_gone(ctx, item, got)
        # A normal exit hands the job back (runner): its next run, in whichever process,
        # reuses the batches paid for and the pages recognised.
        retried = _handed_back(exc)
        raise
    except FileNotFoundError as exc:
        # The chunk texts are read back from the material under raw/: gone, it was most
        # likely deleted with its item by another Trove process (nothing was written).
        _forget_if_gone(ctx, item, got)
        current = parts.catalog.get_item(item.id)
        if current is None or current.status is ItemStatus.DELETING:
            raise JobCancelled(CancelReason.ITEM_GONE) from None
        raise ItemFailure(
            ErrorCode.READ_FAILED, "the base's copy of this text vanished while it was indexed"
        ) from exc
    except BaseException:
        _forget_if_gone(ctx, item, got)
        raise
    finally:
        for path in got.scratch:
            path.unlink(missing_ok=True)
        if paid is not None and not retried:
            paid.discard()
        if recognition.pages_file is not None and not retried:
            ocr_tasks.discard(ocr_folder)


def _handed_back(exc: BaseException) -> bool:
    return isinstance(exc, JobCancelled) and exc.reason is CancelReason.SHUTDOWN


# The first poll of a recognition; later polls back off (check_file_processing.py).
FIRST_POLL_S = 0.25


def _submit_recognition(
    ctx: JobContext, base: Base, item: Item, need: RecognitionNeeded, *, reacquire: bool
) -> None:
    """Start recognising the pages in a worker process and queue the job that polls it."""
    parts = ctx.parts
    pages = list(need.pages[: base.ocr.max_pages])
    folder = ocr_tasks.work_dir(parts.layout, base.id, item.id)
    ocr_tasks.discard(folder)  # what an earlier run left: this one reads the file afresh
    ctx.raise_if_cancelled(item.id)
    ocr_tasks.submit(folder, need.source, pages, base.ocr.languages)
    ocr_tasks.start_if_free(folder)
    # The page count goes with the item, so "recognising text 3/12 pages" can be said
    # from the progress percent wherever the item is shown.
    parts.catalog.update_item(item.id, options={**(item.options or {}), "ocr_pages": len(pages)})
    ctx.progress(item.id, ItemPhase.WAITING, 0.0)
    queue_check(parts, item, reacquire=reacquire, not_before=time.time() + FIRST_POLL_S)


def _paid_vectors(ctx: JobContext, base: Base, item: Item) -> PaidVectors | None:
    """Where this item's embedded batches are kept until it is indexed (None: no model)."""
    if base.embedding_model is None or base.dimensions is None:
        return None
    # acquire() checked this path already.
    target = path_safety.resolve_below(
        ctx.parts.layout.raw_dir(item.base_id), material_path(item) or ""
    )
    name = scratch_name(temp_prefix(target), TEMP_SUFFIX, base.embedding_model, base.dimensions)
    return PaidVectors(target.parent / name, base.dimensions)


def _index(
    ctx: JobContext, base: Base, item: Item, got: Acquired, paid: PaidVectors | None
) -> None:
    """Write the material, its chunks and full text, with the vectors the base already has
    for the same texts, and flip the item to completed: it is searchable from here on. The
    vectors still missing are the vector stage's (embed_vectors.py)."""
    parts = ctx.parts
    ctx.raise_if_cancelled(item.id)
    known = _known_vectors(ctx, base, got, paid) if paid is not None else None
    ctx.raise_if_cancelled(item.id)

    ctx.progress(item.id, ItemPhase.WRITING, None)
    store = parts.stores.get(base.id)
    with parts.mutex.lock(base.id):
        current = parts.catalog.get_item(item.id)
        if current is None or current.status is not ItemStatus.PROCESSING:
            _forget_if_gone(ctx, item, got)
            return  # a delete won the race; its job removes what we would write
        try:
            if known is not None and base.dimensions is not None:
                store.ensure_vectors(base.dimensions)
            store.rebuild_material(
                item.id,
                material_path(item) or "",
                got.title,
                got.char_count,
                got.records(),
                content_hash=item.content_hash,
                units=got.unit_records(),
                page_starts=got.page_starts,
                known_vectors=known,
            )
        except DimensionMismatchError as exc:
            raise ItemFailure(ErrorCode.EMBEDDING_FAILED, str(exc)) from exc
        try:
            parts.catalog.update_item(item.id, chunk_count=got.chunk_count, title=got.title)
            parts.catalog.set_item_status(item.id, ItemStatus.COMPLETED)
        except TroveError:
            # The mutex is per process: another Trove process may have marked the item
            # deleting (or removed it) since the check above, its deletion finding nothing
            # to remove yet. Take back what was written, or it stays orphaned in the index.
            current = parts.catalog.get_item(item.id)
            if current is not None and current.status is not ItemStatus.DELETING:
                raise
            store.delete_material(item.id)
            _forget_if_gone(ctx, item, got)
            raise JobCancelled(CancelReason.ITEM_GONE) from None
        settle_parent(parts.catalog, item.parent_id)
    if known is not None:
        _await_vectors(ctx, item, store)


def _known_vectors(
    ctx: JobContext, base: Base, got: Acquired, paid: PaidVectors
) -> dict[str, npt.NDArray[np.float32]]:
    """The vectors this base has for the item's chunk texts (a reindex, a renamed or
    duplicated file), and those an earlier Trove paid for in this job's name."""
    hashes = {text_hash(text) for text in got.embedding_inputs()}
    known = ctx.parts.stores.get(base.id).vectors_for_hashes(hashes)
    known.update(paid.load(hashes.difference(known)))
    return known


def _await_vectors(ctx: JobContext, item: Item, store: BaseIndex) -> None:
    """Mark a completed document whose vectors are missing, and queue the vector stage."""
    done, total = store.vector_progress([item.id]).get(item.id, (0, 0))
    if done >= total:
        return
    percent = 100.0 * done / total
    try:
        ctx.parts.catalog.set_item_phase(item.id, ItemPhase.EMBEDDING, percent)
    except TroveError:
        return  # deleted or reindexed meanwhile: its own job takes it from there
    ctx.progress(item.id, ItemPhase.EMBEDDING, percent)
    queue_vectors(ctx.parts, item.base_id)


def _forget_if_gone(ctx: JobContext, item: Item, got: Acquired) -> None:
    """Remove files this job wrote when the item was deleted meanwhile (no orphans in raw/)."""
    current = ctx.parts.catalog.get_item(item.id)
    if current is None or current.status is ItemStatus.DELETING:
        for path in got.written:
            path.unlink(missing_ok=True)


def acquire(
    ctx: JobContext,
    base: Base,
    item: Item,
    sizing: ChunkSizing,
    *,
    reacquire: bool,
    recognition: Recognition = Recognition(wanted=False),
) -> Acquired:
    """The material text and its chunks: from the source (reacquire) or the base's own copy."""
    raw = ctx.parts.layout.raw_dir(item.base_id)
    rel = material_path(item)
    if rel is None or item.relative_path is None:
        raise ItemFailure(ErrorCode.READ_FAILED, "the item has no material path")
    try:
        target = path_safety.resolve_below(raw, rel)
        copy = path_safety.resolve_below(raw, item.relative_path)
    except path_safety.UnsafePathError as exc:
        # e.g. a folder under raw/ replaced by a symlink to elsewhere: never written through
        raise ItemFailure(ErrorCode.UNSAFE_PATH, str(exc)) from exc
    if item.type is ItemType.FILE:
        got = _acquire_file(
            ctx, item, sizing, target, copy, reacquire=reacquire, recognition=recognition
        )
    elif item.type is ItemType.NOTE:
        got = _chunked(ctx, sizing, item.source, item.title, ())
        write_material(target, item.source)
        got.written.append(target)
    elif item.type is ItemType.URL:
        got = _acquire_url(ctx, item, sizing, target, reacquire=reacquire)
    else:
        raise ItemFailure(
            ErrorCode.UNSUPPORTED_FILE_TYPE, f"{item.type} items have no text of their own"
        )
    got.header = sizing.header(got.title)
    return got


def _chunked(
    ctx: JobContext, sizing: ChunkSizing, text: str, title: str, page_starts: tuple[int, ...]
) -> Acquired:
    """A text already in memory (a note, a fetched page: small by nature), chunked."""
    chunked = ctx.parts.extraction.run(chunk_spans, text, title, sizing, cancelled=ctx.cancelled)
    _require_chunks(chunked.spans)
    return Acquired(
        title,
        page_starts,
        len(text),
        chunked.spans,
        lambda spans: texts_from_text(text, spans),
        unit_spans=chunked.units,
    )


def _acquire_file(
    ctx: JobContext,
    item: Item,
    sizing: ChunkSizing,
    target: Path,
    copy: Path,
    *,
    reacquire: bool,
    recognition: Recognition,
) -> Acquired:
    if in_place(item):
        # No copy: the original is read, whatever asked; never an imported item's, whose
        # source names another computer's file (imported_sources.py): a plain text is read
        # from its material (its text), anything else cannot be read again.
        if not is_imported(item):
            reacquire = True
        elif copy != target:
            raise ItemFailure(ErrorCode.SOURCE_MISSING, NOT_CARRIED)
    if reacquire:
        _require_inside_folder(ctx, item)
    source = Path(item.source) if reacquire else copy
    # The worker writes the text beside the material, as write_material would: a crash
    # leaves a temporary file that recovery knows to remove.
    scratch = _temp_beside(target)
    try:
        result = ctx.parts.extraction.run(
            extract_to_file,
            str(source),
            ctx.parts.max_file_bytes,
            sizing,
            str(scratch),
            str(recognition.pages_file) if recognition.pages_file is not None else None,
            cancelled=ctx.cancelled,
        )
        if (
            recognition.wanted
            and isinstance(result, ExtractedFile)
            and result.needs_ocr
            and ocr_installed()
        ):
            raise RecognitionNeeded(source, result.needs_ocr)
        got = _file_result(result, scratch, item, reacquire=reacquire)
        if copy != target and source != copy and not in_place(item):
            copy_file(source, copy)  # keep the original bytes: restore works after it is gone
            got.written.append(copy)
        if source != target:
            os.replace(scratch, target)
            got.written.append(target)
            got.texts_of = lambda spans: texts_from_file(target, spans)
        else:
            got.scratch.append(scratch)
        return got
    except BaseException:
        scratch.unlink(missing_ok=True)
        raise


def _require_inside_folder(ctx: JobContext, item: Item) -> None:
    """A folder's file is read only if it still leads inside the folder (folder_scan.py)."""
    elsewhere = led_outside(ctx.parts.catalog, item)
    if elsewhere is None:
        return
    folder = ctx.parts.catalog.get_item(item.parent_id or "")
    raise ItemFailure(
        ErrorCode.UNSAFE_PATH,
        f"{item.source} now leads to {elsewhere}, outside the folder "
        f"{folder.source if folder else ''}; it is not followed (add the folder with "
        "--follow-links to follow links)",
    )


def _temp_beside(target: Path) -> Path:
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=temp_prefix(target), suffix=TEMP_SUFFIX)
    os.close(fd)
    return Path(tmp)


def _file_result(
    result: ExtractedFile | ExtractFailure, written: Path, item: Item, *, reacquire: bool
) -> Acquired:
    if isinstance(result, ExtractFailure):
        if not reacquire and result.code == ErrorCode.SOURCE_MISSING:
            raise ItemFailure(result.code, "the base's own copy of this file is missing")
        if in_place(item) and result.code == ErrorCode.SOURCE_MISSING:
            raise ItemFailure(result.code, f"the original {item.source} is gone ({IN_PLACE_WHY})")
        raise ItemFailure(result.code, result.message)
    if not result.spans and result.needs_ocr:
        _scans_unread()
    _require_chunks(result.spans)
    return Acquired(
        result.title,
        result.page_starts,
        result.char_count,
        result.spans,
        lambda spans: texts_from_file(written, spans),
        unit_spans=result.units,
        ocr_spans=result.ocr_spans,
    )


def _scans_unread() -> None:
    """A scan or picture with no text of its own that is not being recognised: say why."""
    if not ocr_installed():
        raise ItemFailure(ErrorCode.OCR_UNAVAILABLE, OCR_MISSING_MESSAGE)
    raise ItemFailure(
        ErrorCode.EMPTY_INDEXABLE_TEXT,
        "this file holds only images of text, and text recognition (OCR) is off for this "
        "knowledge base or found no text",
    )


def _acquire_url(
    ctx: JobContext, item: Item, sizing: ChunkSizing, target: Path, *, reacquire: bool
) -> Acquired:
    if not reacquire:
        try:
            text = target.read_text(encoding="utf-8")
        except FileNotFoundError as exc:
            raise ItemFailure(
                ErrorCode.SOURCE_MISSING, "the snapshot of this page is missing"
            ) from exc
        return _chunked(ctx, sizing, text, item.title, ())
    try:
        page = fetch_url(
            item.source,
            limits=ctx.parts.fetch_limits,
            addresses=address_policy(ctx.parts.catalog, item, ctx.parts.resolve_host),
            # A fetch can wait on the network for a minute: Ctrl-C or closing the app must
            # not wait for it (the item is then marked INDEXING_INTERRUPTED by the runner).
            cancelled=lambda: ctx.cancelled() is not None,
        )
        doc = page_document(page)
    except FetchCancelled:
        raise JobCancelled(ctx.cancelled() or CancelReason.SHUTDOWN) from None
    except FetchError as exc:
        if exc.retryable:
            raise RetryableFailure(exc.code, exc.message, exc.retry_after) from exc
        raise ItemFailure(exc.code, exc.message) from exc
    except ReaderError as exc:
        raise ItemFailure(exc.code, exc.message) from exc
    got = _chunked(ctx, sizing, doc.text, doc.title or item.title, tuple(doc.page_starts))
    write_material(target, doc.text)
    got.written.append(target)
    return got


def job_batch_size(embedder: object, configured: int | None) -> int:
    """Texts per embedding call: the configured size (tests, benchmarks), else the
    embedder's `preferred_batch_size` when it has one, else DEFAULT_EMBED_BATCH_SIZE.

    A remote provider's batch is a request (10 keeps a failed one cheap to repeat); a local
    model's is a forward pass whose best size it measured itself (local_runtime.py).
    """
    if configured is not None:
        return max(1, configured)
    preferred = getattr(embedder, "preferred_batch_size", None)
    if isinstance(preferred, int) and not isinstance(preferred, bool) and preferred >= 1:
        return preferred
    return DEFAULT_EMBED_BATCH_SIZE


def embed_batch(embed: Callable[[list[str]], object], texts: list[str], dims: int) -> FloatMatrix:
    """One provider call's vectors, checked; a provider's failure as the job outcome it means."""
    try:
        got = np.asarray(embed(texts), dtype=np.float32)
    except ProviderError as exc:
        if exc.retryable:
            raise RetryableFailure(exc.code, exc.message, exc.retry_after) from exc
        raise ItemFailure(exc.code, exc.message) from exc
    if got.ndim != 2 or got.shape[0] != len(texts):
        raise ItemFailure(
            ErrorCode.EMBEDDING_FAILED, "the embedding provider returned a malformed reply"
        )
    if got.shape[1] != dims:
        raise ItemFailure(
            ErrorCode.EMBEDDING_FAILED,
            f"the embedding model returned {got.shape[1]}-dimensional vectors but this base "
            f"uses {dims}; restore the base to switch models",
        )
    return got
