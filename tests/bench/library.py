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

`--vector-window S`: the add is stopped (SIGINT: the vector stage goes back to the queue)
S seconds after the library became searchable; the vector stage's chunks/s is measured over
that window and the time for all vectors is given as a projection
(`projectedSecondsUntilVectorsDone`, never as measured), and the disk figure then holds only
the vectors written so far. `--kinds pdf,docx` makes a library of only those kinds.

A run longer than one sitting (the vectors of 40,000 files take ~4 h of both cores here):
`--budget S` stops this invocation's run after S seconds the same way, keeping the data
folder and a ledger (WORKDIR/run-xN/ledger.json) of each process lifetime so far; the next
invocation with the same WORKDIR and `--keep-library` goes on with `trove resume lib` (the
window probe open again) instead of starting afresh. The times until searchable and until
every vector is written are then sums over the lifetimes, each stop's hand-back and each
resume's start-up included; the vector stage's ratio to the reference is weighted by each
lifetime's stage time, each against a reference measured right after it (the machine's
speed changes between sittings). A finished scale is reported from its ledger again.

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
from typing import Any

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


def _reference(home: Path) -> dict[str, Any]:
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


def _session(
    home: Path,
    argv: list[str],
    window: bool,
    searchable_before: float | None,
    elapsed_before: float,
    stop_after_searchable: float | None,
    deadline: float | None,
) -> dict[str, Any]:
    """One process lifetime of the run: the window probe (when asked) and `argv` (the add,
    or a resume), sampled, until the command ends or is stopped with SIGINT (the vector
    stage goes back to the queue): `stop_after_searchable` seconds after every document
    became findable, or at `deadline` (monotonic). `searchable_before`: the moment (from
    the run's start) the library became searchable in an earlier session, if it did."""
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    sampler = _Sampler(home)
    probe = _start_window(home) if window else None
    if probe is not None:
        sampler.roots.append(probe.pid)
        sampler.names[probe.pid] = "window"
    started = time.monotonic()
    proc = subprocess.Popen(
        argv, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    sampler.roots.append(proc.pid)
    sampler.names[proc.pid] = "command"
    sampler.start()
    # stderr is read by a thread: a pipe left full would stop the command.
    err_parts: list[str] = []
    stderr = proc.stderr
    assert stderr is not None
    reader = threading.Thread(target=lambda: err_parts.append(stderr.read()), daemon=True)
    reader.start()
    polled: float | None = None
    stopped = False
    while proc.poll() is None:
        if searchable_before is None and polled is None and _unsearchable(home) == 0:
            polled = time.monotonic() - started
        late = deadline is not None and time.monotonic() > deadline
        done_window = (
            stop_after_searchable is not None
            and (searchable_before is not None or polled is not None)
            and time.monotonic() - started - (polled or 0.0) > stop_after_searchable
        )
        if late or done_window:
            proc.send_signal(signal.SIGINT)
            stopped = True
            break
        time.sleep(0.5)
    proc.wait()
    reader.join(timeout=60)
    seconds = time.monotonic() - started
    sampler.stop()
    stalls = _stop_window(probe) if probe is not None else {}
    err = "".join(err_parts)
    found = SEARCHABLE.search(err)
    if searchable_before is None and found:  # the command's own word, from its start
        polled = float(found.group(1))
    stage_from = 0.0 if searchable_before is not None else polled
    span: dict[str, Any] = {
        "command": " ".join(argv[5:7]),
        "date": time.strftime("%Y-%m-%d %H:%M", time.gmtime()),
        "exitCode": proc.returncode,
        "stopped": stopped,
        "seconds": round(seconds, 1),
        "searchableAfter": None if polled is None else round(elapsed_before + polled, 1),
        "summary": [line for line in err.splitlines() if line.startswith(("indexed", "vectors"))],
        "peakRssMb": round(sampler.peak / 2**20, 1),
        **{f"window{k[0].upper()}{k[1:]}": v for k, v in stalls.items()},
    }
    if stage_from is not None:
        stage = [(t, n) for t, n in sampler.vectors if t >= started + stage_from]
        if len(stage) >= 2 and stage[-1][0] > stage[0][0]:
            span["stageSeconds"] = round(stage[-1][0] - stage[0][0], 1)
            span["stageVectors"] = stage[-1][1] - stage[0][1]
            span["vectorStageChunksPerSecond"] = round(
                span["stageVectors"] / span["stageSeconds"],
                1,
            )
            span["vectorStageChunksPerSecondByMinute"] = _rate_by_minute(
                sampler.vectors, started + stage_from
            )
            span["vectorStageCoresUsed"] = _cores_used(sampler.cpu, started + stage_from)
    span["vectorsAtEnd"] = _count(home, "vectors") or 0
    return span


def _ledger_path(rundir: Path) -> Path:
    return rundir / "ledger.json"


def _save_ledger(rundir: Path, ledger: dict[str, Any]) -> None:
    path = _ledger_path(rundir)
    path.with_suffix(".tmp").write_text(json.dumps(ledger, indent=1))
    path.with_suffix(".tmp").replace(path)


def run_scale(
    library: Path,
    rundir: Path,
    model: str,
    window: bool,
    vector_window: float | None = None,
    deadline: float | None = None,
) -> dict[str, Any]:
    """The run of one scale, as far as `deadline` allows: a fresh data folder and `trove add
    --link --wait`, or, when RUNDIR holds the ledger of a run stopped before its vectors
    were all written, `trove resume lib` in its data folder. Each process lifetime is a
    span of the ledger; the times until searchable and until every vector is written are
    sums of spans (a stop and a resume cost their start-ups: they are counted)."""
    home = rundir / "home"
    ledger: dict[str, Any] | None = None
    if _ledger_path(rundir).is_file():
        ledger = json.loads(_ledger_path(rundir).read_text())
    if ledger is not None and ledger.get("done"):
        return _result(home, ledger, model, reference=None)
    spans: list[dict[str, Any]]
    if ledger is None:
        shutil.rmtree(home, ignore_errors=True)
        create = ["base", "create", "lib"]
        if model == "local":
            create += ["--embedding", "local:all-MiniLM-L6-v2"]
        subprocess.run(_trove(home, *create), cwd=ROOT, check=True, capture_output=True)
        spans = []
        ledger = {"homeBytesBefore": _tree_bytes(home), "spans": spans, "done": False}
        argv = _trove(home, "add", "lib", str(library), "--link", "--wait")
    else:
        spans = ledger["spans"]
        argv = _trove(home, "resume", "lib")
    elapsed = sum(float(s["seconds"]) for s in spans)
    searchable = ledger.get("secondsUntilSearchable")
    span = _session(
        home,
        argv,
        window,
        None if searchable is None else float(searchable),
        elapsed,
        vector_window,
        deadline,
    )
    spans.append(span)
    if searchable is None and span["searchableAfter"] is not None:
        ledger["secondsUntilSearchable"] = span["searchableAfter"]
    reference = _reference(home) if model == "local" else None
    if reference is not None and "vectorStageChunksPerSecond" in span:
        span["referenceChunksPerSecond"] = reference["referenceChunksPerSecond"]
        span["vectorStageVsReference"] = round(
            float(span["vectorStageChunksPerSecond"])
            / float(reference["referenceChunksPerSecond"]),
            3,
        )
    chunks = _count(home, "chunks") or 0
    ledger["done"] = (
        span["exitCode"] == 0
        and not span["stopped"]
        and (model != "local" or int(span["vectorsAtEnd"]) == chunks)
    )
    _save_ledger(rundir, ledger)
    return _result(home, ledger, model, reference)


def _result(
    home: Path, ledger: dict[str, Any], model: str, reference: dict[str, Any] | None
) -> dict[str, Any]:
    """The scale's figures from its ledger: times summed over spans, the vector stage's
    chunks/s and ratio weighted by each span's stage time (each span's ratio is to a
    reference measured right after it, the machine's speed changes between sessions)."""
    spans: list[dict[str, Any]] = ledger["spans"]
    done = bool(ledger["done"])
    total = sum(float(s["seconds"]) for s in spans)
    chunks = _count(home, "chunks")
    vectors = _count(home, "vectors") or 0
    staged = [s for s in spans if s.get("stageSeconds")]
    stage_s = sum(float(s["stageSeconds"]) for s in staged)
    result: dict[str, Any] = {
        "exitCode": spans[-1]["exitCode"],
        "summary": spans[-1]["summary"],
        "secondsUntilSearchable": ledger.get("secondsUntilSearchable"),
        "secondsUntilVectorsDone": round(total, 1) if done and model == "local" else None,
        "processLifetimes": len(spans),
        "chunks": chunks,
        "vectors": vectors,
        "peakRssMb": max(float(s["peakRssMb"]) for s in spans),
        "diskAddedBytes": _tree_bytes(home) - int(ledger["homeBytesBefore"]),
        # Of which the materials under raw/ (texts; copies of files not indexed in place)
        "diskRawBytes": sum(_tree_bytes(raw) for raw in home.glob("bases/*/raw")),
        "windowMaxStallMs": max((s.get("windowMaxStallMs") or 0.0) for s in spans),
        "windowMaxAppStallMs": max((s.get("windowMaxAppStallMs") or 0.0) for s in spans),
        "windowP99GapMs": max((s.get("windowP99GapMs") or 0.0) for s in spans),
        "spans": spans,
    }
    if model == "local" and stage_s:
        rate = sum(int(s["stageVectors"]) for s in staged) / stage_s
        result["vectorStageChunksPerSecond"] = round(rate, 1)
        rated = [s for s in staged if s.get("vectorStageVsReference")]
        if rated:
            weight = sum(float(s["stageSeconds"]) for s in rated)
            result["vectorStageVsReference"] = round(
                sum(float(s["vectorStageVsReference"]) * float(s["stageSeconds"]) for s in rated)
                / weight,
                3,
            )
        if reference is not None:
            result.update(reference)
        if not done and rate and chunks:
            result["projectedSecondsUntilVectorsDone"] = round(total + (chunks - vectors) / rate)
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
        "--budget",
        type=float,
        help="seconds this invocation may run; a scale not done by then is stopped and its "
        "ledger kept: the next invocation with the same WORKDIR resumes it",
    )
    parser.add_argument(
        "--kinds", default="", help="only these kinds of file, e.g. pdf,docx (default: all)"
    )
    args = parser.parse_args()
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="trove-library-"))
    deadline = None if args.budget is None else time.monotonic() + args.budget
    results: list[dict[str, Any]] = []
    for scale in (float(s) for s in args.scales.split(",")):
        if deadline is not None and time.monotonic() > deadline:
            break
        library = workdir / f"library-x{scale:g}"
        only = [k for k in args.kinds.split(",") if k]
        made = _library(library, int(args.files * scale), args.mb * scale, args.seed, only)
        result: dict[str, Any] = {
            "scale": scale,
            "libraryFiles": made["files"],
            "libraryBytes": made["bytes"],
            **run_scale(
                library,
                workdir / f"run-x{scale:g}",
                args.model,
                not args.no_window,
                args.vector_window,
                deadline,
            ),
        }
        result["diskAddedShare"] = round(
            int(result["diskAddedBytes"]) / max(1, made["bytes"]),
            3,
        )
        print(json.dumps(result), flush=True)
        results.append(result)
        if not args.keep_library and result["secondsUntilVectorsDone"] is not None:
            shutil.rmtree(library, ignore_errors=True)
    if len(results) == 2:
        first, second = results
        growth = {
            key: round(float(second[key]) / float(first[key]), 2)
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
