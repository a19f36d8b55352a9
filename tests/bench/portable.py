"""Export and import of a big base: throughput and peak memory of `trove base export|import`.

    python tests/bench/portable.py [--mb 500] [--notes 300] [--workdir DIR]

Builds a hybrid base (384-dimensional vectors from the tests' fake embedder, in-process)
holding --notes Markdown notes plus Word documents that carry --mb MB of incompressible
media in total (each a real DOCX whose text is indexed; the media only makes the raw copy
big, as scanned pages and images do). Then runs, as subprocesses of the real CLI:

- `trove base export BASE FILE.trovebase`, and
- `trove base import FILE.trovebase`,

sampling each process's RSS every 20 ms with psutil; the peak RSS delta is measured against
the same CLI doing `trove base list` on the same data folder (the interpreter, Qt and the
engine loaded, no work), and MB/s are net of that command's time (the CLI's start-up). The
reference, in the same run, copies the same bytes (the base
folder) with a 1 MiB loop: the disk's own speed on this machine. Prints one JSON line.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import zipfile
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.portable.world import WORDS  # noqa: E402  (the words the round-trip tests use)

MB = 1024 * 1024
DOCX_MB = 25
SAMPLE_SECONDS = 0.02


def _docx(path: Path, text: str, padding: int, rng: random.Random) -> None:
    """A real DOCX (python-docx) with an extra stored media part of `padding` random bytes."""
    from docx import Document

    doc = Document()
    for paragraph in text.split("\n\n"):
        doc.add_paragraph(paragraph)
    buffer = io.BytesIO()
    doc.save(buffer)
    with (
        zipfile.ZipFile(io.BytesIO(buffer.getvalue())) as src,
        zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as dst,
    ):
        for info in src.infolist():
            dst.writestr(info, src.read(info))
        with dst.open(zipfile.ZipInfo("word/media/scan.bin"), "w") as out:
            left = padding
            while left > 0:
                block = min(left, MB)
                out.write(rng.randbytes(block))
                left -= block


def _text(rng: random.Random, words: int) -> str:
    paragraphs = [" ".join(rng.choice(WORDS) for _ in range(80)) for _ in range(words // 80)]
    return "\n\n".join(paragraphs)


def build(home: Path, corpus: Path, mb: int, notes: int) -> str:
    from app.knowledge.jobs.reader_pool import InlineExtraction
    from app.knowledge.service import KnowledgeService
    from tests.fakes import FakeModels

    rng = random.Random(7)
    corpus.mkdir(parents=True)
    for n in range(notes):
        (corpus / f"note{n:04d}.md").write_text(f"# Note {n}\n\n{_text(rng, 400)}\n")
    for n in range(max(1, mb // DOCX_MB)):
        _docx(corpus / f"scan{n:03d}.docx", _text(rng, 800), DOCX_MB * MB, rng)
    svc = KnowledgeService(home, models=FakeModels(dims=384), extraction=InlineExtraction())
    try:
        base = svc.create_base("big", embedding_model="fake:bow")
        svc.add(base.id, [corpus])
        svc.run_pending_jobs(base.id)
        failed = [i for i in svc.list_items(base.id) if i.status.value != "completed"]
        if failed:
            raise SystemExit(f"{len(failed)} item(s) did not index: {failed[0]}")
        return base.id
    finally:
        svc.close()


def _folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def _reference_copy(src: Path, dst: Path) -> float:
    """Seconds to copy every file of `src` with a 1 MiB loop (the disk's own speed)."""
    started = time.perf_counter()
    for path in src.rglob("*"):
        if path.is_file():
            target = dst / path.relative_to(src)
            target.parent.mkdir(parents=True, exist_ok=True)
            with path.open("rb") as fin, target.open("wb") as fout:
                while block := fin.read(MB):
                    fout.write(block)
                fout.flush()
                os.fsync(fout.fileno())
    return time.perf_counter() - started


def _run_sampled(args: list[str]) -> tuple[float, int, str]:
    """Run the CLI; (seconds, peak RSS of the process, stderr)."""
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "PYTHONPATH": str(ROOT)}
    started = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "app", *args],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    peak = 0
    done = threading.Event()

    def sample() -> None:
        nonlocal peak
        watched = psutil.Process(proc.pid)
        while not done.is_set():
            try:
                peak = max(peak, watched.memory_info().rss)
            except psutil.Error:
                return
            time.sleep(SAMPLE_SECONDS)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _out, err = proc.communicate(timeout=3600)
    seconds = time.perf_counter() - started
    done.set()
    sampler.join()
    if proc.returncode != 0:
        raise SystemExit(f"{args[2:4]} failed: {err}")
    return seconds, peak, err


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=int, default=500, help="MB of raw copies (DOCX media)")
    parser.add_argument("--notes", type=int, default=300)
    parser.add_argument("--workdir", type=Path)
    args = parser.parse_args()
    work = args.workdir or Path(tempfile.mkdtemp(prefix="trove-portable-bench-"))
    home = work / "home"
    started = time.perf_counter()
    base_id = build(home, work / "corpus", args.mb, args.notes)
    build_s = time.perf_counter() - started
    base_bytes = _folder_bytes(home / "bases" / base_id)

    ref_s = _reference_copy(home / "bases" / base_id, work / "reference")
    shutil.rmtree(work / "reference")
    idle_s, idle_peak, _ = _run_sampled(["--home", str(home), "base", "list"])
    target = work / "big.trovebase"
    export_s, export_peak, _ = _run_sampled(
        ["--home", str(home), "base", "export", base_id, str(target)]
    )
    file_bytes = target.stat().st_size
    import_s, import_peak, _ = _run_sampled(["--home", str(home), "base", "import", str(target)])
    reference = base_bytes / MB / ref_s
    # The CLI's own start (interpreter, Qt, engine) is not part of the transfer.
    export_net = file_bytes / MB / max(export_s - idle_s, 1e-3)
    import_net = file_bytes / MB / max(import_s - idle_s, 1e-3)
    result = {
        "bench": "portable",
        "rawMb": args.mb,
        "notes": args.notes,
        "baseMb": round(base_bytes / MB, 1),
        "fileMb": round(file_bytes / MB, 1),
        "buildSeconds": round(build_s, 1),
        "referenceCopyMBs": round(reference, 1),
        "idleCliSeconds": round(idle_s, 2),
        "exportSeconds": round(export_s, 2),
        "exportMBs": round(export_net, 1),
        "exportVsReference": round(export_net / reference, 2),
        "importSeconds": round(import_s, 2),
        "importMBs": round(import_net, 1),
        "importVsReference": round(import_net / reference, 2),
        "idleCliPeakRssMb": round(idle_peak / MB, 1),
        "exportPeakRssMb": round(export_peak / MB, 1),
        "exportPeakRssDeltaMb": round((export_peak - idle_peak) / MB, 1),
        "importPeakRssMb": round(import_peak / MB, 1),
        "importPeakRssDeltaMb": round((import_peak - idle_peak) / MB, 1),
    }
    print(json.dumps(result))
    if args.workdir is None:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
