"""Fusion decides from what a model is declared to cover, not from a guess at its name: the
person's override, then an installed model's manifest, then the table of known models,
else unknown (and an unknown model's vectors count)."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.knowledge import db
from app.knowledge.catalog import Catalog
from app.knowledge.catalog import migrations as catalog_migrations
from app.knowledge.fusion import cjk_languages, fusion_weights
from app.knowledge.service import KnowledgeService
from app.knowledge.types import ErrorCode, LanguageSource, ModelLanguages, TroveError
from app.providers.model_info import declared_languages, table_languages
from app.providers.model_store.manifest import MODELS_DIR, ModelKind, ModelManifest, save_manifest

CHINESE = "知识库是什么"
BOTH = (1.0, 1.0)
BM25_ONLY = (1.0, 0.0)

# Multilingual models the old name patterns classed English-only, so their vectors were
# thrown away for every Chinese, Japanese or Korean query.
MISCLASSIFIED = [
    "openai:intfloat/multilingual-e5-small",
    "ollama:jeffh/intfloat-multilingual-e5-large",
    "siliconflow:Snowflake/snowflake-arctic-embed-m-v2.0",
    "ollama:nomic-embed-text-v2-moe",
]
ENGLISH_ONLY = [
    "local:all-MiniLM-L6-v2",
    "ollama:all-minilm:latest",
    "openai:sentence-transformers/all-mpnet-base-v2",
    "siliconflow:BAAI/bge-small-en-v1.5",
    "openai:intfloat/e5-base-v2",
    "ollama:nomic-embed-text:latest",
    "openai:nomic-ai/nomic-embed-text-v1.5",
    "ollama:mxbai-embed-large",
    "ollama:snowflake-arctic-embed:335m",
    "openai:Snowflake/snowflake-arctic-embed-m-v1.5",
    "openai:thenlper/gte-base",
]
MULTILINGUAL = [
    "openai:text-embedding-3-small",
    "siliconflow:BAAI/bge-m3",
    "ollama:paraphrase-multilingual",
    "openai:Snowflake/snowflake-arctic-embed-l-v2.0",
    "ollama:snowflake-arctic-embed2",
    "jina:jina-embeddings-v3",
    "ollama:qwen3-embedding:0.6b",
]


@pytest.mark.parametrize("model", MISCLASSIFIED)
def test_the_misclassified_multilingual_models_keep_their_vectors(model: str) -> None:
    assert table_languages(model) == ("multilingual",)
    assert fusion_weights(CHINESE, model) == BOTH


@pytest.mark.parametrize("model", ENGLISH_ONLY)
def test_english_only_models_rank_cjk_queries_by_full_text(model: str) -> None:
    assert table_languages(model) == ("en",)
    assert fusion_weights(CHINESE, model) == BM25_ONLY
    assert fusion_weights("what is a knowledge base", model) == BOTH


@pytest.mark.parametrize("model", MULTILINGUAL)
def test_known_multilingual_models(model: str) -> None:
    assert table_languages(model) == ("multilingual",)
    assert fusion_weights(CHINESE, model) == BOTH


def test_chinese_models_cover_chinese_not_korean() -> None:
    model = "siliconflow:BAAI/bge-large-zh-v1.5"
    assert table_languages(model) == ("zh", "en")
    assert fusion_weights(CHINESE, model) == BOTH
    assert fusion_weights("지식 베이스란 무엇인가", model) == BM25_ONLY


@pytest.mark.parametrize("model", ["openai:house-model-7", "ollama:llama-embed", None])
def test_an_unknown_model_keeps_both_lists(model: str | None) -> None:
    assert table_languages(model) is None
    assert declared_languages(model) == ModelLanguages(None, LanguageSource.UNKNOWN)
    assert fusion_weights(CHINESE, model) == BOTH


def test_declared_languages_decide_over_the_table() -> None:
    minilm = "local:all-MiniLM-L6-v2"
    override = declared_languages(minilm, override=("multilingual",), installed=("en",))
    assert override == ModelLanguages(("multilingual",), LanguageSource.OVERRIDE)
    assert fusion_weights(CHINESE, minilm, override) == BOTH
    # ... and the other way: a model the table calls multilingual, said to be English-only.
    m3 = "siliconflow:BAAI/bge-m3"
    english = declared_languages(m3, override=("en",))
    assert fusion_weights(CHINESE, m3, english) == BM25_ONLY
    installed = declared_languages("local:house-model", installed=("zh", "en"))
    assert installed == ModelLanguages(("zh", "en"), LanguageSource.INSTALLED)
    assert fusion_weights(CHINESE, "local:house-model", installed) == BOTH
    assert declared_languages(minilm) == ModelLanguages(("en",), LanguageSource.TABLE)


def test_which_languages_a_cjk_query_can_be_in() -> None:
    assert cjk_languages("knowledge base") == frozenset()
    assert cjk_languages(CHINESE) == {"zh", "ja"}  # Han alone: Chinese, or Japanese kanji
    assert cjk_languages("東京へ行く") == {"ja"}
    assert cjk_languages("한국어 검색") == {"ko"}
    japanese = ModelLanguages(("ja",), LanguageSource.INSTALLED)
    assert fusion_weights("東京へ行く", "local:m", japanese) == BOTH
    assert fusion_weights("한국어 검색", "local:m", japanese) == BM25_ONLY
    assert fusion_weights(CHINESE, "local:m", japanese) == BOTH


# -- the engine's view: override in the catalog, installed manifests, the table -----------------


def _install_manifest(home: Path, model_id: str, languages: tuple[str, ...]) -> None:
    folder = home / MODELS_DIR / model_id
    folder.mkdir(parents=True)
    save_manifest(
        folder,
        ModelManifest(
            id=model_id,
            kind=ModelKind.EMBEDDING,
            name=model_id,
            license="MIT",
            languages=languages,
            max_tokens=512,
            dimensions=8,
        ),
    )


def test_the_service_resolves_and_stores_a_models_languages(svc: KnowledgeService) -> None:
    home = svc.layout.home
    _install_manifest(home, "house-e5", ("multilingual",))
    assert svc.model_languages("local:house-e5") == ModelLanguages(
        ("multilingual",), LanguageSource.INSTALLED
    )
    assert svc.model_languages("local:all-MiniLM-L6-v2").source is LanguageSource.TABLE
    assert svc.model_languages("acme:house-model").source is LanguageSource.UNKNOWN
    # An installed-looking name under another provider is not an installed model.
    assert svc.model_languages("acme:house-e5").source is LanguageSource.UNKNOWN

    assert svc.set_model_languages("acme:house-model", [" ZH", "ja", "zh"]) == ModelLanguages(
        ("zh", "ja"), LanguageSource.OVERRIDE
    )
    assert svc.model_languages("acme:house-model").languages == ("zh", "ja")
    svc.set_model_languages("acme:house-model", [])
    assert svc.model_languages("acme:house-model").source is LanguageSource.UNKNOWN

    for bad_id, bad_codes in (("no-provider", ["en"]), ("acme:m", ["english"]), ("acme:m", ["z1"])):
        with pytest.raises(TroveError) as info:
            svc.set_model_languages(bad_id, bad_codes)
        assert info.value.code is ErrorCode.INVALID_ARGUMENT
    assert svc.model_languages("acme:m").source is LanguageSource.UNKNOWN


def test_a_hand_edited_override_row_is_ignored(tmp_path: Path) -> None:
    catalog = Catalog(tmp_path / "trove.sqlite")
    try:
        catalog.set_model_language_override("acme:m", ["en"])
        assert catalog.model_language_override("acme:m") == ("en",)
        catalog._exec("UPDATE model_languages SET languages = 'not json'")
        assert catalog.model_language_override("acme:m") is None
        catalog._exec("UPDATE model_languages SET languages = '{\"en\": 1}'")
        assert catalog.model_language_override("acme:m") is None
    finally:
        catalog.close()


def test_an_older_catalog_gains_the_override_table(tmp_path: Path) -> None:
    path = tmp_path / "trove.sqlite"
    conn = db.connect(path, create=True)
    db.migrate(conn, catalog_migrations.MIGRATIONS[:5], "catalog")
    conn.close()
    catalog = Catalog(path)
    try:
        assert db.schema_version(catalog._conn) == len(catalog_migrations.MIGRATIONS)
        catalog.set_model_language_override("acme:m", ["multilingual"])
        assert catalog.model_language_override("acme:m") == ("multilingual",)
    finally:
        catalog.close()
