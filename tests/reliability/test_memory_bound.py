"""Memory of a real `trove add --wait` does not grow with the size of a text file.

A single-line text file (no structure at all for the chunker) is added through the CLI
subprocess while its RSS and its reader workers' are sampled together (see
tests/bench/memory_peak.py, which runs the same measurement at 200 MB and on a 1 GB
corpus). Its peak is compared with the peak of the same command on a file of 1 MB, run
just before: reading, chunking and indexing a file stream it a few megabytes at a time,
so the extra memory stays near a constant. The old path held several copies of the text
(bytes, decoded text, chunk texts pickled back from the worker, and all of them again
unpickled): 136 MB more for this 24 MB file, measured; streaming, 25 MB. The bound is 60.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.bench.memory_peak import measure_add, single_line_file

FILE_MB = 24
SMALL_MB = 1
# Streaming keeps the growth to ~10-20 MB (a segment of text and the chunker's work on
# it, in one worker; a read window in the main process).
ALLOWED_GROWTH_MB = 60


def _peak(tmp_path: Path, name: str, size_mb: int) -> dict[str, object]:
    source = tmp_path / f"{name}.txt"
    single_line_file(source, size_mb, seed=3)
    measured = measure_add(tmp_path / f"home-{name}", source)
    assert measured["ok"], measured
    assert measured["samples"], "the sampler never saw the trove process"
    return measured


def test_a_big_single_line_file_costs_little_more_memory_than_a_small_one(
    tmp_path: Path,
) -> None:
    small = _peak(tmp_path, "small", SMALL_MB)
    big = _peak(tmp_path, "big", FILE_MB)
    growth = float(big["peak_main_and_workers_mb"]) - float(  # type: ignore[arg-type]
        small["peak_main_and_workers_mb"]  # type: ignore[arg-type]
    )
    print(json.dumps({"small": small, "big": big, "growth_mb": round(growth, 1)}))
    assert growth < ALLOWED_GROWTH_MB, (
        f"adding a {FILE_MB} MB single-line file peaked {growth:.0f} MB above a {SMALL_MB} MB "
        f"one (main + reader workers); allowed {ALLOWED_GROWTH_MB} MB"
    )
