"""The per-base index: materials, chunks, FTS, vectors and the in-memory vector mirror."""

from __future__ import annotations

import logging
from pathlib import Path

import apsw
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.knowledge.jobs.index_documents import text_hash
from app.knowledge.pipeline.indexing.chunker import chunk_text, chunk_with
from app.knowledge.pipeline.indexing.token_count import ChunkSizing
from app.knowledge.pipeline.indexing.tokenize import fts_match_expression, query_tokens
from app.knowledge.pipeline.store.index_store import (
    ChunkRecord,
    DimensionMismatchError,
    IndexStore,
    UnitRecord,
    build_fresh,
    index_path,
    passage_ranges,
    swap_in,
)
from app.knowledge.pipeline.store.registry import StoreRegistry
from app.knowledge.service import KnowledgeService
from tests.conftest import write_files
from tests.postgres.server import Backend


def _records(*texts: str) -> list[ChunkRecord]:
    out, pos = [], 0
    for t in texts:
        out.append(ChunkRecord(pos, pos + len(t), t, len(t.split()), text_hash(t)))
        pos += len(t) + 1
    return out


def _match(store: IndexStore, text: str) -> list[int]:
    return [h.chunk_id for h in store.bm25_search(fts_match_expression(query_tokens(text)), 50)]


