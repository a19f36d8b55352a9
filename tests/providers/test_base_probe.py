"""Creating a base probes its embedding model's dimension; a person waits on it, so one
passing failure is tried again in the call (indexing leaves retries to the job queue)."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.knowledge.jobs.reader_pool import InlineExtraction
from app.knowledge.service import KnowledgeService
from app.knowledge.types import ErrorCode, TroveError
from tests.providers.fake_api import EMBEDDINGS, FakeApi, Fault


@pytest.fixture
def service(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> KnowledgeService:
    monkeypatch.setenv("TROVE_KEY_PROBEAPI", "sk-probe")
    return KnowledgeService(tmp_path / "home", extraction=InlineExtraction())


def test_one_passing_failure_does_not_fail_base_creation(service: KnowledgeService) -> None:
    with FakeApi(api_key="sk-probe", dims=12) as api:
        service.save_provider("probeapi", "openai", base_url=api.base_url, models=["m"])
        api.fail(EMBEDDINGS, Fault.http(503))
        try:
            base = service.create_base("kb", embedding_model="probeapi:m")
        finally:
            service.close()
        assert base.dimensions == 12
        assert api.hits(EMBEDDINGS) == 2


def test_a_lasting_failure_fails_base_creation_clearly(service: KnowledgeService) -> None:
    with FakeApi(api_key="sk-probe", dims=12) as api:
        service.save_provider("probeapi", "openai", base_url=api.base_url, models=["m"])
        api.fail(EMBEDDINGS, Fault.http(503), Fault.http(503), Fault.http(503))
        try:
            with pytest.raises(TroveError) as caught:
                service.create_base("kb", embedding_model="probeapi:m")
        finally:
            service.close()
        assert caught.value.code == ErrorCode.EMBEDDING_FAILED
        assert api.hits(EMBEDDINGS) == 2
