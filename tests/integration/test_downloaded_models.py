"""Issue 16's whole path: models downloaded from a hub (a loopback one serving the hub's URL
layout, redirects and checksums) are then used to index, search and rerank with a threshold.

The catalog is swapped for two entries describing the tiny real ONNX models of
tests/tiny_models.py (the real catalog's files are hundreds of megabytes on
huggingface.co, which tests never reach); everything else is the product's own path:
`KnowledgeService.download_model` -> `models/<id>/` -> `local:<id>` in a base.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from app.knowledge.jobs.reader_pool import InlineExtraction
from app.knowledge.service import KnowledgeService
from app.knowledge.types import ItemStatus, ScoreKind, SearchMode
from app.providers.model_store import catalog
from app.providers.model_store.catalog import CatalogEntry, HubFile
from tests.conftest import write_files
from tests.providers.fake_hub import FakeHub
from tests.tiny_models import write_embedding_model, write_rerank_model

DOCS = {
    "tomatoes.md": "# Tomatoes\n\nTomatoes need sun and water every day.",
    "bread.md": "# Bread\n\nA sourdough starter needs flour, water and patience.",
    "orchard.md": "# Orchard\n\nAn apple tree gives fruit in the orchard: harvest in autumn.",
}


def _entry(manifest_dir: Path, repo: str) -> CatalogEntry:
    """A catalog entry for a tiny model folder, as the real entries describe hub models."""
    from app.providers.model_store.manifest import load_manifest

    m = load_manifest(manifest_dir)
    return CatalogEntry(
        id=m.id,
        kind=m.kind,
        name=m.name,
        license=m.license,
        languages=m.languages,
        max_tokens=m.max_tokens,
        approx_bytes=sum(p.stat().st_size for p in manifest_dir.iterdir()),
        repo=repo,
        revision="main",
        model_file=HubFile("onnx/model_quantized.onnx", "model.onnx"),
        tokenizer_file=HubFile("tokenizer.json", "tokenizer.json"),
        dimensions=m.dimensions,
        pooling=m.pooling,
        query_prefix=m.query_prefix,
        passage_prefix=m.passage_prefix,
    )


@pytest.fixture
def hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeHub]:
    made = tmp_path / "made"
    embed = write_embedding_model(
        made / "tiny-embed", query_prefix="query: ", passage_prefix="passage: "
    )
    rerank = write_rerank_model(made / "tiny-rerank")
    entries = (
        _entry(made / embed.id, "test-org/tiny-embed-onnx"),
        _entry(made / rerank.id, "test-org/tiny-rerank-onnx"),
    )
    monkeypatch.setattr(catalog, "CATALOG", entries)
    import app.knowledge.model_manager as manager

    monkeypatch.setattr(manager, "CATALOG", entries)
    monkeypatch.setattr(
        manager, "catalog_entry", lambda i: next((e for e in entries if e.id == i), None)
    )
    with FakeHub() as server:
        for entry in entries:
            folder = made / entry.id
            server.publish(
                entry.repo,
                {
                    "onnx/model_quantized.onnx": (folder / "model.onnx").read_bytes(),
                    "tokenizer.json": (folder / "tokenizer.json").read_bytes(),
                },
            )
        yield server


@pytest.fixture
def svc(tmp_path: Path) -> Iterator[KnowledgeService]:
    service = KnowledgeService(tmp_path / "home", extraction=InlineExtraction())
    yield service
    service.close()


def test_downloaded_models_index_search_and_rerank_with_a_threshold(
    svc: KnowledgeService, hub: FakeHub, tmp_path: Path
) -> None:
    svc.set_model_mirror(hub.endpoint)
    seen: list[tuple[int, int]] = []
    for model_id in ("tiny-embed", "tiny-rerank"):
        done = svc.download_model(f"local:{model_id}", progress=lambda d, t: seen.append((d, t)))
        assert not done.already_installed
    assert seen and seen[-1][0] == seen[-1][1] > 0  # progress reached the whole size
    listed = {m.id: m for m in svc.list_models()}
    assert listed["tiny-embed"].state == "installed" and listed["tiny-rerank"].state == "installed"

    base = svc.create_base(
        "garden",
        embedding_model="local:tiny-embed",
        rerank_model="local:tiny-rerank",
        threshold=0.5,
    )
    svc.add(base.id, [write_files(tmp_path / "docs", DOCS)])
    svc.run_pending_jobs(base.id)
    assert {i.status for i in svc.list_items(base.id)} == {ItemStatus.COMPLETED}

    response = svc.search(base.id, "tomatoes need sun water")
    assert response.mode is SearchMode.HYBRID and response.reranked and not response.degraded
    # The reranker scores Tomatoes far above the threshold and the rest below it.
    assert [r.title for r in response.results] == ["Tomatoes"]
    assert response.results[0].score_kind is ScoreKind.RELEVANCE
    assert response.results[0].score > 0.9

    svc.update_base(base.id, threshold=None)
    everything = svc.search(base.id, "tomatoes need sun water")
    assert len(everything.results) == len(DOCS)
    assert np.all(np.diff([r.score for r in everything.results]) <= 0)

    with pytest.raises(Exception, match="garden"):
        svc.remove_model("tiny-embed")  # a base uses it
