"""Smoke test of the frozen Trove bundle: `python packaging/smoke_test.py dist/Trove`.

Runs the bundle the way a person would, in a temporary data directory (TROVE_HOME) with
temporary XDG folders, and checks exit codes and output:

1. `Trove --version` prints "trove <version>".
2. A BM25 base: `base create`, `add --wait` on a generated folder of mixed files (txt, md,
   html, pdf, docx, csv, json, code, a nested folder) read in the spawn worker processes,
   `item list --json` (every item completed), `search --queries` (each file's own word
   finds that file, mode bm25), `search --json`.
3. A hybrid base with the built-in model local:all-MiniLM-L6-v2 (onnxruntime and the
   sqlite-vec extension inside the bundle): mode hybrid, and a query that shares no word
   with any document still finds the right one (only the vectors can do that).
4. OCR: a scanned page (a PDF holding only a picture of a word, drawn here without any
   library) is added to a base with `--ocr on`; the word is found, marked `ocr: true`
   (pdfium, OpenCV and the PP-OCR models inside the bundle, the worker process frozen).
5. `Trove mcp` over stdio: initialize, list the tools, one kb_search call (the MCP SDK and
   its dependencies are in the bundle).
6. `Trove --self-test`: the main window offscreen, one search through it, one JSON line
   {"selfTest": "ok", "windowShownMs": ..., "results": ...}, exit 0. Timed against the
   reference, `python -m app --self-test` from the source tree, in the same run.
7. Nothing inside the bundle folder was created, changed or removed.

Prints one JSON summary (bundle size, steps, cold-start figures) and exits 0 when every
step passed. Standard library only: it runs with any Python 3.11+, no project installed.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import zipfile
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

ROOT = Path(__file__).resolve().parent.parent
LOCAL_MODEL = "local:all-MiniLM-L6-v2"
COMMAND_TIMEOUT = 300.0
GUI_TIMEOUT = 180.0


class SmokeFailure(Exception):
    pass


# --- the bundle -------------------------------------------------------------------------------


def executables(bundle: Path) -> tuple[Path, Path]:
    """(the command-line executable, the window executable) of a bundle folder, Trove.app,
    or the one-file portable executable."""
    if bundle.is_file():
        return bundle, bundle
    if bundle.suffix == ".app":
        exe = bundle / "Contents" / "MacOS" / "Trove"
        return exe, exe
    if sys.platform == "win32":
        return bundle / "trove-cli.exe", bundle / "Trove.exe"
    exe = bundle / "Trove"
    return exe, exe


def snapshot(folder: Path) -> dict[str, tuple[int, int]]:
    """Every file and folder below `folder`: relative path -> (size, mtime in ns)."""
    found: dict[str, tuple[int, int]] = {}
    if folder.is_file():
        info = folder.stat()
        return {folder.name: (info.st_size, info.st_mtime_ns)}
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            info = path.lstat()
            size = 0 if path.is_dir() and not path.is_symlink() else info.st_size
            found[path.relative_to(folder).as_posix()] = (size, info.st_mtime_ns)
    return found


def folder_bytes(folder: Path) -> int:
    if folder.is_file():
        return folder.stat().st_size
    total = 0
    for dirpath, _dirnames, filenames in os.walk(folder):
        for name in filenames:
            path = Path(dirpath) / name
            if not path.is_symlink():
                total += path.stat().st_size
    return total


def expected_version() -> str | None:
    init = ROOT / "app" / "__init__.py"
    if not init.is_file():
        return None
    match = re.search(r'^__version__\s*=\s*["\']([^"\']+)', init.read_text("utf-8"), re.M)
    return match.group(1) if match else None


# --- sample documents (standard library only) ---------------------------------------------------


def _pdf(text: str) -> bytes:
    """A one-page PDF with one line of Helvetica text."""
    line = text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
    stream = f"BT /F1 12 Tf 72 720 Td ({line}) Tj ET".encode("latin-1")
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [4 0 R] /Count 1 >>",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
        b"/Resources << /Font << /F1 3 0 R >> >> /Contents 5 0 R >>",
        b"<< /Length " + str(len(stream)).encode() + b" >>\nstream\n" + stream + b"\nendstream",
    ]
    out = io.BytesIO()
    out.write(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(out.tell())
        out.write(f"{number} 0 obj\n".encode() + body + b"\nendobj\n")
    xref = out.tell()
    out.write(f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode())
    for offset in offsets:
        out.write(f"{offset:010d} 00000 n \n".encode())
    out.write(
        f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    )
    return out.getvalue()


def _docx(heading: str, text: str) -> bytes:
    """A minimal Word document (the three parts Word itself needs)."""
    content_types = (
        '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
        '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
        '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
        '<Default Extension="xml" ContentType="application/xml"/>'
        '<Override PartName="/word/document.xml" ContentType="application/'
        'vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/>'
        "</Types>"
    )
    rels = (
        '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
        '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
        '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
        'relationships/officeDocument" Target="word/document.xml"/>'
        "</Relationships>"
    )
    paragraphs = "".join(
        f"<w:p><w:r><w:t>{escape(line)}</w:t></w:r></w:p>" for line in (heading, text)
    )
    document = (
        '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
        '<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">'
        f"<w:body>{paragraphs}</w:body></w:document>"
    )
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("[Content_Types].xml", content_types)
        archive.writestr("_rels/.rels", rels)
        archive.writestr("word/document.xml", document)
    return out.getvalue()


@dataclass(frozen=True)
class Sample:
    name: str  # path under the documents folder
    word: str  # a word found in this file only
    data: bytes


def samples() -> list[Sample]:
    def text(value: str) -> bytes:
        return value.encode("utf-8")

    return [
        Sample(
            "garden/tomatoes.txt",
            "zucchetto",
            text("Tomatoes need full sun and deep watering. Zucchetto grows beside them.\n"),
        ),
        Sample(
            "garden/roses.md",
            "quillwort",
            text("# Roses\n\nPrune roses in late winter; quillwort likes the damp border.\n"),
        ),
        Sample(
            "kitchen/bread.html",
            "levainbake",
            text(
                "<!doctype html><html><head><title>Sourdough</title></head><body>"
                "<h1>Sourdough</h1><p>A levainbake starter needs flour, water and patience."
                "</p><script>var hidden = 'scriptword';</script></body></html>"
            ),
        ),
        Sample(
            "kitchen/jam.pdf",
            "marmalaxe",
            _pdf("Strawberry marmalaxe jam sets at 105 degrees Celsius."),
        ),
        Sample(
            "office/report.docx",
            "quarterlyzen",
            _docx("Quarterly report", "The quarterlyzen figures rose in the third quarter."),
        ),
        Sample(
            "office/budget.csv",
            "ledgerfox",
            text("item,amount\nledgerfox seeds,12\ncompost,30\n"),
        ),
        Sample(
            "office/settings.json",
            "configowl",
            text(json.dumps({"name": "configowl", "notes": ["json readers keep values"]})),
        ),
        Sample(
            "code/hello.py",
            "greetwidget",
            text('def greetwidget() -> str:\n    return "hello from the code reader"\n'),
        ),
        Sample(
            "nested/deeper/still/astronomy.txt",
            "nebulark",
            text(
                "The telescope shows the nebulark cluster. Stars are born in clouds of gas "
                "and dust, far from our planet.\n"
            ),
        ),
    ]


def write_samples(folder: Path) -> list[Sample]:
    made = samples()
    for sample in made:
        path = folder / sample.name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(sample.data)
    return made


# --- running the app --------------------------------------------------------------------------


@dataclass
class Run:
    argv: list[str]
    code: int
    stdout: str
    stderr: str
    seconds: float
    reader_workers: int = 0


def _descendants_with(root: int, marker: str) -> set[int]:
    """Linux: pids of processes below `root` (children, grandchildren: a one-file build runs
    the app as a child of its bootloader) whose command line contains `marker`."""
    proc = Path("/proc")
    if not proc.is_dir():
        return set()
    parents: dict[int, int] = {}
    commands: dict[int, str] = {}
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            status = (entry / "status").read_text()
            match = re.search(r"^PPid:\s*(\d+)", status, re.M)
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if match:
            parents[int(entry.name)] = int(match.group(1))
            commands[int(entry.name)] = cmdline.replace(b"\0", b" ").decode(errors="replace")
    found: set[int] = set()
    for pid in parents:
        ancestor, hops = parents.get(pid), 0
        while ancestor is not None and ancestor != root and hops < 8:
            ancestor, hops = parents.get(ancestor), hops + 1
        if ancestor == root and marker in commands.get(pid, ""):
            found.add(pid)
    return found


def run(
    argv: Sequence[str],
    env: dict[str, str],
    cwd: Path,
    *,
    stdin: str | None = None,
    timeout: float = COMMAND_TIMEOUT,
    watch_workers: bool = False,
) -> Run:
    started = time.perf_counter()
    process = subprocess.Popen(
        list(argv),
        cwd=cwd,
        env=env,
        stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        encoding="utf-8",
        errors="replace",
    )
    workers: set[int] = set()
    stop = threading.Event()

    def watch() -> None:
        while not stop.wait(0.05):
            workers.update(_descendants_with(process.pid, "--multiprocessing-fork"))

    watcher = threading.Thread(target=watch, daemon=True) if watch_workers else None
    if watcher is not None:
        watcher.start()
    try:
        out, err = process.communicate(stdin, timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        out, err = process.communicate()
        raise SmokeFailure(
            f"{' '.join(argv)} did not finish in {timeout:.0f} s\n{err[-2000:]}"
        ) from None
    finally:
        stop.set()
        if watcher is not None:
            watcher.join()
    return Run(
        list(argv), process.returncode, out, err, time.perf_counter() - started, len(workers)
    )


def expect_ok(result: Run) -> Run:
    if result.code != 0:
        raise SmokeFailure(
            f"{' '.join(result.argv)} exited {result.code}\nstdout: {result.stdout[-2000:]}\n"
            f"stderr: {result.stderr[-4000:]}"
        )
    return result


def json_lines(text: str) -> list[Any]:
    return [json.loads(line) for line in text.splitlines() if line.strip().startswith("{")]


# --- the steps --------------------------------------------------------------------------------


@dataclass
class Context:
    cli: Path
    gui: Path
    bundle: Path
    work: Path
    env: dict[str, str]
    docs: Path
    samples: list[Sample] = field(default_factory=list)
    facts: dict[str, Any] = field(default_factory=dict)

    def trove(self, *args: str, **kwargs: Any) -> Run:
        return run([str(self.cli), *args], self.env, self.work, **kwargs)


def step_version(ctx: Context) -> str:
    result = expect_ok(ctx.trove("--version"))
    line = result.stdout.strip()
    wanted = expected_version()
    if not re.fullmatch(r"trove \S+", line) or (wanted and line != f"trove {wanted}"):
        raise SmokeFailure(f"--version printed {line!r}, expected 'trove {wanted or '<version>'}'")
    ctx.facts["version"] = line.split()[1]
    ctx.facts["versionSeconds"] = round(result.seconds, 3)
    return line


def _create_base(ctx: Context, name: str, *extra: str) -> dict[str, Any]:
    result = expect_ok(ctx.trove("base", "create", name, *extra, "--json"))
    base = json.loads(result.stdout)
    if base.get("name") != name or base.get("status") != "completed":
        raise SmokeFailure(f"base create {name}: unexpected answer {base}")
    return dict(base)


def _add_and_check(ctx: Context, base: str) -> dict[str, Any]:
    result = expect_ok(ctx.trove("add", base, str(ctx.docs), "--wait", watch_workers=True))
    items = json.loads(expect_ok(ctx.trove("item", "list", base, "--json")).stdout)
    files = [item for item in items if item["type"] == "file"]
    bad = [item for item in items if item["status"] != "completed"]
    if bad:
        raise SmokeFailure(f"items not completed in {base}: {bad}")
    if len(files) != len(ctx.samples):
        raise SmokeFailure(f"{base}: {len(files)} file items, expected {len(ctx.samples)}")
    return {
        "files": len(files),
        "chunks": sum(int(item.get("chunkCount") or 0) for item in files),
        "addSeconds": round(result.seconds, 2),
        "readerWorkerProcesses": result.reader_workers,
    }


def _search_every_word(ctx: Context, base: str, mode: str) -> int:
    queries = ctx.work / f"queries-{base}.jsonl"
    queries.write_text(
        "".join(json.dumps({"_id": s.name, "text": s.word}) + "\n" for s in ctx.samples), "utf-8"
    )
    result = expect_ok(ctx.trove("search", base, "--queries", str(queries), "--top-k", "3"))
    answers = {line["query_id"]: line for line in json_lines(result.stdout)}
    for sample in ctx.samples:
        answer = answers.get(sample.name)
        if answer is None:
            raise SmokeFailure(f"no answer for query {sample.word!r} in {result.stdout[:500]}")
        if answer.get("mode") != mode:
            raise SmokeFailure(f"{base}: mode {answer.get('mode')!r}, expected {mode!r}")
        hits = answer.get("results") or []
        if not hits or not str(hits[0]["source"]).replace("\\", "/").endswith(sample.name):
            raise SmokeFailure(f"{base}: {sample.word!r} did not find {sample.name}: {hits[:1]}")
    return len(answers)


def step_bm25(ctx: Context) -> str:
    base = _create_base(ctx, "smoke-bm25")
    if base.get("embeddingModel") is not None:
        raise SmokeFailure(f"a base without --embedding got {base['embeddingModel']}")
    added = _add_and_check(ctx, "smoke-bm25")
    count = _search_every_word(ctx, "smoke-bm25", "bm25")
    single = json.loads(expect_ok(ctx.trove("search", "smoke-bm25", "sourdough", "--json")).stdout)
    if single.get("mode") != "bm25" or not single.get("results"):
        raise SmokeFailure(f"search --json gave {single}")
    ctx.facts["bm25"] = added
    if sys.platform.startswith("linux") and added["readerWorkerProcesses"] < 1:
        raise SmokeFailure("no reader worker process was seen: spawn does not work when frozen")
    return (
        f"{added['files']} files, {added['chunks']} chunks in {added['addSeconds']} s "
        f"({added['readerWorkerProcesses']} reader worker processes); {count} queries found "
        "their files"
    )


def step_hybrid(ctx: Context) -> str:
    base = _create_base(ctx, "smoke-hybrid", "--embedding", LOCAL_MODEL)
    if base.get("embeddingModel") != LOCAL_MODEL or base.get("dimensions") != 384:
        raise SmokeFailure(f"hybrid base: unexpected model/dimensions {base}")
    added = _add_and_check(ctx, "smoke-hybrid")
    count = _search_every_word(ctx, "smoke-hybrid", "hybrid")
    # No word of this query occurs in any document: only the vectors can find the answer.
    query = "galaxy observatory"
    answer = json.loads(
        expect_ok(ctx.trove("search", "smoke-hybrid", query, "--json", "--debug")).stdout
    )
    hits = answer.get("results") or []
    if answer.get("mode") != "hybrid" or not hits:
        raise SmokeFailure(f"hybrid search for {query!r} found nothing: {answer}")
    if not str(hits[0]["source"]).replace("\\", "/").endswith("astronomy.txt"):
        raise SmokeFailure(f"hybrid search for {query!r} ranked {hits[0]['source']} first")
    ctx.facts["hybrid"] = added
    return (
        f"{added['files']} files embedded in {added['addSeconds']} s; {count} queries; "
        f"{query!r} (no shared word) -> astronomy.txt"
    )


def _mcp_session(ctx: Context) -> list[dict[str, Any]]:
    process = subprocess.Popen(
        [str(ctx.cli), "mcp"],
        cwd=ctx.work,
        env=ctx.env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        encoding="utf-8",
    )
    assert process.stdin is not None and process.stdout is not None
    replies: list[dict[str, Any]] = []
    timer = threading.Timer(COMMAND_TIMEOUT, process.kill)
    timer.start()

    def send(message: dict[str, Any]) -> None:
        assert process.stdin is not None
        process.stdin.write(json.dumps(message) + "\n")
        process.stdin.flush()

    def reply(wanted: int) -> dict[str, Any]:
        assert process.stdout is not None
        for line in process.stdout:
            message = json.loads(line)
            if message.get("id") == wanted:
                replies.append(message)
                return dict(message)
        raise SmokeFailure(f"trove mcp closed stdout before answering request {wanted}")

    try:
        send(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "trove-smoke-test", "version": "1"},
                },
            }
        )
        reply(1)
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        send({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}})
        reply(2)
        send(
            {
                "jsonrpc": "2.0",
                "id": 3,
                "method": "tools/call",
                "params": {"name": "kb_search", "arguments": {"query": "quillwort"}},
            }
        )
        reply(3)
        process.stdin.close()
        process.wait(60)
    finally:
        timer.cancel()
        if process.poll() is None:
            process.kill()
            process.wait()
    if process.returncode != 0:
        stderr = process.stderr.read() if process.stderr else ""
        raise SmokeFailure(f"trove mcp exited {process.returncode}: {stderr[-2000:]}")
    return replies


def step_mcp(ctx: Context) -> str:
    init, tools, call = _mcp_session(ctx)
    info = init.get("result", {}).get("serverInfo", {})
    if info.get("name") != "trove":
        raise SmokeFailure(f"initialize answered {init}")
    names = sorted(tool["name"] for tool in tools.get("result", {}).get("tools", []))
    if "kb_search" not in names:
        raise SmokeFailure(f"tools/list answered {tools}")
    result = call.get("result", {})
    text = json.dumps(result.get("structuredContent", {}))
    if result.get("isError") or "roses.md" not in text:
        raise SmokeFailure(f"kb_search answered {call}")
    return f"server {info.get('name')} {info.get('version')}; tools {', '.join(names)}"


def _self_test(argv: Sequence[str], env: dict[str, str], cwd: Path) -> dict[str, Any]:
    result = run(argv, env, cwd, timeout=GUI_TIMEOUT)
    lines = [line for line in json_lines(result.stdout) if "selfTest" in line]
    if result.code != 0 or not lines or lines[-1].get("selfTest") != "ok":
        raise SmokeFailure(
            f"{' '.join(argv)} exited {result.code}\nstdout: {result.stdout[-2000:]}\n"
            f"stderr: {result.stderr[-4000:]}"
        )
    report = dict(lines[-1])
    report["processSeconds"] = round(result.seconds, 3)
    return report


def _gui_env(ctx: Context, name: str) -> dict[str, str]:
    env = dict(ctx.env)
    home = ctx.work / f"gui-home-{name}"
    home.mkdir(exist_ok=True)
    env["TROVE_HOME"] = str(home)
    return env


def step_gui(ctx: Context, reference_python: str | None, rounds: int) -> str:
    frozen: list[dict[str, Any]] = []
    reference: list[dict[str, Any]] = []
    reference_error: str | None = None
    for round_number in range(rounds):
        # Alternate, so a machine that gets busier during the run penalises both equally.
        frozen.append(
            _self_test([str(ctx.gui), "--self-test"], _gui_env(ctx, f"f{round_number}"), ctx.work)
        )
        if reference_python and reference_error is None:
            env = _gui_env(ctx, f"r{round_number}")
            env["PYTHONPATH"] = str(ROOT)
            try:
                reference.append(
                    _self_test([reference_python, "-m", "app", "--self-test"], env, ROOT)
                )
            except SmokeFailure as exc:
                reference_error = str(exc)[:500]

    def figures(reports: list[dict[str, Any]]) -> dict[str, Any] | None:
        if not reports:
            return None
        shown = [float(r["windowShownMs"]) for r in reports if "windowShownMs" in r]
        wall = [float(r["processSeconds"]) * 1000 for r in reports]
        return {
            "runs": len(reports),
            "windowShownMsFirst": shown[0] if shown else None,
            "windowShownMsMedian": round(statistics.median(shown), 1) if shown else None,
            "processWallMsMedian": round(statistics.median(wall), 1),
            "results": reports[-1].get("results"),
        }

    ctx.facts["coldStart"] = {
        "frozen": figures(frozen),
        "reference": figures(reference),
        "referenceCommand": f"{reference_python} -m app --self-test" if reference_python else None,
        "referenceError": reference_error,
    }
    fro = ctx.facts["coldStart"]["frozen"]
    ref = ctx.facts["coldStart"]["reference"]
    if fro and ref and fro["windowShownMsMedian"] and ref["windowShownMsMedian"]:
        ctx.facts["coldStart"]["frozenOverReference"] = round(
            fro["windowShownMsMedian"] / ref["windowShownMsMedian"], 2
        )
    return f"window shown in {fro['windowShownMsMedian']} ms (median of {fro['runs']})"


# --- a scanned page, drawn without any library ------------------------------------------

# 5 x 7 glyphs ("#" = ink) of the letters the smoke test's scanned word uses.
GLYPHS = {
    "H": ["#...#", "#...#", "#...#", "#####", "#...#", "#...#", "#...#"],
    "E": ["#####", "#....", "#....", "####.", "#....", "#....", "#####"],
    "L": ["#....", "#....", "#....", "#....", "#....", "#....", "#####"],
    "M": ["#...#", "##.##", "#.#.#", "#.#.#", "#...#", "#...#", "#...#"],
    "T": ["#####", "..#..", "..#..", "..#..", "..#..", "..#..", "..#.."],
}
SCAN_WORD = "HELMET"


def scan_pixels(word: str, scale: int = 6, margin: int = 60) -> tuple[int, int, bytes]:
    """A grayscale bitmap (width, height, rows) with `word` in blocky capitals."""
    width = margin * 2 + len(word) * 6 * scale
    height = margin * 2 + 7 * scale
    rows = bytearray(b"\xff" * (width * height))
    for index, letter in enumerate(word):
        left = margin + index * 6 * scale
        for gy, line in enumerate(GLYPHS[letter]):
            for gx, cell in enumerate(line):
                if cell != "#":
                    continue
                for y in range(margin + gy * scale, margin + (gy + 1) * scale):
                    start = y * width + left + gx * scale
                    rows[start : start + scale] = b"\x00" * scale
    return width, height, bytes(rows)


def scanned_pdf(word: str) -> bytes:
    """A one-page PDF holding only a picture of `word` (no text layer), as a scanner makes."""
    width, height, pixels = scan_pixels(word)
    image = zlib.compress(pixels)
    page_w, page_h = width * 72 // 150, height * 72 // 150  # 150 dpi
    content = f"q {page_w} 0 0 {page_h} 0 0 cm /Im0 Do Q".encode()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 {page_w} {page_h}] "
        "/Resources << /XObject << /Im0 4 0 R >> >> /Contents 5 0 R >>".encode(),
        f"<< /Type /XObject /Subtype /Image /Width {width} /Height {height} "
        f"/ColorSpace /DeviceGray /BitsPerComponent 8 /Filter /FlateDecode "
        f"/Length {len(image)} >>\nstream\n".encode()
        + image
        + b"\nendstream",
        f"<< /Length {len(content)} >>\nstream\n".encode() + content + b"\nendstream",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{o:010d} 00000 n \n".encode() for o in offsets)
    out += (
        f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    )
    return bytes(out)


def step_ocr(ctx: Context) -> str:
    """One scanned page (a PDF holding only a picture of a word) read by text recognition in
    the bundle: pdfium draws it, rapidocr's bundled models read it, search finds the word."""
    scan = ctx.work / "scan" / "helmet-scan.pdf"
    scan.parent.mkdir(parents=True, exist_ok=True)
    scan.write_bytes(scanned_pdf(SCAN_WORD))
    base = _create_base(ctx, "smoke-ocr", "--ocr", "on")
    if not (base.get("ocr") or {}).get("enabled"):
        raise SmokeFailure(f"OCR is off in the bundle: {base.get('ocr')}")
    result = expect_ok(ctx.trove("add", "smoke-ocr", str(scan), "--wait"))
    found = json.loads(
        expect_ok(ctx.trove("search", "smoke-ocr", SCAN_WORD.lower(), "--json")).stdout
    )
    hits = found.get("results") or []
    if not hits or not hits[0].get("ocr"):
        raise SmokeFailure(f"the scanned word {SCAN_WORD!r} was not found by OCR: {found}")
    ctx.facts["ocr"] = {"addSeconds": round(result.seconds, 2)}
    return f"a scanned page read in {result.seconds:.1f} s; {SCAN_WORD!r} found (ocr: true)"


