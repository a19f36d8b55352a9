"""A process's searchable view of one base's vectors, refreshed block by block.

Holds every block's codes in memory (column-major, see vector_codes), 56 bytes per vector
at 384 dimensions, plus the float32 vectors themselves while the base is small enough for
an exact scan to be the fast choice (EXACT_LIMIT). A search then:

- small base: scores every vector exactly (one matrix-vector product);
- large base: ranks all codes by Hamming distance, ranks the survivors (`coarse_pool`)
  again against the float query (`asymmetric`), reads the float32 vectors of the best
  `rescore_pool` from the index by primary key and scores those exactly.

`refresh` brings the view up to the index's vector epoch by reading only the blocks whose
version changed (another process appended or deleted); a full load happens only for a new
view (first search, restore swapped the file, the model changed, evicted by the memory
budget). `stats` counts both, so tests can tell them apart.
"""

from __future__ import annotations

import heapq
import threading
import time
from dataclasses import dataclass
from functools import cache

import apsw
import numpy as np
import numpy.typing as npt
from threadpoolctl import threadpool_limits

from app.knowledge.pipeline.store import vector_blocks
from app.knowledge.pipeline.store.vector_blocks import BLOCK_ROWS, Block
from app.knowledge.pipeline.store.vector_codes import (
    CodeWords,
    FloatMatrix,
    asymmetric,
    bit_weights,
    code_words,
    encode_query,
    hamming,
    nearest,
)

# Below this many vectors the exact scan over floats held in memory is fast (about 1 ms at
# 20,000 x 384) and its memory small (30 MB); above it, codes + rescoring win on both.
EXACT_LIMIT = 20_000
# Pool sizes, chosen with tests/bench/search_latency.py: recall@10 >= 0.95 at 1M vectors
# drawn from the distribution of real MiniLM embeddings (which is harder for sign codes
# than the real embeddings themselves). Hamming survivors: 0.8 % of the base, within
# bounds; float vectors read and scored exactly: 20 per result wanted, within bounds.
COARSE_SHARE = 125
MIN_COARSE_POOL = 2048
MAX_COARSE_POOL = 16384
MIN_RESCORE_POOL = 500
MAX_RESCORE_POOL = 2000
RESCORE_PER_RESULT = 20
# Codes live in segments of this many rows, so a growing base adds a segment instead of
# copying every code (at 1M vectors a doubling copy cost 300 ms and twice the memory).
SEGMENT_ROWS = 64 * BLOCK_ROWS
_EMPTY = np.uint16(0x8000)  # added to the distance of an empty slot: never a candidate


@cache
def _single_threaded_blas() -> None:
    """A matrix-vector product is memory-bound: extra BLAS threads do not speed it up,
    and when the other cores are busy (indexing, the GUI) OpenBLAS's spinning threads made
    a 0.15 ms search take 8 ms. One thread is fast and predictable."""
    threadpool_limits(limits=1, user_api="blas")


@dataclass(slots=True)
class TierStats:
    full_loads: int = 0
    refreshes: int = 0
    blocks_read: int = 0
    last_refresh_ms: float = 0.0  # the latest full load or refresh, reading included


def _unit_rows(matrix: FloatMatrix) -> FloatMatrix:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    unit: FloatMatrix = (matrix / norms).astype(np.float32, copy=False)
    return unit


