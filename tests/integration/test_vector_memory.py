"""A process searching more bases than its vector memory budget holds."""

from __future__ import annotations

import gc
from pathlib import Path

import numpy as np

from app.knowledge.jobs.index_documents import text_hash
from app.knowledge.pipeline.store.index_store import ChunkRecord
from app.knowledge.pipeline.store.memory_budget import MemoryBudget
from app.knowledge.pipeline.store.registry import StoreRegistry

DIMS = 384
PER_BASE = 12_000
BASES = 8
MB = 1024 * 1024


def _rss() -> int:
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def _unit(rng: np.random.Generator, n: int) -> np.ndarray:
    x = rng.standard_normal((n, DIMS)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def test_more_bases_than_the_budget_keep_rss_bounded_and_results_right(tmp_path: Path) -> None:
    rng = np.random.default_rng(11)
    records = [ChunkRecord(i, i + 1, f"c{i}", 1, text_hash(f"c{i}")) for i in range(1000)]
    vectors: dict[str, tuple[list[int], np.ndarray]] = {}
    builder = StoreRegistry(lambda b: tmp_path / b)
    for n in range(BASES):
        (tmp_path / f"b{n}").mkdir()
        store = builder.get(f"b{n}")
        store.ensure_vectors(DIMS)
        ids: list[int] = []
        base_vectors = _unit(rng, PER_BASE)
        for start in range(0, PER_BASE, 1000):
            part = base_vectors[start : start + 1000]
            ids += store.rebuild_material(f"i{start}", f"{start}.md", "t", 1000, records, part)
        vectors[f"b{n}"] = (ids, base_vectors)
    builder.close_all()

    # One base's view (12,000 exact floats in 12 blocks of 1,024) is about 20 MB: the budget
    # holds two, the eight together would need about 160 MB.
    budget = MemoryBudget(limit_bytes=45 * MB)
    registry = StoreRegistry(lambda b: tmp_path / b, budget=budget)
    gc.collect()
    baseline = _rss()
    peak = 0
    for _ in range(2):
        for name, (ids, base_vectors) in vectors.items():
            probe = int(rng.integers(PER_BASE))
            hits = registry.get(name).vector_search(base_vectors[probe], 5)
            assert hits[0][0] == ids[probe] and abs(hits[0][1] - 1.0) < 1e-5
            exact = np.argsort(-(base_vectors @ base_vectors[probe]))[:5]
            assert [h[0] for h in hits] == [ids[i] for i in exact]
            assert budget.used_bytes() <= budget.limit_bytes
            gc.collect()
            peak = max(peak, _rss() - baseline)
    # Evicted views load again; without the budget RSS grew about 150 MB here.
    assert peak < budget.limit_bytes + 30 * MB, f"RSS grew {peak / MB:.0f} MB"
    held = [registry.get(name).vector_memory_bytes() for name in vectors]
    assert sum(1 for h in held if h) == 2, held  # the two most recently searched
    assert budget.evictions >= 2 * BASES - 2
    assert registry.get("b0").vector_stats.full_loads == 2
    registry.close_all()


def test_a_base_larger_than_the_budget_still_searches(tmp_path: Path) -> None:
    rng = np.random.default_rng(12)
    (tmp_path / "b").mkdir()
    budget = MemoryBudget(limit_bytes=1)
    registry = StoreRegistry(lambda b: tmp_path / b, budget=budget)
    store = registry.get("b")
    store.ensure_vectors(DIMS)
    vecs = _unit(rng, 50)
    records = [ChunkRecord(i, i + 1, f"c{i}", 1, text_hash(f"c{i}")) for i in range(50)]
    ids = store.rebuild_material("i", "i.md", "t", 50, records, vecs)
    for _ in range(3):
        assert store.vector_search(vecs[9], 1)[0][0] == ids[9]
    assert store.vector_stats.full_loads == 1  # kept: the one in use is never evicted
    registry.close_all()
