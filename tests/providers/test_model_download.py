"""Downloading a catalog model from a (fake) Hugging Face hub: resume, checksums, disk space,
cancel, mirrors, offline machines, and installs that are whole or absent."""

from __future__ import annotations

import errno
import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import pytest

from app.providers.interfaces import (
    FETCH_FAILED,
    INVALID_ARGUMENT,
    MODEL_NOT_AVAILABLE,
    ProviderError,
)
from app.providers.model_store import download as hub_download
from app.providers.model_store import install
from app.providers.model_store.catalog import CATALOG, CatalogEntry, catalog_entry
from app.providers.model_store.download import download
from app.providers.model_store.errors import (
    BUSY,
    CHECKSUM_MISMATCH,
    DISK_FULL,
    HUB_UNREACHABLE,
    NOT_A_MODEL,
    STORAGE_FULL,
    DownloadCancelled,
)
from app.providers.model_store.hub import (
    DEFAULT_ENDPOINT,
    FROM_ARGUMENT,
    FROM_DEFAULT,
    FROM_SETTING,
    effective_endpoint,
)
from app.providers.model_store.locking import model_lock
from app.providers.model_store.manifest import MANIFEST_FILE, ModelKind, load_manifest
from tests.providers.conftest import Sleeps
from tests.providers.fake_hub import COMMIT, FakeHub, onnx_bytes, tokenizer_bytes

E5 = catalog_entry("multilingual-e5-small")
assert E5 is not None
MODEL_PATH = E5.model_file.path
TOKENIZER_PATH = E5.tokenizer_file.path
ONNX = onnx_bytes(1_500_000)
TOKENIZER = tokenizer_bytes()


@pytest.fixture
def hub() -> Iterator[FakeHub]:
    with FakeHub() as server:
        server.publish(E5.repo, {MODEL_PATH: ONNX, TOKENIZER_PATH: TOKENIZER})
        yield server


@pytest.fixture(autouse=True)
def _no_hub_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("TROVE_HF_ENDPOINT", "HF_ENDPOINT"):
        monkeypatch.delenv(name, raising=False)


def fetch(home: Path, hub: FakeHub, sleeps: Sleeps, **kw: object) -> hub_download.Downloaded:
    return download(home, E5, hub.endpoint, sleep=sleeps, **kw)  # type: ignore[arg-type]


def installed_folder(home: Path) -> Path:
    return home / "models" / E5.id


def leftovers(home: Path) -> list[str]:
    """Staging, old and removed folders, and partial files, under models/."""
    models = home / "models"
    found = [p.name for p in models.iterdir() if p.name.startswith((".staging-", ".old-", ".rem"))]
    partial = models / ".partial"
    if partial.exists():
        found += [str(p.relative_to(partial)) for p in partial.rglob("*") if p.is_file()]
    return sorted(found)


def cdn(hub: FakeHub, path: str = MODEL_PATH) -> str:
    return hub.cdn_path(E5.repo, path)


# -- a download --------------------------------------------------------------------------------


def test_a_download_installs_a_verified_model(tmp_path: Path, hub: FakeHub, sleeps: Sleeps) -> None:
    seen: list[tuple[int, int]] = []
    result = fetch(tmp_path, hub, sleeps, progress=lambda done, total: seen.append((done, total)))

    folder = installed_folder(tmp_path)
    assert result.folder == folder
    assert (folder / "model.onnx").read_bytes() == ONNX
    assert (folder / "tokenizer.json").read_bytes() == TOKENIZER
    manifest = load_manifest(folder)
    assert manifest.source == f"hub:{E5.repo}@{COMMIT}"
    assert (manifest.kind, manifest.dimensions, manifest.max_tokens) == (
        ModelKind.EMBEDDING,
        384,
        512,
    )
    assert (manifest.query_prefix, manifest.passage_prefix) == ("query: ", "passage: ")
    assert manifest.extra["files"] == {
        "model.onnx": {"size": len(ONNX), "sha256": hub.sha256(E5.repo, MODEL_PATH)},
        "tokenizer.json": {"size": len(TOKENIZER), "sha256": hub.sha256(E5.repo, TOKENIZER_PATH)},
    }
    assert result.verified == ("model.onnx", "tokenizer.json") and result.unverified == ()
    assert result.fetched_bytes == len(ONNX) + len(TOKENIZER)
    # Progress only grows and ends at the whole, which was known from the start.
    total = len(ONNX) + len(TOKENIZER)
    assert {t for _, t in seen} == {total}
    assert [d for d, _ in seen] == sorted(d for d, _ in seen) and seen[-1] == (total, total)
    # The second file comes from the commit the first one resolved to.
    assert hub.server.hits(hub.resolve_path(E5.repo, TOKENIZER_PATH, COMMIT)) >= 1
    assert leftovers(tmp_path) == [] and sleeps.calls == []


