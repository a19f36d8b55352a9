"""Full-text (BM25) engines side by side, on the same real-text chunks and the same queries.

    nice -n 19 python tests/bench/fulltext_candidates.py N [--queries Q] [--workdir DIR]
        [--seed S] [--candidates NAME,NAME...] [--skip-quality] [--eval-dir DIR]
        [--impact-bits 8|16] [--df-share F]

The sibling of vector_candidates.py for the BM25 step. It is a benchmark, not a test: CI
never runs it. The optional engines come with the `bench` extra (`pip install -e '.[bench]'`);
a candidate whose package is missing is skipped with the reason printed.

Data (the BEIR sets under ../shared/eval, `--eval-dir`; the run stops with a message when
they are not there):

- Chunks: every SciFact and NFCorpus document, title + text, cut into 80-word windows (a
  shorter tail of 20 words or more is kept); the windows are shuffled (seeded) and repeated
  up to N chunks. The first copy of a window is verbatim; each further copy has its
  sentences rotated by a random offset and about 10 % of its words dropped at random, so
  copies are near, not exact, duplicates. Each chunk's title column holds its document's
  title, as Trove's passages carry their material's title. Chunk ids are 1..N.
- Queries: the first Q (default 200) SciFact test queries (claims of 10-20 terms). Each is
  reduced exactly as Trove's search does: `query_tokens` -> `fts_match_expression` for the
  FTS5 candidates; for the others the same tokens run through the FTS5 tokenizer Trove
  creates its table with (porter unicode61 remove_diacritics 2, called through apsw), so the
  terms are FTS5's stems, one per FTS5 phrase (a repeated stem counts twice, as in FTS5).
- Documents for the other engines are tokenised the same way: `index_text` (Trove's CJK
  bigrams, NFKC) and then that tokenizer, so every engine sees FTS5's very tokens.
  Prefix tokens (a lone CJK character) exist only for FTS5; the English queries have none.

Candidates (each builds into its own folder under --workdir):

- `fts5`, the reference: a contentless FTS5 table made with index_store.FTS_TABLE_SQL,
  filled through db.connect (WAL, the app's settings) in transactions of 100 chunks (an
  item's worth, as search_latency.py), searched with Trove's statement: `-bm25(chunks_fts,
  BODY_WEIGHT, TITLE_WEIGHT)`, the OR of quoted tokens, ORDER BY score DESC LIMIT 10
  (the app asks for candidate_count(k) rows; FTS5 scores every matching row either way).
- `fts5-pruned`: the same file (a copy of fts5's build) and the same statement, but the
  query keeps only the tokens whose document frequency is at most --df-share (default
  0.05) of the chunks, or the MIN_TERMS rarest when fewer pass. The frequencies come from
  an fts5vocab 'row' table in the temp schema (the index file is unchanged) and the chunk
  count from chunks_fts_docsize; both are cached per connection until PRAGMA data_version
  says another connection committed. The kept tokens keep their own FTS5 IDF, so a score
  is the full score minus the dropped terms' parts; a dropped term can add at most
  idf * (k1 + 1) to any chunk, which is why the top 10 can differ (`overlap_at_10`). It
  does not rescore a candidate set with the frequent terms: FTS5's bm25() counts every
  row of each phrase for its IDF, so any statement naming a frequent term reads that
  term's whole doclist, the cost being avoided.
- `bmw`: BM25 impacts precomputed at build (FTS5's formula: tf weighted by column, the
  length of all columns, k1 1.2, b 0.75, IDF clamped to 1e-6), quantised linearly to
  --impact-bits (default 16) on a scale fixed by the largest impact possible
  (ln((N - 0.5) / 1.5) * (k1 + 1)), so an append can never overflow it. Postings are
  docid-ordered per term, in blocks of 128 with each block's last docid and max impact,
  stored as BLOBs in SQLite tables (bmw_postings, bmw_meta: they could live in the index
  file). Search is MaxScore with block-max bounds, in numpy: terms in falling order of
  their bound are read whole and accumulated until the bounds of the rest cannot reach the
  10th best partial score (partial scores are lower bounds of the final ones); the other
  terms add their block maxima to each candidate's bound, candidates below the threshold
  are dropped, and the survivors are scored exactly, term by term, reading only the
  blocks that hold them (SQLite incremental BLOB reads) unless a quarter of the term's
  blocks are needed anyway. Ties go to the lower chunk id. It is rank-safe: the top 10 are
  those of summing every posting of the same impacts; the bench checks that on a sample of
  queries (`exactness`), and also against exhaustive float64 BM25 computed from the tokens
  (where only quantisation can differ). An append writes a new segment (rows with a new
  segment number); impacts already written are never recomputed, new ones use the
  current chunk count and document frequencies with the build's average length, so
  scores drift from exact BM25 until a rebuild.
- `tantivy`: tantivy-py, one text field with the `whitespace` tokenizer (Trove's tokens
  joined by spaces, so tantivy neither folds nor stems again), frequencies without
  positions (Trove never sends phrases), the chunk id as a fast field; one writer thread,
  128 MB heap. FTS5's title weight is imitated by repeating the title tokens
  TITLE_WEIGHT times (the weighted tf matches FTS5's; the length then counts the title
  twice). A query is the Should-OR of term queries; tantivy scores Lucene's BM25 (IDF
  ln(1 + ...), 1-byte length norms), searched with count=False so block-WAND applies.
- `bm25s`: bm25s (numpy backend, method `robertson`, k1 1.2, b 0.75: FTS5's IDF and tf
  part up to a constant factor) on the same tokens as tantivy, saved with save() and
  loaded with mmap=True.

Measurements, all in one run so the ratios against fts5 are fair on a noisy machine:

- `build_s`, `size_bytes`: each build runs in its own process, which samples its RSS every
  10 ms (`rss_mb.build_peak`, over the RSS before the corpus is read); build time includes
  tokenising (FTS5 tokenises inside SQLite; the others through the apsw tokenizer).
  fts5-pruned reuses fts5's file.
- `query_ms` p50/p95: one process opens every candidate, runs WARMUP queries on each, then
  the Q queries interleaved query by query, the candidates' order rotated by one per query.
  `query_cpu_ms` is that process's CPU time per search, less disturbed by other processes.
- `rss_mb.search_*` and `fresh_*`: a fresh process per candidate opens it and runs the
  queries (VmRSS / RssAnon / RssFile growth over the RSS before opening; RssFile counts
  mapped index pages, i.e. shared page cache).
- `append`: while that process is open, another process (the writer) appends 1,000 new
  chunks through the candidate's own write path, the last one holding a marker word; the
  reader searches for the marker every POLL_S until the new chunk comes back.
  `visible_after_commit_ms` runs from the writer's commit to the reader finding it (both
  on CLOCK_MONOTONIC). bm25s cannot append (see Bm25s.append_note).
- `overlap_at_10`: mean share of fts5's top 10 that the candidate also returns, on the Q
  queries over the N chunks. Near-duplicate chunks make near-tied scores common, so small
  score differences (quantisation, another IDF) swap chunks at the 10th place.
- `quality`: nDCG@10 (linear gain, a document once) on real SciFact, every test query,
  over its 5,183 documents indexed whole (title column = title, body = title + text), and
  the overlap with fts5 there (`--skip-quality` skips it).

Prints one JSON line per candidate, then a summary line with the ratios against fts5.
The machine has 2 shared cores: compare ratios within a run, not absolute timings.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from array import array
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, ClassVar

import apsw
import numpy as np
import numpy.typing as npt
import psutil

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from app.knowledge import db  # noqa: E402
from app.knowledge.pipeline.indexing.tokenize import (  # noqa: E402
    FTS_TOKENIZER,
    QueryTokens,
    fts_match_expression,
    index_text,
    query_tokens,
)
from app.knowledge.pipeline.store.index_store import (  # noqa: E402
    BODY_WEIGHT,
    FTS_TABLE_SQL,
    TITLE_WEIGHT,
)
from tests.bench.retrieval_quality import load_jsonl, load_qrels  # noqa: E402

U32Array = npt.NDArray[np.uint32]
I32Array = npt.NDArray[np.int32]
F32Array = npt.NDArray[np.float32]
I64Array = npt.NDArray[np.int64]
F64Array = npt.NDArray[np.float64]

K = 10
K1 = 1.2  # FTS5's bm25() constants (fts5_aux.c); every candidate uses them
B = 0.75
WINDOW_WORDS = 80
MIN_TAIL_WORDS = 20
DROPOUT = 0.10
APPENDED = 1_000
FTS_BATCH = 100
BLOCK = 128
READ_ALL_SHARE = 4  # read a term whole once 1/4 of its blocks are needed
POSTING_BATCH = 4_000_000  # token occurrences per sort in the bmw build (bounds its RAM)
MIN_TERMS = 2
DF_SHARE = 0.05
WARMUP = 3
CHECK_QUERIES = 50
AFTER_APPEND_QUERIES = 5
POLL_S = 0.002
APPEND_TIMEOUT_S = 120.0
TANTIVY_HEAP = 128_000_000
TITLE_REPEAT = round(TITLE_WEIGHT / BODY_WEIGHT)
MARKER = "zqxappendprobe"
EVAL_DIR = ROOT.parent / "shared" / "eval"
REFERENCE = "fts5"

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


@dataclass(frozen=True)
class Options:
    impact_bits: int = 16
    df_share: float = DF_SHARE


@dataclass(frozen=True)
class Chunk:
    id: int
    title: str
    body: str


@dataclass(frozen=True)
class BenchQuery:
    qid: str
    text: str
    match: str  # Trove's FTS5 MATCH string
    words: list[str]  # query_tokens(...).terms, before stemming
    prefix: list[str]
    stems: list[list[str]]  # FTS5's tokens of each word (almost always one)

    @property
    def terms(self) -> list[str]:
        return [s for stems in self.stems for s in stems]


class TroveTokens:
    """Trove's full-text tokens outside FTS5: `index_text`, then the very tokenizer the FTS5
    table is created with (apsw exposes SQLite's tokenizers), so stems, folding, diacritics
    and CJK bigrams are byte for byte what FTS5 indexes and what its MATCH looks up."""

    def __init__(self) -> None:
        self._conn = apsw.Connection(":memory:")
        name, *args = FTS_TOKENIZER.split()
        self._tokenizer = self._conn.fts5_tokenizer(name, args)
        self._titles: dict[str, list[str]] = {}

    def _run(self, text: str, reason: int) -> list[str]:
        out = self._tokenizer(
            text.encode("utf-8"), reason, None, include_offsets=False, include_colocated=False
        )
        return [str(t) for t in out]

    def document(self, text: str) -> list[str]:
        return self._run(index_text(text), apsw.FTS5_TOKENIZE_DOCUMENT)

    def title(self, text: str) -> list[str]:
        # Every chunk of a document repeats its title: tokenise it once.
        found = self._titles.get(text)
        if found is None:
            found = self._titles[text] = self.document(text)
        return found

    def query(self, qid: str, text: str) -> BenchQuery:
        tokens = query_tokens(text)
        stems = [self._run(w, apsw.FTS5_TOKENIZE_QUERY) for w in tokens.terms]
        return BenchQuery(
            qid, text, fts_match_expression(tokens), tokens.terms, tokens.prefix, stems
        )


def _status() -> dict[str, float]:
    """VmRSS, RssAnon and RssFile of this process, in MB."""
    wanted = ("VmRSS", "RssAnon", "RssFile")
    out: dict[str, float] = {}
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            key = line.split(":", 1)[0]
            if key in wanted:
                out[key] = int(line.split()[1]) / 1024
    return out


def _delta(now: dict[str, float], base: dict[str, float]) -> dict[str, float]:
    return {k: round(now[k] - base[k], 1) for k in now}


class PeakRss:
    """The highest RSS above the RSS at entry, sampled by a thread (a build's peak is
    transient: sorting, a writer's heap), in MB."""

    def __init__(self, every_s: float = 0.01) -> None:
        self.every_s = every_s
        self.process = psutil.Process()
        self.base = 0
        self.peak = 0
        self.end = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self._stop.wait(self.every_s):
            self.peak = max(self.peak, self.process.memory_info().rss)

    def __enter__(self) -> PeakRss:
        self.base = self.peak = self.process.memory_info().rss
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.end = self.process.memory_info().rss
        self.peak = max(self.peak, self.end)

    def report(self) -> dict[str, float]:
        return {
            "build_peak": round((self.peak - self.base) / 2**20, 1),
            "build_end": round((self.end - self.base) / 2**20, 1),
        }


def _p(values: Sequence[float], q: float) -> float:
    return round(float(np.percentile(values, q)), 3)


def _batched(items: Iterable[Chunk], size: int) -> Iterator[list[Chunk]]:
    batch: list[Chunk] = []
    for item in items:
        batch.append(item)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def _folder_bytes(folder: Path) -> int:
    return sum(f.stat().st_size for f in folder.rglob("*") if f.is_file())


def read_chunks(path: Path) -> Iterator[Chunk]:
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            cid, title, body = line.rstrip("\n").split("\t")
            yield Chunk(int(cid), title, body)


def _top(ids: npt.NDArray[Any], scores: npt.NDArray[Any], k: int) -> list[int]:
    """The k best ids, higher score first, the lower id first among equal scores."""
    if len(ids) > 4 * k:
        # Everything tied with the k-th best stays, so the id order settles ties exactly.
        kth = np.partition(scores, len(scores) - k)[len(scores) - k]
        keep = scores >= kth
        ids, scores = ids[keep], scores[keep]
    order = np.lexsort((ids, -scores))[:k]
    return [int(i) for i in ids[order]]


def _overlap(got: list[int], ref: list[int]) -> float:
    if not ref:
        return 1.0 if not got else 0.0
    return len(set(got) & set(ref)) / len(ref)


def _mean_overlap(hits: list[list[int]], ref: list[list[int]]) -> float:
    return round(float(np.mean([_overlap(g, r) for g, r in zip(hits, ref, strict=True)])), 4)


# -- candidates -----------------------------------------------------------------------------


class Candidate:
    """build and append run in their own processes; open and search in the readers."""

    name: ClassVar[str]
    package: ClassVar[str | None] = None
    shares: ClassVar[str | None] = None  # builds nothing: copies that candidate's folder
    appends: ClassVar[bool] = True
    append_note: ClassVar[str] = ""

    def __init__(self, opts: Options) -> None:
        self.opts = opts

    def build(self, folder: Path, chunks: Iterable[Chunk], tokens: TroveTokens) -> dict[str, Any]:
        raise NotImplementedError

    def append(self, folder: Path, chunks: Sequence[Chunk], tokens: TroveTokens) -> float:
        """Append through the candidate's write path; the monotonic time of the commit."""
        raise NotImplementedError

    def open(self, folder: Path) -> dict[str, Any]:
        raise NotImplementedError

    def search(self, q: BenchQuery, k: int) -> list[int]:
        raise NotImplementedError

    def stats(self) -> dict[str, Any]:
        return {}

    def close(self) -> None:
        """Release files (the quality pass opens many candidates one after the other)."""


class Fts5(Candidate):
    name = "fts5"
    SEARCH = (
        "SELECT rowid, -bm25(chunks_fts, ?, ?) AS score FROM chunks_fts "
        "WHERE chunks_fts MATCH ? ORDER BY score DESC LIMIT ?"
    )

    @staticmethod
    def _path(folder: Path) -> Path:
        return folder / "index.sqlite"

    @staticmethod
    def _insert(conn: apsw.Connection, chunks: Iterable[Chunk], batch: int) -> None:
        for part in _batched(chunks, batch):
            with db.write_transaction(conn):
                conn.executemany(
                    "INSERT INTO chunks_fts (rowid, body, title) VALUES (?, ?, ?)",
                    [(c.id, index_text(c.body), index_text(c.title)) for c in part],
                )

    def build(self, folder: Path, chunks: Iterable[Chunk], tokens: TroveTokens) -> dict[str, Any]:
        conn = db.connect(self._path(folder))
        conn.execute(FTS_TABLE_SQL)
        self._insert(conn, chunks, FTS_BATCH)
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.close()
        return {"chunks_per_transaction": FTS_BATCH}

    def append(self, folder: Path, chunks: Sequence[Chunk], tokens: TroveTokens) -> float:
        conn = db.connect(self._path(folder), create=False)
        self._insert(conn, chunks, len(chunks))
        committed = time.monotonic()
        conn.close()
        return committed

    def open(self, folder: Path) -> dict[str, Any]:
        self.conn = db.connect(self._path(folder), create=False)
        return {}

    def _match(self, q: BenchQuery) -> str:
        return q.match

    def search(self, q: BenchQuery, k: int) -> list[int]:
        match = self._match(q)
        if not match:
            return []
        rows = self.conn.execute(self.SEARCH, (BODY_WEIGHT, TITLE_WEIGHT, match, k))
        return [int(r[0]) for r in rows]

    def close(self) -> None:
        self.conn.close()


class Fts5Pruned(Fts5):
    """Trove's statement over the query's rarer tokens only (see the module docstring)."""

    name = "fts5-pruned"
    shares = "fts5"

    def open(self, folder: Path) -> dict[str, Any]:
        super().open(folder)
        self.conn.execute(
            "CREATE VIRTUAL TABLE temp.chunks_vocab USING fts5vocab(main, chunks_fts, 'row')"
        )
        self.version: int | None = None
        self.rows = 0
        self.df: dict[str, int] = {}
        self.kept: list[float] = []
        self.df_ms: list[float] = []
        return {"df_share": self.opts.df_share, "min_terms": MIN_TERMS}

    def _frequencies(self, stems: set[str]) -> None:
        version = int(self.conn.execute("PRAGMA data_version").fetchone()[0])
        if version != self.version:  # another connection committed: counts are stale
            self.version = version
            self.df.clear()
            self.rows = int(
                self.conn.execute("SELECT count(*) FROM chunks_fts_docsize").fetchone()[0]
            )
        missing = sorted(stems - self.df.keys())
        if missing:
            marks = ",".join("?" * len(missing))
            self.df.update(dict.fromkeys(missing, 0))
            for term, doc in self.conn.execute(
                f"SELECT term, doc FROM temp.chunks_vocab WHERE term IN ({marks})", missing
            ):
                self.df[str(term)] = int(doc)

    def _match(self, q: BenchQuery) -> str:
        t = time.perf_counter()
        self._frequencies({s for stems in q.stems for s in stems})
        self.df_ms.append((time.perf_counter() - t) * 1000)
        # A word FTS5 splits into several tokens is a phrase: no more frequent than its rarest.
        df = [min((self.df[s] for s in stems), default=0) for stems in q.stems]
        limit = self.opts.df_share * self.rows
        kept = [i for i, f in enumerate(df) if 0 < f <= limit]
        if len(kept) < MIN_TERMS:
            present = sorted((f, i) for i, f in enumerate(df) if f > 0)
            kept = sorted(i for _, i in present[:MIN_TERMS])
        self.kept.append(len(kept) / max(len(q.words), 1))
        return fts_match_expression(QueryTokens([q.words[i] for i in kept], q.prefix))

    def stats(self) -> dict[str, Any]:
        return {
            "mean_share_of_terms_kept": round(float(np.mean(self.kept)), 3) if self.kept else None,
            "df_lookup_ms_p50": _p(self.df_ms, 50) if self.df_ms else None,
        }


@dataclass
class _Segment:
    rowid: int
    df: int
    blocks: int


class _TermList:
    """One query term's postings over every segment: the block bounds at once, the postings
    only when asked (whole, or only some blocks)."""

    def __init__(
        self,
        mult: int,
        segments: list[_Segment],
        max_impact: int,
        block_last: U32Array,
        block_max: I64Array,
        dtype: np.dtype[Any],
    ) -> None:
        self.mult = mult
        self.ub = mult * max_impact
        self.segments = segments
        self.block_last = block_last
        self.block_max = block_max * mult
        self.first_block = np.cumsum([0] + [s.blocks for s in segments])
        self.dtype = dtype
        self.docs: U32Array | None = None
        self.imps: I64Array | None = None

    def load(self, conn: apsw.Connection) -> tuple[U32Array, I64Array]:
        if self.docs is None or self.imps is None:
            docs: list[U32Array] = []
            imps: list[I64Array] = []
            for s in self.segments:
                row = conn.execute(
                    "SELECT docids, impacts FROM bmw_postings WHERE id = ?", (s.rowid,)
                ).fetchone()
                docs.append(np.frombuffer(row[0], dtype="<u4"))
                imps.append(np.frombuffer(row[1], dtype=self.dtype).astype(np.int64))
            self.docs = docs[0] if len(docs) == 1 else np.concatenate(docs)
            self.imps = (imps[0] if len(imps) == 1 else np.concatenate(imps)) * self.mult
        return self.docs, self.imps

    def _block_of(self, cand: U32Array) -> tuple[I64Array, npt.NDArray[np.bool_]]:
        idx: I64Array = np.searchsorted(self.block_last, cand)
        return idx, idx < len(self.block_last)

    def bound(self, cand: U32Array) -> I64Array:
        idx, inside = self._block_of(cand)
        out = np.zeros(len(cand), dtype=np.int64)
        out[inside] = self.block_max[idx[inside]]
        return out

    def _blocks(self, conn: apsw.Connection, blocks: I64Array) -> tuple[U32Array, I64Array]:
        size = self.dtype.itemsize
        seg_of = np.searchsorted(self.first_block, blocks, side="right") - 1
        docs: list[bytes] = []
        imps: list[bytes] = []
        for seg in np.unique(seg_of):
            s = self.segments[int(seg)]
            local = blocks[seg_of == seg] - self.first_block[seg]
            with (
                conn.blob_open("main", "bmw_postings", "docids", s.rowid, False) as bd,
                conn.blob_open("main", "bmw_postings", "impacts", s.rowid, False) as bi,
            ):
                for b in local.tolist():
                    n = min(BLOCK, s.df - b * BLOCK)
                    bd.seek(b * BLOCK * 4)
                    docs.append(bd.read(n * 4))
                    bi.seek(b * BLOCK * size)
                    imps.append(bi.read(n * size))
        return (
            np.frombuffer(b"".join(docs), dtype="<u4"),
            np.frombuffer(b"".join(imps), dtype=self.dtype).astype(np.int64) * self.mult,
        )

    def exact(self, conn: apsw.Connection, cand: U32Array) -> I64Array:
        idx, inside = self._block_of(cand)
        blocks = np.unique(idx[inside])
        if self.docs is not None or len(blocks) * READ_ALL_SHARE >= len(self.block_last):
            docs, imps = self.load(conn)
        else:
            docs, imps = self._blocks(conn, blocks)
        if not len(docs):
            return np.zeros(len(cand), dtype=np.int64)
        pos = np.minimum(np.searchsorted(docs, cand), len(docs) - 1)
        return np.where(docs[pos] == cand, imps[pos], 0)


def _merge(
    cand: U32Array, part: I64Array, docs: U32Array, imps: I64Array
) -> tuple[U32Array, I64Array]:
    if not len(cand):
        return docs, imps
    ids, inverse = np.unique(np.concatenate([cand, docs]), return_inverse=True)
    # float64 sums of integers below 2**53 are exact
    sums = np.bincount(inverse, weights=np.concatenate([part, imps]))
    return ids, sums.astype(np.int64)


def _kth(part: I64Array, k: int) -> int:
    if len(part) < k:
        return 0
    return int(np.partition(part, len(part) - k)[len(part) - k])


class Bmw(Candidate):
    """Block-max MaxScore over quantised BM25 impacts stored in SQLite (module docstring)."""

    name = "bmw"

    def __init__(self, opts: Options) -> None:
        super().__init__(opts)
        if opts.impact_bits not in (8, 16):
            raise ValueError("--impact-bits is 8 or 16")
        self.dtype: np.dtype[Any] = np.dtype("<u1" if opts.impact_bits == 8 else "<u2")
        self.qmax = 2**opts.impact_bits - 1

    @staticmethod
    def _path(folder: Path) -> Path:
        return folder / "bmw.sqlite"

    @staticmethod
    def _collect(
        chunks: Iterable[Chunk], tokens: TroveTokens
    ) -> tuple[list[str], I32Array, U32Array, F32Array, U32Array, F64Array]:
        """(vocabulary, term, doc, weighted tf) sorted by term then doc, and each chunk's id
        and length over all columns (FTS5's D). Narrow types and one sort per batch keep a
        million chunks within a couple of GB."""
        vocab: dict[str, int] = {}
        term_parts: list[I32Array] = []
        doc_parts: list[U32Array] = []
        tf_parts: list[F32Array] = []
        terms, docs, weights = array("q"), array("I"), array("d")
        ids, lengths = array("I"), array("d")

        def flush() -> None:
            # Copies (np.array), not views: the arrays are emptied for the next batch.
            key = (np.array(terms, dtype=np.int64) << 32) | np.array(docs, dtype=np.int64)
            unique, inverse = np.unique(key, return_inverse=True)
            tf = np.bincount(inverse, weights=np.array(weights, dtype=np.float64))
            term_parts.append((unique >> 32).astype(np.int32))
            doc_parts.append((unique & 0xFFFFFFFF).astype(np.uint32))
            tf_parts.append(tf.astype(np.float32))  # small integers: exact in float32
            del terms[:], docs[:], weights[:]

        for c in chunks:
            body = [vocab.setdefault(t, len(vocab)) for t in tokens.document(c.body)]
            title = [vocab.setdefault(t, len(vocab)) for t in tokens.title(c.title)]
            terms.extend(body)
            terms.extend(title)
            docs.extend(array("I", [c.id]) * (len(body) + len(title)))
            weights.extend(array("d", [BODY_WEIGHT]) * len(body))
            weights.extend(array("d", [TITLE_WEIGHT]) * len(title))
            ids.append(c.id)
            lengths.append(len(body) + len(title))
            if len(terms) >= POSTING_BATCH:
                flush()
        if terms:
            flush()
        term: I32Array = np.concatenate(term_parts) if term_parts else np.empty(0, np.int32)
        term_parts.clear()
        # Batches come in chunk order, so a stable sort by term keeps each term's docs sorted.
        order = np.argsort(term, kind="stable")
        term = term[order]
        doc: U32Array = np.concatenate(doc_parts)[order] if doc_parts else np.empty(0, np.uint32)
        doc_parts.clear()
        tf: F32Array = np.concatenate(tf_parts)[order] if tf_parts else np.empty(0, np.float32)
        tf_parts.clear()
        return (
            list(vocab),
            term,
            doc,
            tf,
            np.frombuffer(ids, dtype=np.uint32).copy(),
            np.frombuffer(lengths, dtype=np.float64).copy(),
        )

    def _quantise(
        self,
        term: I32Array,
        doc: U32Array,
        tf: F32Array,
        df: F64Array,
        docs_total: float,
        avgdl: float,
        ids: U32Array,
        lengths: F64Array,
        scale: float,
    ) -> npt.NDArray[Any]:
        idf = np.log((docs_total - df + 0.5) / (df + 0.5))
        idf[idf <= 0] = 1e-6  # as fts5_aux.c
        length_by_id = np.zeros(int(ids.max()) + 1 if len(ids) else 1)
        length_by_id[ids] = lengths
        q = np.empty(len(term), dtype=self.dtype)
        for start in range(0, len(term), POSTING_BATCH):  # bounded temporaries
            part = slice(start, start + POSTING_BATCH)
            f = tf[part].astype(np.float64)
            norm = K1 * (1 - B + B * length_by_id[doc[part]] / avgdl)
            impact = idf[term[part]] * f * (K1 + 1) / (f + norm)
            q[part] = np.minimum(np.rint(impact / scale), self.qmax)
        return q

    def _write_segment(
        self,
        conn: apsw.Connection,
        segment: int,
        vocab: list[str],
        term: I32Array,
        doc: U32Array,
        q: npt.NDArray[Any],
    ) -> int:
        if not len(term):
            return 0
        starts = np.flatnonzero(np.r_[True, term[1:] != term[:-1]])
        ends = np.r_[starts[1:], len(term)]
        blocks = (ends - starts + BLOCK - 1) // BLOCK
        first_block = np.r_[0, np.cumsum(blocks)]
        # Where each block starts, for every term at once (a block every BLOCK postings).
        nth = np.arange(first_block[-1]) - np.repeat(first_block[:-1], blocks)
        block_starts = np.repeat(starts, blocks) + nth * BLOCK
        block_max = np.maximum.reduceat(q, block_starts)
        block_last = doc[np.r_[block_starts[1:], len(term)] - 1]
        sql = (
            "INSERT INTO bmw_postings (term, segment, df, max_impact, block_last, block_max, "
            "docids, impacts) VALUES (?,?,?,?,?,?,?,?)"
        )
        rows = []
        for i, (s, e) in enumerate(zip(starts.tolist(), ends.tolist(), strict=True)):
            b0, b1 = int(first_block[i]), int(first_block[i + 1])
            rows.append(
                (
                    vocab[int(term[s])],
                    segment,
                    e - s,
                    int(block_max[b0:b1].max()),
                    block_last[b0:b1].astype("<u4").tobytes(),
                    block_max[b0:b1].astype(self.dtype).tobytes(),
                    doc[s:e].astype("<u4").tobytes(),
                    q[s:e].astype(self.dtype).tobytes(),
                )
            )
            if len(rows) == 10_000:  # not every posting twice in memory (array and bytes)
                conn.executemany(sql, rows)
                rows = []
        conn.executemany(sql, rows)
        return len(starts)

    def build(self, folder: Path, chunks: Iterable[Chunk], tokens: TroveTokens) -> dict[str, Any]:
        vocab, term, doc, tf, ids, lengths = self._collect(chunks, tokens)
        n = len(ids)
        avgdl = float(lengths.mean()) if n else 1.0
        df = np.bincount(term, minlength=len(vocab)).astype(np.float64)
        # The largest impact there can be (df 1, any tf): appends never overflow the scale.
        scale = np.log((n - 0.5) / 1.5) * (K1 + 1) / self.qmax if n > 2 else 1.0
        q = self._quantise(term, doc, tf, df, n, avgdl, ids, lengths, scale)
        del tf
        conn = db.connect(self._path(folder))
        conn.execute(
            "CREATE TABLE bmw_meta (key TEXT PRIMARY KEY, value REAL NOT NULL);"
            # Small bounds first, BLOBs last: reading a row's bounds never walks the postings'
            # overflow pages.
            "CREATE TABLE bmw_postings (id INTEGER PRIMARY KEY, term TEXT NOT NULL, "
            "segment INTEGER NOT NULL, df INTEGER NOT NULL, max_impact INTEGER NOT NULL, "
            "block_last BLOB NOT NULL, block_max BLOB NOT NULL, docids BLOB NOT NULL, "
            "impacts BLOB NOT NULL);"
            "CREATE UNIQUE INDEX bmw_postings_term ON bmw_postings (term, segment);"
        )
        with db.write_transaction(conn):
            rows = self._write_segment(conn, 0, vocab, term, doc, q)
            conn.executemany(
                "INSERT INTO bmw_meta VALUES (?, ?)",
                [
                    ("docs", n),
                    ("avgdl", avgdl),
                    ("scale", scale),
                    ("bits", self.opts.impact_bits),
                    ("segments", 1),
                ],
            )
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.close()
        return {
            "impact_bits": self.opts.impact_bits,
            "block": BLOCK,
            "terms": rows,
            "postings": len(term),
        }

    def append(self, folder: Path, chunks: Sequence[Chunk], tokens: TroveTokens) -> float:
        vocab, term, doc, tf, ids, lengths = self._collect(chunks, tokens)
        position = {t: i for i, t in enumerate(vocab)}
        conn = db.connect(self._path(folder), create=False)
        with db.write_transaction(conn):
            meta = {str(k): float(v) for k, v in conn.execute("SELECT key, value FROM bmw_meta")}
            if int(meta["bits"]) != self.opts.impact_bits:
                raise ValueError("the index was built with other --impact-bits")
            df = np.bincount(term, minlength=len(vocab)).astype(np.float64)
            for start in range(0, len(vocab), 500):
                part = vocab[start : start + 500]
                marks = ",".join("?" * len(part))
                for t, old in conn.execute(
                    f"SELECT term, sum(df) FROM bmw_postings WHERE term IN ({marks}) GROUP BY term",
                    part,
                ):
                    df[position[str(t)]] += float(old)
            docs_total = meta["docs"] + len(ids)
            q = self._quantise(
                term, doc, tf, df, docs_total, meta["avgdl"], ids, lengths, meta["scale"]
            )
            segment = int(meta["segments"])
            self._write_segment(conn, segment, vocab, term, doc, q)
            conn.executemany(
                "UPDATE bmw_meta SET value = ? WHERE key = ?",
                [(docs_total, "docs"), (segment + 1, "segments")],
            )
        committed = time.monotonic()
        conn.close()
        return committed

    def open(self, folder: Path) -> dict[str, Any]:
        self.conn = db.connect(self._path(folder), create=False)
        bits = self.conn.execute("SELECT value FROM bmw_meta WHERE key = 'bits'").fetchone()[0]
        if int(bits) != self.opts.impact_bits:
            raise ValueError("the index was built with other --impact-bits")
        # per search: terms read whole, chunks they hold, chunks left after the bounds
        self.counts: list[tuple[int, int, int]] = []
        return {}

    def _lists(self, terms: Sequence[str]) -> list[_TermList]:
        mult = Counter(terms)
        marks = ",".join("?" * len(mult))
        rows = self.conn.execute(
            "SELECT id, term, df, max_impact, block_last, block_max FROM bmw_postings "
            f"WHERE term IN ({marks}) ORDER BY term, segment",
            list(mult),
        ).fetchall()
        grouped: dict[str, list[tuple[Any, ...]]] = {}
        for row in rows:
            grouped.setdefault(str(row[1]), []).append(row)
        lists = []
        for t, segs in grouped.items():
            top = max(int(r[3]) for r in segs)
            if top == 0:  # adds exactly nothing to any score (a term in most chunks)
                continue
            lists.append(
                _TermList(
                    mult[t],
                    [_Segment(int(r[0]), int(r[2]), len(r[4]) // 4) for r in segs],
                    top,
                    np.frombuffer(b"".join(r[4] for r in segs), dtype="<u4"),
                    np.frombuffer(b"".join(r[5] for r in segs), dtype=self.dtype).astype(np.int64),
                    self.dtype,
                )
            )
        return lists

    def search(self, q: BenchQuery, k: int) -> list[int]:
        if not q.terms:
            return []
        with self.conn:  # one read snapshot: bounds and postings of the same segments
            return self._search(q.terms, k)

    def _search(self, terms: Sequence[str], k: int) -> list[int]:
        lists = sorted(self._lists(terms), key=lambda t: -t.ub)
        cand: U32Array = np.empty(0, dtype=np.uint32)
        part: I64Array = np.empty(0, dtype=np.int64)
        rest = sum(t.ub for t in lists)
        theta = 0
        essential = 0
        # A chunk in none of the lists read so far scores at most `rest`: once that is below
        # the k-th best partial score (a lower bound of the k-th final), it cannot enter.
        while essential < len(lists) and rest >= theta:
            t = lists[essential]
            cand, part = _merge(cand, part, *t.load(self.conn))
            rest -= t.ub
            essential += 1
            theta = _kth(part, k)
        others = lists[essential:]
        gathered = len(cand)
        if others:
            bounds = np.array([t.bound(cand) for t in others])  # a row per term
            keep = part + bounds.sum(axis=0) >= theta
            cand, part, bounds = cand[keep], part[keep], bounds[:, keep]
            for j, t in enumerate(others):
                if not len(cand):
                    break
                part = part + t.exact(self.conn, cand)
                theta = max(theta, _kth(part, k))
                keep = part + bounds[j + 1 :].sum(axis=0) >= theta
                cand, part, bounds = cand[keep], part[keep], bounds[:, keep]
        self.counts.append((essential, gathered, len(cand)))
        return _top(cand, part, k)

    def exhaustive(self, q: BenchQuery, k: int) -> list[int]:
        """Every posting of every term summed: what the pruning must reproduce."""
        with self.conn:
            cand: U32Array = np.empty(0, dtype=np.uint32)
            part: I64Array = np.empty(0, dtype=np.int64)
            for t in self._lists(q.terms):
                cand, part = _merge(cand, part, *t.load(self.conn))
            return _top(cand, part, k)

    def stats(self) -> dict[str, Any]:
        if not self.counts:
            return {}
        essential, gathered, survivors = np.median(np.array(self.counts), axis=0)
        return {
            "terms_read_whole_p50": float(essential),
            "chunks_gathered_p50": float(gathered),
            "chunks_scored_exactly_p50": float(survivors),
        }

    def close(self) -> None:
        self.conn.close()


def _joined_tokens(c: Chunk, tokens: TroveTokens) -> list[str]:
    """Body tokens, then the title's TITLE_REPEAT times: FTS5's weighted tf in one field."""
    return tokens.document(c.body) + tokens.title(c.title) * TITLE_REPEAT


class Tantivy(Candidate):
    name = "tantivy"
    package = "tantivy"

    @staticmethod
    def _schema() -> Any:
        import tantivy

        builder = tantivy.SchemaBuilder()
        builder.add_text_field(
            "text", stored=False, tokenizer_name="whitespace", index_option="freq"
        )
        builder.add_unsigned_field("id", stored=False, indexed=False, fast=True)
        return builder.build()

    @staticmethod
    def _add(writer: Any, chunks: Iterable[Chunk], tokens: TroveTokens) -> None:
        import tantivy

        for c in chunks:
            doc = tantivy.Document()
            doc.add_text("text", " ".join(_joined_tokens(c, tokens)))
            doc.add_unsigned("id", c.id)
            writer.add_document(doc)

    def build(self, folder: Path, chunks: Iterable[Chunk], tokens: TroveTokens) -> dict[str, Any]:
        import tantivy

        index = tantivy.Index(self._schema(), path=str(folder))
        writer = index.writer(heap_size=TANTIVY_HEAP, num_threads=1)
        self._add(writer, chunks, tokens)
        writer.commit()
        writer.wait_merging_threads()
        index.reload()
        return {
            "segments": index.searcher().num_segments,
            "writer_threads": 1,
            "heap_mb": TANTIVY_HEAP // 10**6,
            "index_option": "freq",
            "title_repeated": TITLE_REPEAT,
        }

    def append(self, folder: Path, chunks: Sequence[Chunk], tokens: TroveTokens) -> float:
        import tantivy

        index = tantivy.Index.open(str(folder))
        writer = index.writer(heap_size=50_000_000, num_threads=1)
        self._add(writer, chunks, tokens)
        writer.commit()
        committed = time.monotonic()
        writer.wait_merging_threads()
        return committed

    def open(self, folder: Path) -> dict[str, Any]:
        import tantivy

        self.tantivy = tantivy
        self.index = tantivy.Index.open(str(folder))
        self.schema = self.index.schema
        return {"reload": "tantivy's own policy (on commit, its watcher polls meta.json)"}

    def search(self, q: BenchQuery, k: int) -> list[int]:
        if not q.terms:
            return []
        tv = self.tantivy
        query = tv.Query.boolean_query(
            [
                (tv.Occur.Should, tv.Query.term_query(self.schema, "text", t, index_option="freq"))
                for t in q.terms
            ]
        )
        searcher = self.index.searcher()
        hits = searcher.search(query, k, count=False).hits
        if not hits:
            return []
        return [int(i) for i in searcher.fast_field_values("id", [a for _, a in hits])]

    def close(self) -> None:
        del self.index


class Bm25s(Candidate):
    name = "bm25s"
    package = "bm25s"
    appends = False
    append_note = (
        "not supported: bm25s has no incremental add. index() builds the whole score matrix "
        "from every document's tokens and save() writes it anew, so a new chunk is searchable "
        "only after a full rebuild (build_s) and every reading process loading the new files"
    )

    def build(self, folder: Path, chunks: Iterable[Chunk], tokens: TroveTokens) -> dict[str, Any]:
        import bm25s

        vocab: dict[str, int] = {}
        ids = [[vocab.setdefault(t, len(vocab)) for t in _joined_tokens(c, tokens)] for c in chunks]
        model = bm25s.BM25(k1=K1, b=B, method="robertson")
        model.index((ids, vocab), show_progress=False)
        model.save(str(folder), show_progress=False)
        return {"method": "robertson", "backend": "numpy", "title_repeated": TITLE_REPEAT}

    def append(self, folder: Path, chunks: Sequence[Chunk], tokens: TroveTokens) -> float:
        raise NotImplementedError(self.append_note)

    def open(self, folder: Path) -> dict[str, Any]:
        import bm25s

        self.model = bm25s.BM25.load(str(folder), mmap=True, show_progress=False)
        return {"loaded": "mmap=True"}

    def search(self, q: BenchQuery, k: int) -> list[int]:
        terms = [t for t in q.terms if t in self.model.vocab_dict]
        if not terms:
            return []
        result = self.model.retrieve([terms], k=k, show_progress=False, n_threads=0)
        docs, scores = result.documents[0], result.scores[0]
        # bm25s always fills k places; chunks scoring 0 match no term (FTS5 omits them)
        return [int(d) + 1 for d, s in zip(docs, scores, strict=True) if s > 0]

    def close(self) -> None:
        del self.model


ALL: dict[str, type[Candidate]] = {c.name: c for c in (Fts5, Fts5Pruned, Bmw, Tantivy, Bm25s)}


# -- the corpus and the queries ------------------------------------------------------------


def _need(eval_dir: Path) -> list[Path]:
    return [
        eval_dir / "scifact" / "corpus.jsonl",
        eval_dir / "scifact" / "queries.jsonl",
        eval_dir / "scifact" / "qrels" / "test.tsv",
        eval_dir / "nfcorpus" / "corpus.jsonl",
    ]


def _clean(text: str) -> str:
    return " ".join(text.split())  # no tab or newline survives: the TSV stays one line a chunk


def windows(docs: Iterable[dict[str, str]]) -> list[tuple[str, str]]:
    out = []
    for doc in docs:
        title = _clean(doc.get("title", ""))
        words = f"{title} {doc.get('text', '')}".split()
        for start in range(0, len(words), WINDOW_WORDS):
            part = words[start : start + WINDOW_WORDS]
            if start == 0 or len(part) >= MIN_TAIL_WORDS:
                out.append((title, " ".join(part)))
    return out


def variant(text: str, rng: np.random.Generator) -> str:
    sentences = _SENTENCE_END.split(text)
    if len(sentences) > 1:
        shift = int(rng.integers(1, len(sentences)))
        sentences = sentences[shift:] + sentences[:shift]
    words = " ".join(sentences).split()
    keep = rng.random(len(words)) >= DROPOUT
    if not keep.any():
        keep[0] = True
    return " ".join(w for w, kept in zip(words, keep, strict=True) if kept)


def write_corpus(work: Path, base: list[tuple[str, str]], n: int, rng: np.random.Generator) -> None:
    """chunks.tsv (ids 1..n) and append.tsv (the APPENDED next ids, the last with MARKER)."""
    with (
        (work / "chunks.tsv").open("w", encoding="utf-8") as main,
        (work / "append.tsv").open("w", encoding="utf-8") as extra,
    ):
        for i in range(n + APPENDED):
            title, text = base[i % len(base)]
            body = text if i < len(base) else variant(text, rng)
            if i == n + APPENDED - 1:
                body = f"{body} {MARKER}"
            (main if i < n else extra).write(f"{i + 1}\t{title}\t{body}\n")


def _save_queries(path: Path, queries: list[BenchQuery]) -> None:
    path.write_text(json.dumps([asdict(q) for q in queries]), encoding="utf-8")


def _load_queries(path: Path) -> list[BenchQuery]:
    return [BenchQuery(**q) for q in json.loads(path.read_text(encoding="utf-8"))]


# -- the processes ---------------------------------------------------------------------------


def _command(role: str, name: str, folder: Path, work: Path, opts: Options) -> list[str]:
    return [
        sys.executable,
        __file__,
        "0",
        "--role",
        role,
        "--candidate",
        name,
        "--folder",
        str(folder),
        "--work",
        str(work),
        "--impact-bits",
        str(opts.impact_bits),
        "--df-share",
        str(opts.df_share),
    ]


def role_build(args: argparse.Namespace, opts: Options) -> None:
    candidate = ALL[args.candidate](opts)
    tokens = TroveTokens()
    with PeakRss() as rss:
        t = time.perf_counter()
        info = candidate.build(
            Path(args.folder), read_chunks(Path(args.work) / "chunks.tsv"), tokens
        )
        build_s = time.perf_counter() - t
    print(json.dumps({"build_s": round(build_s, 2), "rss_mb": rss.report(), "info": info}))


def role_append(args: argparse.Namespace, opts: Options) -> None:
    candidate = ALL[args.candidate](opts)
    chunks = list(read_chunks(Path(args.work) / "append.tsv"))
    tokens = TroveTokens()
    started = time.monotonic()
    committed = candidate.append(Path(args.folder), chunks, tokens)
    done = time.monotonic()
    print(json.dumps({"t_start": started, "t_commit": committed, "t_done": done}))


def role_interleave(args: argparse.Namespace, opts: Options) -> None:
    """Every candidate open in this one process, the queries interleaved."""
    work = Path(args.work)
    plan: dict[str, str] = json.loads((work / "plan.json").read_text(encoding="utf-8"))
    queries = _load_queries(work / "queries.json")
    open_: dict[str, Candidate] = {}
    for name, folder in plan.items():
        candidate = ALL[name](opts)
        candidate.open(Path(folder))
        open_[name] = candidate
    for q in queries[:WARMUP]:
        for candidate in open_.values():
            candidate.search(q, K)
    names = list(open_)
    wall: dict[str, list[float]] = {n: [] for n in names}
    cpu: dict[str, list[float]] = {n: [] for n in names}
    hits: dict[str, list[list[int]]] = {n: [] for n in names}
    for i, q in enumerate(queries):
        shift = i % len(names)
        for name in names[shift:] + names[:shift]:
            t, c = time.perf_counter(), time.process_time()
            got = open_[name].search(q, K)
            wall[name].append((time.perf_counter() - t) * 1000)
            cpu[name].append((time.process_time() - c) * 1000)
            hits[name].append(got)
    stats = {n: open_[n].stats() for n in names}
    print(json.dumps({"wall": wall, "cpu": cpu, "hits": hits, "stats": stats}))


def role_worker(args: argparse.Namespace, opts: Options) -> None:
    """A fresh reader: its memory while searching; then it waits for another process's append."""
    work = Path(args.work)
    queries = _load_queries(work / "queries.json")
    marker = _load_queries(work / "marker.json")[0]
    marker_id = int(marker.qid)
    candidate = ALL[args.candidate](opts)
    base = _status()
    t = time.perf_counter()
    info = candidate.open(Path(args.folder))
    open_ms = (time.perf_counter() - t) * 1000
    after_open = _status()
    candidate.search(queries[0], K)
    first_ms = (time.perf_counter() - t) * 1000
    timings = []
    for q in queries:
        t = time.perf_counter()
        candidate.search(q, K)
        timings.append((time.perf_counter() - t) * 1000)
    after_queries = _status()
    print(json.dumps({"ready": True}), flush=True)
    result: dict[str, Any] = {
        "info": info,
        "fresh_open_ms": round(open_ms, 1),
        "fresh_first_query_ms": round(first_ms, 1),
        "sequential_p50_ms": _p(timings, 50),
        "before_append_p50_ms": round(float(np.median(timings[:AFTER_APPEND_QUERIES])), 3),
        "rss_mb": {
            "search_open": _delta(after_open, base),
            "search_after_queries": _delta(after_queries, base),
        },
    }
    if sys.stdin.readline().strip() == "go":
        deadline = time.monotonic() + APPEND_TIMEOUT_S
        found, polls, found_at = False, 0, 0.0
        while time.monotonic() < deadline:
            polls += 1
            if marker_id in candidate.search(marker, K):
                found, found_at = True, time.monotonic()
                break
            time.sleep(POLL_S)
        after: list[float] = []
        for q in queries[:AFTER_APPEND_QUERIES]:
            t = time.perf_counter()
            candidate.search(q, K)
            after.append((time.perf_counter() - t) * 1000)
        result.update(
            found=found,
            t_found=found_at,
            polls=polls,
            next_p50_ms=round(float(np.median(after)), 3),
            rss_after_append=_delta(_status(), base),
        )
    print(json.dumps(result), flush=True)


# -- the run -----------------------------------------------------------------------------------


def _log(message: str) -> None:
    print(f"[fulltext_candidates] {message}", file=sys.stderr, flush=True)


def _last_json(text: str) -> dict[str, Any]:
    lines = [line for line in text.splitlines() if line.startswith("{")]
    if not lines:
        raise RuntimeError("the child printed no result")
    parsed: dict[str, Any] = json.loads(lines[-1])
    return parsed


def _build_all(
    names: list[str], work: Path, opts: Options
) -> tuple[dict[str, Path], dict[str, dict[str, Any]]]:
    folders: dict[str, Path] = {}
    results: dict[str, dict[str, Any]] = {}
    for name in names:
        folder = work / "built" / name
        result: dict[str, Any] = {}
        shares = ALL[name].shares
        try:
            if shares:
                if shares not in folders:
                    raise RuntimeError(f"{shares} was not built")
                shutil.copytree(folders[shares], folder)
                result["build_s"] = results[shares]["build_s"]
                result["build_note"] = f"the same file as {shares} (copied)"
            else:
                folder.mkdir(parents=True)
                _log(f"building {name}")
                done = subprocess.run(
                    _command("build", name, folder, work, opts),
                    stdout=subprocess.PIPE,
                    text=True,
                    check=False,
                )
                if done.returncode:
                    raise RuntimeError(f"build process exit {done.returncode}")
                built = _last_json(done.stdout)
                result.update(build_s=built["build_s"], rss_mb=built["rss_mb"], info=built["info"])
            result["size_bytes"] = _folder_bytes(folder)
            folders[name] = folder
        except Exception as e:  # a candidate that fails is a result too
            result["error"] = f"{type(e).__name__}: {e}"
        results[name] = result
        _log(f"{name}: {json.dumps(result)}")
    return folders, results


def exhaustive_float(path: Path, tokens: TroveTokens, sample: list[BenchQuery]) -> list[list[int]]:
    """FTS5's bm25() in float64 over every chunk of the sample's terms, from the tokens."""
    wanted = {t for q in sample for t in q.terms}
    docs: dict[str, array[int]] = {t: array("I") for t in wanted}
    tfs: dict[str, array[float]] = {t: array("d") for t in wanted}
    ids, lengths = array("I"), array("d")
    for c in read_chunks(path):
        body, title = tokens.document(c.body), tokens.title(c.title)
        ids.append(c.id)
        lengths.append(len(body) + len(title))
        counts: dict[str, float] = {}
        for t in body:
            if t in wanted:
                counts[t] = counts.get(t, 0.0) + BODY_WEIGHT
        for t in title:
            if t in wanted:
                counts[t] = counts.get(t, 0.0) + TITLE_WEIGHT
        for t, f in counts.items():
            docs[t].append(c.id)
            tfs[t].append(f)
    n = len(ids)
    avgdl = sum(lengths) / n
    length_by_id = np.zeros(max(ids) + 1)
    length_by_id[np.frombuffer(ids, dtype=np.uint32)] = np.frombuffer(lengths, dtype=np.float64)
    out = []
    for q in sample:
        scores = np.zeros(len(length_by_id))
        matched = np.zeros(len(length_by_id), dtype=bool)
        for t in q.terms:
            d = np.frombuffer(docs[t], dtype=np.uint32)
            if not len(d):
                continue
            f = np.frombuffer(tfs[t], dtype=np.float64)
            idf = np.log((n - len(d) + 0.5) / (len(d) + 0.5))
            idf = idf if idf > 0 else 1e-6
            scores[d] += idf * f * (K1 + 1) / (f + K1 * (1 - B + B * length_by_id[d] / avgdl))
            matched[d] = True
        found = np.flatnonzero(matched)
        out.append(_top(found, scores[found], K))
    return out


def _identical(a: list[list[int]], b: list[list[int]]) -> float:
    return round(float(np.mean([x == y for x, y in zip(a, b, strict=True)])), 4)


def check_bmw(
    folders: dict[str, Path], work: Path, opts: Options, queries: list[BenchQuery]
) -> dict[str, Any]:
    """bmw against summing all its postings (rank safety) and against float64 BM25."""
    tokens = TroveTokens()
    step = max(1, len(queries) // CHECK_QUERIES)
    sample = queries[::step][:CHECK_QUERIES]
    bmw = Bmw(opts)
    bmw.open(folders["bmw"])
    pruned = [bmw.search(q, K) for q in sample]
    full = [bmw.exhaustive(q, K) for q in sample]
    bmw.close()
    exact = exhaustive_float(work / "chunks.tsv", tokens, sample)
    out: dict[str, Any] = {
        "sample_queries": len(sample),
        "bmw_vs_exhaustive_same_impacts": {
            "identical_top10": _identical(pruned, full),
            "overlap_at_10": _mean_overlap(pruned, full),
        },
        "bmw_vs_exhaustive_float64": {
            "identical_top10": _identical(pruned, exact),
            "overlap_at_10": _mean_overlap(pruned, exact),
        },
    }
    if REFERENCE in folders:
        fts5 = Fts5(opts)
        fts5.open(folders[REFERENCE])
        ref = [fts5.search(q, K) for q in sample]
        fts5.close()
        out["fts5_vs_exhaustive_float64"] = {
            "identical_top10": _identical(ref, exact),
            "overlap_at_10": _mean_overlap(ref, exact),
        }
    return out


def _interleave(folders: dict[str, Path], work: Path, opts: Options) -> dict[str, Any]:
    (work / "plan.json").write_text(json.dumps({n: str(f) for n, f in folders.items()}))
    done = subprocess.run(
        _command("interleave", "", work, work, opts), stdout=subprocess.PIPE, text=True, check=False
    )
    if done.returncode:
        raise RuntimeError(f"the interleaved search process failed (exit {done.returncode})")
    return _last_json(done.stdout)


def _measure(name: str, folder: Path, work: Path, opts: Options) -> dict[str, Any]:
    """A fresh reader's memory and first query; then the append seen from that reader."""
    cls = ALL[name]
    child = subprocess.Popen(
        _command("worker", name, folder, work, opts),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdin is not None and child.stdout is not None
    if not child.stdout.readline():
        return {"error": f"reader died before searching (exit {child.wait()})"}
    writer: dict[str, Any] = {}
    if cls.appends:
        child.stdin.write("go\n")
        child.stdin.flush()
        done = subprocess.run(
            _command("append", name, folder, work, opts),
            stdout=subprocess.PIPE,
            text=True,
            check=False,
        )
        writer = _last_json(done.stdout) if done.returncode == 0 else {"error": done.returncode}
    else:
        child.stdin.write("skip\n")
        child.stdin.flush()
    line = child.stdout.readline()
    code = child.wait(timeout=APPEND_TIMEOUT_S + 60)
    if not line:
        return {"error": f"reader died after the append (exit {code})"}
    m: dict[str, Any] = json.loads(line)
    out: dict[str, Any] = {k: m[k] for k in ("fresh_open_ms", "fresh_first_query_ms")}
    out["sequential_p50_ms"] = m["sequential_p50_ms"]
    out["rss_mb"] = m["rss_mb"]
    out["open_info"] = m["info"]
    if not cls.appends:
        out["append"] = {"supported": False, "why": cls.append_note}
    elif "error" in writer:
        out["append"] = {"error": f"writer exit {writer['error']}"}
    else:
        found = bool(m["found"])
        out["append"] = {
            "chunks": APPENDED,
            "writer_s": round(writer["t_commit"] - writer["t_start"], 3),
            "found": found,
            "visible_after_commit_ms": round((m["t_found"] - writer["t_commit"]) * 1000, 1)
            if found
            else None,
            "visible_after_write_start_ms": round((m["t_found"] - writer["t_start"]) * 1000, 1)
            if found
            else None,
            "reader_polls": m["polls"],
            # the same first AFTER_APPEND_QUERIES queries, before and after the append
            "reader_p50_ms_before": m["before_append_p50_ms"],
            "reader_p50_ms_after": m["next_p50_ms"],
            "rss_after_append_mb": m["rss_after_append"],
        }
    return out


def quality(
    names: list[str], work: Path, opts: Options, eval_dir: Path, tokens: TroveTokens
) -> dict[str, dict[str, Any]]:
    """nDCG@10 on real SciFact, its documents indexed whole, every test query."""
    from tests.bench.retrieval_quality import ndcg_at_k

    docs = load_jsonl(eval_dir / "scifact" / "corpus.jsonl")
    qrels = load_qrels(eval_dir / "scifact" / "qrels" / "test.tsv")
    queries = [
        tokens.query(q["_id"], q["text"])
        for q in load_jsonl(eval_dir / "scifact" / "queries.jsonl")
        if q["_id"] in qrels
    ]
    path = work / "quality.tsv"
    with path.open("w", encoding="utf-8") as fh:
        for i, doc in enumerate(docs, start=1):
            title = _clean(doc.get("title", ""))
            fh.write(f"{i}\t{title}\t{_clean(title + ' ' + doc.get('text', ''))}\n")
    doc_of = {i: doc["_id"] for i, doc in enumerate(docs, start=1)}
    rankings: dict[str, list[list[int]]] = {}
    out: dict[str, dict[str, Any]] = {}
    for name in names:
        cls = ALL[name]
        folder = work / "quality" / name
        try:
            if cls.shares:
                shutil.copytree(work / "quality" / cls.shares, folder)
            else:
                folder.mkdir(parents=True)
                cls(opts).build(folder, read_chunks(path), tokens)
            candidate = cls(opts)
            candidate.open(folder)
            rankings[name] = [candidate.search(q, K) for q in queries]
            candidate.close()
        except Exception as e:
            out[name] = {"error": f"{type(e).__name__}: {e}"}
            continue
        ndcg = [
            ndcg_at_k([doc_of[i] for i in ranked], qrels[q.qid])
            for ranked, q in zip(rankings[name], queries, strict=True)
        ]
        out[name] = {
            "documents": len(docs),
            "queries": len(queries),
            "ndcg@10": round(float(np.mean(ndcg)), 4),
        }
    if REFERENCE in rankings:
        for name, ranked in rankings.items():
            out[name]["overlap_at_10_vs_fts5"] = _mean_overlap(ranked, rankings[REFERENCE])
    return out


def run(args: argparse.Namespace, names: list[str], opts: Options) -> None:
    started = time.perf_counter()
    eval_dir = Path(args.eval_dir)
    missing = [p for p in _need(eval_dir) if not p.is_file()]
    if missing:
        sys.exit(
            f"fulltext_candidates: the BEIR sets are not where expected ({eval_dir}); missing "
            f"{', '.join(str(p) for p in missing)}. Pass --eval-dir DIR, a folder holding "
            "scifact/ and nfcorpus/ in BEIR layout (corpus.jsonl, queries.jsonl, qrels/test.tsv)."
        )
    skipped: dict[str, str] = {}
    for name in list(names):
        package = ALL[name].package
        if package and importlib.util.find_spec(package) is None:
            skipped[name] = f"the package {package!r} is not installed (pip install -e '.[bench]')"
            names.remove(name)
            print(json.dumps({"candidate": name, "skipped": skipped[name]}), flush=True)

    rng = np.random.default_rng(args.seed)
    base = windows(load_jsonl(eval_dir / "scifact" / "corpus.jsonl"))
    base += windows(load_jsonl(eval_dir / "nfcorpus" / "corpus.jsonl"))
    rng.shuffle(base)  # type: ignore[arg-type]
    tokens = TroveTokens()
    qrels = load_qrels(eval_dir / "scifact" / "qrels" / "test.tsv")
    test_queries = [
        q for q in load_jsonl(eval_dir / "scifact" / "queries.jsonl") if q["_id"] in qrels
    ][: args.queries]
    queries = [tokens.query(q["_id"], q["text"]) for q in test_queries]

    with tempfile.TemporaryDirectory(dir=args.workdir, prefix="fulltext-candidates-") as tmp:
        work = Path(tmp)
        t = time.perf_counter()
        write_corpus(work, base, args.n, rng)
        _log(f"{args.n} chunks from {len(base)} windows written in {time.perf_counter() - t:.1f} s")
        _save_queries(work / "queries.json", queries)
        _save_queries(work / "marker.json", [tokens.query(str(args.n + APPENDED), MARKER)])

        folders, results = _build_all(names, work, opts)
        exactness: dict[str, Any] | None = None
        if "bmw" in folders:
            _log("checking bmw against exhaustive scoring")
            exactness = check_bmw(folders, work, opts, queries)
            _log(json.dumps(exactness))
        _log("interleaved queries")
        searched = _interleave(folders, work, opts)
        for name in folders:
            if name != REFERENCE and name in searched["hits"] and REFERENCE in searched["hits"]:
                results[name]["overlap_at_10"] = _mean_overlap(
                    searched["hits"][name], searched["hits"][REFERENCE]
                )
            results[name]["query_ms"] = {
                "p50": _p(searched["wall"][name], 50),
                "p95": _p(searched["wall"][name], 95),
            }
            results[name]["query_cpu_ms"] = {
                "p50": _p(searched["cpu"][name], 50),
                "p95": _p(searched["cpu"][name], 95),
            }
            if searched["stats"][name]:
                results[name]["search_stats"] = searched["stats"][name]
        for name, folder in folders.items():
            _log(f"fresh reader and append: {name}")
            measured = _measure(name, folder, work, opts)
            rss = results[name].setdefault("rss_mb", {})
            rss.update(measured.pop("rss_mb", {}))
            results[name].update(measured)
        if not args.skip_quality:
            _log("quality on SciFact")
            for name, q in quality(list(folders), work, opts, eval_dir, tokens).items():
                results[name]["quality"] = q
        if exactness is not None:
            results["bmw"]["exactness"] = exactness

    for name, result in results.items():
        print(json.dumps({"candidate": name, **result}), flush=True)
    ref = results.get(REFERENCE, {})
    ratios: dict[str, dict[str, float | None]] = {}
    for name, result in results.items():

        def ratio(get: Any, result: dict[str, Any] = result) -> float | None:
            try:
                mine, theirs = float(get(result)), float(get(ref))
            except (KeyError, TypeError):
                return None
            return round(mine / theirs, 3) if theirs else None

        ratios[name] = {
            "query_p50": ratio(lambda r: r["query_ms"]["p50"]),
            "query_p95": ratio(lambda r: r["query_ms"]["p95"]),
            "query_cpu_p50": ratio(lambda r: r["query_cpu_ms"]["p50"]),
            "build_s": ratio(lambda r: r["build_s"]),
            "size_bytes": ratio(lambda r: r["size_bytes"]),
        }
    print(
        json.dumps(
            {
                "bench": "fulltext_candidates",
                "chunks": args.n,
                "base_windows": len(base),
                "queries": len(queries),
                "seed": args.seed,
                "impact_bits": opts.impact_bits,
                "df_share": opts.df_share,
                "reference": REFERENCE,
                "ratios_vs_fts5": ratios,
                "skipped": skipped,
                "elapsed_s": round(time.perf_counter() - started, 1),
                "note": "2 shared cores, other benches concurrent: compare ratios within the "
                "run; RssFile = mapped index pages (shared page cache)",
            }
        ),
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("n", type=int, help="number of chunks")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--workdir", help="folder for the temporary builds (default: the system's)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--candidates", default=",".join(ALL), help="comma-separated candidates")
    parser.add_argument("--skip-quality", action="store_true")
    parser.add_argument("--eval-dir", default=str(EVAL_DIR), help="the BEIR sets' folder")
    parser.add_argument("--impact-bits", type=int, choices=(8, 16), default=16)
    parser.add_argument("--df-share", type=float, default=DF_SHARE)
    parser.add_argument("--role", help=argparse.SUPPRESS)
    parser.add_argument("--candidate", help=argparse.SUPPRESS)
    parser.add_argument("--folder", help=argparse.SUPPRESS)
    parser.add_argument("--work", help=argparse.SUPPRESS)
    args = parser.parse_args()
    opts = Options(args.impact_bits, args.df_share)
    roles = {
        "build": role_build,
        "append": role_append,
        "interleave": role_interleave,
        "worker": role_worker,
    }
    if args.role:
        roles[args.role](args, opts)
        return
    names = [n for n in args.candidates.split(",") if n]
    unknown = [n for n in names if n not in ALL]
    if unknown:
        parser.error(f"unknown candidates {unknown}; known: {', '.join(ALL)}")
    if REFERENCE not in names:
        _log(f"{REFERENCE} is the reference every ratio is against: added")
        names.insert(0, REFERENCE)
    if "fts5-pruned" in names:  # it copies fts5's build, so fts5 builds first
        names.remove(REFERENCE)
        names.insert(0, REFERENCE)
    if args.n < K:
        parser.error(f"N must be at least {K}")
    run(args, names, opts)


if __name__ == "__main__":
    os.environ.setdefault("TQDM_DISABLE", "1")
    main()
