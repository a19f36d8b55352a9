"""The vector tier: sign codes, block storage, incremental refresh, approximate search."""

from __future__ import annotations

from pathlib import Path

import apsw
import numpy as np
import pytest
import sqlite_vec

from app.knowledge.jobs.index_documents import text_hash
from app.knowledge.pipeline.store import vector_blocks, vector_tier
from app.knowledge.pipeline.store.index_store import ChunkRecord, IndexStore
from app.knowledge.pipeline.store.vector_codes import (
    asymmetric,
    bit_weights,
    encode,
    encode_query,
    hamming,
    nearest,
)


def _records(n: int) -> list[ChunkRecord]:
    return [ChunkRecord(i, i + 1, f"t{i}", 1, text_hash(f"t{i}")) for i in range(n)]


def _structured(rng: np.random.Generator, n: int, dims: int) -> np.ndarray:
    """Anisotropic vectors with a shared mean, like real embeddings (not uniform noise)."""
    scale = (np.arange(1, dims + 1) ** -0.5).astype(np.float32)
    x = 0.4 * np.ones(dims, dtype=np.float32) / np.sqrt(dims) + rng.standard_normal(
        (n, dims)
    ).astype(np.float32) * scale / np.linalg.norm(scale)
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)


GAUSSIAN = Path(__file__).resolve().parents[1] / "bench" / "data" / "minilm_scifact_gaussian.npz"


def _embedding_like(rng: np.random.Generator, n: int) -> np.ndarray:
    """384-d vectors drawn from the mean and covariance of real MiniLM embeddings."""
    fitted = np.load(GAUSSIAN)
    x = (
        fitted["mean"].astype(np.float32)
        + rng.standard_normal((n, 384)).astype(np.float32) @ fitted["root"].astype(np.float32).T
    )
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)


def _exact(vectors: dict[int, np.ndarray], q: np.ndarray, k: int) -> list[int]:
    ids = np.array(list(vectors))
    mat = np.stack(list(vectors.values())).astype(np.float64)
    mat /= np.linalg.norm(mat, axis=1, keepdims=True)
    return ids[np.argsort(-(mat @ q.astype(np.float64)))[:k]].tolist()


def test_codes_hamming_and_asymmetric_scores_match_plain_numpy() -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((300, 100)).astype(np.float32)  # 100 dims: a padded last word
    q = rng.standard_normal(100).astype(np.float32)
    codes = encode(x)
    assert codes.shape == (300, 16)
    columns = np.ascontiguousarray(codes.view(np.uint64).T)
    out = np.empty(300, dtype=np.uint16)
    hamming(columns, encode_query(q), out)
    assert out.tolist() == ((x > 0) != (q > 0)).sum(axis=1).tolist()
    assert np.allclose(asymmetric(codes, bit_weights(q)), (x > 0).astype(np.float32) @ q, atol=1e-4)


def test_nearest_keeps_the_smallest_and_caps_ties() -> None:
    d = np.array([5, 1, 3, 1, 9, 3, 3, 0], dtype=np.uint16)
    assert sorted(nearest(d, 3).tolist()) == [1, 3, 7]
    picked = nearest(d, 4)
    assert len(picked) == 4 and {1, 3, 7} <= set(picked.tolist())
    assert len(nearest(np.zeros(10_000, dtype=np.uint16), 50)) == 50  # degenerate codes


