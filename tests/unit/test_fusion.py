"""Fusion weights come from signals Trove has: the query's script and the model's languages."""

from __future__ import annotations

import pytest

from app.knowledge.fusion import fusion_weights, rrf
from app.providers.model_info import table_languages


@pytest.mark.parametrize(
    ("model", "english"),
    [
        ("local:all-MiniLM-L6-v2", True),
        ("ollama:nomic-embed-text:latest", True),
        ("siliconflow:BAAI/bge-small-en-v1.5", True),
        ("openai:text-embedding-3-small", False),
        ("siliconflow:BAAI/bge-m3", False),
        ("ollama:paraphrase-multilingual", False),
        (None, False),
    ],
)
def test_known_english_only_models(model: str | None, english: bool) -> None:
    assert (table_languages(model) == ("en",)) is english


def test_cjk_query_with_english_model_ranks_by_bm25() -> None:
    assert fusion_weights("知识库是什么", "local:all-MiniLM-L6-v2") == (1.0, 0.0)
    assert fusion_weights("what is a knowledge base", "local:all-MiniLM-L6-v2") == (1.0, 1.0)
    assert fusion_weights("知识库是什么", "openai:text-embedding-3-small") == (1.0, 1.0)


def test_weighted_rrf() -> None:
    fused = rrf([["A", "B"], ["B", "C"]], weights=[1.0, 0.5])
    assert [k for k, _ in fused] == ["B", "A", "C"]
    assert fused[0][1] == pytest.approx(1 / 62 + 0.5 / 61)
    with pytest.raises(ValueError):
        rrf([["A"]], weights=[1.0, 2.0])


def test_rrf_with_given_ranks_lets_keys_share_one() -> None:
    # A1 and A2 are the chunks of one full-text passage ranked first; B's passage second.
    fused = dict(rrf([["A1", "A2", "B"], ["A2", "B"]], ranks=[[1, 1, 2], None]))
    assert fused["A1"] == pytest.approx(1 / 61)
    assert fused["A2"] == pytest.approx(1 / 61 + 1 / 61)
    assert fused["B"] == pytest.approx(1 / 62 + 1 / 62)
    with pytest.raises(ValueError):
        rrf([["A"]], ranks=[None, None])
