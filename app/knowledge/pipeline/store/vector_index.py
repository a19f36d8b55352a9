"""An exact in-memory cosine index over a base's vectors.

sqlite-vec keeps the vectors durable (the `vectors` vec0 table); searching them there is a
linear scan that costs about 80-140 ms per query at 100,000 chunks of 384 dimensions on the
reference machine. The same exact scan as one float32 matrix product takes a few
milliseconds, so the store keeps this mirror and updates it on every write. Results are
exact, not approximate: recall against brute force is 1.0 by construction.
"""

from __future__ import annotations

import threading
from functools import cache

import numpy as np
import numpy.typing as npt
from threadpoolctl import threadpool_limits

FloatMatrix = npt.NDArray[np.float32]


@cache
def _single_threaded_blas() -> None:
    """A matrix-vector product is memory-bound: extra BLAS threads do not speed it up,
    and when the other cores are busy (indexing, the GUI) OpenBLAS's spinning threads made
    a 0.15 ms search take 8 ms. One thread is fast and predictable."""
    threadpool_limits(limits=1, user_api="blas")


def normalize_rows(vectors: FloatMatrix) -> FloatMatrix:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    unit: FloatMatrix = (vectors / norms).astype(np.float32, copy=False)
    return unit


class VectorIndex:
    def __init__(self, dimensions: int, epoch: int) -> None:
        _single_threaded_blas()
        self.dimensions = dimensions
        self.epoch = epoch
        self._lock = threading.Lock()
        self._ids = np.empty(0, dtype=np.int64)
        self._matrix: FloatMatrix = np.empty((0, dimensions), dtype=np.float32)
        self._alive = np.empty(0, dtype=bool)
        self._row_of: dict[int, int] = {}
        self._size = 0
        self._dead = 0

    def __len__(self) -> int:
        return self._size - self._dead

    def add(self, ids: list[int], vectors: FloatMatrix) -> None:
        if not ids:
            return
        unit = normalize_rows(
            np.asarray(vectors, dtype=np.float32).reshape(len(ids), self.dimensions)
        )
        with self._lock:
            self._reserve(self._size + len(ids))
            end = self._size + len(ids)
            self._ids[self._size : end] = ids
            self._matrix[self._size : end] = unit
            self._alive[self._size : end] = True
            for offset, chunk_id in enumerate(ids):
                self._row_of[chunk_id] = self._size + offset
            self._size = end

    def remove(self, ids: list[int]) -> None:
        with self._lock:
            for chunk_id in ids:
                row = self._row_of.pop(chunk_id, None)
                if row is not None:
                    self._alive[row] = False
                    self._matrix[row] = 0.0
                    self._dead += 1
            # Compact once dead rows are a quarter of the matrix, so memory and scan
            # time track the live vectors.
            if self._dead and self._dead * 4 >= self._size:
                self._compact()

    def search(self, query: npt.NDArray[np.float32], limit: int) -> list[tuple[int, float]]:
        """(chunk id, cosine similarity) pairs, best first."""
        q = np.asarray(query, dtype=np.float32).reshape(-1)
        norm = float(np.linalg.norm(q))
        if norm == 0.0 or limit <= 0:
            return []
        q = q / norm
        with self._lock:
            n = self._size
            if n == 0:
                return []
            scores = self._matrix[:n] @ q
            if self._dead:
                scores[~self._alive[:n]] = -np.inf
            live = n - self._dead
            k = min(limit, live)
            if k <= 0:
                return []
            top = np.argpartition(-scores, k - 1)[:k] if k < n else np.arange(n)
            order = top[np.argsort(-scores[top], kind="stable")]
            order = order[np.isfinite(scores[order])][:k]
            return [(int(self._ids[i]), float(scores[i])) for i in order]

    def _reserve(self, needed: int) -> None:
        capacity = len(self._ids)
        if needed <= capacity:
            return
        new_cap = max(needed, capacity * 2, 1024)
        ids = np.empty(new_cap, dtype=np.int64)
        matrix = np.zeros((new_cap, self.dimensions), dtype=np.float32)
        alive = np.zeros(new_cap, dtype=bool)
        ids[: self._size] = self._ids[: self._size]
        matrix[: self._size] = self._matrix[: self._size]
        alive[: self._size] = self._alive[: self._size]
        self._ids, self._matrix, self._alive = ids, matrix, alive

    def _compact(self) -> None:
        keep = np.flatnonzero(self._alive[: self._size])
        self._ids = self._ids[keep].copy()
        self._matrix = self._matrix[keep].copy()
        self._alive = np.ones(len(keep), dtype=bool)
        self._row_of = {int(cid): row for row, cid in enumerate(self._ids)}
        self._size = len(keep)
        self._dead = 0
