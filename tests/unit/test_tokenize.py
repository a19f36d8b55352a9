"""Full-text tokens for European and CJK text; user syntax never reaches FTS5."""

from __future__ import annotations

from pathlib import Path

import apsw
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.knowledge.pipeline.indexing.tokenize import (
    FTS_TOKENIZER,
    fts_match_expression,
    index_text,
    query_tokens,
)
from app.knowledge.pipeline.store.index_store import IndexStore


def test_latin_text_is_left_to_fts5() -> None:
    assert index_text("Running CAFÉS naïve") == "Running CAFÉS naïve"
    assert query_tokens("Running CAFÉS").terms == ["running", "cafés"]


def test_cjk_runs_become_bigrams_and_run_end() -> None:
    assert index_text("知识库").split() == ["知识", "识库", "库"]
    assert index_text("東京タワー").split() == ["東京", "京タ", "タワ", "ワー", "ー"]
    assert index_text("한국어 문장").split() == ["한국", "국어", "어", "문장", "장"]
    assert index_text("GPT模型v2").split() == ["GPT", "模型", "型", "v2"]
    assert query_tokens("知识").terms == ["知识"]
    assert query_tokens("库").prefix == ["库"]


def test_fullwidth_letters_match_ascii() -> None:
    assert index_text("ＧＰＴ４") == "GPT4"


def _fts(*docs: str) -> apsw.Connection:
    conn = apsw.Connection(":memory:")
    conn.execute(f"CREATE VIRTUAL TABLE t USING fts5(body, tokenize='{FTS_TOKENIZER}')")
    for doc in docs:
        conn.execute("INSERT INTO t VALUES (?)", (index_text(doc),))
    return conn


def _hits(conn: apsw.Connection, query: str) -> list[int]:
    expr = fts_match_expression(query_tokens(query))
    return [
        r[0] for r in conn.execute("SELECT rowid FROM t WHERE t MATCH ? ORDER BY rowid", (expr,))
    ]


def test_matching_rules() -> None:
    conn = _fts(
        "The runners were running fast.",
        "我们的知识库很大，包含很多文档。",
        "Ein Café in München",
        "東京タワーに行きました",
    )
    assert _hits(conn, "run") == [1]  # Porter stemming
    assert _hits(conn, "知识") == [2]  # a two-character word inside a sentence
    assert _hits(conn, "库") == [2]  # a single character at the end of a word
    assert _hits(conn, "很") == [2]
    assert _hits(conn, "cafe MUNCHEN") == [3]  # case and diacritics folded
    assert _hits(conn, "タワー") == [4]


def test_store_uses_the_same_tokenizer(tmp_path: Path) -> None:
    store = IndexStore(tmp_path / "i.sqlite")
    sql = (
        store._reader()
        .execute("SELECT sql FROM sqlite_master WHERE name = 'chunks_fts'")
        .fetchone()[0]
    )
    assert f"tokenize='{FTS_TOKENIZER}'" in sql


@given(st.text(max_size=60))
@settings(max_examples=300, deadline=None)
def test_any_query_is_a_valid_fts_expression(text: str) -> None:
    tokens = query_tokens(text)
    if not tokens:
        return
    conn = _fts("hello world 知识库 🙂")
    list(conn.execute("SELECT rowid FROM t WHERE t MATCH ?", (fts_match_expression(tokens),)))


@pytest.mark.parametrize(
    "text", ['"', "*", "NEAR(", ")", "-", "", " ", "🙂", "AND", "OR NOT", "a:b"]
)
def test_syntax_characters_are_not_tokens(text: str) -> None:
    tokens = query_tokens(text)
    assert all(t.isalnum() for t in tokens.all())
