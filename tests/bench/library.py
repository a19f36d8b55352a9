"""A real library end to end: searchable when, vectors done when, memory, disk, GUI stalls.

    python tests/bench/library.py [--files 20000] [--mb 2000] [--scales 1,2]
                                  [--model local|bm25] [--no-window] [--workdir DIR] [--seed S]

Generates a library of FILES files and about MB megabytes in nested folders (Markdown,
text, HTML, PDF, DOCX; the PDFs and DOCX files carry an embedded attachment or picture-like
payload as real ones do, so most of the bytes are not text), then, for each scale (1 = the
given size, 2 = twice the files and bytes), in a fresh data folder:

- `trove base create lib --embedding local:all-MiniLM-L6-v2` (the built-in model);
- an offscreen Trove window on the same data folder (tests/bench/window_probe.py), running
  its own job executor as the window does, its GUI thread ticking every 10 ms;
- `trove add lib LIBRARY --link --wait`, timed from its start; its "searchable by full text
  after" line gives the moment every document was findable, its end the moment every
  vector was written (it waits for the vector stage);
- the sum of the RSS of every Trove process (the CLI, the window, their reader workers),
  sampled every 0.5 s; the vector count, sampled every 2 s, gives the vector stage's
  chunks/s after the library became searchable;
- the same chunk texts (a sample taken from the index) embedded by the best raw onnxruntime
  loop that tests/bench/embed_configs.py's sweep found here, in this process afterwards:
  the reference for the vector stage's chunks/s;
- the bytes the data folder grew by against the library's size (and of them, under raw/).

`--vector-window S` (for a library whose vectors take hours on these cores): the add is
stopped (SIGINT: the vector stage goes back to the queue) S seconds after the library became
searchable; the vector stage's chunks/s is measured over that window and the time for all
vectors is given as a projection (`projectedSecondsUntilVectorsDone`, never as measured),
and the disk figure then holds only the vectors written so far. `--kinds pdf,docx` makes a
library of only those kinds.

Prints one JSON line per scale, then one with the growth from scale 1 to scale 2.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import zipfile
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

KINDS = (("md", 25), ("txt", 20), ("html", 20), ("pdf", 20), ("docx", 15))
PER_FOLDER = 100
SEARCHABLE = re.compile(r"searchable by full text after ([0-9.]+) s")
REFERENCE_SAMPLE = 512


def _words(rng: random.Random) -> list[str]:
    letters = "abcdefghijklmnopqrstuvwxyz"
    return ["".join(rng.choice(letters) for _ in range(rng.randint(3, 10))) for _ in range(30_000)]


def _text(rng: random.Random, words: list[str], size: int) -> list[str]:
    paragraphs, total = [], 0
    while total < size:
        sentences = [
            " ".join(
                words[min(int(rng.paretovariate(1.1)) - 1, len(words) - 1)]
                for _ in range(rng.randint(6, 22))
            ).capitalize()
            + "."
            for _ in range(rng.randint(3, 7))
        ]
        paragraph = " ".join(sentences)
        paragraphs.append(paragraph)
        total += len(paragraph) + 2
    return paragraphs


def _pdf(paragraphs: list[str], padding: int, rng: random.Random) -> bytes:
    from pypdf import PdfReader, PdfWriter

    from tests.unit.make_files import pdf_bytes

    pages = ["\n".join(paragraphs[i : i + 4]) for i in range(0, len(paragraphs), 4)]
    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(pdf_bytes(pages))))
    if padding > 0:  # a scan or figure attached, as real PDFs carry pictures
        writer.add_attachment("figure.bin", rng.randbytes(padding))
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def _docx(path: Path, paragraphs: list[str], padding: int, rng: random.Random) -> None:
    from tests.unit.make_files import make_docx

    make_docx(path, paragraphs, heading=path.stem)
    if padding > 0:  # a picture in the package (stored: pictures do not compress)
        with zipfile.ZipFile(path, "a", compression=zipfile.ZIP_STORED) as package:
            package.writestr("word/media/image1.png", rng.randbytes(padding))


def generate(
    folder: Path, files: int, megabytes: float, seed: int, only: Sequence[str] = ()
) -> dict[str, int]:
    """The library: `files` files of about 1.5-6 KB of text each; PDF and DOCX files padded
    so that the library weighs about `megabytes`."""
    rng = random.Random(seed)
    words = _words(rng)
    chosen = [(k, w) for k, w in KINDS if not only or k in only]
    kinds = [k for k, weight in chosen for _ in range(weight)]
    binary_share = sum(w for k, w in chosen if k in ("pdf", "docx")) / sum(w for _, w in chosen)
    text_bytes = 3_800 * files
    padding = max(0, int((megabytes * 1024 * 1024 - text_bytes) / max(1, files * binary_share)))
    total = 0
    for n in range(files):
        kind = rng.choice(kinds)
        sub = folder / f"shelf-{n // (PER_FOLDER * 10):02d}" / f"box-{n // PER_FOLDER:04d}"
        sub.mkdir(parents=True, exist_ok=True)
        path = sub / f"doc-{n:06d}.{kind}"
        paragraphs = _text(rng, words, rng.randint(1_500, 6_000))
        pad = int(padding * rng.uniform(0.5, 1.5))
        if kind == "md":
            path.write_text(f"# Document {n}\n\n" + "\n\n".join(paragraphs), encoding="utf-8")
        elif kind == "txt":
            path.write_text("\n\n".join(paragraphs), encoding="utf-8")
        elif kind == "html":
            body = "".join(f"<p>{p}</p>\n" for p in paragraphs)
            path.write_text(
                f"<html><head><title>Page {n}</title></head><body>{body}</body></html>",
                encoding="utf-8",
            )
        elif kind == "pdf":
            path.write_bytes(_pdf(paragraphs, pad, rng))
        else:
            _docx(path, paragraphs, pad, rng)
        total += path.stat().st_size
    return {"files": files, "bytes": total}


def _library(
    folder: Path, files: int, megabytes: float, seed: int, only: Sequence[str]
) -> dict[str, int]:
    """The library, generated (or the one a --keep-library run left, when made alike)."""
    marker = folder.with_suffix(".json")
    wanted = {"files": files, "mb": megabytes, "seed": seed, "only": list(only)}
    if marker.is_file() and folder.is_dir():
        kept = json.loads(marker.read_text())
        if kept.get("wanted") == wanted:
            return dict(kept["made"])
    shutil.rmtree(folder, ignore_errors=True)
    made = generate(folder, files, megabytes, seed, only)
    marker.write_text(json.dumps({"wanted": wanted, "made": made}))
    return made


def _tree_bytes(folder: Path) -> int:
    total = 0
    for dirpath, _dirs, names in os.walk(folder):
        for name in names:
            with contextlib.suppress(OSError):
                total += (Path(dirpath) / name).lstat().st_size
    return total


def _count(home: Path, table: str) -> int | None:
    """Rows of one of the base's index tables, read as another process can (None: none yet)."""
    index = next(home.glob("bases/*/.trove/index.sqlite"), None)
    if index is None:
        return None
    import apsw

    try:
        conn = apsw.Connection(f"file:{index}?mode=ro", flags=apsw.SQLITE_OPEN_URI | 1)
        try:
            conn.setbusytimeout(2_000)
            row = conn.execute(f"SELECT count(*) FROM {table}").fetchone()
            return int(row[0]) if row else 0
        finally:
            conn.close()
    except apsw.Error:  # no such table yet
        return None


