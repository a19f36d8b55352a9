"""Two real processes: one appends vectors while the other searches in a loop."""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np

from app.knowledge.jobs.index_documents import text_hash
from app.knowledge.pipeline.store import vector_tier
from app.knowledge.pipeline.store.index_store import ChunkRecord, IndexStore

ROOT = Path(__file__).resolve().parents[2]
DIMS = 32
PREFILL = vector_tier.EXACT_LIMIT + 2_000  # the codes path of a large base, not the exact one
APPENDS = 40

WRITER = """
import json, sys
import numpy as np
sys.path.insert(0, sys.argv[1])
from app.knowledge.jobs.index_documents import text_hash
from app.knowledge.pipeline.store.index_store import ChunkRecord, IndexStore
store = IndexStore(__import__("pathlib").Path(sys.argv[2]), create=False)
rng = np.random.default_rng(int(sys.argv[3]))
for n in range(int(sys.argv[4])):
    count = int(rng.integers(1, 30))
    vecs = rng.standard_normal((count, 32)).astype(np.float32)
    records = [ChunkRecord(i, i + 1, f"a{n}-{i}", 1, text_hash(f"a{n}-{i}")) for i in range(count)]
    ids = store.rebuild_material(f"appended{n}", f"a{n}.md", "t", count, records, vecs)
    print(json.dumps({"ids": ids, "vectors": vecs.tolist()}), flush=True)
    if n % 7 == 3:  # now and then a delete too: a prefilled item of 2,000 vectors
        store.delete_material(f"pre{(n // 7) * 2000}")
        print(json.dumps({"deleted": f"pre{(n // 7) * 2000}"}), flush=True)
store.close()
"""


def _unit(x: np.ndarray) -> np.ndarray:
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


def test_appends_from_another_process_are_found_by_the_next_search(tmp_path: Path) -> None:
    path = tmp_path / "index.sqlite"
    store = IndexStore(path)
    store.ensure_vectors(DIMS)
    rng = np.random.default_rng(21)
    prefill = rng.standard_normal((PREFILL, DIMS)).astype(np.float32)
    records = [ChunkRecord(i, i + 1, f"p{i}", 1, text_hash(f"p{i}")) for i in range(2000)]
    prefilled: dict[str, list[int]] = {}
    for start in range(0, PREFILL, 2000):
        part = prefill[start : start + 2000]
        prefilled[f"pre{start}"] = store.rebuild_material(
            f"pre{start}", f"{start}.md", "t", len(part), records[: len(part)], part
        )
    assert store.vector_search(prefill[5], 1)  # the view is loaded: one full load
    assert store.vector_stats.full_loads == 1

    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(ROOT), str(path), "7", str(APPENDS)],
        stdout=subprocess.PIPE,
        text=True,
    )
    lines: queue.Queue[str | None] = queue.Queue()

    def pump() -> None:
        assert writer.stdout is not None
        for line in writer.stdout:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=pump, daemon=True).start()
    searches = checked = 0
    deleted = 0
    deadline = time.monotonic() + 120
    done = False
    while not done:
        assert time.monotonic() < deadline, "the writer did not finish in time"
        # Search in a loop while the writer works...
        store.vector_search(_unit(rng.standard_normal(DIMS).astype(np.float32)), 10)
        searches += 1
        try:
            line = lines.get_nowait()
        except queue.Empty:
            continue
        if line is None:
            done = True
            continue
        event = json.loads(line)
        if "deleted" in event:  # a deleted vector is never found again
            gone = prefilled[event["deleted"]]
            for row in (0, 777, len(gone) - 1):
                top = store.vector_search(prefill[int(event["deleted"][3:]) + row], 1)
                assert top and top[0][0] != gone[row]
            deleted += 1
            continue
        # ...and once a write is committed, the very next search finds it (this writer
        # deletes only prefilled items, so an appended vector is still there).
        ids, vecs = event["ids"], np.asarray(event["vectors"], dtype=np.float32)
        for cid, vec in zip(ids, vecs, strict=True):
            top = store.vector_search(vec, 1)
            assert top and top[0][0] == cid and abs(top[0][1] - 1.0) < 1e-4
            checked += 1
    assert writer.wait(timeout=30) == 0
    assert checked >= APPENDS and searches > APPENDS and deleted == len(range(3, APPENDS, 7))
    # No search loaded everything again: each foreign write cost a refresh of its blocks.
    assert store.vector_stats.full_loads == 1
    assert store.vector_stats.refreshes >= 1  # writes committed between two searches coalesce
    total_blocks = store._reader().execute("SELECT count(*) FROM vector_blocks").fetchone()[0]
    assert store.vector_stats.blocks_read < total_blocks + 4 * APPENDS
    assert store.vector_block_problems() == []
    store.close()
