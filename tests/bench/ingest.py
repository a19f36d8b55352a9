"""Ingestion throughput and memory against a bare FTS5 reference, in the same run.

    python tests/bench/ingest.py SIZE_MB [--workdir DIR] [--seed S]

Generates a corpus of SIZE_MB (mixed md / txt / html / pdf / docx), then in two child
processes, so each one's peak RSS is its own:

- Trove: a BM25-only base; the folder is added and the queue drained through the same
  code path as `trove add --wait` (KnowledgeService.add + the QThreadPool job executor);
- reference: read every file's bytes, take its text (for PDF and DOCX with the same
  reader libraries, since their bytes are not text) and insert it into a bare FTS5 table.

Prints one JSON line: files/s, MB/s, chunks/s and peak RSS for Trove, the reference's
MB/s, and Trove's throughput as a fraction of the reference's.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

KINDS = (("md", 30), ("txt", 30), ("html", 20), ("pdf", 10), ("docx", 10))


def _vocabulary(rng: random.Random) -> list[str]:
    letters = "abcdefghijklmnopqrstuvwxyz"
    return ["".join(rng.choice(letters) for _ in range(rng.randint(3, 10))) for _ in range(20_000)]


def _paragraphs(rng: random.Random, words: list[str], target_bytes: int) -> list[str]:
    out, size = [], 0
    while size < target_bytes:
        sentences = []
        for _ in range(rng.randint(3, 8)):
            n = rng.randint(6, 20)
            sentence = " ".join(
                words[min(int(rng.paretovariate(1.2)) - 1, len(words) - 1)] for _ in range(n)
            )
            sentences.append(sentence.capitalize() + ".")
        paragraph = " ".join(sentences)
        out.append(paragraph)
        size += len(paragraph) + 2
    return out


def generate(corpus: Path, size_mb: float, seed: int) -> tuple[int, int]:
    from tests.unit.make_files import make_docx, pdf_bytes

    rng = random.Random(seed)
    words = _vocabulary(rng)
    kinds = [k for k, weight in KINDS for _ in range(weight)]
    target = int(size_mb * 1024 * 1024)
    total = files = 0
    while total < target:
        kind = rng.choice(kinds)
        folder = corpus / f"d{files // 200:03d}"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"f{files:06d}.{kind}"
        paragraphs = _paragraphs(rng, words, rng.randint(32_000, 256_000))
        if kind == "md":
            path.write_text(f"# Document {files}\n\n" + "\n\n".join(paragraphs), encoding="utf-8")
        elif kind == "txt":
            path.write_text("\n\n".join(paragraphs), encoding="utf-8")
        elif kind == "html":
            body = "".join(f"<p>{p}</p>\n" for p in paragraphs)
            path.write_text(
                f"<html><head><title>Page {files}</title></head><body><h1>Page {files}</h1>{body}</body></html>",
                encoding="utf-8",
            )
        elif kind == "pdf":
            pages = ["\n".join(paragraphs[i : i + 3]) for i in range(0, len(paragraphs), 3)]
            path.write_bytes(pdf_bytes(pages))
        else:
            make_docx(path, paragraphs, heading=f"Report {files}")
        total += path.stat().st_size
        files += 1
    return files, total


def _peak_rss_mb(who: int = resource.RUSAGE_SELF) -> float:
    # ru_maxrss is KiB on Linux, bytes on macOS.
    peak = resource.getrusage(who).ru_maxrss
    return round(peak / (1024 * 1024 if sys.platform == "darwin" else 1024), 1)


class _FamilyRss:
    """Samples the RSS of this process plus its reader workers; keeps the largest sum."""

    def __init__(self) -> None:
        import threading

        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        import psutil

        me = psutil.Process()
        while not self._stop.wait(0.2):
            total = me.memory_info().rss
            for child in me.children(recursive=True):
                with contextlib.suppress(psutil.Error):  # a worker that just exited
                    total += child.memory_info().rss
            self.peak = max(self.peak, total)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


def run_trove(corpus: Path, home: Path) -> dict[str, object]:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from app.knowledge.jobs.reader_pool import default_workers, shared_pool
    from app.knowledge.service import KnowledgeService
    from app.runtime.headless import run_until_drained

    service = KnowledgeService(home)
    base = service.create_base("bench")
    sampler = _FamilyRss()
    sampler.start()
    started = time.perf_counter()
    report = service.add(base.id, [corpus])
    run_until_drained(service)
    seconds = time.perf_counter() - started
    items = service.list_items(base.id)
    leaves = [i for i in items if i.parent_id is not None]
    failed = [i for i in leaves if i.status != "completed"]
    chunks = service.parts.stores.get(base.id).chunk_count()
    service.close()
    sampler.stop()
    shared_pool().shutdown()  # so the reader workers' peak memory is counted below
    return {
        "seconds": seconds,
        "files": len(leaves),
        "failed": len(failed),
        "chunks": chunks,
        "added_roots": len(report.added),
        "peak_rss_mb": _peak_rss_mb(),
        "worker_peak_rss_mb": _peak_rss_mb(resource.RUSAGE_CHILDREN),
        "family_peak_rss_mb": round(sampler.peak / 1e6, 1),
        "workers": default_workers(),
    }


def run_reference(corpus: Path, db_path: Path) -> dict[str, object]:
    import apsw

    from app.knowledge.pipeline.readers.registry import read_document

    conn = apsw.Connection(str(db_path))
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("CREATE VIRTUAL TABLE docs USING fts5(body)")
    started = time.perf_counter()
    files = 0
    batch: list[str] = []
    for path in sorted(corpus.rglob("*")):
        if not path.is_file():
            continue
        if path.suffix in (".pdf", ".docx"):
            batch.append(read_document(path).text)
        else:
            batch.append(path.read_bytes().decode("utf-8", errors="replace"))
        files += 1
        if len(batch) >= 200:
            with conn:
                conn.executemany("INSERT INTO docs(body) VALUES (?)", ((b,) for b in batch))
            batch = []
    if batch:
        with conn:
            conn.executemany("INSERT INTO docs(body) VALUES (?)", ((b,) for b in batch))
    seconds = time.perf_counter() - started
    conn.close()
    return {"seconds": seconds, "files": files, "peak_rss_mb": _peak_rss_mb()}


def _child(mode: str, *args: Path) -> dict[str, object]:
    out = subprocess.run(
        [sys.executable, __file__, f"--{mode}", *map(str, args)],
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("size_mb", nargs="?", type=float)
    parser.add_argument("--workdir", type=Path)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--trove", nargs=2, type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--reference", nargs=2, type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.trove:
        print(json.dumps(run_trove(*args.trove)))
        return
    if args.reference:
        print(json.dumps(run_reference(*args.reference)))
        return
    if args.size_mb is None:
        parser.error("SIZE_MB is required")
    with tempfile.TemporaryDirectory(dir=args.workdir) as tmp:
        work = Path(tmp)
        t = time.perf_counter()
        files, total = generate(work / "corpus", args.size_mb, args.seed)
        gen_s = time.perf_counter() - t
        reference = _child("reference", work / "corpus", work / "reference.sqlite")
        trove = _child("trove", work / "corpus", work / "home")
    mb = total / (1024 * 1024)
    trove_s = float(trove["seconds"])  # type: ignore[arg-type]
    ref_s = float(reference["seconds"])  # type: ignore[arg-type]
    print(
        json.dumps(
            {
                "bench": "ingest",
                "corpus_mb": round(mb, 1),
                "files": files,
                "generate_s": round(gen_s, 1),
                "trove": {
                    "seconds": round(trove_s, 1),
                    "files_per_s": round(files / trove_s, 1),
                    "mb_per_s": round(mb / trove_s, 2),
                    "chunks_per_s": round(int(trove["chunks"]) / trove_s, 1),  # type: ignore[call-overload]
                    "chunks": trove["chunks"],
                    "failed": trove["failed"],
                    "peak_rss_mb": trove["peak_rss_mb"],
                    "reader_worker_peak_rss_mb": trove["worker_peak_rss_mb"],
                    "peak_rss_with_workers_mb": trove["family_peak_rss_mb"],
                    "reader_workers": trove["workers"],
                },
                "reference": {
                    "seconds": round(ref_s, 1),
                    "mb_per_s": round(mb / ref_s, 2),
                    "peak_rss_mb": reference["peak_rss_mb"],
                },
                "throughput_vs_reference": round(ref_s / trove_s, 3),
            }
        )
    )


if __name__ == "__main__":
    main()
