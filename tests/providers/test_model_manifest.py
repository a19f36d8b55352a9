"""A local model folder's manifest: round trip, validation, newer formats refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.providers.interfaces import INVALID_ARGUMENT, MODEL_NOT_AVAILABLE, ProviderError
from app.providers.model_store.manifest import (
    FORMAT,
    MANIFEST_FILE,
    ModelKind,
    ModelManifest,
    Pooling,
    load_manifest,
    model_folder,
    save_manifest,
)

E5 = ModelManifest(
    id="multilingual-e5-small",
    kind=ModelKind.EMBEDDING,
    name="multilingual-e5-small (int8)",
    license="MIT",
    languages=("multilingual",),
    max_tokens=512,
    dimensions=384,
    query_prefix="query: ",
    passage_prefix="passage: ",
    source="hub:Xenova/multilingual-e5-small@main",
)


def test_a_manifest_round_trips(tmp_path: Path) -> None:
    save_manifest(tmp_path, E5)
    assert json.loads((tmp_path / MANIFEST_FILE).read_text())["format"] == FORMAT
    assert load_manifest(tmp_path) == E5
    assert E5.covers("zh") and E5.covers("en")
    english = ModelManifest.from_json({**E5.to_json(), "languages": ["en"]})
    assert english.covers("en") and not english.covers("zh")
    assert english.pooling is Pooling.MEAN


@pytest.mark.parametrize(
    ("change", "says"),
    [
        ({"format": FORMAT + 1}, "update Trove"),
        ({"id": "../escape"}, "model id"),
        ({"model_file": "../model.onnx"}, "plain name"),
        ({"kind": "chat"}, "chat"),
        ({"pooling": "max"}, "max"),
        ({"languages": []}, "languages"),
        ({"max_tokens": 0}, "max_tokens"),
        ({"dimensions": None}, "dimensions"),
    ],
)
def test_a_bad_manifest_says_what_is_wrong(change: dict[str, object], says: str) -> None:
    with pytest.raises(ProviderError) as info:
        ModelManifest.from_json({**E5.to_json(), **change})
    assert info.value.code == INVALID_ARGUMENT and says in info.value.message


def test_a_folder_without_a_manifest_is_not_a_model(tmp_path: Path) -> None:
    with pytest.raises(ProviderError) as info:
        load_manifest(tmp_path)
    assert info.value.code == MODEL_NOT_AVAILABLE
    with pytest.raises(ProviderError):
        model_folder(tmp_path, "Bad Id")
    assert model_folder(tmp_path, "bge-small-zh-v1.5") == tmp_path / "models" / "bge-small-zh-v1.5"
