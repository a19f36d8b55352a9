"""A hybrid base embedded through a loopback provider (FakeApi counts its calls), shared by
the portable-base tests: round trips, corrupted files, crashes, copies between bases."""

from __future__ import annotations

import os
import random
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from app.knowledge.jobs.reader_pool import InlineExtraction
from app.knowledge.service import KnowledgeService
from app.knowledge.types import ItemStatus, SearchResult
from tests.providers.fake_api import EMBEDDINGS, FakeApi

PROVIDER = "portapi"
KEY = "sk-portable-tests"
KEY_ENV = "TROVE_KEY_PORTAPI"
MODEL = f"{PROVIDER}:embed-small"
REPO = Path(__file__).resolve().parents[2]

WORDS = [
    "tomato",
    "basil",
    "garden",
    "river",
    "mountain",
    "copper",
    "violin",
    "harbor",
    "lantern",
    "glacier",
    "orchard",
    "meadow",
    "falcon",
    "canyon",
    "compass",
    "saffron",
    "velvet",
    "thunder",
    "marble",
    "pepper",
    "cedar",
    "willow",
    "comet",
    "amber",
    "tundra",
    "lagoon",
    "prairie",
    "quartz",
    "ember",
    "coral",
    "maple",
    "juniper",
    "walnut",
]


@dataclass(frozen=True)
class World:
    home: Path
    base_id: str
    docs: Path


def make_docs(folder: Path, count: int = 30, seed: int = 7) -> Path:
    rng = random.Random(seed)
    (folder / "notes").mkdir(parents=True, exist_ok=True)
    for n in range(count):
        words = [rng.choice(WORDS) for _ in range(160)]
        sub = "notes/" if n % 3 == 0 else ""
        text = f"# Topic {n} {words[0]}\n\n" + " ".join(words) + "\n"
        (folder / f"{sub}doc{n:02d}.md").write_text(text, encoding="utf-8")
    return folder


def queries(count: int = 50, seed: int = 11) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.sample(WORDS, rng.randint(1, 3))) for _ in range(count)]


def service(home: Path) -> KnowledgeService:
    return KnowledgeService(home, extraction=InlineExtraction())


def build(tmp_path: Path, api: FakeApi, *, name: str = "garden", docs: int = 30) -> World:
    """A hybrid base of `docs` documents in folders, all indexed through the API."""
    os.environ[KEY_ENV] = KEY
    home = tmp_path / "home"
    folder = make_docs(tmp_path / f"docs-{name}", docs)
    svc = service(home)
    try:
        if PROVIDER not in {p.id for p in svc.list_providers()}:
            svc.save_provider(PROVIDER, "openai", base_url=api.base_url, models=["embed-small"])
        base = svc.create_base(name, embedding_model=MODEL, chunk_size=96, chunk_overlap=16)
        svc.add(base.id, [folder])
        svc.run_pending_jobs(base.id)
        statuses = {i.status for i in svc.list_items(base.id)}
        assert statuses == {ItemStatus.COMPLETED}, statuses
    finally:
        svc.close()
    return World(home, base.id, folder)


def result_key(result: SearchResult) -> tuple[object, ...]:
    """What a person sees of a result; item ids differ between a base and its import."""
    return (
        result.rank,
        round(result.score, 6),
        str(result.score_kind),
        result.title,
        result.concept_id,
        result.char_start,
        result.char_end,
        result.text,
    )


def search_all(home: Path, base_id: str, asked: list[str]) -> list[list[tuple[object, ...]]]:
    svc = service(home)
    try:
        return [[result_key(r) for r in svc.search(base_id, q).results] for q in asked]
    finally:
        svc.close()


def embed_calls(api: FakeApi) -> int:
    return api.hits(EMBEDDINGS)


def cli_env(*, hook: Path | None = None, extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "TROVE_HOME"}
    env.update({KEY_ENV: KEY, "QT_QPA_PLATFORM": "offscreen"})
    paths = [str(hook)] if hook is not None else []
    env["PYTHONPATH"] = os.pathsep.join([*paths, str(REPO)])
    env.update(extra or {})
    return env


def trove(
    home: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "app", "--home", str(home), *args],
        capture_output=True,
        text=True,
        timeout=180,
        env=env or cli_env(),
        cwd=REPO,
    )
