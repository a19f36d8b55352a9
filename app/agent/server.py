"""`trove mcp`: the agent tools (kb_search, kb_read, kb_tree, kb_manage) over MCP on stdio.

A thin adapter over `app.agent.tools`: it lists the tools with their JSON schemas and turns
each call into a tool result (the JSON as text, and as structured content); errors are
results with `isError` set and a code + message, never protocol failures or tracebacks.

- stdout carries only MCP messages: the SDK's stdio transport points fd 1 at stderr while it
  serves (stray prints, C libraries and child processes land there) and logging goes to
  stderr.
- Tool calls run in worker threads, so a slow search never stalls the protocol loop.
- A line that is not a JSON-RPC message gets a -32700 / -32600 error reply (the SDK would
  drop it silently and leave a client waiting on its id): `app.agent.rpc_errors`.
- Queued work (kb_manage) runs on the runtime's job executor, hosted in its own Qt thread
  (`app.agent.jobs`), next to the asyncio loop of the protocol. Claims are atomic in the
  catalog, so the app or the CLI running the same queue meanwhile is harmless, and the end
  of the session hands what it was running back to the queue. A session whose agent may
  not write to any base starts neither the executor nor the folder watch (`runs_queue`).

The MCP SDK is imported only when a server is built.
"""

from __future__ import annotations

import json
import logging
import os
from typing import TYPE_CHECKING, Any

from app import __version__
from app.agent.client_config import SERVER_NAME
from app.agent.jobs import BackgroundJobs
from app.agent.specs import TOOLS
from app.agent.tools import ConceptTools
from app.knowledge.service import KnowledgeService

if TYPE_CHECKING:
    from mcp.server.lowlevel import Server

log = logging.getLogger(__name__)

INSTRUCTIONS = (
    "Trove holds the person's knowledge bases (documents, web pages, notes) on this computer. "
    "Use kb_tree to see the bases and their documents, kb_search to find passages, and kb_read "
    "with a hit's baseId and conceptId to read around it or grep the document. kb_manage adds, "
    "deletes or refreshes documents, only where the person allowed agent writes."
)


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


def runs_queue(service: KnowledgeService) -> bool:
    """Whether this session watches linked folders, and so runs the job queue from the
    start: only when the person lets the agent write to some base. A session that may only
    read claims no other process's work (it would hold it for as long as the agent host
    keeps the session, and a short session would only hand it back) and changes nothing;
    linked folders are then synced where the person works (the window, `trove sync`). With
    writes allowed, kb_manage's own work runs here anyway, and so do the syncs."""
    return not service.read_only and any(b.agent_writes for b in service.list_bases())


def serve(service: KnowledgeService) -> int:
    """Serve MCP on stdin/stdout until the client closes stdin."""
    import anyio
    from mcp.server.stdio import stdio_server

    from app.agent.rpc_errors import AnsweringReadStream

    jobs = BackgroundJobs(service)
    server = build_server(ConceptTools(service, jobs=jobs))

    async def run() -> None:
        async with stdio_server() as (read_stream, write_stream):
            # Lines that are no JSON-RPC message get their error reply (rpc_errors.py).
            messages = AnsweringReadStream(read_stream, write_stream)
            await server.run(messages, write_stream, server.create_initialization_options())

    log.info("Trove MCP server on stdio (home %s, pid %d)", service.layout.home, os.getpid())
    if runs_queue(service):
        # Linked folders stay in sync while the server runs (each is synced once now).
        service.start_watching(lambda _base_id: jobs.request())
    try:
        anyio.run(run)
    finally:
        service.stop_watching()
        jobs.close()
    return 0