def step_untouched(ctx: Context, before: dict[str, tuple[int, int]]) -> str:
    after = snapshot(ctx.bundle)
    added = sorted(set(after) - set(before))
    removed = sorted(set(before) - set(after))
    changed = sorted(p for p in set(before) & set(after) if before[p] != after[p])
    if added or removed or changed:
        raise SmokeFailure(
            f"the bundle folder changed: added {added[:20]}, removed {removed[:20]}, "
            f"changed {changed[:20]}"
        )
    return f"{len(after)} entries unchanged"


# --- main -------------------------------------------------------------------------------------


def default_reference_python() -> str | None:
    """The Python whose `python -m app` is the reference: the packaging venv (same
    dependencies as the bundle), else the dev venv, else this interpreter."""
    for candidate in (
        ROOT / "build" / "venv-packaging" / "bin" / "python",
        ROOT / "build" / "venv-packaging" / "Scripts" / "python.exe",
        ROOT / ".venv" / "bin" / "python",
        ROOT / ".venv" / "Scripts" / "python.exe",
    ):
        if candidate.is_file():
            return str(candidate)
    return sys.executable if (ROOT / "app").is_dir() else None


def clean_env(work: Path, home: Path) -> dict[str, str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("PYTHON", "TROVE_", "QT_", "VIRTUAL_ENV", "PYI_"))
    }
    for name in ("XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME"):
        folder = work / "xdg" / name.lower()
        folder.mkdir(parents=True, exist_ok=True)
        env[name] = str(folder)
    env["TROVE_HOME"] = str(home)
    env["QT_QPA_PLATFORM"] = "offscreen"
    env["PYTHONIOENCODING"] = "utf-8"
    return env


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "bundle", type=Path, help="dist/Trove (or dist/Trove.app, or dist/Trove-portable)"
    )
    parser.add_argument(
        "--reference-python",
        default=default_reference_python(),
        help="interpreter for the `python -m app --self-test` reference (default: %(default)s)",
    )
    parser.add_argument("--no-reference", action="store_true", help="skip the reference run")
    parser.add_argument("--rounds", type=int, default=3, help="self-test runs of each (3)")
    parser.add_argument("--skip-gui", action="store_true", help="skip the window self-test")
    parser.add_argument("--skip-hybrid", action="store_true", help="skip the local-model base")
    parser.add_argument("--skip-ocr", action="store_true", help="skip the scanned page (OCR)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    parser.add_argument("--output", type=Path, help="also write the JSON summary to this file")
    args = parser.parse_args(argv)

    bundle = args.bundle.resolve()
    cli, gui = executables(bundle)
    if not cli.is_file():
        print(f"error: {cli} not found; build first: python packaging/build.py", file=sys.stderr)
        return 2
    before = snapshot(bundle)
    work = Path(tempfile.mkdtemp(prefix="trove-smoke-"))
    docs = work / "documents"
    ctx = Context(
        cli=cli, gui=gui, bundle=bundle, work=work, env=clean_env(work, work / "home"), docs=docs
    )
    ctx.samples = write_samples(docs)
    reference = None if args.no_reference else args.reference_python

    steps: list[tuple[str, Callable[[], str]]] = [
        ("version", lambda: step_version(ctx)),
        ("bm25", lambda: step_bm25(ctx)),
    ]
    if not args.skip_hybrid:
        steps.append(("hybrid", lambda: step_hybrid(ctx)))
    if not args.skip_ocr:
        steps.append(("ocr", lambda: step_ocr(ctx)))
    steps.append(("mcp", lambda: step_mcp(ctx)))
    if not args.skip_gui:
        steps.append(("gui-self-test", lambda: step_gui(ctx, reference, max(1, args.rounds))))
    steps.append(("bundle-untouched", lambda: step_untouched(ctx, before)))

    results: list[dict[str, Any]] = []
    for name, action in steps:
        started = time.perf_counter()
        try:
            detail, ok = action(), True
        except SmokeFailure as exc:
            detail, ok = str(exc), False
        except Exception as exc:  # a bug in a step must still end in a summary
            detail, ok = f"{type(exc).__name__}: {exc}", False
        seconds = round(time.perf_counter() - started, 2)
        results.append({"step": name, "ok": ok, "seconds": seconds, "detail": detail})
        print(f"[{'ok' if ok else 'FAILED'}] {name} ({seconds} s): {detail}", file=sys.stderr)

    summary: dict[str, Any] = {
        "ok": all(r["ok"] for r in results),
        "bundle": str(bundle),
        "platform": sys.platform,
        "bundleSizeMB": round(folder_bytes(bundle) / 1e6, 1),
        "bundleFiles": sum(1 for _ in bundle.rglob("*")) if bundle.is_dir() else 1,
        **ctx.facts,
        "steps": results,
    }
    text = json.dumps(summary, indent=2)
    print(text)
    if args.output:
        args.output.write_text(text + "\n", "utf-8")
    if args.keep:
        print(f"kept {work}", file=sys.stderr)
    else:
        shutil.rmtree(work, ignore_errors=True)
    return 0 if summary["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
