"""`trove mcp` watches linked folders while it runs: a file created in one becomes searchable
with no sync asked for."""

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