def _unit(rng: np.random.Generator, n: int, d: int) -> np.ndarray:
    x = rng.standard_normal((n, d)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def test_rebuild_replaces_and_delete_removes(index_backend: Backend) -> None:
    store = index_backend.open()
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


def test_dimension_is_fixed_per_base(index_backend: Backend) -> None:
    store = index_backend.open()
    store.ensure_vectors(4)
    store.ensure_vectors(4)
    with pytest.raises(DimensionMismatchError):
        store.ensure_vectors(8)
    with pytest.raises(DimensionMismatchError):
        store.rebuild_material("i", "a", "A", 1, _records("x"), np.ones((1, 8), dtype=np.float32))
    assert store.material_count() == 0  # the failed write left nothing behind


def test_vector_mirror_matches_exact_search_across_writes(index_backend: Backend) -> None:
    rng = np.random.default_rng(7)
    store = index_backend.open()
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
    other = index_backend.open(create=False)
    assert [cid for cid, _ in other.vector_search(q, 10)] == exact
    # A write from "another process" is noticed by the first store's mirror.
    new_ids = other.rebuild_material("late", "late.md", "t", 1, _records("z"), q.reshape(1, 8))
    assert store.vector_search(q, 1)[0][0] == new_ids[0]


def test_vectors_reused_by_text_hash(index_backend: Backend) -> None:
    store = index_backend.open()
    store.ensure_vectors(4)
    vec = np.array([[1, 0, 0, 0]], dtype=np.float32)
    store.rebuild_material("i", "a", "A", 5, _records("hello"), vec)
    found = store.vectors_for_hashes([text_hash("hello"), text_hash("other")])
    assert list(found) == [text_hash("hello")]
    assert np.allclose(found[text_hash("hello")], vec[0])


def test_vectors_come_after_the_chunks(index_backend: Backend) -> None:
    """The vector stage's calls: chunks written with only the vectors known by their text,
    the rest listed as pending, added later (twice is harmless), progress per item."""
    store = index_backend.open()
    store.ensure_vectors(4)
    known = {text_hash("beta"): np.array([0, 1, 0, 0], dtype=np.float32)}
    ids = store.rebuild_material(
        "i", "a.md", "Title A", 30, _records("alpha", "beta", "gamma"), known_vectors=known
    )
    assert len(ids) == 3 and store.vector_count() == 1
    assert _match(store, "gamma") == [ids[2]]  # searchable by full text already
    pending = store.pending_vectors(0, 10)
    assert [(p.chunk_id, p.item_id, p.text, p.title) for p in pending] == [
        (ids[0], "i", "alpha", "Title A"),
        (ids[2], "i", "gamma", "Title A"),
    ]
    assert [p.chunk_id for p in store.pending_vectors(ids[0], 10)] == [ids[2]]
    assert store.vector_progress(["i", "missing"]) == {"i": (1, 3)}
    rng = np.random.default_rng(3)
    assert store.add_vectors([ids[0]], _unit(rng, 1, 4)) == 1
    # One already has its vector, one was deleted meanwhile: only the third is stored.
    assert store.add_vectors([ids[0], ids[2], 999_999], _unit(rng, 3, 4)) == 1
    assert store.pending_vectors(0, 10) == []
    assert store.vector_progress(["i"]) == {"i": (3, 3)}
    assert [cid for cid, _ in store.vector_search(_unit(rng, 1, 4)[0], 3)] != []
    assert store.integrity_check() == []
    with pytest.raises(DimensionMismatchError):
        store.add_vectors([ids[0]], np.ones((1, 8), dtype=np.float32))


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


# -- full-text passages -------------------------------------------------------------------

WORDS = [
    "tide",
    "moon",
    "ocean",
    "pull",
    "shore",
    "wave",
    "salt",
    "reef",
    "keeper",
    "lamp",
    "storm",
    "glass",
]


def _prose(words: int, special: str = "") -> str:
    body = " ".join(WORDS[i % len(WORDS)] for i in range(words))
    return f"{body} {special}".strip()


def _two_chunks_one_passage(store: IndexStore) -> tuple[list[int], str]:
    first = _prose(40)
    second = _prose(40, "lighthousekeeper")
    text = f"{first}\n\n{second}"
    records = [
        ChunkRecord(0, len(first), first, 40, text_hash(first)),
        ChunkRecord(len(first) + 2, len(text), second, 41, text_hash(second)),
    ]
    ids = store.rebuild_material(
        "item1", "a.md", "Tides", len(text), records, units=[UnitRecord(0, len(text), text, 0, 1)]
    )
    return ids, text


def test_a_passage_ranks_every_chunk_in_it(index_backend: Backend) -> None:
    store = index_backend.open()
    ids, _ = _two_chunks_one_passage(store)
    other = store.rebuild_material(
        "item2", "b.md", "Other", 30, _records("lighthousekeeper alone", "nothing else here")
    )
    hits = store.bm25_search(fts_match_expression(query_tokens("lighthousekeeper")), 10)
    by_chunk = {h.chunk_id: h for h in hits}
    # The word is in the second chunk only; the first shares its passage's score and rank.
    assert set(by_chunk) == {*ids, other[0]}
    assert by_chunk[ids[0]].rank == by_chunk[ids[1]].rank
    assert by_chunk[ids[0]].score == by_chunk[ids[1]].score
    assert [h.chunk_id for h in hits if h.rank == by_chunk[ids[0]].rank] == ids  # text order
    assert store.integrity_snapshot().unit_ids == set(store.integrity_snapshot().fts_rowids)
    assert store.delete_material("item1") == 2
    assert _match(store, "lighthousekeeper") == [other[0]]
    snapshot = store.integrity_snapshot()
    assert snapshot.unit_ids == snapshot.fts_rowids and snapshot.unitless_chunks == 0


def test_rebuild_fts_puts_passages_back_from_their_chunks(index_backend: Backend) -> None:
    store = index_backend.open()
    ids, _ = _two_chunks_one_passage(store)
    query = fts_match_expression(query_tokens("lighthousekeeper tide"))
    before = store.bm25_search(query, 10)
    full_text = "chunks_fts" if index_backend.name == "sqlite" else "postings"
    # The full-text rows gone, and the first chunk in no passage.
    index_backend.execute(f"DELETE FROM {full_text}", "UPDATE fts_units SET first_seq = 1")
    damaged = store.integrity_snapshot()
    assert damaged.unitless_chunks == 1 and damaged.fts_rowids == set()
    assert store.rebuild_fts() == 2  # the passage, and the first chunk's own
    # Both chunks are found again; the first, now its own passage, ranks on its own words.
    after = store.bm25_search(query, 10)
    assert {h.chunk_id for h in after} == {h.chunk_id for h in before} == set(ids)
    assert [h.rank for h in after] == [1, 2]
    snapshot = store.integrity_snapshot()
    assert snapshot.unit_ids == snapshot.fts_rowids and snapshot.unitless_chunks == 0


def test_an_index_of_schema_2_gets_a_passage_per_chunk(tmp_path: Path) -> None:
    path = tmp_path / "i.sqlite"
    store = IndexStore(path)
    ids = store.rebuild_material("item1", "a.md", "A", 20, _records("alpha beta", "gamma"))
    store.close()
    conn = apsw.Connection(str(path))
    with conn:  # back to schema 2: full-text rows keyed by chunk id, no passages
        conn.execute("DELETE FROM chunks_fts")
        for chunk_id, text in conn.execute("SELECT id, text FROM chunks").fetchall():
            conn.execute(
                "INSERT INTO chunks_fts (rowid, body, title) VALUES (?,?,?)", (chunk_id, text, "a")
            )
        conn.execute("DROP TABLE fts_units")
        conn.execute("PRAGMA user_version=2")
    conn.close()
    store = IndexStore(path)
    assert _match(store, "gamma") == [ids[1]] and _match(store, "alpha") == [ids[0]]
    snapshot = store.integrity_snapshot()
    assert snapshot.unit_ids == snapshot.fts_rowids == set(ids)


@settings(max_examples=200, deadline=None)
@given(
    paragraphs=st.lists(st.integers(1, 120), min_size=1, max_size=12),
    limit=st.integers(8, 60),
    size=st.integers(20, 200),
)
def test_every_chunk_is_in_a_passage_and_every_passage_names_one(
    paragraphs: list[int], limit: int, size: int
) -> None:
    text = "\n\n".join(_prose(n, f"p{i}") for i, n in enumerate(paragraphs))
    chunks = chunk_with(text, ChunkSizing(size, size // 8, limit))
    passages = chunk_text(text, size, size // 8)
    ranges = passage_ranges(
        [(c.start, c.end) for c in chunks], [(p.start, p.end) for p in passages]
    )
    assert len(ranges) == len(passages)
    named: set[int] = set()
    for (first, last), passage in zip(ranges, passages, strict=True):
        assert 0 <= first <= last < len(chunks)
        named.update(range(first, last + 1))
        for i, chunk in enumerate(chunks):
            if passage.start <= chunk.start and chunk.end <= passage.end:
                assert first <= i <= last  # a chunk wholly inside is always named
    assert named == set(range(len(chunks)))
