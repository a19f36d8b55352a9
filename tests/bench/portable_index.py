"""What rebuilding an imported index costs: the archive's index rebuilt from its rows into a
fresh file (portable/index_rebuild.py) against the old way, which opened the archive's file
itself, migrated it, ran PRAGMA integrity_check and renamed its item ids in place.

    python tests/bench/portable_index.py [--notes 30] [--words 400] [--dims 384] [--workdir DIR]

Builds a hybrid base of --notes Markdown notes (--words words each, fake embedder of --dims
dimensions, in-process), exports it, then times both ways on the exported index (best of
three, each on a fresh copy of the file), and a whole `trove base import` as a subprocess.
Prints one JSON line.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.portable.world import WORDS  # noqa: E402


def build(home: Path, corpus: Path, notes: int, words: int, dims: int) -> str:
    from app.knowledge.jobs.reader_pool import InlineExtraction
    from app.knowledge.service import KnowledgeService
    from tests.fakes import FakeModels

    rng = random.Random(7)
    corpus.mkdir(parents=True)
    for n in range(notes):
        body = " ".join(rng.choice(WORDS) for _ in range(words))
        (corpus / f"note{n:05d}.md").write_text(f"# Note {n}\n\n{body}\n")
    svc = KnowledgeService(home, models=FakeModels(dims=dims), extraction=InlineExtraction())
    try:
        base = svc.create_base("big", embedding_model="fake:bow")
        svc.add(base.id, [corpus])
        svc.run_pending_jobs(base.id)
        return base.id
    finally:
        svc.close()


def old_way(index: Path, new_ids: dict[str, str]) -> None:
    """What the import did before: the archive's own file, opened for writing."""
    from app.knowledge.pipeline.store.index_store import IndexStore

    store = IndexStore(index, create=False)
    try:
        assert not store.integrity_check()
        store.rename_items(new_ids)
        store.seed_epoch()
    finally:
        store.close()


def new_way(index: Path, fresh: Path, dims: int, wanted: dict[str, object]) -> None:
    from app.knowledge.portable import index_rebuild

    index_rebuild.rebuild(index, fresh, dims, wanted)  # type: ignore[arg-type]


def _best(run: object, setup: object, rounds: int = 3) -> float:
    times = []
    for _ in range(rounds):
        args = setup()  # type: ignore[operator]
        started = time.perf_counter()
        run(*args)  # type: ignore[operator]
        times.append(time.perf_counter() - started)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--notes", type=int, default=30)
    parser.add_argument("--words", type=int, default=400)
    parser.add_argument("--dims", type=int, default=384)
    parser.add_argument("--workdir", type=Path)
    args = parser.parse_args()
    work = args.workdir or Path(tempfile.mkdtemp(prefix="trove-index-bench-"))
    home = work / "home"
    base_id = build(home, work / "corpus", args.notes, args.words, args.dims)
    archive = work / "big.trovebase"
    from app.knowledge.catalog import new_id
    from app.knowledge.material_paths import material_path
    from app.knowledge.portable.index_rebuild import Wanted
    from app.knowledge.service import KnowledgeService

    svc = KnowledgeService(home)
    try:
        svc.export_base(base_id, archive)
        items = svc.list_items(base_id)
    finally:
        svc.close()
    with zipfile.ZipFile(archive) as zf:
        index_bytes = zf.read("index.sqlite")
    raw_sizes = {
        i.id: (home / "bases" / base_id / "raw" / (material_path(i) or "")).stat().st_size
        for i in items
        if material_path(i)
    }
    wanted = {
        i.id: Wanted(new_id(), i.title, material_path(i) or "", raw_sizes[i.id])
        for i in items
        if i.id in raw_sizes
    }
    renames = {old: w.new_id for old, w in wanted.items()}
    source = work / "archive-index.sqlite"

    def fresh_copy() -> tuple[Path, ...]:
        for leftover in work.glob("fresh*"):
            leftover.unlink()
        source.write_bytes(index_bytes)
        return (source,)

    old_s = _best(lambda path: old_way(path, renames), fresh_copy)
    new_s = _best(
        lambda path: new_way(path, work / "fresh.sqlite", args.dims, wanted),  # type: ignore[arg-type]
        fresh_copy,
    )
    target = work / "imported-home"
    shutil.rmtree(target, ignore_errors=True)
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "app", "--home", str(target), "base", "import", str(archive)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    import_s = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(done.stderr)
    from app.knowledge.pipeline.store.index_store import IndexStore

    store = IndexStore(source, create=False)
    try:
        chunks, vectors = store.chunk_count(), store.vector_count()
    finally:
        store.close()
    print(
        json.dumps(
            {
                "bench": "portable_index",
                "notes": args.notes,
                "chunks": chunks,
                "vectors": vectors,
                "dims": args.dims,
                "indexMb": round(len(index_bytes) / 2**20, 1),
                "archiveMb": round(archive.stat().st_size / 2**20, 1),
                "oldInPlaceSeconds": round(old_s, 3),
                "rebuildSeconds": round(new_s, 3),
                "rebuildChunksPerSecond": round(chunks / new_s),
                "cliImportSeconds": round(import_s, 2),
            }
        )
    )


if __name__ == "__main__":
    main()
