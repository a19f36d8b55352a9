"""Scheduled refresh of web pages: conditional GETs against a loopback server that counts
requests and answers 304; only a page whose text changed is indexed again."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.knowledge.jobs.reader_pool import InlineExtraction
from app.knowledge.service import KnowledgeService
from app.knowledge.types import ItemStatus, TroveError
from tests.fakes import FakeModels
from tests.httpserver import LoopbackServer, Request, Response


class Site:
    """Pages with ETags: a request that names the current one gets 304."""

    def __init__(self, server: LoopbackServer) -> None:
        self.server = server
        self.pages: dict[str, str] = {}
        self.versions: dict[str, int] = {}

    def publish(self, path: str, text: str) -> None:
        self.pages[path] = text
        self.versions[path] = self.versions.get(path, 0) + 1
        self.server.route(path, self._answer)

    def _answer(self, request: Request) -> Response:
        etag = f'"v{self.versions[request.path]}"'
        if request.headers.get("if-none-match") == etag:
            return Response(status=304, headers={"ETag": etag})
        html = f"<html><head><title>{request.path}</title></head><body><p>{self.pages[request.path]}</p></body></html>"
        return Response.text(html, content_type="text/html", headers={"ETag": etag})

    def gets(self, path: str) -> int:
        return self.server.hits(path)

    def not_modified(self, path: str) -> int:
        return sum(
            1 for r in self.server.requests(path) if r.headers.get("if-none-match") is not None
        )


@pytest.fixture
def site() -> Iterator[Site]:
    with LoopbackServer() as server:
        yield Site(server)


@pytest.fixture
def kb(tmp_path: Path) -> Iterator[KnowledgeService]:
    service = KnowledgeService(
        tmp_path / "home", models=FakeModels(), extraction=InlineExtraction()
    )
    yield service
    service.close()


def _refresh(kb: KnowledgeService, base_id: str, item_id: str) -> None:
    kb.refresh_now(base_id, item_id)
    kb.run_pending_jobs(base_id)


def test_an_unchanged_page_costs_one_conditional_request_and_no_reindex(
    kb: KnowledgeService, site: Site
) -> None:
    site.publish("/otters", "Otters hold hands while they sleep.")
    site.publish("/stoats", "Stoats change coat in winter.")
    base = kb.create_base("web")
    otters = kb.add_urls(base.id, [site.server.url("/otters")]).added[0]
    kb.run_pending_jobs(base.id)
    assert site.gets("/otters") == 1
    indexed_at = kb.get_item(otters.id).updated_at

    _refresh(kb, base.id, otters.id)  # no validators yet: a plain GET, same text
    assert site.gets("/otters") == 2
    _refresh(kb, base.id, otters.id)  # now with If-None-Match: 304
    assert site.gets("/otters") == 3
    assert site.not_modified("/otters") == 1
    assert kb.get_item(otters.id).updated_at == indexed_at  # never reindexed

    site.publish("/otters", "Otters hold hands and juggle pebbles.")
    _refresh(kb, base.id, otters.id)  # 200 with new text -> reindexed (its own fetch)
    assert site.gets("/otters") == 5
    assert kb.get_item(otters.id).status is ItemStatus.COMPLETED
    assert [r.source for r in kb.search(base.id, "pebbles").results] == [otters.source]
    assert kb.search(base.id, "sleep").results == []


def test_a_sitemap_refresh_reindexes_only_the_changed_page(
    kb: KnowledgeService, site: Site
) -> None:
    for name in ("a", "b", "c"):
        site.publish(f"/{name}", f"Page {name} about the {name}-animal.")
    _sitemap(site, "abc")
    base = kb.create_base("web")
    (root,) = kb.add_urls(base.id, [site.server.url("/sitemap.xml")], sitemap=True).added
    kb.run_pending_jobs(base.id)
    _refresh(kb, base.id, root.id)  # learns the ETags
    before = {n: site.gets(f"/{n}") for n in "abc"}
    site.publish("/b", "Page b is now about the badger.")
    _refresh(kb, base.id, root.id)
    gets = {n: site.gets(f"/{n}") - before[n] for n in "abc"}
    assert gets == {"a": 1, "b": 2, "c": 1}  # a and c: one 304 each; b: check + reindex
    assert kb.get_item(root.id).status is ItemStatus.COMPLETED
    assert len(kb.search(base.id, "badger").results) == 1


def _sitemap(site: Site, names: str) -> None:
    urls = "".join(f"<url><loc>{site.server.url('/' + n)}</loc></url>" for n in names)
    site.server.route(
        "/sitemap.xml",
        Response.text(
            '<?xml version="1.0"?>'
            f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{urls}</urlset>',
            content_type="application/xml",
        ),
    )


def test_a_sitemap_refresh_follows_pages_added_and_dropped(
    kb: KnowledgeService, site: Site
) -> None:
    for name in ("a", "b", "d"):
        site.publish(f"/{name}", f"Page {name} about the {name}-animal.")
    _sitemap(site, "ab")
    base = kb.create_base("web")
    (root,) = kb.add_urls(base.id, [site.server.url("/sitemap.xml")], sitemap=True).added
    kb.run_pending_jobs(base.id)
    _sitemap(site, "ad")
    _refresh(kb, base.id, root.id)
    pages = sorted(i.source for i in kb.list_items(base.id) if i.parent_id == root.id)
    assert pages == [site.server.url("/a"), site.server.url("/d")]
    assert site.gets("/b") == 1  # dropped from the sitemap: not fetched again
    assert kb.search(base.id, "d-animal").results
    assert kb.get_item(root.id).status is ItemStatus.COMPLETED


def test_a_refresh_interval_is_stored_and_comes_due(kb: KnowledgeService, site: Site) -> None:
    site.publish("/p", "A page.")
    base = kb.create_base("web")
    (page,) = kb.add_urls(base.id, [site.server.url("/p")]).added
    kb.run_pending_jobs(base.id)
    assert kb.refresh_interval(page.id) is None  # off by default
    with pytest.raises(TroveError):
        kb.set_refresh(base.id, page.id, 5)  # too often
    kb.set_refresh(base.id, page.id, 3600)
    assert kb.refresh_interval(page.id) == 3600
    assert kb.catalog.due_refreshes(time.time()) == []
    assert kb.catalog.due_refreshes(time.time() + 3601) == [(page.id, base.id)]
    kb.set_refresh(base.id, page.id, None)
    assert kb.refresh_interval(page.id) is None
