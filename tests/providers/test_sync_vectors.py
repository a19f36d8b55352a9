"""A linked folder's renamed and moved files keep their vectors: embedding requests counted
at a loopback provider are 0 for a rename; an edit embeds only its changed chunks."""

from __future__ import annotations

from pathlib import Path

from app.knowledge.jobs.reader_pool import InlineExtraction
from app.knowledge.service import KnowledgeService
from app.knowledge.types import ItemStatus, ItemType
from tests.conftest import write_files
from tests.providers.conftest import MemoryKeyring, UseKeyring
from tests.providers.fake_api import EMBEDDINGS, FakeApi

PARAGRAPHS = [
    f"Paragraph {n} is about topic{n} and nothing else, so it stands alone." for n in range(6)
]


def test_rename_costs_no_embedding_call_and_an_edit_only_its_new_chunk(
    tmp_path: Path, use_keyring: UseKeyring
) -> None:
    use_keyring(MemoryKeyring())
    folder = write_files(
        tmp_path / "docs",
        {
            "report.md": "\n\n".join(PARAGRAPHS),
            "plan.md": "\n\n".join(p.replace("topic", "theme") for p in PARAGRAPHS),
            "other.md": "The otter swims all day long.",
        },
    )
    with FakeApi(dims=8) as api:
        svc = KnowledgeService(tmp_path / "home", embed_batch_size=2, extraction=InlineExtraction())
        try:
            svc.save_provider("acme", "openai", base_url=api.base_url, models=["embed-small"])
            base = svc.create_base(
                "kb", embedding_model="acme:embed-small", chunk_size=20, chunk_overlap=0
            )
            svc.add_linked_folders(base.id, [folder])
            svc.run_pending_jobs(base.id)
            first = api.hits(EMBEDDINGS)
            assert first > 0

            (folder / "sub").mkdir()
            (folder / "report.md").rename(folder / "sub" / "renamed report.md")
            (folder / "other.md").rename(folder / "otters.md")
            svc.request_sync(base.id)
            svc.run_pending_jobs(base.id)
            assert api.hits(EMBEDDINGS) == first  # 0 calls for two renames

            results = svc.search(base.id, "topic3").results
            assert results and results[0].source == str(folder / "sub" / "renamed report.md")
            assert results[0].score_kind is not None

            # An edit re-embeds its changed chunk only: the others' vectors are reused.
            # (Not after a rename: a chunk is embedded with its document's title in front.)
            texts_before = sum(len(r.json()["input"]) for r in api.requests(EMBEDDINGS))
            edited = [p.replace("topic", "theme") for p in PARAGRAPHS[:5]]
            edited.append("Paragraph five now talks about the walrus instead.")
            target = folder / "plan.md"
            target.write_text("\n\n".join(edited), encoding="utf-8")
            svc.request_sync(base.id)
            svc.run_pending_jobs(base.id)
            texts_after = sum(len(r.json()["input"]) for r in api.requests(EMBEDDINGS))
            assert texts_after - texts_before == 1
            files = [i for i in svc.list_items(base.id) if i.type is ItemType.FILE]
            assert len(files) == 3 and all(i.status is ItemStatus.COMPLETED for i in files)
            assert svc.search(base.id, "walrus").results[0].source == str(target)
        finally:
            svc.close()
