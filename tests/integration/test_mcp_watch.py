"""`trove mcp` watches linked folders while it runs, when the person lets the agent write to a
base: a file created in one becomes searchable with no sync asked for. A session whose agent
may write nowhere watches nothing and runs no queue (server.runs_queue)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from mcp import ClientSession

from app.knowledge.jobs.reader_pool import InlineExtraction
from app.knowledge.service import KnowledgeService
from tests.conftest import write_files
from tests.integration.test_mcp import serve

WAIT_S = 30.0


def _found(home: Path, base_id: str, word: str) -> bool:
    svc = KnowledgeService(home, extraction=InlineExtraction())
    try:
        return bool(svc.search(base_id, word).results)
    finally:
        svc.close()


def test_a_file_created_in_a_linked_folder_is_indexed_while_mcp_runs(tmp_path: Path) -> None:
    home = tmp_path / "home"
    folder = write_files(tmp_path / "notes", {"a.md": "The aardvark."})
    svc = KnowledgeService(home, extraction=InlineExtraction())
    try:
        base = svc.create_base("kb")
        svc.set_agent_writes(base.id, True)
        svc.add_linked_folders(base.id, [folder])
        svc.run_pending_jobs(base.id)
    finally:
        svc.close()

    async def body(client: ClientSession) -> None:
        (folder / "new.md").write_text("The narwhal arrives.", encoding="utf-8")
        deadline = time.monotonic() + WAIT_S
        while not _found(home, base.id, "narwhal"):
            assert time.monotonic() < deadline, "the new file was never indexed"
            await asyncio.sleep(0.2)  # another process does the work: poll its result

    serve(home, body)


def test_a_session_that_may_not_write_leaves_linked_folders_to_the_person(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    folder = write_files(tmp_path / "notes", {"a.md": "The aardvark."})
    svc = KnowledgeService(home, extraction=InlineExtraction())
    try:
        base = svc.create_base("kb")  # agent writes off, the default
        (root,) = svc.add_linked_folders(base.id, [folder]).added
        svc.run_pending_jobs(base.id)
        synced_at = svc.sync_states(base.id)[root.id].link.last_synced_at
    finally:
        svc.close()

    async def body(client: ClientSession) -> None:
        (folder / "new.md").write_text("The narwhal arrives.", encoding="utf-8")
        tools = await client.list_tools()  # the session answers: it is up and idle
        assert tools.tools

    serve(home, body)
    svc = KnowledgeService(home, extraction=InlineExtraction())
    try:
        assert not _found(home, base.id, "narwhal")
        # Not even the sync every watch asks for at its start was queued, or ran.
        assert svc.catalog.list_jobs(base.id) == []
        assert svc.sync_states(base.id)[root.id].link.last_synced_at == synced_at
    finally:
        svc.close()
