"""Vector index candidates side by side, on the same vectors and queries (issue #14).

    python tests/bench/vector_candidates.py N [--queries Q] [--data gaussian|uniform]
                                              [--seed S] [--only NAME,NAME...]

One run draws N unit vectors (384-d) with `Vectors` from search_latency.py (`gaussian`,
the default, fitted to real all-MiniLM-L6-v2 embeddings; `uniform` on the sphere) and Q
queries exactly as search_latency does (a corpus vector plus `draw.noise`). Recall@10 of
every candidate is against exact float64 search over the same N vectors (exact_top).

Candidates (ids are 1..N, rowids where SQLite holds them):

- `trove_codes_sqlite_rescore`: Trove's own VectorTier, unchanged: the durable form written
  with vector_blocks.add (float rows + blocks of sign-bit codes in one SQLite file, apsw,
  the app's connection settings), the reader loads every block's codes, ranks them by
  Hamming distance, re-ranks the survivors asymmetrically (vector_tier's pool constants)
  and rescores from the float rows read by primary key: exactly what the app does.
- `trove_codes_memory_rescore`: the same tier and the same file, but the rescoring reads
  float32 rows from an in-memory array (loaded from the `vectors` table at open, with 1/8
  headroom so an append does not copy it): the former float mirror, kept beside the codes.
- `trove_codes_memmap_rescore`: the same tier, rescoring from a float32 file beside the
  SQLite file (np.memmap, row = id - 1; the file is appended before the epoch moves): the
  codes stay private memory, the floats are shared page cache.
- `memmap_f32_exact`: an N x 384 float32 file, np.memmap, exact scan (one matrix-vector
  product through BLAS straight over the mapped pages).
- `memmap_i8_rescore`: the same vectors as int8 with one scale per vector (max |x| / 127),
  a memmap scan over int8 (converted to float32 a 16,384-row chunk at a time, since numpy
  has no int8 BLAS), then the best RESCORE_I8 rescored from the float32 memmap.
- `usearch_hnsw_{f32,f16,i8}`: usearch HNSW (connectivity 16, expansion_add 128,
  expansion_search EF_SEARCH), saved with `Index.save` and opened with `Index.restore(...,
  view=True)` (memory-mapped, nothing copied).
- `faiss_hnsw_flat`: faiss IndexHNSWFlat (M 16, efConstruction 128, efSearch EF_SEARCH,
  inner product on unit vectors), opened with IO_FLAG_MMAP_IFC when faiss accepts it,
  else read into memory (`open_mode` says which).
- `sqlite_vec_vec0_knn`: sqlite-vec's vec0 table (float[384], cosine) and its KNN query
  `embedding MATCH ? AND k = ?`, the reference.

Fairness:

- Every candidate is searched in its own fresh process (the worker), so its RSS is not
  confused with another's; the worker imports numpy, apsw and threadpoolctl first, then
  takes the baseline, then imports the candidate's library (its code pages count) and
  opens the prepared data. RSS is reported as VmRSS and split into RssAnon (private) and
  RssFile (mapped file pages: for the memmap, usearch-view and mmap-faiss candidates those
  are the OS page cache, shared by every process that maps the same file, not a copy per
  process).
- `first_query_ms` is open + first search in that fresh process (library import apart,
  `import_ms`). The prepared files were just written, so they sit in the page cache: this
  is the warm-cache start, not a cold disk read.
- Searches ask for the top 50 (CANDIDATES, what the app asks the vector step for), on one
  thread: BLAS limited with threadpool_limits(1) like the app, usearch with threads=1,
  faiss with omp_set_num_threads(1). Builds may use 2 threads (BUILD_THREADS).
- EF_SEARCH is 128 for both HNSW libraries: at least the 50 results asked for, with room.
  `ef_sweep` searches the same opened index again at EF_SWEEP (p50 and recall@10 only),
  since the beam width is a search-time choice.
- Append: while the worker is open, this process (another process, as a second Trove
  process would be) appends APPENDED vectors through the candidate's own write path
  (`writer_s`); the worker then searches for the last appended vector (`first_search_ms`:
  noticing the change, catching up and searching; `found`: whether it is the top hit)
  and a few of the old queries again (`next_p50_ms`). The mmap-based files are appended
  in place (the reader re-maps when the file grew); the HNSW indexes are loaded, extended
  and saved to a new file renamed over the old one (a view cannot be extended), the
  reader re-opens it when the inode changed.
- The machine has 2 shared cores and other benches may run at the same time: absolute
  timings are noisy; the ratios between candidates of one run are what count.
  `query_cpu_ms` (the worker's CPU time per search, time.process_time) is less disturbed
  by other processes than wall time, though not by cache and memory-bandwidth contention.

Prints one JSON line: the run's parameters and a dict per candidate.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, ClassVar

import apsw
import numpy as np
import numpy.typing as npt
from threadpoolctl import threadpool_limits

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from app.knowledge import db  # noqa: E402
from app.knowledge.pipeline.store import vector_blocks  # noqa: E402
from app.knowledge.pipeline.store.vector_tier import TierStats, VectorTier  # noqa: E402
from tests.bench.search_latency import (  # noqa: E402
    APPENDED,
    CANDIDATES,
    DIMS,
    Vectors,
    _unit,
    exact_top,
)

FloatMatrix = npt.NDArray[np.float32]
IdArray = npt.NDArray[np.int64]

BUILD_THREADS = 2
EF_SEARCH = 128
EF_SWEEP = (64, 256, 512)  # HNSW only: the same index searched wider (recall for latency)
HNSW_M = 16
EF_CONSTRUCTION = 128
RESCORE_I8 = 300
I8_CHUNK = 16_384
WRITE_BATCH = 10_000
AFTER_APPEND_QUERIES = 5


def _status() -> dict[str, float]:
    """VmRSS, RssAnon, RssFile and RssShmem of this process, in MB."""
    wanted = ("VmRSS", "RssAnon", "RssFile", "RssShmem")
    out: dict[str, float] = {}
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            key = line.split(":", 1)[0]
            if key in wanted:
                out[key] = int(line.split()[1]) / 1024
    return out


def _delta(now: dict[str, float], base: dict[str, float]) -> dict[str, float]:
    return {k: round(now[k] - base[k], 1) for k in now}


def _p(values: list[float], q: float) -> float:
    return round(float(np.percentile(values, q)), 3)


def _top(scores: FloatMatrix, k: int) -> npt.NDArray[np.intp]:
    k = min(k, len(scores))
    top = np.argpartition(-scores, k - 1)[:k]
    ordered: npt.NDArray[np.intp] = top[np.argsort(-scores[top], kind="stable")]
    return ordered


# -- candidates -----------------------------------------------------------------------------


class Candidate:
    """Prepare and append run in the bench process; open, search and catch_up in a worker."""

    name: ClassVar[str]
    # Another candidate whose prepared folder this one copies (same file, same build).
    shares: ClassVar[str | None] = None

    def prepare(self, folder: Path, corpus: FloatMatrix) -> dict[str, Any]:
        raise NotImplementedError

    def append(self, folder: Path, vectors: FloatMatrix, first_id: int) -> None:
        raise NotImplementedError

    def load_library(self) -> None:
        """Import the candidate's own library (timed and counted apart from open)."""

    def open(self, folder: Path) -> dict[str, Any]:
        raise NotImplementedError

    def search(self, q: FloatMatrix, k: int) -> list[int]:
        raise NotImplementedError

    def set_ef(self, ef: int) -> None:
        """HNSW candidates: the search-time beam width (the sweep), no rebuild needed."""
        raise NotImplementedError


