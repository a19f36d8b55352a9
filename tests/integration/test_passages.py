"""A base with an embedding model: model-sized chunks, full text ranked by passage.

Chunks fit the model (here the fakes' default: an unknown model reads 512 tokens, so at most
256 estimated tokens a chunk); full text ranks passages of the base's chunk size (512), and
every chunk of a passage takes its rank, in BM25 and in hybrid search.
"""

from __future__ import annotations

from pathlib import Path

from app.knowledge.chunk_sizing import sizing_for
from app.knowledge.pipeline.indexing.estimate import count_tokens
from app.knowledge.service import KnowledgeService
from app.knowledge.types import ItemStatus, SearchMode
from tests.conftest import write_files
from tests.fakes import FakeModels

SEA = "The tide comes in twice a day and the moon pulls the water up the shore. "
LAMP = "Every evening the keeper climbs the tower and lights the great lamp. "


def test_full_text_ranks_the_passage_and_vectors_the_chunks(
    service: KnowledgeService, models: FakeModels, tmp_path: Path
) -> None:
    base = service.create_base("kb", embedding_model="fake:bow")
    sizing = sizing_for(service.get_base(base.id), service.parts.models)
    assert sizing.limit == 256 and sizing.size == 512
    # ~420 estimated tokens: one passage, two chunks; the rare word only near the end.
    text = "# Harbour\n\n" + SEA * 14 + "\n\n" + LAMP * 14 + "A lighthousekeeper wrote this.\n"
    src = write_files(
        tmp_path / "src", {"harbour.md": text, "other.md": "# Other\n\nplain words\n"}
    )
    service.add(base.id, [src / "harbour.md", src / "other.md"])
    service.run_pending_jobs(base.id)
    items = {i.title: i for i in service.list_items(base.id)}
    assert {i.status for i in items.values()} == {ItemStatus.COMPLETED}
    chunks = service.parts.stores.get(base.id).item_chunks(items["Harbour"].id)
    assert len(chunks) == 2
    assert all(count_tokens(c.text) <= sizing.limit for c in chunks)
    assert "lighthousekeeper" not in chunks[0].text

    bm25 = service.search(base.id, "lighthousekeeper", mode=SearchMode.BM25)
    assert [(r.char_start, r.score) for r in bm25.results] == [
        (chunks[0].char_start, bm25.results[0].score),
        (chunks[1].char_start, bm25.results[0].score),
    ]
    assert bm25.metrics.bm25_hit_count == 1  # one passage found

    hybrid = service.search(base.id, "lighthousekeeper")
    assert hybrid.mode is SearchMode.HYBRID
    assert {r.char_start for r in hybrid.results[:2]} == {c.char_start for c in chunks}
    assert service.doctor(base.id).clean