def test_every_catalog_entry_makes_a_valid_manifest() -> None:
    assert len({entry.id for entry in CATALOG}) == len(CATALOG) == 5
    for entry in CATALOG:
        manifest = entry.manifest(source=f"hub:{entry.repo}@{entry.revision}")
        manifest.check()
        assert entry.approx_bytes > 0 and entry.model_file.install_as == manifest.model_file
    kinds = {entry.id: entry.kind for entry in CATALOG}
    assert kinds["bge-reranker-v2-m3"] is ModelKind.RERANK
    jina = catalog_entry("jina-reranker-v2-base-multilingual")
    assert jina is not None and jina.non_commercial and "NC" in jina.license


# -- resuming ----------------------------------------------------------------------------------


def test_a_cut_connection_resumes_where_it_stopped(
    tmp_path: Path, hub: FakeHub, sleeps: Sleeps
) -> None:
    hub.cut_once(E5.repo, MODEL_PATH, after=600_000)
    result = fetch(tmp_path, hub, sleeps)

    first, second = hub.server.wait_for(cdn(hub), count=2)
    assert first.bytes_sent == 600_000 and "range" not in first.request.headers
    assert second.request.headers["range"] == "bytes=600000-"
    assert second.request.headers["if-range"] == f'"{hub.sha256(E5.repo, MODEL_PATH)}"'
    assert second.status == 206 and second.bytes_sent == len(ONNX) - 600_000
    assert (result.folder / "model.onnx").read_bytes() == ONNX
    assert result.fetched_bytes == len(ONNX) + len(TOKENIZER)  # nothing fetched twice
    assert sum(sleeps.calls) == 0.5  # one short pause before resuming


def test_passing_server_errors_are_retried_then_reported(
    tmp_path: Path, hub: FakeHub, sleeps: Sleeps
) -> None:
    hub.fail(E5.repo, MODEL_PATH, 503, 502)
    assert (fetch(tmp_path, hub, sleeps).folder / "model.onnx").read_bytes() == ONNX
    assert sum(sleeps.calls) == 1.5 and max(sleeps.calls) == 0.25  # 0.5 s, 1 s, in short steps

    other = tmp_path / "other"
    hub.fail(E5.repo, MODEL_PATH, *[503] * hub_download.MAX_ATTEMPTS)
    with pytest.raises(ProviderError) as info:
        fetch(other, hub, sleeps)
    assert info.value.code == FETCH_FAILED and "HTTP 503" in info.value.message
    assert "resume" in info.value.message and not installed_folder(other).exists()


def test_cancel_keeps_the_part_and_the_next_download_resumes(
    tmp_path: Path, hub: FakeHub, sleeps: Sleeps
) -> None:
    done = [0]

    def progress(got: int, total: int) -> None:
        done[0] = got

    with pytest.raises(DownloadCancelled) as info:
        fetch(tmp_path, hub, sleeps, progress=progress, cancel=lambda: done[0] >= 500_000)
    part = tmp_path / "models" / ".partial" / E5.id / "model.onnx.part"
    kept = part.stat().st_size
    assert info.value.kept_bytes == kept >= 500_000 and kept < len(ONNX)
    assert part.read_bytes() == ONNX[:kept]
    assert not installed_folder(tmp_path).exists()
    assert install.partial_bytes(tmp_path / "models", E5.id) == kept

    result = fetch(tmp_path, hub, sleeps)
    assert hub.server.requests(cdn(hub))[-1].headers["range"] == f"bytes={kept}-"
    assert (result.folder / "model.onnx").read_bytes() == ONNX
    assert result.fetched_bytes == len(ONNX) - kept + len(TOKENIZER)
    assert leftovers(tmp_path) == []