class _Sampler:
    """Every 0.5 s: the RSS of the given processes and all their descendants, summed; every
    2 s: the base's vector count (read from the index, as another process can) and the CPU
    time of each named process tree and of the machine's idle cores."""

    def __init__(self, home: Path) -> None:
        self.peak = 0
        self.vectors: list[tuple[float, int]] = []
        self.roots: list[int] = []
        self.names: dict[int, str] = {}
        # (time, CPU seconds of each named root's process tree, the machine's idle seconds)
        self.cpu: list[tuple[float, dict[str, float], float]] = []
        self._home = home
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _rss(self) -> int:
        import psutil

        total = 0
        for pid in self.roots:
            with contextlib.suppress(psutil.Error):
                root = psutil.Process(pid)
                for proc in [root, *root.children(recursive=True)]:
                    with contextlib.suppress(psutil.Error):
                        total += proc.memory_info().rss
        return total

    def _cpu(self) -> dict[str, float]:
        """CPU seconds of each named process with its descendants, live and ended."""
        import psutil

        seconds: dict[str, float] = {}
        for pid, name in self.names.items():
            with contextlib.suppress(psutil.Error):
                root = psutil.Process(pid)
                t = root.cpu_times()
                total = t.user + t.system + t.children_user + t.children_system
                for child in root.children(recursive=True):
                    with contextlib.suppress(psutil.Error):
                        c = child.cpu_times()
                        total += c.user + c.system
                seconds[name] = total
        return seconds

    def _vector_count(self) -> int | None:
        return _count(self._home, "vectors")

    def _run(self) -> None:
        import psutil

        ticks = 0
        while not self._stop.wait(0.5):
            self.peak = max(self.peak, self._rss())
            ticks += 1
            if ticks % 4 == 0:
                count = self._vector_count()
                if count is not None:
                    self.vectors.append((time.monotonic(), count))
                self.cpu.append((time.monotonic(), self._cpu(), psutil.cpu_times().idle))

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


