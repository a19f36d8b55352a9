"""The per-base index: materials, chunks, FTS, vectors and the in-memory vector mirror."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pytest

from app.knowledge.jobs.index_documents import text_hash
from app.knowledge.pipeline.indexing.tokenize import fts_match_expression, query_tokens
from app.knowledge.pipeline.store.index_store import (
    ChunkRecord,
    DimensionMismatchError,
    IndexStore,
    build_fresh,
    index_path,
    swap_in,
)
from app.knowledge.pipeline.store.registry import StoreRegistry
from app.knowledge.service import KnowledgeService
from tests.conftest import write_files


def _records(*texts: str) -> list[ChunkRecord]:
    out, pos = [], 0
    for t in texts:
        out.append(ChunkRecord(pos, pos + len(t), t, len(t.split()), text_hash(t)))
        pos += len(t) + 1
    return out


def _match(store: IndexStore, text: str) -> list[int]:
    return [cid for cid, _ in store.bm25_search(fts_match_expression(query_tokens(text)), 50)]


def _unit(rng: np.random.Generator, n: int, d: int) -> np.ndarray:
    x = rng.standard_normal((n, d)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def test_rebuild_replaces_and_delete_removes(tmp_path: Path) -> None:
    store = IndexStore(tmp_path / "i.sqlite")
    store.ensure_vectors(4)
    rng = np.random.default_rng(1)
    first = store.rebuild_material(
        "item1", "a.md", "A", 20, _records("alpha beta", "gamma"), _unit(rng, 2, 4)
    )
    assert _match(store, "alpha") == [first[0]]
    second = store.rebuild_material("item1", "a.md", "A", 20, _records("delta"), _unit(rng, 1, 4))
    assert _match(store, "alpha") == [] and _match(store, "delta") == second
    assert (store.material_count(), store.chunk_count(), store.vector_count()) == (1, 1, 1)
    assert store.delete_material("item1") == 1
    assert (store.material_count(), store.chunk_count(), store.vector_count()) == (0, 0, 0)
    assert _match(store, "delta") == []
    assert store.integrity_check() == []


def test_dimension_is_fixed_per_base(tmp_path: Path) -> None:
    store = IndexStore(tmp_path / "i.sqlite")
    store.ensure_vectors(4)
    store.ensure_vectors(4)
    with pytest.raises(DimensionMismatchError):
        store.ensure_vectors(8)
    with pytest.raises(DimensionMismatchError):
        store.rebuild_material("i", "a", "A", 1, _records("x"), np.ones((1, 8), dtype=np.float32))
    assert store.material_count() == 0  # the failed write left nothing behind


def test_vector_mirror_matches_exact_search_across_writes(tmp_path: Path) -> None:
    rng = np.random.default_rng(7)
    store = IndexStore(tmp_path / "i.sqlite")
    store.ensure_vectors(8)
    vectors: dict[int, np.ndarray] = {}
    for n in range(30):
        vecs = _unit(rng, 3, 8)
        ids = store.rebuild_material(f"item{n}", f"{n}.md", "t", 3, _records("a", "b", "c"), vecs)
        vectors.update(zip(ids, vecs, strict=True))
        if n == 5:
            store.vector_search(vecs[0], 5)  # load the mirror early so later writes update it
    for n in range(0, 30, 3):
        for cid in [c.id for c in store.item_chunks(f"item{n}")]:
            vectors.pop(cid)
        store.delete_material(f"item{n}")
    q = _unit(rng, 1, 8)[0]
    ids = np.array(list(vectors))
    mat = np.stack(list(vectors.values()))
    exact = ids[np.argsort(-(mat @ q))][:10].tolist()
    assert [cid for cid, _ in store.vector_search(q, 10)] == exact
    # A second connection (another process) sees the same thing after reloading.
    other = IndexStore(store.path, create=False)
    assert [cid for cid, _ in other.vector_search(q, 10)] == exact
    # A write from "another process" is noticed by the first store's mirror.
    new_ids = other.rebuild_material("late", "late.md", "t", 1, _records("z"), q.reshape(1, 8))
    assert store.vector_search(q, 1)[0][0] == new_ids[0]


def test_vectors_reused_by_text_hash(tmp_path: Path) -> None:
    store = IndexStore(tmp_path / "i.sqlite")
    store.ensure_vectors(4)
    vec = np.array([[1, 0, 0, 0]], dtype=np.float32)
    store.rebuild_material("i", "a", "A", 5, _records("hello"), vec)
    found = store.vectors_for_hashes([text_hash("hello"), text_hash("other")])
    assert list(found) == [text_hash("hello")]
    assert np.allclose(found[text_hash("hello")], vec[0])


def test_cleanup_open_never_creates_an_index(tmp_path: Path) -> None:
    registry = StoreRegistry(lambda base_id: tmp_path / base_id)
    assert registry.get_if_exists("b1") is None
    assert not index_path(tmp_path / "b1").exists()
    with pytest.raises(FileNotFoundError):
        registry.get("b1")  # a deleted base's folder is never brought back
    assert not (tmp_path / "b1").exists()
    (tmp_path / "b1").mkdir()
    store = registry.get("b1")
    assert registry.get("b1") is store and registry.get_if_exists("b1") is store  # one instance
    registry.close_all()


def test_empty_index_under_completed_items_is_logged(
    service: KnowledgeService, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    base = service.create_base("kb")
    service.add(base.id, [write_files(tmp_path / "d", {"a.md": "some words here"}) / "a.md"])
    service.run_pending_jobs(base.id)
    service.parts.stores.close(base.id)
    index_path(service.layout.base_dir(base.id)).unlink()
    for suffix in ("-wal", "-shm"):
        Path(str(index_path(service.layout.base_dir(base.id))) + suffix).unlink(missing_ok=True)
    service._checked_stores.clear()
    with caplog.at_level(logging.ERROR):
        assert service.search(base.id, "words").results == []
    assert any("no materials" in r.getMessage() for r in caplog.records)
    assert not index_path(service.layout.base_dir(base.id)).exists()


def test_open_stores_follow_a_fresh_file_swapped_in_by_restore(tmp_path: Path) -> None:
    """Another handle (the window, another process) keeps working after a restore swaps a
    fresh file in: its reads see the new file, its writes land in it, and its in-memory
    vector mirror of the old file is not reused."""
    path = tmp_path / "i.sqlite"
    rng = np.random.default_rng(3)
    other = IndexStore(path)
    other.ensure_vectors(4)
    other.rebuild_material("old", "o.md", "O", 9, _records("oldword"), _unit(rng, 1, 4))
    assert other.vector_search(_unit(rng, 1, 4)[0], 5)  # the mirror is loaded
    assert _match(other, "oldword")

    swap_in(build_fresh(path, 4), path)
    assert not [p for p in tmp_path.iterdir() if ".fresh-" in p.name]

    assert _match(other, "oldword") == [] and other.material_count() == 0
    assert other.vector_search(_unit(rng, 1, 4)[0], 5) == []
    written = other.rebuild_material("new", "n.md", "N", 9, _records("newword"), _unit(rng, 1, 4))
    reader = IndexStore(path, create=False)
    assert _match(reader, "newword") == written
    assert reader.item_ids() == ["new"] and reader.integrity_check() == []
    other.close()
    reader.close()