def _bench_db(folder: Path, vec: bool = False) -> apsw.Connection:
    return db.connect(folder / "vectors.sqlite", vectors=vec)


class TroveCodesSqlite(Candidate):
    name = "trove_codes_sqlite_rescore"

    def prepare(self, folder: Path, corpus: FloatMatrix) -> dict[str, Any]:
        conn = _bench_db(folder)
        vector_blocks.create(conn)
        conn.execute("CREATE TABLE bench_meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL)")
        conn.execute("INSERT INTO bench_meta VALUES ('epoch', 1)")
        for start in range(0, len(corpus), WRITE_BATCH):
            part = corpus[start : start + WRITE_BATCH]
            ids = list(range(start + 1, start + 1 + len(part)))
            with db.write_transaction(conn):
                vector_blocks.add(conn, ids, part, DIMS, version=1)
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.close()
        return {}

    def append(self, folder: Path, vectors: FloatMatrix, first_id: int) -> None:
        conn = _bench_db(folder)
        with db.write_transaction(conn):
            epoch = int(
                conn.execute("SELECT value FROM bench_meta WHERE key='epoch'").fetchone()[0]
            )
            ids = list(range(first_id, first_id + len(vectors)))
            vector_blocks.add(conn, ids, vectors, DIMS, version=epoch + 1)
            conn.execute("UPDATE bench_meta SET value = ? WHERE key = 'epoch'", (epoch + 1,))
        conn.close()

    def _tier(self) -> VectorTier:
        return VectorTier(DIMS, TierStats())

    def open(self, folder: Path) -> dict[str, Any]:
        self.conn = db.connect(folder / "vectors.sqlite", create=False)
        self.tier = self._tier()
        with self.conn:
            self._refresh()
        return {}

    def _refresh(self) -> None:
        row = self.conn.execute("SELECT value FROM bench_meta WHERE key='epoch'").fetchone()
        self.tier.refresh(self.conn, int(row[0]))

    def search(self, q: FloatMatrix, k: int) -> list[int]:
        # As IndexStore.vector_search: one read snapshot, the epoch checked every search.
        with self.conn:
            self._refresh()
            return [cid for cid, _ in self.tier.search(self.conn, q, k)]


