"""`trove mcp` end to end: the server runs as a subprocess and the official MCP client
drives it over stdio, as an agent host (Claude Desktop, an IDE) would."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from app.knowledge.jobs.reader_pool import InlineExtraction
from app.knowledge.service import KnowledgeService
from tests.conftest import write_files

REPO = Path(__file__).resolve().parents[2]
SESSION_TIMEOUT = 90.0

DOCS = {
    "garden/tomatoes.txt": (
        "Tomatoes need full sun.\nWater them deeply in summer.\nStake the tall varieties.\n"
    ),
    "garden/roses.md": "# Roses\n\nPrune roses in late winter.\nFeed roses compost in spring.\n",
    "garden/beds/soil.txt": "Loam holds water and air.\n",
    "kitchen/bread.txt": "A sourdough starter needs flour, water and patience.\n",
    "kitchen/jam.txt": "Strawberry jam sets at 105 degrees.\n",
}

Body = Callable[[ClientSession], Awaitable[None]]


def _params(home: Path) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "app", "--home", str(home), "mcp"],
        cwd=str(REPO),
    )


def serve(home: Path, body: Body) -> None:
    """Start `trove mcp` on `home`, run `body` against it, shut it down; all time-boxed."""

    async def session() -> None:
        async with (
            stdio_client(_params(home)) as (read, write),
            ClientSession(read, write, read_timeout_seconds=60) as client,
        ):
            init = await client.initialize()
            assert init.server_info.name == "trove"
            await body(client)

    asyncio.run(asyncio.wait_for(session(), SESSION_TIMEOUT))


class LiveServer:
    """One `trove mcp` process and client session kept open across tests (starting the
    server and importing the SDK takes seconds); its event loop runs in a thread and each
    test's body runs there."""

    def __init__(self, home: Path) -> None:
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._stop: asyncio.Event | None = None
        self._client: ClientSession | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._main, args=(home,), daemon=True)
        self._thread.start()
        assert self._ready.wait(SESSION_TIMEOUT), "the MCP server did not start"
        if self._error is not None:
            raise self._error

    def _main(self, home: Path) -> None:
        try:
            self._loop.run_until_complete(self._session(home))
        except BaseException as exc:
            self._error = exc
        finally:
            self._ready.set()
            self._loop.close()

    async def _session(self, home: Path) -> None:
        self._stop = asyncio.Event()
        async with (
            stdio_client(_params(home)) as (read, write),
            ClientSession(read, write, read_timeout_seconds=60) as client,
        ):
            init = await client.initialize()
            assert init.server_info.name == "trove"
            self._client = client
            self._ready.set()
            await self._stop.wait()

    def run(self, body: Body) -> None:
        assert self._client is not None
        future = asyncio.run_coroutine_threadsafe(body(self._client), self._loop)
        future.result(timeout=SESSION_TIMEOUT)

    def close(self) -> None:
        if self._stop is not None and not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(SESSION_TIMEOUT)
        assert not self._thread.is_alive()
        if self._error is not None:
            raise self._error