def test_a_part_of_another_file_version_is_not_resumed(
    tmp_path: Path, hub: FakeHub, sleeps: Sleeps
) -> None:
    with pytest.raises(DownloadCancelled):
        fetch(tmp_path, hub, sleeps, cancel=lambda: True)
    newer = onnx_bytes(1_200_000, seed=2)
    hub.publish(E5.repo, {MODEL_PATH: newer})  # the repository moved on meanwhile
    result = fetch(tmp_path, hub, sleeps)
    assert "range" not in hub.server.requests(hub.cdn_path(E5.repo, MODEL_PATH))[-1].headers
    assert (result.folder / "model.onnx").read_bytes() == newer


# -- refusing bad bytes ------------------------------------------------------------------------


def test_a_checksum_mismatch_is_refused_and_the_part_deleted(
    tmp_path: Path, hub: FakeHub, sleeps: Sleeps
) -> None:
    hub.corrupt(E5.repo, MODEL_PATH)
    with pytest.raises(ProviderError) as info:
        fetch(tmp_path, hub, sleeps)
    error = info.value
    assert error.code == FETCH_FAILED and error.reason == CHECKSUM_MISMATCH
    assert error.params["expected"] == hub.sha256(E5.repo, MODEL_PATH)
    assert "does not match the sha256" in error.message and "deleted" in error.message
    assert not installed_folder(tmp_path).exists()
    assert not (tmp_path / "models" / ".partial" / E5.id / "model.onnx.part").exists()

    hub.heal()  # a second try fetches the file whole again
    assert (fetch(tmp_path, hub, sleeps).folder / "model.onnx").read_bytes() == ONNX


def test_no_checksum_offered_is_said_and_the_size_checked(tmp_path: Path, sleeps: Sleeps) -> None:
    with FakeHub() as hub:
        hub.publish(E5.repo, {MODEL_PATH: ONNX, TOKENIZER_PATH: TOKENIZER}, small=(TOKENIZER_PATH,))
        result = fetch(tmp_path, hub, sleeps)
    assert result.verified == ("model.onnx",) and result.unverified == ("tokenizer.json",)
    assert (result.folder / "tokenizer.json").read_bytes() == TOKENIZER


def test_an_error_page_from_a_mirror_is_not_installed(tmp_path: Path, sleeps: Sleeps) -> None:
    page = b"<!doctype html><title>Please log in</title>" * 100
    with FakeHub() as hub:
        hub.publish(E5.repo, {MODEL_PATH: page, TOKENIZER_PATH: TOKENIZER}, small=(MODEL_PATH,))
        with pytest.raises(ProviderError) as info:
            fetch(tmp_path, hub, sleeps)
    assert info.value.code == FETCH_FAILED and info.value.reason == NOT_A_MODEL
    assert "not start like an ONNX model" in info.value.message
    assert not installed_folder(tmp_path).exists() and leftovers(tmp_path) == []


def test_a_file_the_hub_lacks_is_named(tmp_path: Path, sleeps: Sleeps) -> None:
    with FakeHub() as hub:
        hub.publish(E5.repo, {MODEL_PATH: ONNX})
        with pytest.raises(ProviderError) as info:
            fetch(tmp_path, hub, sleeps)
    assert info.value.code == MODEL_NOT_AVAILABLE
    assert f"{E5.repo}/{TOKENIZER_PATH}" in info.value.message and "404" in info.value.message


# -- the disk ----------------------------------------------------------------------------------