def test_large_base_search_is_approximate_but_finds_the_true_neighbours(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(vector_tier, "EXACT_LIMIT", 100)  # the code path of a large base
    monkeypatch.setattr(vector_tier, "MIN_COARSE_POOL", 500)
    monkeypatch.setattr(vector_tier, "MIN_RESCORE_POOL", 100)
    monkeypatch.setattr(vector_tier, "RESCORE_PER_RESULT", 10)
    rng = np.random.default_rng(1)
    store = IndexStore(tmp_path / "i.sqlite")
    store.ensure_vectors(384)
    vectors: dict[int, np.ndarray] = {}
    for n in range(50):
        vecs = _embedding_like(rng, 100)
        ids = store.rebuild_material(f"i{n}", f"{n}.md", "t", 100, _records(100), vecs)
        vectors.update(zip(ids, vecs, strict=True))
    recalls = []
    stored = list(vectors.values())
    for _ in range(30):  # a query near a stored vector, as a question near its answer
        q = stored[int(rng.integers(len(stored)))] + _embedding_like(rng, 1)[0]
        got = [cid for cid, _ in store.vector_search(q, 10)]
        recalls.append(len(set(got) & set(_exact(vectors, q, 10))) / 10)
    assert np.mean(recalls) >= 0.9
    assert store.vector_memory_bytes() < 5000 * 384  # codes, not floats (1,536 B each)
    # A stored vector is its own nearest neighbour, with its exact cosine.
    cid, vec = next(iter(vectors.items()))
    top = store.vector_search(vec, 5)[0]
    assert top[0] == cid and top[1] == pytest.approx(1.0, abs=1e-5)


def test_another_process_writes_are_read_block_by_block(tmp_path: Path) -> None:
    rng = np.random.default_rng(2)
    writer = IndexStore(tmp_path / "i.sqlite")
    writer.ensure_vectors(16)
    vectors: dict[int, np.ndarray] = {}
    for n in range(30):  # 3,000 vectors: three blocks
        vecs = _structured(rng, 100, 16)
        vectors.update(
            zip(
                writer.rebuild_material(f"i{n}", f"{n}.md", "t", 100, _records(100), vecs),
                vecs,
                strict=True,
            )
        )
    reader = IndexStore(tmp_path / "i.sqlite", create=False)  # another process's handle
    q = _structured(rng, 1, 16)[0]
    assert [c for c, _ in reader.vector_search(q, 10)] == _exact(vectors, q, 10)
    assert reader.vector_stats.full_loads == 1

    new = _structured(rng, 1, 16)
    (new_id,) = writer.rebuild_material("late", "late.md", "t", 1, _records(1), new)
    vectors[new_id] = new[0]
    assert reader.vector_search(new[0], 1)[0][0] == new_id  # seen by the very next search
    assert reader.vector_stats.full_loads == 1 and reader.vector_stats.refreshes == 1
    assert reader.vector_stats.blocks_read == 3 + 1  # only the tail block again

    for n in range(0, 30, 2):  # deletes rewrite blocks; sparse ones fold into the tail
        for chunk in writer.item_chunks(f"i{n}"):
            vectors.pop(chunk.id)
        writer.delete_material(f"i{n}")
    assert writer.vector_block_problems() == []
    assert [c for c, _ in reader.vector_search(q, 10)] == _exact(vectors, q, 10)
    assert reader.vector_stats.full_loads == 1
    assert len(reader._tier or []) == len(vectors)


def test_random_writes_keep_blocks_consistent_and_search_exact(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    store = IndexStore(tmp_path / "i.sqlite")
    store.ensure_vectors(8)
    other = IndexStore(tmp_path / "i.sqlite", create=False)
    vectors: dict[int, np.ndarray] = {}
    items: dict[str, list[int]] = {}
    for step in range(120):
        if items and rng.random() < 0.4:
            victim = list(items)[int(rng.integers(len(items)))]
            for cid in items.pop(victim):
                vectors.pop(cid)
            store.delete_material(victim)
        else:
            n = int(rng.integers(1, 400))
            vecs = _structured(rng, n, 8)
            name = f"s{step}"
            if items and rng.random() < 0.3:  # reindex an existing item
                name = next(iter(items))
                for cid in items.pop(name):
                    vectors.pop(cid)
            ids = store.rebuild_material(name, f"{name}.md", "t", n, _records(n), vecs)
            items[name] = ids
            vectors.update(zip(ids, vecs, strict=True))
        if step % 10 == 0 and vectors:
            q = _structured(rng, 1, 8)[0]
            assert [c for c, _ in other.vector_search(q, 5)] == _exact(vectors, q, 5)
    assert store.vector_block_problems() == []
    assert store.vector_count() == len(vectors)
    assert other.vector_stats.full_loads == 1


def test_rebuild_restores_codes_damaged_behind_the_stores_back(tmp_path: Path) -> None:
    rng = np.random.default_rng(4)
    store = IndexStore(tmp_path / "i.sqlite")
    store.ensure_vectors(8)
    vecs = _structured(rng, 50, 8)
    ids = store.rebuild_material("a", "a.md", "t", 50, _records(50), vecs)
    conn = apsw.Connection(str(tmp_path / "i.sqlite"))
    with conn:
        conn.execute("DELETE FROM vector_blocks")
    conn.close()
    assert store.vector_block_problems() == ["50 vector(s) have no code in any block"]
    assert store.rebuild_vector_blocks() == 50
    assert store.vector_block_problems() == []
    assert store.vector_search(vecs[7], 1)[0][0] == ids[7]


def test_a_sqlite_vec_index_of_an_older_trove_is_migrated(tmp_path: Path) -> None:
    """Schema 1 kept vectors in a vec0 table; opening migrates them to rows + codes."""
    path = tmp_path / "i.sqlite"
    fresh = IndexStore(path)
    fresh.close()
    rng = np.random.default_rng(5)
    vecs = _structured(rng, 30, 8)
    conn = apsw.Connection(str(path))
    conn.enable_load_extension(True)
    conn.load_extension(sqlite_vec.loadable_path())
    with conn:
        conn.execute("DROP TABLE IF EXISTS vector_blocks")
        conn.execute("DROP TABLE IF EXISTS vectors")
        # What schema 3 added (full-text passages) goes too: this file is schema 1.
        conn.execute("DROP TABLE fts_units")
        conn.execute(
            "CREATE VIRTUAL TABLE vectors USING vec0(embedding float[8] distance_metric=cosine)"
        )
        conn.execute("INSERT INTO meta VALUES ('dimensions', '8')")
        conn.executemany(
            "INSERT INTO vectors (rowid, embedding) VALUES (?, ?)",
            ((i + 1, v.tobytes()) for i, v in enumerate(vecs)),
        )
        conn.execute("PRAGMA user_version=1")
    conn.close()

    store = IndexStore(path)
    assert store.vector_count() == 30 and store.vector_block_problems() == []
    assert store.vector_search(vecs[3], 1)[0][0] == 4
    check = apsw.Connection(str(path))
    tables = {r[0] for r in check.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert "vectors_v1_rows" not in tables and "vector_blocks" in tables
    assert not any(name.startswith("vectors_") and name != "vectors_block" for name in tables)
    check.close()


def test_block_rows_bound_a_tail_rewrite(tmp_path: Path) -> None:
    store = IndexStore(tmp_path / "i.sqlite")
    store.ensure_vectors(8)
    rng = np.random.default_rng(6)
    n = vector_blocks.BLOCK_ROWS + 10
    store.rebuild_material("a", "a.md", "t", n, _records(n), _structured(rng, n, 8))
    conn = store._reader()
    sizes = [int(r[0]) for r in conn.execute("SELECT length(ids) / 8 FROM vector_blocks")]
    assert sorted(sizes) == [10, vector_blocks.BLOCK_ROWS]
