"""A hit in a PDF names the page its words are on, not the page its chunk starts on."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import apsw
import pytest

from app.knowledge.jobs.reader_pool import InlineExtraction
from app.knowledge.pages import hit_page, main_page
from app.knowledge.pipeline.readers.document import page_at
from app.knowledge.pipeline.readers.pdf import read_pdf
from app.knowledge.pipeline.store.index_store import index_path
from app.knowledge.service import KnowledgeService
from app.knowledge.term_spans import hit_spans as engine_spans
from app.knowledge.term_spans import query_terms as engine_terms
from app.knowledge.types import SearchResult
from app.ui.search.snippet import hit_spans as window_spans
from app.ui.search.snippet import query_terms as window_terms
from tests.fakes import FakeModels
from tests.unit.make_files import pdf_bytes

# Each page opens with the word only it has, so the chunk that carries the end of the page
# before (its overlap) into this page's first line holds the word too.
MARKERS = {"quokka": 1, "wombat": 2, "platypus": 3}


def _page(number: int, marker: str) -> str:
    lines = [f"The {marker} opens page {number}."]
    lines += [f"Line {i} of page {number} is about weather and tea." for i in range(1, 7)]
    return "\n".join(lines)


@pytest.fixture
def pdf(tmp_path: Path) -> Path:
    path = tmp_path / "animals.pdf"
    path.write_bytes(pdf_bytes([_page(n, m) for m, n in MARKERS.items()]))
    return path


@pytest.fixture
def service(tmp_path: Path) -> Iterator[KnowledgeService]:
    svc = KnowledgeService(tmp_path / "home", models=FakeModels(), extraction=InlineExtraction())
    yield svc
    svc.close()


def _indexed(service: KnowledgeService, pdf: Path, model: str | None = None, **sizes: int) -> str:
    base = service.create_base("pdfs", embedding_model=model, **sizes)  # type: ignore[arg-type]
    service.add(base.id, [pdf])
    assert service.run_pending_jobs(base.id) >= 1
    return base.id


def _pages_of(service: KnowledgeService, base_id: str, result: SearchResult) -> tuple[int, ...]:
    info = service.find_material(base_id, result.concept_id)
    assert info is not None
    return info.page_starts


@pytest.mark.parametrize("model", [None, "fake:bow"])
def test_a_hit_names_the_page_of_its_words_when_its_chunk_starts_a_page_earlier(
    service: KnowledgeService, pdf: Path, model: str | None
) -> None:
    base_id = _indexed(service, pdf, model, chunk_size=40, chunk_overlap=15)
    started_earlier = 0
    for word, page in MARKERS.items():
        results = service.search(base_id, word).results
        with_word = [r for r in results if word in r.text]
        assert with_word, word
        for r in with_word:
            assert r.page == page, (word, r.char_start, r.text)
            starts = _pages_of(service, base_id, r)
            started_earlier += (page_at(starts, r.char_start) or 0) < page
        for r in results:  # a hit by meaning alone names a page its chunk is on
            if word not in r.text:
                starts = _pages_of(service, base_id, r)
                first, last = page_at(starts, r.char_start), page_at(starts, r.char_end - 1)
                assert r.page is not None and first is not None and last is not None
                assert first <= r.page <= last
    # The case the label got wrong: the chunk begins with the overlap from the page before.
    assert started_earlier >= 1


def test_a_short_pdf_in_one_chunk_names_each_words_page(
    service: KnowledgeService, tmp_path: Path
) -> None:
    path = tmp_path / "orchard.pdf"
    path.write_bytes(
        pdf_bytes(
            [
                "Orchard notes. Apples grow on trees.",
                "Bees pollinate the blossom in spring.",
                "Harvest ends in October with cider pressing.",
            ]
        )
    )
    base_id = _indexed(service, path)
    pages = {word: service.search(base_id, word).results for word in ("apples", "bees", "cider")}
    # One chunk holds all three pages: only the words tell the pages apart.
    assert len({r.char_start for rs in pages.values() for r in rs}) == 1
    assert [rs[0].page for rs in pages.values()] == [1, 2, 3]
    assert pages["cider"][0].to_json()["page"] == 3


def test_a_chunk_keeps_the_page_holding_most_of_it_and_the_material_its_page_starts(
    service: KnowledgeService, pdf: Path
) -> None:
    base_id = _indexed(service, pdf, chunk_size=40, chunk_overlap=15)
    item = service.list_items(base_id)[0]
    chunks = service.item_chunks(base_id, item.id)
    info = service.find_material(base_id, chunks[0].relative_path)
    assert info is not None
    assert info.page_starts == read_pdf(pdf).page_starts
    assert len(info.page_starts) == 3
    for chunk in chunks:
        assert chunk.page == main_page(info.page_starts, chunk.char_start, chunk.char_end)
    assert any(chunk.page != page_at(info.page_starts, chunk.char_start) for chunk in chunks)


def test_an_index_from_before_page_starts_keeps_its_chunk_pages(tmp_path: Path, pdf: Path) -> None:
    home = tmp_path / "old"
    service = KnowledgeService(home, models=FakeModels(), extraction=InlineExtraction())
    base_id = _indexed(service, pdf, chunk_size=40, chunk_overlap=15)
    stored = {
        c.char_start: c.page
        for c in service.item_chunks(base_id, service.list_items(base_id)[0].id)
    }
    service.close()
    # Turn the file back into a schema 3 index: no page starts at all.
    conn = apsw.Connection(str(index_path(home / "bases" / base_id)))
    conn.execute("ALTER TABLE materials DROP COLUMN page_starts")
    conn.execute("PRAGMA user_version=3")
    conn.close()

    reopened = KnowledgeService(home, models=FakeModels(), extraction=InlineExtraction())
    try:
        results = reopened.search(base_id, "wombat").results
        assert results
        assert [r.page for r in results] == [stored[r.char_start] for r in results]
        info = reopened.find_material(base_id, results[0].concept_id)
        assert info is not None and info.page_starts == ()
    finally:
        reopened.close()


def test_main_page_and_hit_page() -> None:
    starts = (0, 10, 20)
    assert main_page(starts, 5, 25) == 2  # 5 + 10 + 5 characters
    assert main_page(starts, 5, 15) == 1  # a tie goes to the earlier page
    assert main_page(starts, 12, 30) == 3
    assert main_page((), 0, 5) is None
    text = "abcdefghij quokka tea"  # from offset 5: "quokka" starts at 16, on page 2
    assert hit_page(starts, 5, text, engine_terms("quokka")) == 2
    assert hit_page(starts, 5, text, engine_terms("tea")) == 3
    assert hit_page(starts, 5, text, engine_terms("absent")) == 2  # the main page
    assert hit_page((), 5, text, engine_terms("quokka")) is None


def test_the_window_highlights_with_the_engines_matcher() -> None:
    """The page is placed at the first word the snippet is cut around: one matcher for both."""
    assert window_spans is engine_spans and window_terms is engine_terms