def test_a_full_disk_is_refused_before_a_byte_is_fetched(
    tmp_path: Path, hub: FakeHub, sleeps: Sleeps, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(install, "free_bytes", lambda path: 2_000_000)
    with pytest.raises(ProviderError) as info:
        fetch(tmp_path, hub, sleeps)
    assert info.value.code == STORAGE_FULL and info.value.reason == DISK_FULL
    assert "free some space" in info.value.message
    assert int(info.value.params["needed"]) > len(ONNX) + len(TOKENIZER)
    assert hub.server.hits(cdn(hub)) == 0 and not installed_folder(tmp_path).exists()


def test_a_write_the_disk_refuses_fails_cleanly_and_resumes_later(
    tmp_path: Path, hub: FakeHub, sleeps: Sleeps, monkeypatch: pytest.MonkeyPatch
) -> None:
    writes = [0]
    real_append = hub_download.append

    def append_until_full(out: IO[bytes], chunk: bytes) -> None:
        writes[0] += 1
        if writes[0] > 1:
            raise OSError(errno.ENOSPC, "No space left on device")
        real_append(out, chunk)

    monkeypatch.setattr(hub_download, "append", append_until_full)
    with pytest.raises(ProviderError) as info:
        fetch(tmp_path, hub, sleeps)
    assert info.value.code == STORAGE_FULL and "No space left on device" in info.value.message
    assert not installed_folder(tmp_path).exists()
    part = tmp_path / "models" / ".partial" / E5.id / "model.onnx.part"
    kept = part.stat().st_size
    assert 0 < kept < len(ONNX)

    monkeypatch.setattr(hub_download, "append", real_append)
    result = fetch(tmp_path, hub, sleeps)
    assert hub.server.requests(cdn(hub))[-1].headers["range"] == f"bytes={kept}-"
    assert (result.folder / "model.onnx").read_bytes() == ONNX


# -- installs are whole or absent ---------------------------------------------------------------


def test_a_failed_download_keeps_the_older_install(
    tmp_path: Path, hub: FakeHub, sleeps: Sleeps
) -> None:
    fetch(tmp_path, hub, sleeps)
    hub.corrupt(E5.repo, MODEL_PATH)
    with pytest.raises(ProviderError):
        fetch(tmp_path, hub, sleeps)
    folder = installed_folder(tmp_path)
    assert (folder / "model.onnx").read_bytes() == ONNX and load_manifest(folder).id == E5.id
    assert leftovers(tmp_path) == []


def test_a_crash_while_installing_leaves_no_half_model_and_keeps_the_files(
    tmp_path: Path, hub: FakeHub, sleeps: Sleeps, monkeypatch: pytest.MonkeyPatch
) -> None:
    def crash(folder: Path, manifest: object) -> Path:
        raise OSError(errno.EIO, "I/O error")

    monkeypatch.setattr(install, "save_manifest", crash)
    with pytest.raises(OSError):
        fetch(tmp_path, hub, sleeps)
    models = tmp_path / "models"
    assert not installed_folder(tmp_path).exists()
    assert not [p for p in models.iterdir() if p.name.startswith(".staging-")]
    assert install.partial_bytes(models, E5.id) == len(ONNX) + len(TOKENIZER)

    monkeypatch.undo()
    result = fetch(tmp_path, hub, sleeps)
    assert result.fetched_bytes == 0 and (result.folder / "model.onnx").read_bytes() == ONNX


def test_leftovers_of_a_crash_are_settled(tmp_path: Path, hub: FakeHub, sleeps: Sleeps) -> None:
    models = tmp_path / "models"
    fetch(tmp_path, hub, sleeps)
    folder = installed_folder(tmp_path)
    # A crash between "old install aside" and "new install in place".
    aside = models / f".old-{E5.id}-0badc0de"
    folder.rename(aside)
    half = models / f".staging-{E5.id}-deadbeef"
    half.mkdir()
    (half / "model.onnx").write_bytes(ONNX[:1000])  # no manifest: never finished
    removed = models / ".removed-bge-m3-12345678"
    removed.mkdir()
    install.settle(models)
    assert (folder / "model.onnx").read_bytes() == ONNX and load_manifest(folder).id == E5.id
    assert not aside.exists() and not half.exists() and not removed.exists()

    busy = models / ".staging-bge-m3-cafef00d"
    busy.mkdir()
    with model_lock(models, "bge-m3"):  # another process is filling it
        install.settle(models)
        assert busy.exists()
    install.settle(models)
    assert not busy.exists()


def test_one_model_is_downloaded_by_one_caller_at_a_time(
    tmp_path: Path, hub: FakeHub, sleeps: Sleeps
) -> None:
    models = tmp_path / "models"
    with model_lock(models, E5.id), pytest.raises(ProviderError) as info:
        fetch(tmp_path, hub, sleeps)
    assert info.value.code == INVALID_ARGUMENT and info.value.reason == BUSY
    assert hub.server.hits(hub.resolve_path(E5.repo, MODEL_PATH)) == 0


# -- where from --------------------------------------------------------------------------------


def test_the_endpoint_comes_from_argument_environment_setting_default(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert effective_endpoint(None) == effective_endpoint(None, "")
    assert effective_endpoint(None).url == DEFAULT_ENDPOINT == "https://huggingface.co"
    assert effective_endpoint(None).origin == FROM_DEFAULT
    stored = effective_endpoint("https://hf-mirror.com/")
    assert (stored.url, stored.origin) == ("https://hf-mirror.com", FROM_SETTING)
    monkeypatch.setenv("HF_ENDPOINT", "https://one.example")
    assert effective_endpoint("https://hf-mirror.com").origin == "env:HF_ENDPOINT"
    monkeypatch.setenv("TROVE_HF_ENDPOINT", "https://two.example")
    chosen = effective_endpoint("https://hf-mirror.com")
    assert (chosen.url, chosen.origin, chosen.stored) == (
        "https://two.example",
        "env:TROVE_HF_ENDPOINT",
        "https://hf-mirror.com",
    )
    assert effective_endpoint(None, "http://127.0.0.1:9").origin == FROM_ARGUMENT
    monkeypatch.delenv("TROVE_HF_ENDPOINT")
    monkeypatch.delenv("HF_ENDPOINT")
    with pytest.raises(ProviderError) as info:
        effective_endpoint("ftp://mirror.example")
    assert info.value.code == INVALID_ARGUMENT and "hf-mirror.com" in info.value.message


def test_a_mirror_serves_the_whole_download(tmp_path: Path, hub: FakeHub, sleeps: Sleeps) -> None:
    endpoint = effective_endpoint(stored=hub.endpoint + "/")
    result = download(tmp_path, E5, endpoint.url, sleep=sleeps)
    assert result.endpoint == hub.endpoint
    assert hub.server.hits(hub.resolve_path(E5.repo, MODEL_PATH)) >= 1
    assert (result.folder / MANIFEST_FILE).is_file()


def test_an_offline_machine_is_told_about_mirrors_and_import(
    tmp_path: Path, sleeps: Sleeps
) -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(ProviderError) as info:
        download(tmp_path, E5, f"http://127.0.0.1:{port}", sleep=sleeps)
    error = info.value
    assert error.code == FETCH_FAILED and error.reason == HUB_UNREACHABLE
    assert error.params["host"] == f"127.0.0.1:{port}"
    assert f"cannot reach 127.0.0.1:{port}" in error.message
    assert "hf-mirror.com" in error.message and "trove model import" in error.message
    assert sleeps.calls == []  # no retries against a machine that is not there


def test_an_entry_with_other_file_names_installs_under_its_names(
    tmp_path: Path, sleeps: Sleeps
) -> None:
    jina = catalog_entry("jina-reranker-v2-base-multilingual")
    assert isinstance(jina, CatalogEntry)
    with FakeHub() as hub:
        hub.publish(jina.repo, {jina.model_file.path: ONNX, jina.tokenizer_file.path: TOKENIZER})
        result = download(tmp_path, jina, hub.endpoint, sleep=sleeps)
    assert jina.model_file.path == "onnx/model_int8.onnx"
    assert (result.folder / "model.onnx").read_bytes() == ONNX
    manifest = json.loads((result.folder / MANIFEST_FILE).read_text(encoding="utf-8"))
    assert manifest["kind"] == "rerank" and manifest["license"] == "CC-BY-NC-4.0"
