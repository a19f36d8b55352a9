"""Full-text tokens for European and CJK text; user syntax never reaches FTS5."""

from __future__ import annotations

import apsw
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.knowledge.pipeline.indexing.tokenize import (
    fts_match_expression,
    index_tokens,
    query_tokens,
)


def test_latin_folding_and_stemming() -> None:
    assert index_tokens("Running CAFÉS naïve") == ["run", "cafe", "naiv"]
    assert query_tokens("runs").terms == ["run"]


def test_cjk_bigrams_and_run_end() -> None:
    assert index_tokens("知识库") == ["知识", "识库", "库"]
    assert query_tokens("知识").terms == ["知识"]
    assert query_tokens("库").prefix == ["库"]
    assert index_tokens("東京タワー") == ["東京", "京タ", "タワ", "ワー", "ー"]
    assert index_tokens("한국어 문장") == ["한국", "국어", "어", "문장", "장"]


def test_mixed_scripts_split_cleanly() -> None:
    assert index_tokens("GPT模型v2") == ["gpt", "模型", "型", "v2"]


def _fts() -> apsw.Connection:
    conn = apsw.Connection(":memory:")
    conn.execute(
        "CREATE VIRTUAL TABLE t USING fts5(body, tokenize='unicode61 remove_diacritics 0')"
    )
    conn.execute("INSERT INTO t VALUES (?)", (" ".join(index_tokens("hello world 知识库 🙂")),))
    return conn


@given(st.text(max_size=60))
@settings(max_examples=300, deadline=None)
def test_any_query_is_a_valid_fts_expression(text: str) -> None:
    tokens = query_tokens(text)
    if not tokens:
        return
    conn = _fts()
    list(conn.execute("SELECT rowid FROM t WHERE t MATCH ?", (fts_match_expression(tokens),)))


@pytest.mark.parametrize("text", ['"', "*", "NEAR(", ")", "-", "", " ", "🙂", "AND", "OR NOT"])
def test_syntax_characters_are_not_tokens(text: str) -> None:
    tokens = query_tokens(text)
    assert all(t.isalnum() for t in tokens.all())
