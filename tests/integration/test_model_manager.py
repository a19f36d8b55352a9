"""The model manager through KnowledgeService: listing, downloads through the stored mirror,
imports from a folder, and removals refused while a base uses the model."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.knowledge.jobs.reader_pool import InlineExtraction
from app.knowledge.service import (
    KnowledgeService,
    ModelDownloadCancelled,
    ModelListing,
    ModelState,
)
from app.knowledge.types import ErrorCode, TroveError
from app.providers.model_store import install
from app.providers.model_store.catalog import catalog_entry
from app.providers.model_store.manifest import (
    FORMAT,
    MANIFEST_FILE,
    ModelKind,
    ModelManifest,
    load_manifest,
    save_manifest,
)
from tests.fakes import FakeEmbedder, FakeReranker
from tests.providers.fake_hub import COMMIT, FakeHub, onnx_bytes, tokenizer_bytes

E5 = catalog_entry("multilingual-e5-small")
JINA = catalog_entry("jina-reranker-v2-base-multilingual")
assert E5 is not None and JINA is not None
ONNX = onnx_bytes(800_000)
TOKENIZER = tokenizer_bytes()


class AnyModels:
    """A resolver that answers any model id, so bases can name `local:` models whose
    runtime is not part of this test."""

    def embedder(self, model_id: str) -> FakeEmbedder:
        return FakeEmbedder(model_id, dims=384)

    def reranker(self, model_id: str) -> FakeReranker:
        return FakeReranker(model_id)


@pytest.fixture(autouse=True)
def _no_hub_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("TROVE_HF_ENDPOINT", "HF_ENDPOINT"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def hub() -> Iterator[FakeHub]:
    with FakeHub() as server:
        for entry in (E5, JINA):
            server.publish(
                entry.repo, {entry.model_file.path: ONNX, entry.tokenizer_file.path: TOKENIZER}
            )
        yield server


def open_service(home: Path) -> KnowledgeService:
    return KnowledgeService(home, models=AnyModels(), extraction=InlineExtraction())


@pytest.fixture
def svc(home: Path) -> Iterator[KnowledgeService]:
    service = open_service(home)
    yield service
    service.close()


def listing(svc: KnowledgeService, model_id: str) -> ModelListing:
    return next(m for m in svc.list_models() if m.id == model_id)


def model_folder(home: Path, model_id: str) -> Path:
    return home / "models" / model_id


def make_folder(root: Path, model_id: str = "my-model", dims: int = 256, **files: bytes) -> Path:
    """A model folder as a person copies it onto an air-gapped machine."""
    root.mkdir(parents=True, exist_ok=True)
    manifest = ModelManifest(
        id=model_id,
        kind=ModelKind.EMBEDDING,
        name="My model",
        license="MIT",
        languages=("de", "en"),
        max_tokens=512,
        dimensions=dims,
    )
    save_manifest(root, manifest)
    given = {name.replace("_", "."): data for name, data in files.items()}  # model_onnx=...
    for name, data in ({"model.onnx": ONNX, "tokenizer.json": TOKENIZER} | given).items():
        (root / name).write_bytes(data)
    return root


# -- listing ---------------------------------------------------------------------------------


def test_the_list_shows_the_builtin_model_then_the_catalog(svc: KnowledgeService) -> None:
    models = svc.list_models()
    builtin = models[0]
    assert builtin.state is ModelState.BUILT_IN
    assert builtin.model_id == "local:all-MiniLM-L6-v2" and builtin.dimensions == 384
    catalog = models[1:]
    assert [m.id for m in catalog] == [
        "multilingual-e5-small",
        "bge-m3",
        "bge-small-zh-v1.5",
        "bge-reranker-v2-m3",
        "jina-reranker-v2-base-multilingual",
    ]
    assert {m.state for m in catalog} == {ModelState.AVAILABLE}
    assert all(m.in_catalog and m.approx_bytes and m.size_on_disk is None for m in catalog)
    by_id = {m.id: m for m in catalog}
    assert by_id["jina-reranker-v2-base-multilingual"].non_commercial
    assert not by_id["bge-reranker-v2-m3"].non_commercial
    assert by_id["bge-small-zh-v1.5"].languages == ("zh", "en")
    assert by_id["bge-m3"].dimensions == 1024 and by_id["bge-m3"].max_tokens == 8192
    assert any("MTEB" in q.benchmark for q in by_id["multilingual-e5-small"].quality)
    assert by_id["multilingual-e5-small"].model_id == "local:multilingual-e5-small"


def test_leftover_staging_folders_go_when_models_are_listed(
    svc: KnowledgeService, home: Path
) -> None:
    stale = home / "models" / ".staging-bge-m3-0123abcd"
    stale.mkdir(parents=True)
    (stale / "model.onnx").write_bytes(b"half")
    svc.list_models()
    assert not stale.exists()


# -- downloading -------------------------------------------------------------------------------


def test_a_download_goes_through_the_stored_mirror(home: Path, hub: FakeHub) -> None:
    svc = open_service(home)
    assert svc.model_mirror().url == "https://huggingface.co"
    chosen = svc.set_model_mirror(hub.endpoint + "/")
    assert (chosen.url, chosen.origin, chosen.stored) == (hub.endpoint, "setting", hub.endpoint)
    svc.close()

    svc = open_service(home)  # the mirror is kept in the catalog
    assert svc.model_mirror().url == hub.endpoint
    seen: list[tuple[int, int]] = []
    result = svc.download_model(
        "local:multilingual-e5-small", progress=lambda done, total: seen.append((done, total))
    )
    assert result.endpoint == hub.endpoint and not result.already_installed
    assert result.verified == ("model.onnx", "tokenizer.json")
    model = result.model
    assert model.state is ModelState.INSTALLED and model.source == f"hub:{E5.repo}@{COMMIT}"
    on_disk = sum(p.stat().st_size for p in model_folder(home, E5.id).iterdir())
    assert model.size_on_disk == on_disk and seen[-1] == (len(ONNX) + len(TOKENIZER),) * 2
    assert hub.server.hits(hub.resolve_path(E5.repo, E5.model_file.path)) == 1

    again = svc.download_model("multilingual-e5-small")
    assert again.already_installed and again.fetched_bytes == 0
    assert hub.server.hits(hub.resolve_path(E5.repo, E5.model_file.path)) == 1
    forced = svc.download_model("multilingual-e5-small", force=True)
    assert forced.fetched_bytes == len(ONNX) + len(TOKENIZER)

    assert svc.set_model_mirror(None).url == "https://huggingface.co"
    with pytest.raises(TroveError) as info:
        svc.set_model_mirror("hf-mirror.com")
    assert info.value.code is ErrorCode.INVALID_ARGUMENT
    svc.close()


def test_the_environment_overrides_the_stored_mirror(
    svc: KnowledgeService, hub: FakeHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    svc.set_model_mirror("http://127.0.0.1:9")  # nothing there
    monkeypatch.setenv("TROVE_HF_ENDPOINT", hub.endpoint)
    endpoint = svc.model_mirror()
    assert (endpoint.origin, endpoint.stored) == ("env:TROVE_HF_ENDPOINT", "http://127.0.0.1:9")
    assert svc.download_model(E5.id).model.state is ModelState.INSTALLED


def test_an_unknown_or_builtin_model_is_not_downloaded(svc: KnowledgeService) -> None:
    with pytest.raises(TroveError) as info:
        svc.download_model("e5-gigantic")
    assert info.value.code is ErrorCode.MODEL_NOT_AVAILABLE
    assert "multilingual-e5-small" in info.value.message and "import" in info.value.message
    with pytest.raises(TroveError) as builtin:
        svc.download_model("local:all-MiniLM-L6-v2")
    assert (
        builtin.value.code is ErrorCode.INVALID_ARGUMENT and "built into" in builtin.value.message
    )


def test_a_failed_download_is_a_trove_error_with_its_reason(
    svc: KnowledgeService, hub: FakeHub
) -> None:
    hub.corrupt(E5.repo, E5.model_file.path)
    with pytest.raises(TroveError) as info:
        svc.download_model(E5.id, mirror=hub.endpoint)
    assert info.value.code is ErrorCode.FETCH_FAILED
    assert info.value.params["reason"] == "checksum_mismatch"
    assert listing(svc, E5.id).state is ModelState.AVAILABLE


def test_a_cancelled_download_is_listed_as_resumable_and_can_be_discarded(
    svc: KnowledgeService, hub: FakeHub, home: Path
) -> None:
    got = [0]

    def progress(done: int, total: int) -> None:
        got[0] = done

    with pytest.raises(ModelDownloadCancelled) as info:
        svc.download_model(
            E5.id, mirror=hub.endpoint, progress=progress, cancel=lambda: got[0] > 100_000
        )
    kept = info.value.kept_bytes
    assert kept > 100_000
    model = listing(svc, E5.id)
    assert model.state is ModelState.AVAILABLE and model.partial_bytes == kept

    svc.remove_model(E5.id)  # discards the partial download
    assert listing(svc, E5.id).partial_bytes == 0
    assert not (home / "models" / ".partial" / E5.id).exists()


def test_a_full_disk_is_a_storage_error(
    svc: KnowledgeService, hub: FakeHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(install, "free_bytes", lambda path: 1_000)
    with pytest.raises(TroveError) as info:
        svc.download_model(E5.id, mirror=hub.endpoint)
    assert info.value.code is ErrorCode.STORAGE_FULL and "free some space" in info.value.message
    assert info.value.params["reason"] == "disk_full"


# -- removing ----------------------------------------------------------------------------------


def test_a_model_a_base_uses_cannot_be_removed(
    svc: KnowledgeService, hub: FakeHub, home: Path
) -> None:
    svc.download_model(E5.id, mirror=hub.endpoint)
    svc.download_model(JINA.id, mirror=hub.endpoint)
    notes = svc.create_base(
        "Notes", embedding_model=f"local:{E5.id}", rerank_model=f"local:{JINA.id}"
    )
    papers = svc.create_base("论文", embedding_model=f"local:{E5.id}")
    assert listing(svc, E5.id).used_by == ("Notes", "论文")
    assert listing(svc, JINA.id).used_by == ("Notes",)

    with pytest.raises(TroveError) as info:
        svc.remove_model(f"local:{E5.id}")
    error = info.value
    assert error.code is ErrorCode.INVALID_ARGUMENT
    assert error.params["reason"] == "model_in_use" and error.params["bases"] == "Notes, 论文"
    assert "'Notes'" in error.message and "'论文'" in error.message
    assert listing(svc, E5.id).state is ModelState.INSTALLED

    svc.delete_base(papers.id)
    svc.delete_base(notes.id)
    svc.remove_model(E5.id)
    assert listing(svc, E5.id).state is ModelState.AVAILABLE
    assert not model_folder(home, E5.id).exists()
    with pytest.raises(TroveError) as gone:
        svc.remove_model(E5.id)
    assert gone.value.code is ErrorCode.MODEL_NOT_AVAILABLE
    with pytest.raises(TroveError) as builtin:
        svc.remove_model("all-MiniLM-L6-v2")
    assert builtin.value.code is ErrorCode.INVALID_ARGUMENT


# -- importing ---------------------------------------------------------------------------------


def test_a_folder_is_imported(svc: KnowledgeService, tmp_path: Path, home: Path) -> None:
    source = make_folder(tmp_path / "usb" / "my-model")
    result = svc.import_model(source)
    assert not result.replaced
    model = result.model
    assert (model.state, model.in_catalog, model.source) == (ModelState.INSTALLED, False, "import")
    assert (model.model_id, model.dimensions, model.languages) == (
        "local:my-model",
        256,
        ("de", "en"),
    )
    assert svc.list_models()[-1].id == "my-model"  # after the catalog's
    folder = model_folder(home, "my-model")
    assert (folder / "model.onnx").read_bytes() == ONNX
    files = load_manifest(folder).extra["files"]
    assert set(files) == {"model.onnx", "tokenizer.json"}
    assert (source / "model.onnx").is_file()  # copied, not moved
    assert svc.import_model(source).replaced


def test_a_downloaded_model_carried_to_another_machine_is_checked(
    tmp_path: Path, hub: FakeHub
) -> None:
    connected = open_service(tmp_path / "connected")
    connected.download_model(E5.id, mirror=hub.endpoint)
    connected.close()
    stick = tmp_path / "stick" / E5.id
    shutil.copytree(model_folder(tmp_path / "connected", E5.id), stick)

    offline = open_service(tmp_path / "offline")
    model = offline.import_model(stick).model
    assert model.state is ModelState.INSTALLED and model.source == f"hub:{E5.repo}@{COMMIT}"
    offline.close()

    damaged = bytearray((stick / "model.onnx").read_bytes())
    damaged[-1] ^= 0xFF
    (stick / "model.onnx").write_bytes(bytes(damaged))
    other = open_service(tmp_path / "other")
    with pytest.raises(TroveError) as info:
        other.import_model(stick)
    assert info.value.code is ErrorCode.INVALID_ARGUMENT
    assert info.value.params["reason"] == "checksum_mismatch"
    assert listing(other, E5.id).state is ModelState.AVAILABLE
    assert [p.name for p in (tmp_path / "other" / "models").iterdir() if p.name != ".locks"] == []
    other.close()


BAD_FOLDERS = {
    "not a folder": (lambda root: root / "nothing-here", "is not a folder"),
    "no manifest": (
        lambda root: _without(make_folder(root), MANIFEST_FILE),
        "has no trove-model.json",
    ),
    "manifest not JSON": (
        lambda root: _write(make_folder(root), MANIFEST_FILE, b"{not json"),
        "cannot be read",
    ),
    "manifest of a newer Trove": (
        lambda root: _write(
            make_folder(root),
            MANIFEST_FILE,
            json.dumps({**_manifest_json(root), "format": FORMAT + 1}).encode(),
        ),
        "update Trove",
    ),
    "tokenizer missing": (
        lambda root: _without(make_folder(root), "tokenizer.json"),
        "lacks tokenizer.json",
    ),
    "empty model": (lambda root: make_folder(root, model_onnx=b""), "it is empty"),
    "an HTML page as the model": (
        lambda root: make_folder(root, model_onnx=b"<html>Sign in</html>"),
        "does not start like an ONNX model",
    ),
    "a Git LFS pointer as the model": (
        lambda root: make_folder(root, model_onnx=b"version https://git-lfs.github.com/spec/v1\n"),
        "Git LFS pointer",
    ),
    "tokenizer not JSON": (
        lambda root: make_folder(root, tokenizer_json=b"\x00\x01binary"),
        "not a tokenizer.json",
    ),
}


def _without(folder: Path, name: str) -> Path:
    (folder / name).unlink()
    return folder


def _write(folder: Path, name: str, data: bytes) -> Path:
    (folder / name).write_bytes(data)
    return folder


def _manifest_json(root: Path) -> dict[str, object]:
    data = json.loads((root / MANIFEST_FILE).read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


@pytest.mark.parametrize("case", sorted(BAD_FOLDERS))
def test_a_bad_folder_is_refused_saying_what_is_wrong(
    svc: KnowledgeService, tmp_path: Path, home: Path, case: str
) -> None:
    build, says = BAD_FOLDERS[case]
    folder = build(tmp_path / "usb" / "my-model")
    with pytest.raises(TroveError) as info:
        svc.import_model(folder)
    assert info.value.code is ErrorCode.INVALID_ARGUMENT
    assert says in info.value.message
    assert not model_folder(home, "my-model").exists()
    assert "my-model" not in [m.id for m in svc.list_models()]


def test_a_used_model_is_not_replaced_by_a_different_one(
    svc: KnowledgeService, tmp_path: Path
) -> None:
    svc.import_model(make_folder(tmp_path / "a", dims=256))
    svc.create_base("Notes", embedding_model="local:my-model")
    with pytest.raises(TroveError) as info:
        svc.import_model(make_folder(tmp_path / "b", dims=512))
    assert info.value.params["reason"] == "model_in_use" and "'Notes'" in info.value.message
    assert listing(svc, "my-model").dimensions == 256
    assert svc.import_model(make_folder(tmp_path / "c", dims=256)).replaced  # a repair is fine


def test_a_damaged_install_is_listed_with_its_problem_and_downloaded_again(
    svc: KnowledgeService, hub: FakeHub, home: Path
) -> None:
    svc.download_model(E5.id, mirror=hub.endpoint)
    (model_folder(home, E5.id) / "tokenizer.json").unlink()
    model = listing(svc, E5.id)
    assert model.state is ModelState.DAMAGED and model.problem == "tokenizer.json missing"
    result = svc.download_model(E5.id, mirror=hub.endpoint)
    assert not result.already_installed and result.model.state is ModelState.INSTALLED