class VectorTier:
    def __init__(self, dimensions: int, stats: TierStats) -> None:
        _single_threaded_blas()
        self.dimensions = dimensions
        self.epoch: int | None = None
        self._stats = stats
        self._words = code_words(dimensions)
        self._lock = threading.Lock()
        self._slot_of: dict[int, int] = {}  # block number -> slot
        self._version: dict[int, int] = {}  # block number -> version held
        self._free: list[int] = []  # a heap: the lowest free slot is reused first
        self._segments: list[CodeWords] = []
        self._ids = np.full(0, -1, dtype=np.int64)
        self._penalty = np.zeros(0, dtype=np.uint16)
        self._floats: FloatMatrix | None = None
        self._live = 0

    # -- memory --------------------------------------------------------------------------

    def resident_bytes(self) -> int:
        total = sum(seg.nbytes for seg in self._segments) + self._ids.nbytes + self._penalty.nbytes
        return total + (0 if self._floats is None else self._floats.nbytes)

    def __len__(self) -> int:
        return self._live

    # -- refresh ---------------------------------------------------------------------------

    def refresh(self, conn: apsw.Connection, epoch: int) -> None:
        """Bring the view to `epoch`, inside the caller's read transaction on `conn`."""
        with self._lock:
            if self.epoch == epoch:
                return
            first = self.epoch is None
            started = time.perf_counter()
            versions = vector_blocks.block_versions(conn)
            for gone in [b for b in self._slot_of if b not in versions]:
                self._clear(gone)
            changed = [b for b, v in versions.items() if self._version.get(b) != v]
            # Room for every block at once: a first load of a million vectors then copies
            # nothing while it fills; later growth doubles (amortised O(1) per block).
            self._reserve(len(changed) - len(self._free), exact=first)
            blocks = (
                vector_blocks.all_blocks(conn, self.dimensions)
                if first
                else vector_blocks.read_blocks(conn, changed, self.dimensions)
            )
            for block, version in blocks:
                self._place(block, version)
            self._stats.blocks_read += len(changed)
            self._update_exact(conn, changed)
            self.epoch = epoch
            self._stats.last_refresh_ms = (time.perf_counter() - started) * 1000
            if first:
                self._stats.full_loads += 1
            else:
                self._stats.refreshes += 1

    def _place(self, block: Block, version: int) -> None:
        slot = self._slot_of.get(block.number)
        if slot is None:
            slot = heapq.heappop(self._free) if self._free else self._grow()
            self._slot_of[block.number] = slot
        else:
            self._live -= int(np.count_nonzero(self._slot_ids(slot) >= 0))
        start, n = slot * BLOCK_ROWS, len(block.ids)
        end = start + BLOCK_ROWS
        self._ids[start + n : end] = -1
        self._ids[start : start + n] = block.ids
        self._penalty[start + n : end] = _EMPTY
        self._penalty[start : start + n] = 0
        words = block.codes.view(np.uint64).reshape(n, self._words)
        segment, offset = self._segments[start // SEGMENT_ROWS], start % SEGMENT_ROWS
        segment[:, offset + n : offset + BLOCK_ROWS] = 0
        segment[:, offset : offset + n] = words.T
        self._version[block.number] = version
        self._live += n

    def _clear(self, number: int) -> None:
        slot = self._slot_of.pop(number)
        self._version.pop(number, None)
        self._live -= int(np.count_nonzero(self._slot_ids(slot) >= 0))
        start = slot * BLOCK_ROWS
        self._ids[start : start + BLOCK_ROWS] = -1
        self._penalty[start : start + BLOCK_ROWS] = _EMPTY
        if self._floats is not None:
            self._floats[start : start + BLOCK_ROWS] = 0.0
        heapq.heappush(self._free, slot)

    def _slot_ids(self, slot: int) -> npt.NDArray[np.int64]:
        return self._ids[slot * BLOCK_ROWS : (slot + 1) * BLOCK_ROWS]

    def _grow(self) -> int:
        """A new slot at the end; capacity doubles so appends cost amortised O(1)."""
        used = len(self._ids) // BLOCK_ROWS
        self._resize(max(4, used * 2))
        return heapq.heappop(self._free)

    def _reserve(self, extra_slots: int, *, exact: bool) -> None:
        if extra_slots <= 0:
            return
        slots = len(self._ids) // BLOCK_ROWS
        needed = slots + extra_slots
        # A first load leaves an eighth spare, so the appends that follow it do not copy.
        self._resize(needed + needed // 8 if exact else max(needed, 2 * slots, 4))

    def _resize(self, slots: int) -> None:
        used = len(self._ids) // BLOCK_ROWS
        rows = slots * BLOCK_ROWS
        self._cover(rows)
        ids = np.full(rows, -1, dtype=np.int64)
        ids[: len(self._ids)] = self._ids
        penalty = np.full(rows, _EMPTY, dtype=np.uint16)
        penalty[: len(self._ids)] = self._penalty
        if self._floats is not None:
            floats = np.zeros((rows, self.dimensions), dtype=np.float32)
            floats[: len(self._floats)] = self._floats
            self._floats = floats
        self._ids, self._penalty = ids, penalty
        for spare in range(used, slots):
            heapq.heappush(self._free, spare)

    def _cover(self, rows: int) -> None:
        """Code segments for `rows` rows: the first grows by doubling up to a whole
        segment (small bases stay small), later ones are added whole."""
        have = sum(seg.shape[1] for seg in self._segments)
        while have < rows:
            first = self._segments[0] if self._segments else None
            if first is None or (len(self._segments) == 1 and first.shape[1] < SEGMENT_ROWS):
                old = 0 if first is None else first.shape[1]
                size = min(SEGMENT_ROWS, max(rows, 2 * old, 4 * BLOCK_ROWS))
                grown = np.zeros((self._words, size), dtype=np.uint64)
                if first is not None:
                    grown[:, :old] = first
                self._segments = [grown]
            else:
                self._segments.append(np.zeros((self._words, SEGMENT_ROWS), dtype=np.uint64))
            have = sum(seg.shape[1] for seg in self._segments)

    def _update_exact(self, conn: apsw.Connection, changed: list[int]) -> None:
        """Hold the float vectors while the base is small; let them go when it grows."""
        if self._live > EXACT_LIMIT:
            self._floats = None
            return
        if self._floats is None:
            self._floats = np.zeros((len(self._ids), self.dimensions), dtype=np.float32)
            changed = list(self._slot_of)
        for number in changed:
            slot = self._slot_of.get(number)
            if slot is not None:
                self._load_floats(conn, slot)

    def _load_floats(self, conn: apsw.Connection, slot: int) -> None:
        assert self._floats is not None
        start = slot * BLOCK_ROWS
        ids = self._slot_ids(slot)
        present = ids[ids >= 0].tolist()
        stored = vector_blocks.floats(conn, present, self.dimensions)
        rows = self._floats[start : start + BLOCK_ROWS]
        rows[:] = 0.0
        for offset, chunk_id in enumerate(present):
            blob = stored.get(chunk_id)
            if blob is not None:
                rows[offset] = np.frombuffer(blob, dtype=np.float32)
        rows[: len(present)] = _unit_rows(rows[: len(present)])

    # -- search ----------------------------------------------------------------------------

    def search(
        self, conn: apsw.Connection, query: npt.NDArray[np.float32], limit: int
    ) -> list[tuple[int, float]]:
        """(chunk id, cosine similarity), best first; `conn` reads the floats to rescore."""
        q = np.asarray(query, dtype=np.float32).reshape(-1)
        norm = float(np.linalg.norm(q))
        if norm == 0.0 or limit <= 0:
            return []
        q = q / norm
        with self._lock:
            if self._live == 0:
                return []
            if self._floats is not None:
                return self._exact(q, limit)
            candidates = self._candidates(q, limit)
        return self._rescore(conn, candidates, q, limit)

    def _used_rows(self) -> int:
        """Rows up to the highest slot in use: slots are reused lowest first, so the rest
        of the capacity is empty and need not be scanned."""
        return (max(self._slot_of.values()) + 1) * BLOCK_ROWS if self._slot_of else 0

    def _exact(self, q: npt.NDArray[np.float32], limit: int) -> list[tuple[int, float]]:
        assert self._floats is not None
        used = self._used_rows()
        scores = self._floats[:used] @ q
        scores[self._ids[:used] < 0] = -np.inf
        k = min(limit, self._live)
        top = np.argpartition(-scores, k - 1)[:k]
        order = top[np.argsort(-scores[top], kind="stable")]
        return [(int(self._ids[i]), float(scores[i])) for i in order]

    def _candidates(self, q: npt.NDArray[np.float32], limit: int) -> npt.NDArray[np.int64]:
        used = self._used_rows()
        distances = np.empty(used, dtype=np.uint16)
        query_words = encode_query(q)
        for number, segment in enumerate(self._segments):
            start = number * SEGMENT_ROWS
            if start >= used:
                break
            hamming(segment, query_words, distances[start : min(used, start + SEGMENT_ROWS)])
        np.add(distances, self._penalty[:used], out=distances)
        coarse = min(
            self._live, max(MIN_COARSE_POOL, min(MAX_COARSE_POOL, self._live // COARSE_SHARE))
        )
        rows = nearest(distances, coarse)
        rows = np.sort(rows[self._ids[rows] >= 0])
        rescore = max(MIN_RESCORE_POOL, min(MAX_RESCORE_POOL, RESCORE_PER_RESULT * limit))
        if len(rows) > rescore:
            code_bytes = self._gather_codes(rows).view(np.uint8)
            scores = asymmetric(code_bytes, bit_weights(q))
            rows = rows[np.argpartition(-scores, rescore - 1)[:rescore]]
        candidates: npt.NDArray[np.int64] = self._ids[rows]
        return candidates

    def _gather_codes(self, rows: npt.NDArray[np.intp]) -> CodeWords:
        """Row-major codes of these rows (sorted ascending), picked out of their segments."""
        out: CodeWords = np.empty((len(rows), self._words), dtype=np.uint64)
        bounds = np.searchsorted(rows, np.arange(len(self._segments) + 1) * SEGMENT_ROWS)
        for number, segment in enumerate(self._segments):
            lo, hi = int(bounds[number]), int(bounds[number + 1])
            if hi > lo:
                out[lo:hi] = segment[:, rows[lo:hi] - number * SEGMENT_ROWS].T
        return out

    def _rescore(
        self,
        conn: apsw.Connection,
        candidates: npt.NDArray[np.int64],
        q: npt.NDArray[np.float32],
        limit: int,
    ) -> list[tuple[int, float]]:
        stored = vector_blocks.floats(conn, candidates.tolist(), self.dimensions)
        if not stored:
            return []
        ids = list(stored)
        matrix = np.frombuffer(b"".join(stored.values()), dtype=np.float32).reshape(
            len(ids), self.dimensions
        )
        scores = _unit_rows(matrix) @ q
        order = np.argsort(-scores, kind="stable")[:limit]
        return [(ids[i], float(scores[i])) for i in order]