async def call(client: ClientSession, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.structured_content
    data = result.structured_content
    assert isinstance(data, dict)
    assert json.loads(result.content[0].text) == data  # type: ignore[union-attr]
    return data


async def fail(client: ClientSession, tool: str, arguments: dict[str, Any], code: str) -> str:
    result = await client.call_tool(tool, arguments)
    assert result.is_error, result.structured_content
    error = (result.structured_content or {})["error"]
    assert error["code"] == code, error
    assert "Traceback" not in error["message"]
    return str(error["message"])


def seed(home: Path, sources: Path) -> dict[str, str]:
    """A BM25 base (no embedding model, so no provider) with a deleting and a deleted item."""
    write_files(sources, DOCS)
    write_files(sources / "extra", {"compost.txt": "Compost heaps need turning.\n"})
    write_files(sources / "extra", {"weeds.txt": "Pull bindweed by the roots.\n"})
    svc = KnowledgeService(home, extraction=InlineExtraction())
    try:
        base = svc.create_base("Garden")
        locked = svc.create_base("Locked")
        report = svc.add(
            base.id,
            [
                sources / "garden",
                sources / "kitchen",
                sources / "extra/compost.txt",
                sources / "extra/weeds.txt",
            ],
        )
        assert not report.errors
        svc.add(locked.id, [sources / "kitchen"])
        svc.run_pending_jobs()
        items = {i.relative_path: i for i in svc.list_items(base.id)}
        svc.delete_items(base.id, [items["weeds.txt"].id])
        svc.run_pending_jobs()  # weeds.txt: deleted
        svc.delete_items(base.id, [items["compost.txt"].id])  # compost.txt: left deleting
        return {"base": base.id, "locked": locked.id}
    finally:
        svc.close()


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    root = tmp_path_factory.mktemp("mcp")
    home = root / "home"
    return home, seed(home, root / "sources")


@pytest.fixture(scope="module")
def live(seeded: tuple[Path, dict[str, str]]) -> Iterator[LiveServer]:
    """A server on the seeded home for the read-only tests."""
    server = LiveServer(seeded[0])
    yield server
    server.close()


def test_lists_the_tools_with_json_schemas(live: LiveServer) -> None:
    async def body(client: ClientSession) -> None:
        listed = await client.list_tools()
        tools = {t.name: t for t in listed.tools}
        assert list(tools) == ["kb_search", "kb_read", "kb_tree", "kb_manage"]
        for tool in tools.values():
            assert tool.description
            assert tool.input_schema["type"] == "object"
            assert tool.input_schema["additionalProperties"] is False
        assert tools["kb_search"].input_schema["required"] == ["query"]
        assert set(tools["kb_read"].input_schema["required"]) == {"baseId", "conceptId"}
        assert tools["kb_manage"].input_schema["properties"]["action"]["enum"] == [
            "add",
            "delete",
            "refresh",
        ]
        assert tools["kb_read"].annotations and tools["kb_read"].annotations.read_only_hint
        assert tools["kb_manage"].annotations
        assert tools["kb_manage"].annotations.read_only_hint is False
        await fail(client, "kb_nope", {}, "UNKNOWN_TOOL")

    live.run(body)


def test_search_then_read_the_exact_slice_and_grep(
    seeded: tuple[Path, dict[str, str]], live: LiveServer
) -> None:
    ids = seeded[1]

    async def body(client: ClientSession) -> None:
        found = await call(client, "kb_search", {"query": "prune roses winter"})
        hit = found["results"][0]
        assert hit["baseId"] == ids["base"]
        assert hit["conceptId"] == "garden/roses.md"
        assert hit["title"] and hit["type"] == "file"
        assert hit["scoreKind"] == "ranking" and isinstance(hit["score"], float)
        assert "Prune roses in late winter." in hit["text"]

        sliced = await call(
            client,
            "kb_read",
            {
                "baseId": hit["baseId"],
                "conceptId": hit["conceptId"],
                "charStart": hit["charStart"],
                "charEnd": hit["charEnd"],
            },
        )
        assert sliced["text"] == hit["text"]
        text = DOCS["garden/tomatoes.txt"]
        start = text.index("Water")
        part = await call(
            client,
            "kb_read",
            {
                "baseId": "Garden",
                "conceptId": "garden/tomatoes.txt",
                "charStart": start,
                "charEnd": start + 18,
            },
        )
        assert part["text"] == text[start : start + 18] == "Water them deeply "
        assert part["totalChars"] == len(text) and part["truncated"] is False

        grep = await call(
            client,
            "kb_read",
            {"baseId": ids["base"], "conceptId": "garden/tomatoes.txt", "pattern": r"\bS\w+"},
        )
        assert [(m["line"], m["text"]) for m in grep["matches"]] == [
            (3, "Stake the tall varieties.")
        ]
        (match,) = grep["matches"]
        assert text[match["charStart"] : match["charEnd"]] == "Stake"
        assert match["before"] == ["Water them deeply in summer."]
        catastrophic = await call(
            client,
            "kb_read",
            {"baseId": ids["base"], "conceptId": "garden/tomatoes.txt", "pattern": "(a+)+$"},
        )
        assert catastrophic["matches"] == [] and catastrophic["timedOut"] is False
        await fail(
            client,
            "kb_read",
            {"baseId": ids["base"], "conceptId": "garden/tomatoes.txt", "pattern": "(a+"},
            "INVALID_PATTERN",
        )
        await fail(client, "kb_search", {"query": "!!"}, "NO_SEARCHABLE_TOKEN")

    live.run(body)


def test_tree_lists_bases_and_pages_a_base(
    seeded: tuple[Path, dict[str, str]], live: LiveServer
) -> None:
    ids = seeded[1]

    async def body(client: ClientSession) -> None:
        bases = await call(client, "kb_tree", {})
        by_name = {b["name"]: b for b in bases["bases"]}
        assert set(by_name) == {"Garden", "Locked"}
        assert by_name["Garden"]["statusCounts"] == {"completed": 7, "deleting": 1}
        assert by_name["Garden"]["agentWrites"] is False

        whole = await call(client, "kb_tree", {"baseId": ids["base"]})
        nodes: list[dict[str, Any]] = []
        cursors: list[str] = []
        while True:
            args: dict[str, Any] = {"baseId": ids["base"], "limit": 3}
            if cursors:
                args["cursor"] = cursors[-1]
            page = await call(client, "kb_tree", args)
            nodes.extend(page["nodes"])
            if page["nextCursor"] is None:
                break
            cursors.append(page["nextCursor"])
        pages = len(cursors) + 1
        assert nodes == whole["nodes"]
        assert pages == -(-whole["total"] // 3) > 1
        documents = {n["conceptId"]: n["status"] for n in nodes if n["kind"] == "document"}
        assert documents == {
            "garden/beds/soil.txt": "completed",
            "garden/roses.md": "completed",
            "garden/tomatoes.txt": "completed",
            "kitchen/bread.txt": "completed",
            "kitchen/jam.txt": "completed",
            "compost.txt": "deleting",
        }
        # a cursor only continues the listing it came from
        await fail(
            client, "kb_tree", {"baseId": ids["locked"], "cursor": cursors[0]}, "INVALID_CURSOR"
        )

    live.run(body)


def test_refuses_unsafe_deleting_and_deleted_concept_ids(
    seeded: tuple[Path, dict[str, str]], live: LiveServer
) -> None:
    ids = seeded[1]

    async def body(client: ClientSession) -> None:
        base = ids["base"]
        for unsafe in ("../trove.sqlite", "garden/../../../trove.sqlite", "/etc/passwd"):
            await fail(client, "kb_read", {"baseId": base, "conceptId": unsafe}, "UNSAFE_PATH")
        await fail(
            client, "kb_read", {"baseId": base, "conceptId": ".trove/index.sqlite"}, "UNSAFE_PATH"
        )
        message = await fail(
            client, "kb_read", {"baseId": base, "conceptId": "compost.txt"}, "CONCEPT_NOT_VISIBLE"
        )
        assert "being deleted" in message
        await fail(
            client,
            "kb_read",
            {"baseId": base, "conceptId": "compost.txt", "pattern": "turning"},
            "CONCEPT_NOT_VISIBLE",
        )
        await fail(
            client, "kb_read", {"baseId": base, "conceptId": "weeds.txt"}, "CONCEPT_NOT_FOUND"
        )
        found = await call(client, "kb_search", {"query": "compost bindweed"})
        assert {h["conceptId"] for h in found["results"]} == {"garden/roses.md"}

    live.run(body)


def test_manage_is_refused_until_enabled_then_adds_and_deletes(tmp_path: Path) -> None:
    home = tmp_path / "home"
    ids = seed(home, tmp_path / "sources")
    new = write_files(tmp_path / "new", {"beans.txt": "Runner beans climb hazel poles.\n"})

    async def body(client: ClientSession) -> None:
        add = {"baseId": ids["base"], "action": "add", "sources": [str(new / "beans.txt")]}
        message = await fail(client, "kb_manage", add, "AGENT_WRITES_DISABLED")
        assert "Garden" in message
        await fail(
            client,
            "kb_manage",
            {"baseId": ids["base"], "action": "delete", "conceptIds": ["garden/roses.md"]},
            "AGENT_WRITES_DISABLED",
        )

        # The person turns agent writes on (in the app) while the server runs.
        svc = KnowledgeService(home, extraction=InlineExtraction())
        try:
            svc.set_agent_writes(ids["base"], True)
        finally:
            svc.close()

        added = await call(client, "kb_manage", {**add, "wait": True})
        assert added["processing"] == "done"
        (item,) = added["items"]
        assert (item["conceptId"], item["status"]) == ("beans.txt", "completed")
        found = await call(client, "kb_search", {"query": "runner beans hazel"})
        assert found["results"][0]["conceptId"] == "beans.txt"
        read = await call(client, "kb_read", {"baseId": ids["base"], "conceptId": "beans.txt"})
        assert read["text"] == "Runner beans climb hazel poles.\n"

        deleted = await call(
            client,
            "kb_manage",
            {
                "baseId": ids["base"],
                "action": "delete",
                "conceptIds": ["beans.txt"],
                "wait": True,
            },
        )
        assert deleted["processing"] == "done" and deleted["deleted"] == [item["itemId"]]
        await fail(
            client,
            "kb_read",
            {"baseId": ids["base"], "conceptId": "beans.txt"},
            "CONCEPT_NOT_FOUND",
        )
        # the other base stays locked
        await fail(
            client,
            "kb_manage",
            {"baseId": ids["locked"], "action": "add", "sources": [str(new / "beans.txt")]},
            "AGENT_WRITES_DISABLED",
        )

    serve(home, body)


def test_stdout_carries_only_protocol_messages(seeded: tuple[Path, dict[str, str]]) -> None:
    """Raw JSON-RPC over the pipes, with verbose logging on: every stdout line is a
    protocol message, and the log lines go to stderr."""
    home, ids = seeded
    proc = subprocess.Popen(
        [sys.executable, "-m", "app", "--home", str(home), "-v", "mcp"],
        cwd=REPO,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={k: v for k, v in os.environ.items() if k != "TROVE_HOME"},
    )
    watchdog = threading.Timer(SESSION_TIMEOUT, proc.kill)
    watchdog.start()
    assert proc.stdin is not None and proc.stdout is not None

    def send(message: dict[str, Any]) -> None:
        assert proc.stdin is not None
        proc.stdin.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
        proc.stdin.flush()

    def receive() -> dict[str, Any]:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line, "the server closed stdout"
        message = json.loads(line)
        assert message["jsonrpc"] == "2.0"
        return dict(message)

    try:
        send(
            {
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "raw-test", "version": "0"},
                },
            }
        )
        assert receive()["result"]["serverInfo"]["name"] == "trove"
        send({"method": "notifications/initialized"})
        send(
            {
                "id": 2,
                "method": "tools/call",
                "params": {
                    "name": "kb_read",
                    "arguments": {"baseId": ids["base"], "conceptId": "kitchen/jam.txt"},
                },
            }
        )
        reply = receive()
        assert reply["id"] == 2
        assert reply["result"]["structuredContent"]["text"] == DOCS["kitchen/jam.txt"]
        assert reply["result"]["isError"] is False
        send({"id": 3, "method": "tools/call", "params": {"name": "kb_read", "arguments": {}}})
        reply = receive()
        assert reply["result"]["isError"] is True
        assert reply["result"]["structuredContent"]["error"]["code"] == "INVALID_ARGUMENT"
        proc.stdin.close()
        rest = proc.stdout.read()
        assert proc.wait(timeout=30) == 0
    finally:
        watchdog.cancel()
        if proc.poll() is None:
            proc.kill()
        assert proc.stderr is not None
        stderr = proc.stderr.read()
        proc.stderr.close()
        proc.stdout.close()
    for line in rest.splitlines():
        json.loads(line)
    assert "Trove MCP server on stdio" in stderr


def test_print_config_gives_a_copyable_client_snippet(tmp_path: Path) -> None:
    from app.agent.client_config import client_config

    home = tmp_path / "home"
    done = subprocess.run(
        [sys.executable, "-m", "app", "--home", str(home), "mcp", "--print-config"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={k: v for k, v in os.environ.items() if k != "TROVE_HOME"},
    )
    assert done.returncode == 0, done.stderr
    config = json.loads(done.stdout)
    entry = config["mcpServers"]["trove"]
    assert entry["args"][-1] == "mcp"
    assert Path(entry["command"]).exists()
    assert entry["env"]["TROVE_HOME"] == str(home.resolve())

    default = client_config()["mcpServers"]["trove"]
    assert "TROVE_HOME" not in default.get("env", {})
    # The snippet really starts a working server.
    command = [default["command"], *default["args"][:-1], "--home", str(home), "mcp"]
    env = {**os.environ, **default.get("env", {})}
    env.pop("TROVE_HOME", None)
    probe = subprocess.run(
        [*command, "--print-config"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env=env,
    )
    assert probe.returncode == 0, probe.stderr