def _trove(home: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "app", "--home", str(home), *args]


def _start_window(home: Path) -> subprocess.Popen[str]:
    probe = subprocess.Popen(
        [sys.executable, str(ROOT / "tests" / "bench" / "window_probe.py"), str(home)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert probe.stdout is not None
    line = probe.stdout.readline()
    if line.strip() != "ready":
        raise RuntimeError(f"the window probe did not start: {line!r}")
    return probe


def _stop_window(probe: subprocess.Popen[str]) -> dict[str, object]:
    probe.send_signal(signal.SIGTERM)
    out, _ = probe.communicate(timeout=300)
    lines = [line for line in out.splitlines() if line.startswith("{")]
    return json.loads(lines[-1]) if lines else {}


def _rate_after(samples: list[tuple[float, int]], start: float) -> float | None:
    """Vectors written per second from `start` (monotonic) to the last sample."""
    after = [(t, n) for t, n in samples if t >= start]
    if len(after) < 2 or after[-1][0] <= after[0][0]:
        return None
    return (after[-1][1] - after[0][1]) / (after[-1][0] - after[0][0])


def _rate_by_minute(samples: list[tuple[float, int]], start: float) -> list[float]:
    """The vector stage's chunks/s in each whole minute from `start`: a slow first minute
    (the window reading the whole base, the add settling its folders) against a steady
    rest tells start-up from lasting interference."""
    rates: list[float] = []
    minute = start
    while True:
        inside = [(t, n) for t, n in samples if minute <= t <= minute + 60.0]
        if len(inside) < 2 or inside[-1][0] - inside[0][0] < 50.0:
            return rates
        rates.append(round((inside[-1][1] - inside[0][1]) / (inside[-1][0] - inside[0][0]), 1))
        minute += 60.0


def _cores_used(
    samples: list[tuple[float, dict[str, float], float]], start: float
) -> dict[str, float]:
    """Cores each process tree used on average from `start` to the last sample, and the
    machine's idle cores: where the vector stage's cores went."""
    after = [s for s in samples if s[0] >= start]
    if len(after) < 2 or after[-1][0] <= after[0][0]:
        return {}
    (t0, cpu0, idle0), (t1, cpu1, idle1) = after[0], after[-1]
    span = t1 - t0
    used = {name: round((cpu1[name] - cpu0[name]) / span, 2) for name in cpu1 if name in cpu0}
    return {**used, "idle": round((idle1 - idle0) / span, 2)}


def _embedded_texts(home: Path, limit: int) -> list[str]:
    """The first `limit` chunks' texts as the vector stage embeds them: with the title in
    front of a chunk that does not show it (embed_vectors._prepare). Runs A-E gave the
    reference the bare chunk texts, a few tokens a chunk less work than the stage's."""
    import apsw

    from app.knowledge.chunk_sizing import sizing_for
    from app.knowledge.pipeline.indexing.token_count import embedding_input
    from app.knowledge.service import KnowledgeService

    service = KnowledgeService(home)
    try:
        [base] = service.list_bases()
        sizing = sizing_for(base, service.parts.models)
    finally:
        service.close()
    index = next(home.glob("bases/*/.trove/index.sqlite"))
    conn = apsw.Connection(str(index), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        rows = conn.execute(
            "SELECT c.text, m.title FROM chunks c JOIN materials m ON m.id = c.material_id "
            "ORDER BY c.id LIMIT ?",
            (limit,),
        ).fetchall()
    finally:
        conn.close()
    return [embedding_input(sizing.header(str(title or "")), str(text)) for text, title in rows]


def _reference(home: Path) -> dict[str, object]:
    """The best raw onnxruntime loop on a sample of the library's own chunks, the same
    strings the vector stage embeds."""
    texts = _embedded_texts(home, REFERENCE_SAMPLE)
    from tests.bench.embed_configs import RawConfig, RawLoop

    # The winner of embed_configs.py's sweep on these machines (2026-12-07): both cores,
    # length-sorted passes of 2, full graph optimisation, spinning workers.
    config = RawConfig(batch=2, bucketing=True, opt_level="ORT_ENABLE_ALL", spinning=True)
    embed, name = RawLoop(config).embed, f"raw onnxruntime loop {config.label()}"
    embed(texts[:8])  # warm-up
    started = time.perf_counter()
    embed(texts)
    return {
        "referenceChunksPerSecond": round(len(texts) / (time.perf_counter() - started), 1),
        "reference": name,
        "referenceSample": len(texts),
    }


def _unsearchable(home: Path) -> int | None:
    """Documents not yet findable (being prepared or indexed), read from the catalog as
    another process can; None before the folder's files are known."""
    import apsw

    try:
        conn = apsw.Connection(
            f"file:{home / 'trove.sqlite'}?mode=ro", flags=apsw.SQLITE_OPEN_URI | 1
        )
        try:
            conn.setbusytimeout(2_000)
            rows = dict(conn.execute("SELECT status, count(*) FROM items GROUP BY status"))
        finally:
            conn.close()
    except apsw.Error:
        return None
    if rows.get("completed", 0) <= 1:
        return None
    return int(rows.get("preparing", 0)) + int(rows.get("processing", 0))


def _stop_after_searchable(
    add: subprocess.Popen[str], home: Path, started: float, window_s: float
) -> float | None:
    """SIGINT the add `window_s` after every document became findable (the add prints that
    moment only at its end); returns the moment, in seconds from `started`."""
    while add.poll() is None:
        if _unsearchable(home) == 0:
            searchable = time.monotonic() - started
            deadline = time.monotonic() + window_s
            while add.poll() is None and time.monotonic() < deadline:
                time.sleep(0.5)
            if add.poll() is None:
                add.send_signal(signal.SIGINT)
            return searchable
        time.sleep(0.5)
    return None


def run_scale(
    library: Path, workdir: Path, model: str, window: bool, vector_window: float | None = None
) -> dict[str, object]:
    home = workdir / "home"
    shutil.rmtree(home, ignore_errors=True)
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    create = ["base", "create", "lib"]
    if model == "local":
        create += ["--embedding", "local:all-MiniLM-L6-v2"]
    subprocess.run(_trove(home, *create), cwd=ROOT, env=env, check=True, capture_output=True)
    before = _tree_bytes(home)
    sampler = _Sampler(home)
    probe = _start_window(home) if window else None
    if probe is not None:
        sampler.roots.append(probe.pid)
        sampler.names[probe.pid] = "window"
    started = time.monotonic()
    add = subprocess.Popen(
        _trove(home, "add", "lib", str(library), "--link", "--wait"),
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    sampler.roots.append(add.pid)
    sampler.names[add.pid] = "add"
    sampler.start()
    polled: float | None = None
    if vector_window is None:
        _, err = add.communicate()
    else:
        polled = _stop_after_searchable(add, home, started, vector_window)
        _, err = add.communicate()
    seconds = time.monotonic() - started
    sampler.stop()
    stalls = _stop_window(probe) if probe is not None else {}
    found = SEARCHABLE.search(err)
    searchable = float(found.group(1)) if found else (polled or seconds)
    vectors = sampler.vectors[-1][1] if sampler.vectors else 0
    summary = [line for line in err.splitlines() if line.startswith(("indexed", "vectors"))]
    result: dict[str, object] = {
        "exitCode": add.returncode,
        "summary": summary,
        "secondsUntilSearchable": round(searchable, 1),
        "secondsUntilVectorsDone": (
            round(seconds, 1) if model == "local" and vector_window is None else None
        ),
        "chunks": _count(home, "chunks"),
        "vectors": vectors,
        "vectorStageChunksPerSecond": None,
        "peakRssMb": round(sampler.peak / 2**20, 1),
        "diskAddedBytes": _tree_bytes(home) - before,
        # Of which the materials under raw/ (texts; copies of files not indexed in place)
        "diskRawBytes": sum(_tree_bytes(raw) for raw in home.glob("bases/*/raw")),
        **{f"window{k[0].upper()}{k[1:]}": v for k, v in stalls.items()},
    }
    if model == "local":
        rate = _rate_after(sampler.vectors, started + searchable)
        result["vectorStageChunksPerSecond"] = round(rate, 1) if rate is not None else None
        result["vectorStageChunksPerSecondByMinute"] = _rate_by_minute(
            sampler.vectors, started + searchable
        )
        result["vectorStageCoresUsed"] = _cores_used(sampler.cpu, started + searchable)
        result.update(_reference(home))
        if rate is not None:
            result["vectorStageVsReference"] = round(
                rate / float(result["referenceChunksPerSecond"]),
                3,  # type: ignore[arg-type]
            )
        chunks = result["chunks"]
        if vector_window is not None and rate and isinstance(chunks, int):
            result["projectedSecondsUntilVectorsDone"] = round(
                seconds + (chunks - vectors) / rate, 0
            )
    return result


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--files", type=int, default=20_000)
    parser.add_argument("--mb", type=float, default=2_000)
    parser.add_argument("--scales", default="1,2")
    parser.add_argument("--model", choices=("local", "bm25"), default="local")
    parser.add_argument("--no-window", action="store_true")
    parser.add_argument("--workdir", type=Path)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--keep-library", action="store_true", help="keep it in WORKDIR for the next run"
    )
    parser.add_argument("--vector-window", type=float, help="seconds of vector stage, then stop")
    parser.add_argument(
        "--kinds", default="", help="only these kinds of file, e.g. pdf,docx (default: all)"
    )
    args = parser.parse_args()
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="trove-library-"))
    results = []
    for scale in (float(s) for s in args.scales.split(",")):
        library = workdir / f"library-x{scale:g}"
        only = [k for k in args.kinds.split(",") if k]
        made = _library(library, int(args.files * scale), args.mb * scale, args.seed, only)
        result = {
            "scale": scale,
            "libraryFiles": made["files"],
            "libraryBytes": made["bytes"],
            **run_scale(
                library,
                workdir / f"run-x{scale:g}",
                args.model,
                not args.no_window,
                args.vector_window,
            ),
        }
        result["diskAddedShare"] = round(
            int(result["diskAddedBytes"]) / max(1, made["bytes"]),
            3,  # type: ignore[call-overload]
        )
        print(json.dumps(result), flush=True)
        results.append(result)
        if not args.keep_library:
            shutil.rmtree(library, ignore_errors=True)
    if len(results) == 2:
        first, second = results
        growth = {
            key: round(float(second[key]) / float(first[key]), 2)  # type: ignore[arg-type]
            for key in (
                "secondsUntilSearchable",
                "secondsUntilVectorsDone",
                "peakRssMb",
                "diskAddedBytes",
            )
            if first.get(key) and second.get(key)
        }
        print(json.dumps({"growthFromScale1To2": growth}), flush=True)


if __name__ == "__main__":
    main()
