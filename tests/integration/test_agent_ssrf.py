"""Server-side request forgery through an agent: `kb_manage add` of URLs that name this
computer, the local network or a cloud metadata service, in every spelling, through
redirects, DNS rebinding and a proxy; imported bases' URLs likewise. Refused by default,
allowed once the person sets the base's `agent_private_urls`; a person's own URLs reach
anything. In-process over the agent tools, and once through a real `trove mcp`.

Every "other address" is a stand-in (tests/network_standin.py: a test resolver, and
connections to its addresses go to servers on 127.0.0.1) or a loopback proxy answering for
it: nothing leaves 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from app.agent.errors import ToolResult
from app.agent.tools import ConceptTools
from app.knowledge.jobs.reader_pool import InlineExtraction
from app.knowledge.service import KnowledgeService
from app.knowledge.source_origin import Origin, origin_of
from app.knowledge.types import Base, ErrorCode, ItemStatus
from tests.fakes import FakeModels
from tests.httpserver import LoopbackServer, Response
from tests.network_standin import StandInNetwork

REPO = Path(__file__).resolve().parents[2]
PUBLIC = "93.184.216.34"  # only ever a label for a loopback stand-in
NS = "http://www.sitemaps.org/schemas/sitemap/0.9"


@pytest.fixture
def net(monkeypatch: pytest.MonkeyPatch) -> Iterator[StandInNetwork]:
    network = StandInNetwork()
    network.install(monkeypatch)
    yield network
    assert network.violations == [], "a fetch tried to reach something off 127.0.0.1"


@pytest.fixture
def svc(tmp_path: Path, net: StandInNetwork) -> Iterator[KnowledgeService]:
    service = KnowledgeService(
        tmp_path / "home", models=FakeModels(), extraction=InlineExtraction()
    )
    service.parts.resolve_host = net.resolve
    yield service
    service.close()


@pytest.fixture
def server() -> Iterator[LoopbackServer]:
    with LoopbackServer() as srv:
        srv.route("/admin", Response.text("router admin page: the wifi password is hunter2"))
        srv.route("/page", Response.text("<h1>A public page</h1>", content_type="text/html"))
        yield srv


@pytest.fixture
def other() -> Iterator[LoopbackServer]:
    with LoopbackServer() as srv:
        srv.route("/secret", Response.text("another local service: its secret token"))
        yield srv


@pytest.fixture
def base(svc: KnowledgeService) -> Base:
    made = svc.create_base("Notes")
    return svc.set_agent_writes(made.id, True)


def ok(result: ToolResult) -> dict[str, Any]:
    assert not result.is_error, result.data
    return result.data


def add(tools: ConceptTools, base: Base, *urls: str) -> dict[str, Any]:
    return ok(tools.call("kb_manage", {"baseId": base.id, "action": "add", "sources": list(urls)}))


def settle(svc: KnowledgeService, base: Base) -> None:
    svc.run_pending_jobs(base.id)


def only_item(svc: KnowledgeService, base: Base, url: str) -> Any:
    (item,) = [i for i in svc.list_items(base.id) if i.source == url]
    return item


def read(tools: ConceptTools, base: Base, concept_id: str) -> ToolResult:
    return tools.call("kb_read", {"baseId": base.id, "conceptId": concept_id})


def local_spellings(port: int) -> list[str]:
    return [
        f"http://127.0.0.1:{port}/admin",
        f"http://0x7f000001:{port}/admin",
        f"http://2130706433:{port}/admin",
        f"http://017700000001:{port}/admin",
        f"http://127.1:{port}/admin",
        f"http://[::1]:{port}/admin",
        f"http://[::ffff:127.0.0.1]:{port}/admin",
        f"http://0.0.0.0:{port}/admin",
        f"http://localhost:{port}/admin",
        "http://169.254.169.254/latest/meta-data/iam/security-credentials/",
        "http://metadata.google.internal/computeMetadata/v1/",
        "http://10.0.0.1/",
        "http://192.168.1.1/cgi-bin/admin",
    ]


def test_kb_manage_refuses_local_addresses_in_every_spelling_until_the_person_allows(
    svc: KnowledgeService, base: Base, server: LoopbackServer
) -> None:
    tools = ConceptTools(svc)
    urls = local_spellings(server.port)
    result = add(tools, base, *urls)
    assert result["items"] == []
    assert [e["source"] for e in result["errors"]] == urls
    for error in result["errors"]:
        assert error["message"].startswith(f"{ErrorCode.FETCH_FAILED}: ")
        assert "agents may add only public internet addresses" in error["message"]
    assert svc.list_items(base.id) == []
    assert server.hits("/admin") == 0

    # The person allows it (trove base set --agent-private-urls on): the same URL is read.
    assert svc.set_agent_private_urls(base.id, True).agent_private_urls is True
    tree = ok(tools.call("kb_tree", {"baseId": base.id}))
    assert tree["agentPrivateUrls"] is True
    added = add(tools, base, f"http://127.0.0.1:{server.port}/admin")
    (item,) = added["items"]
    settle(svc, base)
    text = ok(read(tools, base, item["conceptId"]))["text"]
    assert "hunter2" in text

    # A person's own local URL (an intranet wiki, a local server) is fetched as it is.
    mine = svc.create_base("Mine")
    report = svc.add_urls(mine.id, [f"http://127.0.0.1:{server.port}/admin"])
    settle(svc, mine)
    assert svc.get_item(report.added[0].id).status is ItemStatus.COMPLETED


def test_a_name_resolving_to_loopback_fails_its_item_when_fetched(
    svc: KnowledgeService, base: Base, server: LoopbackServer, net: StandInNetwork
) -> None:
    net.name("intranet.example", ["127.0.0.1"])
    net.name("cloud.example", ["169.254.169.254"])
    tools = ConceptTools(svc)
    urls = [f"http://intranet.example:{server.port}/admin", "http://cloud.example/latest/"]
    added = add(tools, base, *urls)
    assert len(added["items"]) == 2  # a name is only known to be local once resolved
    settle(svc, base)
    for url in urls:
        item = only_item(svc, base, url)
        assert item.status is ItemStatus.FAILED
        assert item.error_code == ErrorCode.FETCH_FAILED
        assert "was not fetched" in (item.error_message or "")
    assert "127.0.0.1, a loopback address" in only_item(svc, base, urls[0]).error_message
    assert server.hits("/admin") == 0
    assert net.connects == []
    result = read(tools, base, added["items"][0]["conceptId"])
    assert result.is_error and result.data["error"]["code"] == "CONCEPT_NOT_VISIBLE"


def test_a_public_page_redirecting_to_another_local_port_is_refused(
    svc: KnowledgeService,
    base: Base,
    server: LoopbackServer,
    other: LoopbackServer,
    net: StandInNetwork,
) -> None:
    net.name("public.example", [PUBLIC])
    net.route(PUBLIC, server)
    server.redirect("/go", f"http://127.0.0.1:{other.port}/secret")
    server.redirect("/go-decimal", f"http://2130706433:{other.port}/secret")
    tools = ConceptTools(svc)
    urls = [
        f"http://public.example:{server.port}/go",
        f"http://public.example:{server.port}/go-decimal",
    ]
    add(tools, base, *urls)
    settle(svc, base)
    for url in urls:
        item = only_item(svc, base, url)
        assert item.status is ItemStatus.FAILED
        assert "redirected to" in (item.error_message or "")
    assert server.hits("/go") == 1 and other.hits("/secret") == 0

    # Allowed, the redirect is followed (a fresh add: the failed one is the person's to retry).
    svc.set_agent_private_urls(base.id, True)
    svc.reindex(base.id, [only_item(svc, base, urls[0]).id])
    settle(svc, base)
    assert only_item(svc, base, urls[0]).status is ItemStatus.COMPLETED
    assert other.hits("/secret") == 1


def test_dns_rebinding_never_reaches_loopback(
    svc: KnowledgeService, base: Base, server: LoopbackServer, net: StandInNetwork
) -> None:
    """The name answers public, then loopback: the page is fetched from the address that
    was checked, and the base holds the public page, never the local one."""
    net.name("rebind.example", [PUBLIC], ["127.0.0.1"])
    net.route(PUBLIC, server)
    tools = ConceptTools(svc)
    (item,) = add(tools, base, f"http://rebind.example:{server.port}/page")["items"]
    settle(svc, base)
    assert "A public page" in ok(read(tools, base, item["conceptId"]))["text"]
    assert net.connects == [(PUBLIC, server.port)]
    assert net.lookups_of("rebind.example") == 1
    # Its answer is loopback now: the next fetch of that name is refused, not connected.
    url = f"http://rebind.example:{server.port}/admin"
    add(tools, base, url)
    settle(svc, base)
    assert only_item(svc, base, url).status is ItemStatus.FAILED
    assert net.connects == [(PUBLIC, server.port)] and server.hits("/admin") == 0


def test_through_a_loopback_proxy_standing_in_for_the_network(
    svc: KnowledgeService, base: Base, net: StandInNetwork, monkeypatch: pytest.MonkeyPatch
) -> None:
    net.name("intranet.example", ["10.20.30.40"])
    net.name("public.example", [PUBLIC])
    with LoopbackServer() as proxy:
        proxy.route("/page", Response.text("served by the proxy for the asked host"))
        monkeypatch.setenv("HTTP_PROXY", proxy.base_url)
        tools = ConceptTools(svc)
        refused = add(tools, base, "http://10.20.30.40/page")
        assert refused["items"] == [] and len(refused["errors"]) == 1
        add(tools, base, "http://intranet.example/page", "http://public.example/page")
        settle(svc, base)
        assert only_item(svc, base, "http://intranet.example/page").status is ItemStatus.FAILED
        assert only_item(svc, base, "http://public.example/page").status is ItemStatus.COMPLETED
        assert [r.headers["host"] for r in proxy.requests("/page")] == ["public.example"]

        svc.set_agent_private_urls(base.id, True)
        (item,) = add(tools, base, "http://10.20.30.40/page")["items"]
        settle(svc, base)
        assert "served by the proxy" in ok(read(tools, base, item["conceptId"]))["text"]
        assert proxy.requests("/page")[-1].headers["host"] == "10.20.30.40"


def test_urls_of_an_imported_base_are_never_fetched_again(
    svc: KnowledgeService, server: LoopbackServer, tmp_path: Path
) -> None:
    """Someone else's export: its web pages and sitemaps are reindexed from the archive's
    own copies, never fetched (imported_sources.py), whatever the base allows agents; and
    should anything fetch them, their origin keeps them to public addresses."""
    body = f'<urlset xmlns="{NS}"><url><loc>{server.url("/admin")}</loc></url></urlset>'
    server.route("/sitemap.xml", Response(body=body.encode(), content_type="text/xml"))
    theirs = svc.create_base("Theirs")
    svc.add_urls(theirs.id, [server.url("/page")])
    svc.add_urls(theirs.id, [server.url("/sitemap.xml")], sitemap=True)
    settle(svc, theirs)
    assert {i.status for i in svc.list_items(theirs.id)} == {ItemStatus.COMPLETED}
    svc.export_base(theirs.id, tmp_path / "theirs.trovebase")
    hits = server.hits("/page"), server.hits("/sitemap.xml"), server.hits("/admin")

    mine = svc.import_base(tmp_path / "theirs.trovebase", name="Imported").base
    roots = svc.list_items(mine.id)
    assert all((i.options or {}).get("origin") == "import" for i in roots)
    for allowed in (False, True):
        svc.set_agent_private_urls(mine.id, allowed)
        svc.reindex(mine.id, None)
        settle(svc, mine)
        assert {i.status for i in svc.list_items(mine.id)} == {ItemStatus.COMPLETED}
        assert (server.hits("/page"), server.hits("/sitemap.xml"), server.hits("/admin")) == hits
    page = next(i for i in svc.list_items(mine.id) if i.source == server.url("/page"))
    assert origin_of(svc.catalog, page) is Origin.IMPORT


def test_an_archive_cannot_vouch_for_its_own_urls(
    svc: KnowledgeService, server: LoopbackServer, tmp_path: Path
) -> None:
    theirs = svc.create_base("Theirs")
    report = svc.add_urls(theirs.id, [server.url("/page")])
    settle(svc, theirs)
    # A hostile exporter marks its item as the person's own.
    svc.catalog.update_item(report.added[0].id, options={"origin": "person"})
    svc.export_base(theirs.id, tmp_path / "theirs.trovebase")
    mine = svc.import_base(tmp_path / "theirs.trovebase", name="Imported").base
    (item,) = svc.list_items(mine.id)
    assert (item.options or {}).get("origin") == "import" and item.imported


# -- a real `trove mcp` --------------------------------------------------------------------


def test_trove_mcp_refuses_local_urls_then_reads_them_once_allowed(
    tmp_path: Path, server: LoopbackServer
) -> None:
    """A real `trove mcp` subprocess, with an HTTP proxy on 127.0.0.1 standing in for the
    local network: literal local addresses are refused at kb_manage add, nothing reaches
    the proxy or the server; allowed by the person, the proxy serves the private address."""
    home = tmp_path / "home"
    setup = KnowledgeService(home, extraction=InlineExtraction())
    try:
        base_id = setup.set_agent_writes(setup.create_base("Notes").id, True).id
    finally:
        setup.close()

    with LoopbackServer() as proxy:
        proxy.route("/wiki", Response.text("the intranet wiki, through the proxy"))
        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "app", "--home", str(home), "mcp"],
            cwd=str(REPO),
            env={"HTTP_PROXY": proxy.base_url, "NO_PROXY": ""},
        )

        async def session() -> None:
            async with (
                stdio_client(params) as (read_stream, write_stream),
                ClientSession(read_stream, write_stream, read_timeout_seconds=60) as client,
            ):
                await client.initialize()
                urls = [*local_spellings(server.port), "http://10.1.2.3/wiki"]
                result = await client.call_tool(
                    "kb_manage",
                    {"baseId": base_id, "action": "add", "sources": urls, "wait": True},
                )
                data = result.structured_content or {}
                assert not result.is_error and data["items"] == []
                assert len(data["errors"]) == len(urls)

                allow = KnowledgeService(home, extraction=InlineExtraction())
                try:
                    allow.set_agent_private_urls(base_id, True)
                finally:
                    allow.close()
                result = await client.call_tool(
                    "kb_manage",
                    {
                        "baseId": base_id,
                        "action": "add",
                        "sources": ["http://10.1.2.3/wiki"],
                        "wait": True,
                    },
                )
                data = result.structured_content or {}
                assert data["processing"] == "done", data
                (item,) = data["items"]
                assert item["status"] == "completed"
                read = await client.call_tool(
                    "kb_read", {"baseId": base_id, "conceptId": item["conceptId"]}
                )
                assert "intranet wiki" in (read.structured_content or {})["text"]

        asyncio.run(asyncio.wait_for(session(), 120))
        assert [r.headers["host"] for r in proxy.requests()] == ["10.1.2.3"]
    assert server.hits("/admin") == 0


def test_a_scheduled_refresh_follows_the_item_s_origin(
    svc: KnowledgeService, base: Base, server: LoopbackServer, net: StandInNetwork
) -> None:
    """A page is refreshed with the policy of whoever added it: the agent's page, whose name
    now resolves to loopback, is not fetched again; the person's same page is."""
    net.name("moving.example", [PUBLIC], ["127.0.0.1"])
    net.route(PUBLIC, server)
    url = f"http://moving.example:{server.port}/page"
    tools = ConceptTools(svc)
    (agents,) = add(tools, base, url)["items"]
    settle(svc, base)
    assert svc.get_item(agents["itemId"]).status is ItemStatus.COMPLETED
    assert net.connects == [(PUBLIC, server.port)]

    svc.refresh_now(base.id, agents["itemId"])
    settle(svc, base)
    assert net.connects == [(PUBLIC, server.port)]  # refused: nothing connected to loopback
    assert svc.get_item(agents["itemId"]).status is ItemStatus.COMPLETED  # kept as it was

    mine = svc.create_base("Mine")
    (person,) = svc.add_urls(mine.id, [url]).added
    settle(svc, mine)
    svc.refresh_now(mine.id, person.id)
    settle(svc, mine)
    assert net.connects[-1] == ("127.0.0.1", server.port)  # a person's page may go local


def test_cli_base_set_agent_private_urls(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from app.cli import main

    home = tmp_path / "home"
    setup = KnowledgeService(home, extraction=InlineExtraction())
    base = setup.create_base("Notes")
    assert base.agent_private_urls is False  # off by default
    setup.close()
    assert main(["--home", str(home), "base", "set", "Notes", "--agent-private-urls", "on"]) == 0
    assert "may reach this computer and the local network" in capsys.readouterr().err
    assert main(["--home", str(home), "base", "list", "--json"]) == 0
    assert '"agentPrivateUrls": true' in capsys.readouterr().out
    assert main(["--home", str(home), "base", "set", base.id, "--agent-private-urls", "off"]) == 0
    assert "reach only public internet addresses" in capsys.readouterr().err
    check = KnowledgeService(home, extraction=InlineExtraction())
    try:
        assert check.get_base(base.id).agent_private_urls is False
    finally:
        check.close()
