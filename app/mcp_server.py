"""`trove mcp`: the agent tools (kb_search, kb_read, kb_tree, kb_manage) over MCP on stdio.

A thin adapter over `app.knowledge.concepts`: it lists the tools with their JSON schemas and
turns each call into a tool result (the JSON as text, and as structured content); errors
are results with `isError` set and a code + message, never protocol failures or tracebacks.

- stdout carries only MCP messages: the SDK's stdio transport points fd 1 at stderr while it
  serves (stray prints, C libraries and child processes land there) and logging goes to
  stderr.
- Tool calls run in worker threads, so a slow search never stalls the protocol loop.
- Queued work (kb_manage) is processed here: a `JobRunner` thread drains the changed base's
  queue with `KnowledgeService.run_pending_jobs`, the synchronous, Qt-free headless path —
  no QCoreApplication or event loop to host next to asyncio. Claims are atomic in the
  catalog, so the app or the CLI running the same queue meanwhile is harmless.

The MCP SDK is imported only when a server is built, so `client_config` costs nothing to
import (the GUI shows its snippet).
"""

from __future__ import annotations

import json
import logging
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app import __version__
from app.knowledge.concepts import TOOLS, ConceptTools, JobRunner
from app.knowledge.data_layout import HOME_ENV
from app.knowledge.service import KnowledgeService

if TYPE_CHECKING:
    from mcp.server.lowlevel import Server

log = logging.getLogger(__name__)

SERVER_NAME = "trove"
INSTRUCTIONS = (
    "Trove holds the person's knowledge bases (documents, web pages, notes) on this computer. "
    "Use kb_tree to see the bases and their documents, kb_search to find passages, and kb_read "
    "with a hit's baseId and conceptId to read around it or grep the document. kb_manage adds, "
    "deletes or refreshes documents, only where the person allowed agent writes."
)


def server_command() -> list[str]:
    """The command line that starts `trove mcp` in this installation."""
    if getattr(sys, "frozen", False):
        # On Windows Trove.exe is a windowed program without stdio; the bundle ships a
        # console twin for the commands and the MCP server.
        cli = Path(sys.executable).with_name("trove-cli.exe")
        if sys.platform == "win32" and cli.is_file():
            return [str(cli), "mcp"]
        return [sys.executable, "mcp"]
    exe_dir = Path(sys.executable).parent
    names = ["trove.exe", "Scripts/trove.exe"] if sys.platform == "win32" else ["trove"]
    for name in names:
        script = exe_dir / name
        if script.is_file():
            return [str(script), "mcp"]
    return [sys.executable, "-m", "app", "mcp"]


def client_config(home: Path | None = None) -> dict[str, Any]:
    """A Claude Desktop style `mcpServers` entry that starts this Trove's MCP server.

    `home` is written as TROVE_HOME when the data directory is not the default one.
    """
    command, *args = server_command()
    entry: dict[str, Any] = {"command": command, "args": args}
    env: dict[str, str] = {}
    if args[:2] == ["-m", "app"]:
        # Running from a source tree: let the client find the package from any directory.
        env["PYTHONPATH"] = str(Path(__file__).resolve().parent.parent)
    if home is not None:
        env[HOME_ENV] = str(home)
    if env:
        entry["env"] = env
    return {"mcpServers": {SERVER_NAME: entry}}


def client_config_json(home: Path | None = None) -> str:
    """`client_config` as the JSON text a person copies into their MCP client."""
    return json.dumps(client_config(home), indent=2, ensure_ascii=False)


def build_server(tools: ConceptTools) -> Server[Any]:
    import anyio.to_thread
    import mcp.types as types
    from mcp.server.context import ServerRequestContext
    from mcp.server.lowlevel import Server

    listed = [
        types.Tool(
            name=spec.name,
            title=spec.title,
            description=spec.description,
            input_schema=spec.input_schema,
            annotations=types.ToolAnnotations(
                title=spec.title,
                read_only_hint=spec.read_only,
                destructive_hint=not spec.read_only,
                open_world_hint=False,
            ),
        )
        for spec in TOOLS
    ]

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=listed)

    async def call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        result = await anyio.to_thread.run_sync(tools.call, params.name, params.arguments)
        text = json.dumps(result.data, ensure_ascii=False)
        return types.CallToolResult(
            content=[types.TextContent(text=text)],
            structured_content=result.data,
            is_error=result.is_error,
        )

    return Server(
        SERVER_NAME,
        version=__version__,
        title="Trove",
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


def serve(service: KnowledgeService) -> int:
    """Serve MCP on stdin/stdout until the client closes stdin."""
    import anyio
    from mcp.server.stdio import stdio_server

    jobs = JobRunner(service)
    server = build_server(ConceptTools(service, jobs=jobs))

    async def run() -> None:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    log.info("Trove MCP server on stdio (home %s, pid %d)", service.layout.home, os.getpid())
    try:
        anyio.run(run)
    finally:
        jobs.close()
    return 0
