"""`trove model list|download|remove|import|mirror` end to end, in a subprocess like a user
runs them, against a fake Hugging Face hub on 127.0.0.1."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.knowledge.jobs.reader_pool import InlineExtraction
from app.knowledge.service import KnowledgeService
from app.providers.execution import accelerators
from app.providers.local_model import local_model_available
from app.providers.local_runtime import available_providers, physical_cores
from app.providers.model_store.catalog import catalog_entry
from app.providers.model_store.manifest import ModelKind, ModelManifest, save_manifest
from tests.fakes import FakeEmbedder, FakeReranker
from tests.providers.fake_hub import FakeHub, onnx_bytes, tokenizer_bytes

E5 = catalog_entry("multilingual-e5-small")
assert E5 is not None
ONNX = onnx_bytes(1_000_000)
TOKENIZER = tokenizer_bytes()
WAIT_S = 60.0


def _env(extra: dict[str, str] | None = None) -> dict[str, str]:
    hidden = {"TROVE_HOME", "HF_ENDPOINT", "TROVE_HF_ENDPOINT"}
    env = {k: v for k, v in os.environ.items() if k not in hidden}
    env.update(extra or {})
    return env


def trove(
    home: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "app", "--home", str(home), *args]
    return subprocess.run(
        cmd, capture_output=True, text=True, env=_env(env), timeout=120, check=False
    )


def models_json(home: Path) -> dict[str, dict[str, object]]:
    listed = trove(home, "model", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    return {m["id"]: m for m in json.loads(listed.stdout)}


@pytest.fixture
def hub() -> Iterator[FakeHub]:
    with FakeHub() as server:
        server.publish(E5.repo, {E5.model_file.path: ONNX, E5.tokenizer_file.path: TOKENIZER})
        yield server


class AnyModels:
    def embedder(self, model_id: str) -> FakeEmbedder:
        return FakeEmbedder(model_id, dims=384)

    def reranker(self, model_id: str) -> FakeReranker:
        return FakeReranker(model_id)


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_the_list_names_sizes_licences_and_languages(tmp_path: Path) -> None:
    home = tmp_path / "home"
    models = models_json(home)
    assert next(iter(models)) == "all-MiniLM-L6-v2"
    assert models["all-MiniLM-L6-v2"]["state"] == "built-in"
    e5 = models["multilingual-e5-small"]
    assert (e5["state"], e5["kind"], e5["dimensions"]) == ("available", "embedding", 384)
    assert e5["modelId"] == "local:multilingual-e5-small" and e5["approxBytes"]
    assert models["jina-reranker-v2-base-multilingual"]["nonCommercial"] is True
    # What runs each installed model; onnxruntime on these machines offers only the CPU.
    threads = physical_cores()
    expected_runs_on = f"CPU ({threads} thread{'s' if threads > 1 else ''})"
    if not local_model_available():
        expected_runs_on = ""
    elif accelerators(available_providers()):  # tests/providers/test_execution.py covers it
        expected_runs_on = f"{expected_runs_on}; "
    assert str(models["all-MiniLM-L6-v2"]["runsOn"]).startswith(expected_runs_on)
    assert e5["runsOn"] is None and e5["executionProvider"] is None  # not installed

    text = trove(home, "model", "list")
    assert text.returncode == 0, text.stderr
    assert "RUNS ON" in text.stdout and expected_runs_on in text.stdout
    assert "CC-BY-NC-4.0 (non-commercial)" in text.stdout and "~135.0 MB" in text.stdout
    assert "zh, en" in text.stdout
    assert "local:ID" in text.stderr and "https://huggingface.co" in text.stderr


def test_a_download_through_a_mirror_then_listed(tmp_path: Path, hub: FakeHub) -> None:
    home = tmp_path / "home"
    done = trove(home, "model", "download", E5.id, "--mirror", hub.endpoint)
    assert done.returncode == 0, done.stderr
    assert f"installed {E5.name} as local:{E5.id}" in done.stderr
    assert "model.onnx: sha256 matches the hub's checksum" in done.stderr
    assert f"trove base create NAME --embedding local:{E5.id}" in done.stderr
    e5 = models_json(home)[E5.id]
    assert e5["state"] == "installed" and e5["sizeOnDisk"] > len(ONNX)  # type: ignore[operator]
    assert (home / "models" / E5.id / "model.onnx").read_bytes() == ONNX

    again = trove(home, "model", "download", f"local:{E5.id}", "--mirror", hub.endpoint)
    assert again.returncode == 0 and "already installed" in again.stderr


def test_the_mirror_is_stored_shown_and_cleared(tmp_path: Path, hub: FakeHub) -> None:
    home = tmp_path / "home"
    shown = trove(home, "model", "mirror")
    assert shown.stdout.strip() == "model downloads come from https://huggingface.co (default)"
    stored = trove(home, "model", "mirror", hub.endpoint + "/")
    assert stored.returncode == 0 and f"{hub.endpoint} (the stored mirror)" in stored.stdout
    assert trove(home, "model", "download", E5.id).returncode == 0  # no --mirror needed
    assert hub.server.hits(hub.resolve_path(E5.repo, E5.model_file.path)) == 1

    overridden = trove(home, "model", "mirror", env={"HF_ENDPOINT": "https://hf-mirror.com"})
    assert "https://hf-mirror.com (set by HF_ENDPOINT)" in overridden.stdout
    cleared = trove(home, "model", "mirror", "--clear")
    assert "https://huggingface.co (default)" in cleared.stdout
    bad = trove(home, "model", "mirror", "hf-mirror.com")
    assert bad.returncode == 1 and "INVALID_ARGUMENT" in bad.stderr


def test_a_model_a_base_uses_is_not_removed(tmp_path: Path, hub: FakeHub) -> None:
    home = tmp_path / "home"
    assert trove(home, "model", "download", E5.id, "--mirror", hub.endpoint).returncode == 0
    svc = KnowledgeService(home, models=AnyModels(), extraction=InlineExtraction())
    base = svc.create_base("Notes", embedding_model=f"local:{E5.id}")
    svc.close()

    refused = trove(home, "model", "remove", E5.id)
    assert refused.returncode == 1
    assert "INVALID_ARGUMENT" in refused.stderr and "'Notes'" in refused.stderr
    assert models_json(home)[E5.id]["usedBy"] == ["Notes"]

    svc = KnowledgeService(home, models=AnyModels(), extraction=InlineExtraction())
    svc.delete_base(base.id)
    svc.close()
    removed = trove(home, "model", "remove", E5.id)
    assert removed.returncode == 0, removed.stderr
    assert models_json(home)[E5.id]["state"] == "available"
    again = trove(home, "model", "remove", E5.id)
    assert again.returncode == 1 and "MODEL_NOT_AVAILABLE" in again.stderr


def test_a_folder_is_imported_and_a_bad_one_refused(tmp_path: Path) -> None:
    home = tmp_path / "home"
    folder = tmp_path / "usb" / "tiny-de"
    folder.mkdir(parents=True)
    manifest = ModelManifest(
        id="tiny-de",
        kind=ModelKind.EMBEDDING,
        name="Tiny German",
        license="MIT",
        languages=("de",),
        max_tokens=256,
        dimensions=128,
    )
    save_manifest(folder, manifest)
    (folder / "model.onnx").write_bytes(ONNX)
    (folder / "tokenizer.json").write_bytes(TOKENIZER)
    imported = trove(home, "model", "import", str(folder))
    assert imported.returncode == 0, imported.stderr
    assert "imported Tiny German as local:tiny-de" in imported.stderr
    assert models_json(home)["tiny-de"]["state"] == "installed"

    (folder / "tokenizer.json").unlink()
    bad = trove(home, "model", "import", str(folder))
    assert bad.returncode == 1 and "lacks tokenizer.json" in bad.stderr


def test_an_offline_download_says_what_to_do(tmp_path: Path) -> None:
    port = closed_port()
    failed = trove(
        tmp_path / "home", "model", "download", E5.id, "--mirror", f"http://127.0.0.1:{port}"
    )
    assert failed.returncode == 1
    assert "FETCH_FAILED" in failed.stderr and f"cannot reach 127.0.0.1:{port}" in failed.stderr
    assert "trove model import DIR" in failed.stderr and "Traceback" not in failed.stderr


def _ctrl_c_as_in_a_terminal() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT to a child is POSIX")
def test_ctrl_c_stops_cleanly_and_the_next_download_resumes(tmp_path: Path, hub: FakeHub) -> None:
    home = tmp_path / "home"
    hub.stall(E5.repo, E5.model_file.path, after=300_000)
    child = subprocess.Popen(
        [sys.executable, "-m", "app", "--home", str(home), "model", "download", E5.id],
        env=_env({"TROVE_HF_ENDPOINT": hub.endpoint}),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # As from a terminal: a test run started in the background (`cmd &`) passes SIGINT
        # on ignored, and Python then installs no Ctrl-C handler in the child.
        preexec_fn=_ctrl_c_as_in_a_terminal,
    )
    part = home / "models" / ".partial" / E5.id / "model.onnx.part"
    try:
        deadline = time.monotonic() + WAIT_S
        while not (part.exists() and part.stat().st_size >= 300_000):
            assert child.poll() is None, child.communicate()
            assert time.monotonic() < deadline, "the download never got its first bytes"
            time.sleep(0.02)
        child.send_signal(signal.SIGINT)
        _out, err = child.communicate(timeout=WAIT_S)
    finally:
        if child.poll() is None:
            child.kill()
            child.communicate()
    assert child.returncode == 130, err
    assert "download cancelled; 0.3 MB kept" in err and "again to resume" in err
    assert "Traceback" not in err
    assert part.stat().st_size == 300_000 and not (home / "models" / E5.id).exists()

    hub.heal()
    resumed = trove(home, "model", "download", E5.id, env={"TROVE_HF_ENDPOINT": hub.endpoint})
    assert resumed.returncode == 0, resumed.stderr
    last = hub.server.requests(hub.cdn_path(E5.repo, E5.model_file.path))[-1]
    assert last.headers["range"] == "bytes=300000-"
    assert (home / "models" / E5.id / "model.onnx").read_bytes() == ONNX
