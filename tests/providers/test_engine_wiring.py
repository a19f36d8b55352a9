"""Providers wired into the engine: settings in the catalog, keys in the keychain only,
hybrid search and reranking through configured providers, the CLI's provider commands."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

from app.knowledge.service import KnowledgeService
from app.knowledge.types import ErrorCode, ItemStatus, ScoreKind, SearchMode, TroveError
from app.providers.local_model import LOCAL_MODEL_ID, missing_modules
from tests.conftest import write_files
from tests.providers.conftest import KEY, MemoryKeyring, UseKeyring
from tests.providers.fake_api import FakeApi

DOCS = {
    "sun.md": "# Tomatoes\n\nTomatoes need full sun and regular watering in summer.",
    "rose.md": "# Roses\n\nPrune roses in late winter and feed them compost in spring.",
    "bread.md": "# Bread\n\nA sourdough starter needs flour, water and patience.",
}


def _service(home: Path) -> KnowledgeService:
    # The real provider registry (no injected fakes), and inline reading for speed.
    from app.knowledge.jobs.reader_pool import InlineExtraction

    return KnowledgeService(home, extraction=InlineExtraction())


def test_key_never_reaches_the_data_dir_or_logs(
    tmp_path: Path, use_keyring: UseKeyring, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    keychain = MemoryKeyring()
    use_keyring(keychain)
    home = tmp_path / "home"
    with FakeApi(api_key=KEY) as api:
        svc = _service(home)
        svc.save_provider("acme", "openai", base_url=api.base_url, models=["embed-small"], key=KEY)
        base = svc.create_base(
            "kb", embedding_model="acme:embed-small", rerank_model="acme:rerank-small"
        )
        svc.add(base.id, [write_files(tmp_path / "docs", DOCS)])
        svc.run_pending_jobs(base.id)
        assert {i.status for i in svc.list_items(base.id)} == {ItemStatus.COMPLETED}
        response = svc.search(base.id, "how much sun do tomatoes need")
        assert response.mode is SearchMode.HYBRID and response.reranked
        assert response.results[0].title == "Tomatoes"
        assert response.results[0].score_kind is ScoreKind.RELEVANCE
        svc.close()
    assert keychain.store == {("Trove", "acme"): KEY}
    needle = KEY.encode()
    scanned = 0
    for path in home.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            scanned += 1
            assert needle not in data and KEY.encode("utf-16-le") not in data, path
    assert scanned >= 5  # catalog, its WAL, the index, materials: the scan saw real files
    said = "\n".join(r.getMessage() for r in caplog.records)
    assert KEY not in said


def test_wrong_dimension_later_stops_the_vector_stage_clearly(
    tmp_path: Path, use_keyring: UseKeyring
) -> None:
    use_keyring(MemoryKeyring())
    with FakeApi(dims=8) as api:
        svc = _service(tmp_path / "home")
        svc.save_provider("acme", "openai", base_url=api.base_url, models=["embed-small"])
        base = svc.create_base("kb", embedding_model="acme:embed-small")
        assert base.dimensions == 8  # probed at creation
        api.dims = 12  # the provider changes its model behind our back
        svc.add(base.id, [write_files(tmp_path / "docs", DOCS)])
        svc.run_pending_jobs(base.id)
        files = [i for i in svc.list_items(base.id) if i.parent_id]
        # Searchable by their words; the vector stage stops and says why.
        assert {i.status for i in files} == {ItemStatus.COMPLETED}
        stop = svc.vector_status(base.id).stopped
        assert stop is not None and stop.code == ErrorCode.EMBEDDING_FAILED
        assert "12" in stop.message and "8" in stop.message
        svc.close()


def test_unknown_provider_and_bad_settings_are_refused(
    tmp_path: Path, use_keyring: UseKeyring
) -> None:
    use_keyring(MemoryKeyring())
    svc = _service(tmp_path / "home")
    with pytest.raises(TroveError) as missing:
        svc.create_base("kb", embedding_model="nowhere:model")
    assert missing.value.code is ErrorCode.MODEL_NOT_AVAILABLE
    with pytest.raises(TroveError):
        svc.save_provider("local", "openai", base_url="http://127.0.0.1:1")
    with pytest.raises(TroveError):
        svc.save_provider("x", "openai", base_url="file:///etc/passwd")
    with pytest.raises(TroveError):
        svc.save_provider("a:b", "openai", base_url="http://127.0.0.1:1")
    assert [p.id for p in svc.list_providers()] == ["local"]
    svc.close()


def _trove(home: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "TROVE_HOME"}
    return subprocess.run(
        [sys.executable, "-m", "app", "--home", str(home), *args],
        capture_output=True,
        text=True,
        input=stdin,
        env=env,
        timeout=300,
        check=False,
    )


def test_provider_cli_commands(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with FakeApi() as api:
        added = _trove(
            home,
            "provider",
            "add",
            "acme",
            "--kind",
            "openai",
            "--url",
            api.base_url,
            "--model",
            "embed-small",
        )
        assert added.returncode == 0, added.stderr
        listed = json.loads(_trove(home, "provider", "list", "--json").stdout)
        assert [p["id"] for p in listed] == ["acme", "local"]
        models = _trove(home, "provider", "models", "acme")
        assert models.returncode == 0 and "embed-small" in models.stdout.split()
        tested = _trove(home, "provider", "test", "acme")
        assert tested.returncode == 0, tested.stderr
        created = _trove(home, "base", "create", "kb", "--embedding", "acme:embed-small", "--json")
        assert created.returncode == 0, created.stderr
        assert json.loads(created.stdout)["dimensions"] == api.dims
    removed = _trove(home, "provider", "remove", "acme")
    assert removed.returncode == 0, removed.stderr
    gone = _trove(home, "provider", "test", "acme")
    assert gone.returncode == 1 and "no provider named" in gone.stderr


@pytest.mark.skipif(bool(missing_modules()), reason="the optional `local` extra is not installed")
def test_offline_model_end_to_end_through_the_cli(tmp_path: Path) -> None:
    home = tmp_path / "home"
    docs = write_files(tmp_path / "docs", DOCS)
    created = _trove(home, "base", "create", "demo", "--embedding", LOCAL_MODEL_ID, "--json")
    assert created.returncode == 0, created.stderr
    assert json.loads(created.stdout)["dimensions"] == 384
    added = _trove(home, "add", "demo", str(docs), "--wait")
    assert added.returncode == 0, added.stderr
    # No word of the query appears in the answer: only the vectors can find it.
    out = _trove(home, "search", "demo", "baking", "--json", "--debug")
    data = json.loads(out.stdout)
    assert data["mode"] == "hybrid"
    assert data["results"][0]["title"] == "Bread"
    assert data["metrics"]["vectorHitCount"] >= 1 and data["metrics"]["embeddingMs"] > 0