class _MemoryRescoreTier(VectorTier):
    """VectorTier with the rescoring read from an in-memory float32 array (row = id - 1)."""

    def __init__(self, dimensions: int, stats: TierStats) -> None:
        super().__init__(dimensions, stats)
        self.floats = np.zeros((0, dimensions), dtype=np.float32)
        self.count = 0

    def load_floats(self, conn: apsw.Connection) -> None:
        """Read the float rows past `count` (all of them at open, appended ones later), a
        batch at a time straight into the array, so no copy of the whole set is held."""
        top = conn.execute("SELECT max(id) FROM vectors").fetchone()[0]
        need = int(top or 0)  # ids are 1..N here
        if need <= self.count:
            return
        if need > len(self.floats):
            grown = np.zeros((need + need // 8, self.dimensions), dtype=np.float32)
            grown[: self.count] = self.floats[: self.count]
            self.floats = grown
        while self.count < need:
            rows = conn.execute(
                "SELECT embedding FROM vectors WHERE id > ? ORDER BY id LIMIT ?",
                (self.count, vector_blocks.BLOCK_ROWS),
            ).fetchall()
            block = np.frombuffer(b"".join(r[0] for r in rows), dtype=np.float32)
            self.floats[self.count : self.count + len(rows)] = block.reshape(-1, self.dimensions)
            self.count += len(rows)

    def refresh(self, conn: apsw.Connection, epoch: int) -> None:
        if self.epoch != epoch:
            super().refresh(conn, epoch)
            self.load_floats(conn)

    def _rescore(
        self,
        conn: apsw.Connection,
        candidates: IdArray,
        q: FloatMatrix,
        limit: int,
    ) -> list[tuple[int, float]]:
        scores = self.floats[candidates - 1] @ q
        order = _top(scores, limit)
        return [(int(candidates[i]), float(scores[i])) for i in order]


class TroveCodesMemory(TroveCodesSqlite):
    name = "trove_codes_memory_rescore"
    shares = TroveCodesSqlite.name

    def _tier(self) -> VectorTier:
        return _MemoryRescoreTier(DIMS, TierStats())


class _MemmapRescoreTier(VectorTier):
    """VectorTier with the rescoring read from a float32 memmap file (row = id - 1)."""

    def __init__(self, dimensions: int, stats: TierStats, path: Path) -> None:
        super().__init__(dimensions, stats)
        self.path = path
        self.rows = -1
        self.remap()

    def remap(self) -> None:
        rows = os.stat(self.path).st_size // (self.dimensions * 4)
        if rows != self.rows:
            self.rows = rows
            self.f32 = np.memmap(self.path, np.float32, "r", shape=(rows, self.dimensions))

    def refresh(self, conn: apsw.Connection, epoch: int) -> None:
        if self.epoch != epoch:
            super().refresh(conn, epoch)
            self.remap()

    def _rescore(
        self,
        conn: apsw.Connection,
        candidates: IdArray,
        q: FloatMatrix,
        limit: int,
    ) -> list[tuple[int, float]]:
        candidates = np.sort(candidates)  # file order: fewer, more sequential page reads
        scores = np.asarray(self.f32[candidates - 1] @ q)
        order = _top(scores, limit)
        return [(int(candidates[i]), float(scores[i])) for i in order]


class TroveCodesMemmap(TroveCodesSqlite):
    name = "trove_codes_memmap_rescore"

    def prepare(self, folder: Path, corpus: FloatMatrix) -> dict[str, Any]:
        super().prepare(folder, corpus)
        np.ascontiguousarray(corpus, dtype=np.float32).tofile(folder / "f32.bin")
        return {"rescore_from": "f32.bin beside the SQLite file (np.memmap)"}

    def append(self, folder: Path, vectors: FloatMatrix, first_id: int) -> None:
        # The float file first: once the epoch moves, a reader may rescore the new ids.
        with open(folder / "f32.bin", "ab") as f:
            f.write(np.ascontiguousarray(vectors, dtype=np.float32).tobytes())
        super().append(folder, vectors, first_id)

    def open(self, folder: Path) -> dict[str, Any]:
        self.folder = folder
        return super().open(folder)

    def _tier(self) -> VectorTier:
        return _MemmapRescoreTier(DIMS, TierStats(), self.folder / "f32.bin")


class MemmapF32(Candidate):
    name = "memmap_f32_exact"

    def prepare(self, folder: Path, corpus: FloatMatrix) -> dict[str, Any]:
        np.ascontiguousarray(corpus, dtype=np.float32).tofile(folder / "f32.bin")
        return {}

    def append(self, folder: Path, vectors: FloatMatrix, first_id: int) -> None:
        with open(folder / "f32.bin", "ab") as f:
            f.write(np.ascontiguousarray(vectors, dtype=np.float32).tobytes())

    def open(self, folder: Path) -> dict[str, Any]:
        self.folder = folder
        self.rows = 0
        self._remap()
        return {}

    def _rows_on_disk(self) -> int:
        return os.stat(self.folder / "f32.bin").st_size // (DIMS * 4)

    def _remap(self) -> None:
        self.rows = self._rows_on_disk()
        self.f32 = np.memmap(self.folder / "f32.bin", np.float32, "r", shape=(self.rows, DIMS))

    def search(self, q: FloatMatrix, k: int) -> list[int]:
        if self._rows_on_disk() != self.rows:  # a writer appended: map the longer file
            self._remap()
        scores = np.asarray(self.f32 @ q)
        return (_top(scores, k) + 1).tolist()


class MemmapI8(MemmapF32):
    name = "memmap_i8_rescore"

    def prepare(self, folder: Path, corpus: FloatMatrix) -> dict[str, Any]:
        super().prepare(folder, corpus)
        self._write_i8(folder, corpus, "wb")
        return {"rescored": RESCORE_I8, "scale": "per vector (max |x| / 127)"}

    @staticmethod
    def _write_i8(folder: Path, vectors: FloatMatrix, mode: str) -> None:
        scale = np.abs(vectors).max(axis=1) / 127.0
        scale[scale == 0] = 1.0
        codes = np.rint(vectors / scale[:, None]).astype(np.int8)
        # Scales first so a reader that sees a code row also finds its scale.
        with open(folder / "scale.bin", mode) as f:
            f.write(scale.astype(np.float32).tobytes())
        with open(folder / "i8.bin", mode) as f:
            f.write(codes.tobytes())

    def append(self, folder: Path, vectors: FloatMatrix, first_id: int) -> None:
        super().append(folder, vectors, first_id)
        self._write_i8(folder, vectors, "ab")

    def _rows_on_disk(self) -> int:
        return os.stat(self.folder / "i8.bin").st_size // DIMS

    def _remap(self) -> None:
        super()._remap()
        self.i8 = np.memmap(self.folder / "i8.bin", np.int8, "r", shape=(self.rows, DIMS))
        self.scale = np.memmap(self.folder / "scale.bin", np.float32, "r", shape=(self.rows,))
        self.buffer = np.empty((I8_CHUNK, DIMS), dtype=np.float32)

    def search(self, q: FloatMatrix, k: int) -> list[int]:
        if self._rows_on_disk() != self.rows:
            self._remap()
        scores = np.empty(self.rows, dtype=np.float32)
        for start in range(0, self.rows, I8_CHUNK):
            stop = min(self.rows, start + I8_CHUNK)
            chunk = self.buffer[: stop - start]
            chunk[:] = self.i8[start:stop]
            np.matmul(chunk, q, out=scores[start:stop])
        scores *= self.scale
        pool = np.argpartition(-scores, RESCORE_I8 - 1)[:RESCORE_I8]
        pool.sort()  # rows in file order: fewer, more sequential page reads
        exact = np.asarray(self.f32[pool] @ q)
        return (pool[_top(exact, k)] + 1).tolist()


class UsearchHnsw(Candidate):
    name = "usearch_hnsw_f32"
    dtype: ClassVar[str] = "f32"

    def _new_index(self) -> Any:
        from usearch.index import Index

        return Index(
            ndim=DIMS,
            metric="cos",
            dtype=self.dtype,
            connectivity=HNSW_M,
            expansion_add=EF_CONSTRUCTION,
            expansion_search=EF_SEARCH,
        )

    def prepare(self, folder: Path, corpus: FloatMatrix) -> dict[str, Any]:
        index = self._new_index()
        keys = np.arange(1, len(corpus) + 1, dtype=np.uint64)
        index.add(keys, corpus, threads=BUILD_THREADS)
        index.save(str(folder / "index.usearch"))
        return {"dtype": self.dtype, "connectivity": HNSW_M, "expansion_search": EF_SEARCH}

    def append(self, folder: Path, vectors: FloatMatrix, first_id: int) -> None:
        from usearch.index import Index

        path = folder / "index.usearch"
        index = Index.restore(str(path))  # a view is read-only: load, extend, save anew
        keys = np.arange(first_id, first_id + len(vectors), dtype=np.uint64)
        index.add(keys, vectors, threads=BUILD_THREADS)
        index.save(str(folder / "index.usearch.new"))
        os.replace(folder / "index.usearch.new", path)

    def load_library(self) -> None:
        import usearch.index  # noqa: F401

    def open(self, folder: Path) -> dict[str, Any]:
        self.path = folder / "index.usearch"
        self._view()
        return {}

    def _view(self) -> None:
        from usearch.index import Index

        self.inode = os.stat(self.path).st_ino
        self.index = Index.restore(str(self.path), view=True)
        self.index.expansion_search = EF_SEARCH

    def set_ef(self, ef: int) -> None:
        self.index.expansion_search = ef

    def search(self, q: FloatMatrix, k: int) -> list[int]:
        if os.stat(self.path).st_ino != self.inode:  # a writer replaced the file
            self._view()
        matches = self.index.search(q, k, threads=1)
        return [int(key) for key in matches.keys]


class UsearchHnswF16(UsearchHnsw):
    name = "usearch_hnsw_f16"
    dtype = "f16"


class UsearchHnswI8(UsearchHnsw):
    name = "usearch_hnsw_i8"
    dtype = "i8"


class FaissHnswFlat(Candidate):
    name = "faiss_hnsw_flat"

    def prepare(self, folder: Path, corpus: FloatMatrix) -> dict[str, Any]:
        import faiss

        faiss.omp_set_num_threads(BUILD_THREADS)
        index = faiss.IndexHNSWFlat(DIMS, HNSW_M, faiss.METRIC_INNER_PRODUCT)
        index.hnsw.efConstruction = EF_CONSTRUCTION
        index.add(np.ascontiguousarray(corpus))
        faiss.write_index(index, str(folder / "index.faiss"))
        return {"M": HNSW_M, "efSearch": EF_SEARCH}

    def append(self, folder: Path, vectors: FloatMatrix, first_id: int) -> None:
        import faiss

        faiss.omp_set_num_threads(BUILD_THREADS)
        path = folder / "index.faiss"
        index = faiss.read_index(str(path))
        assert index.ntotal == first_id - 1  # faiss HNSW ids are positions
        index.add(np.ascontiguousarray(vectors))
        faiss.write_index(index, str(folder / "index.faiss.new"))
        os.replace(folder / "index.faiss.new", path)

    def load_library(self) -> None:
        import faiss

        faiss.omp_set_num_threads(1)

    def open(self, folder: Path) -> dict[str, Any]:
        self.path = folder / "index.faiss"
        return {"open_mode": self._read()}

    def _read(self) -> str:
        import faiss

        self.inode = os.stat(self.path).st_ino
        try:
            flags = faiss.IO_FLAG_MMAP_IFC | faiss.IO_FLAG_READ_ONLY
            self.index = faiss.read_index(str(self.path), flags)
            mode = "mmap (IO_FLAG_MMAP_IFC)"
        except RuntimeError as e:
            self.index = faiss.read_index(str(self.path))
            mode = f"read into memory (mmap refused: {str(e).splitlines()[0][:120]})"
        self.index.hnsw.efSearch = EF_SEARCH
        return mode

    def set_ef(self, ef: int) -> None:
        self.index.hnsw.efSearch = ef

    def search(self, q: FloatMatrix, k: int) -> list[int]:
        if os.stat(self.path).st_ino != self.inode:
            self._read()
        _, found = self.index.search(q.reshape(1, -1), k)
        return [int(i) + 1 for i in found[0] if i >= 0]


class SqliteVec(Candidate):
    name = "sqlite_vec_vec0_knn"

    def prepare(self, folder: Path, corpus: FloatMatrix) -> dict[str, Any]:
        conn = _bench_db(folder, vec=True)
        conn.execute(
            f"CREATE VIRTUAL TABLE ref_vec0 USING vec0(embedding float[{DIMS}] "
            "distance_metric=cosine)"
        )
        self._insert(conn, corpus, 1)
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.close()
        return {}

    @staticmethod
    def _insert(conn: apsw.Connection, vectors: FloatMatrix, first_id: int) -> None:
        for start in range(0, len(vectors), WRITE_BATCH):
            part = vectors[start : start + WRITE_BATCH]
            with db.write_transaction(conn):
                conn.executemany(
                    "INSERT INTO ref_vec0 (rowid, embedding) VALUES (?, ?)",
                    ((first_id + start + i, v.tobytes()) for i, v in enumerate(part)),
                )

    def append(self, folder: Path, vectors: FloatMatrix, first_id: int) -> None:
        conn = _bench_db(folder, vec=True)
        self._insert(conn, vectors, first_id)
        conn.close()

    def open(self, folder: Path) -> dict[str, Any]:
        self.conn = db.connect(folder / "vectors.sqlite", create=False, vectors=True)
        return {}

    def search(self, q: FloatMatrix, k: int) -> list[int]:
        rows = self.conn.execute(
            "SELECT rowid FROM ref_vec0 WHERE embedding MATCH ? AND k = ?", (q.tobytes(), k)
        )
        return [int(r[0]) for r in rows]


ALL: dict[str, type[Candidate]] = {
    c.name: c
    for c in (
        TroveCodesSqlite,
        TroveCodesMemory,
        TroveCodesMemmap,
        MemmapF32,
        MemmapI8,
        UsearchHnsw,
        UsearchHnswF16,
        UsearchHnswI8,
        FaissHnswFlat,
        SqliteVec,
    )
}


# -- the worker: a fresh process that opens the prepared data and searches ---------------


def worker(args: argparse.Namespace) -> None:
    threadpool_limits(limits=1, user_api="blas")
    queries = np.load(args.worker_queries)
    candidate = ALL[args.worker]()
    base = _status()
    t = time.perf_counter()
    candidate.load_library()
    import_ms = (time.perf_counter() - t) * 1000
    after_import = _status()
    t = time.perf_counter()
    info = candidate.open(Path(args.folder))
    open_ms = (time.perf_counter() - t) * 1000
    after_open = _status()
    first = candidate.search(queries[0], CANDIDATES)
    first_ms = (time.perf_counter() - t) * 1000
    del first
    after_first = _status()
    timings: list[float] = []
    cpu: list[float] = []
    hits: list[list[int]] = []
    for q in queries:
        t, c = time.perf_counter(), time.process_time()
        got = candidate.search(q, CANDIDATES)
        timings.append((time.perf_counter() - t) * 1000)
        cpu.append((time.process_time() - c) * 1000)
        hits.append(got[:10])
    after_queries = _status()
    sweep: dict[str, dict[str, Any]] = {}
    if type(candidate).set_ef is not Candidate.set_ef:
        for ef in EF_SWEEP:
            candidate.set_ef(ef)
            ef_ms, ef_hits = [], []
            for q in queries:
                t = time.perf_counter()
                got = candidate.search(q, CANDIDATES)
                ef_ms.append((time.perf_counter() - t) * 1000)
                ef_hits.append(got[:10])
            sweep[str(ef)] = {"p50_ms": _p(ef_ms, 50), "hits": ef_hits}
        candidate.set_ef(EF_SEARCH)
    print(json.dumps({"ready": True}), flush=True)

    appended = json.loads(sys.stdin.readline())
    t = time.perf_counter()
    got = candidate.search(np.asarray(appended["vector"], dtype=np.float32), CANDIDATES)
    append_first_ms = (time.perf_counter() - t) * 1000
    next_ms = []
    for q in queries[:AFTER_APPEND_QUERIES]:
        t = time.perf_counter()
        candidate.search(q, CANDIDATES)
        next_ms.append((time.perf_counter() - t) * 1000)
    after_append = _status()
    result = {
        "info": info,
        "import_ms": round(import_ms, 1),
        "open_ms": round(open_ms, 1),
        "first_query_ms": round(first_ms, 1),
        "timings": timings,
        "cpu": cpu,
        "hits": hits,
        "ef_sweep": sweep,
        "rss_baseline_mb": {k: round(v, 1) for k, v in base.items()},
        "rss_added_mb": {
            "library_import": _delta(after_import, base),
            "after_open": _delta(after_open, base),
            "after_first_query": _delta(after_first, base),
            "after_all_queries": _delta(after_queries, base),
            "after_foreign_append": _delta(after_append, base),
        },
        "append_first_search_ms": round(append_first_ms, 2),
        "append_found": bool(got) and got[0] == appended["id"],
        "append_next_p50_ms": round(float(np.median(next_ms)), 3),
    }
    print(json.dumps(result), flush=True)


# -- the run ---------------------------------------------------------------------------------


def _folder_mb(folder: Path) -> float:
    return round(sum(f.stat().st_size for f in folder.iterdir() if f.is_file()) / 2**20, 1)


def _recall(hits: list[list[int]], truth: list[list[int]]) -> float:
    both = [len(set(got) & set(want)) / 10 for got, want in zip(hits, truth, strict=True)]
    return round(float(np.mean(both)), 4)


def _measure(
    candidate: Candidate,
    folder: Path,
    qfile: Path,
    truth: list[list[int]],
    appended: FloatMatrix,
    first_id: int,
) -> dict[str, Any]:
    child = subprocess.Popen(
        [
            sys.executable,
            __file__,
            "0",
            "--worker",
            candidate.name,
            "--folder",
            str(folder),
            "--worker-queries",
            str(qfile),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdin is not None and child.stdout is not None
    line = child.stdout.readline()
    if not line:
        return {"error": f"worker died before searching (exit {child.wait()})"}
    t = time.perf_counter()
    candidate.append(folder, appended, first_id)
    writer_s = time.perf_counter() - t
    child.stdin.write(
        json.dumps({"vector": appended[-1].tolist(), "id": first_id + len(appended) - 1}) + "\n"
    )
    child.stdin.flush()
    line = child.stdout.readline()
    code = child.wait(timeout=600)
    if not line:
        return {"error": f"worker died after the append (exit {code})"}
    m = json.loads(line)
    rss = m["rss_added_mb"]["after_all_queries"]
    sweep = {
        ef: {"p50_ms": v["p50_ms"], "recall_at_10": _recall(v["hits"], truth)}
        for ef, v in m["ef_sweep"].items()
    }
    return {
        "query_ms": {"p50": _p(m["timings"], 50), "p95": _p(m["timings"], 95)},
        "query_cpu_ms": {"p50": _p(m["cpu"], 50), "p95": _p(m["cpu"], 95)},
        "recall_at_10": _recall(m["hits"], truth),
        "rss_added_mb": rss,
        "rss_added_detail_mb": m["rss_added_mb"],
        "import_ms": m["import_ms"],
        "fresh_open_ms": m["open_ms"],
        "fresh_first_query_ms": m["first_query_ms"],
        "append": {
            "vectors": len(appended),
            "writer_s": round(writer_s, 3),
            "reader_first_search_ms": m["append_first_search_ms"],
            "reader_found_new": m["append_found"],
            "reader_next_p50_ms": m["append_next_p50_ms"],
        },
        **({"ef_sweep": sweep} if sweep else {}),
        **m["info"],
    }


def run(n: int, n_queries: int, kind: str, seed: int, only: list[str]) -> dict[str, Any]:
    rng = np.random.default_rng(seed)
    draw = Vectors(kind, rng)
    corpus = np.empty((n, DIMS), dtype=np.float32)
    for start in range(0, n, WRITE_BATCH):
        corpus[start : start + WRITE_BATCH] = draw.draw(min(WRITE_BATCH, n - start))
    anchors = corpus[rng.integers(0, n, n_queries)]
    queries = _unit(anchors + draw.noise(n_queries))
    appended = draw.draw(APPENDED)
    ids = np.arange(1, n + 1, dtype=np.int64)
    truth = [exact_top(corpus, ids, q, 10) for q in queries]
    out: dict[str, Any] = {
        "bench": "vector_candidates",
        "vectors": n,
        "data": kind,
        "queries": n_queries,
        "dims": DIMS,
        "top_k": CANDIDATES,
        "note": "2 shared cores, other benches concurrent: compare ratios within the run; "
        "RssFile = mapped file pages (shared OS page cache), RssAnon = private memory",
        "candidates": {},
    }
    with tempfile.TemporaryDirectory() as tmp:
        qfile = Path(tmp) / "queries.npy"
        np.save(qfile, queries)
        built: dict[str, tuple[Path, float]] = {}
        for name in only:
            candidate = ALL[name]()
            folder = Path(tmp) / name
            result: dict[str, Any] = {}
            try:
                if candidate.shares and candidate.shares in built:
                    source, build_s = built[candidate.shares]
                    shutil.copytree(source, folder)
                    result["build_s"] = build_s
                    result["build_note"] = f"same file as {candidate.shares} (copied)"
                else:
                    folder.mkdir()
                    with threadpool_limits(limits=BUILD_THREADS):
                        t = time.perf_counter()
                        result.update(candidate.prepare(folder, corpus))
                        result["build_s"] = round(time.perf_counter() - t, 2)
                if name in {c.shares for c in ALL.values()}:
                    copy = Path(tmp) / f"{name}.pristine"
                    shutil.copytree(folder, copy)
                    built[name] = (copy, result["build_s"])
                result["files_mb"] = _folder_mb(folder)
                result.update(_measure(candidate, folder, qfile, truth, appended, n + 1))
            except Exception as e:  # a library that crashes is a result too
                result["error"] = f"{type(e).__name__}: {e}"
            out["candidates"][name] = result
            shutil.rmtree(folder, ignore_errors=True)
            print(f"{name}: {json.dumps(result)}", file=sys.stderr, flush=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("n", type=int, help="number of vectors")
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--data", choices=("gaussian", "uniform"), default="gaussian")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--only", default=",".join(ALL), help="comma-separated candidates")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--folder", help=argparse.SUPPRESS)
    parser.add_argument("--worker-queries", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args)
        return
    only = [name for name in args.only.split(",") if name]
    unknown = [name for name in only if name not in ALL]
    if unknown:
        parser.error(f"unknown candidates {unknown}; known: {', '.join(ALL)}")
    print(json.dumps(run(args.n, args.queries, args.data, args.seed, only)))


if __name__ == "__main__":
    main()
