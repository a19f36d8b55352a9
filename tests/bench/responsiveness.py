"""How long the GUI thread stalls while the real runtime indexes a folder of files.

    python tests/bench/responsiveness.py [--files 300] [--workers N] [--model local|bm25|fake]
                                         [--scanned-pages N] [--ask]

Opens the main window offscreen, adds FILES Markdown files through the window and lets the
real JobExecutor index them (documents read in the reader worker processes). A QTimer on the
GUI thread ticks every 10 ms; the longest gap between ticks minus the interval is the longest
stall. `--executor process` (the default, as the window runs) indexes in the job process the
window starts (runtime/work_process.py); `--executor thread` runs the JobExecutor on threads
of the window's own process, as before. `--workers` overrides the executor's job threads
(thread executor only; default: its own choice);
`--model`: the built-in offline model (default when installed), BM25 only, or the tests'
pure-Python fake embedder (a worst case: it holds the GIL while it embeds).
`--scanned-pages N` adds a scanned PDF of N pages to the batch: its text is recognised
(OCR) in the recognition worker process while the rest is indexed (needs the `ocr` extra).
`--hog`: the same again with a CPU hog on every core (a busy machine), both printed.
`--ask`: meanwhile the Ask view asks one question after another of a loopback chat server
that streams each answer at 200 tokens/s (over the window's qasync loop, as in the app).
Prints one JSON line.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from PySide6.QtCore import QCoreApplication, QSettings, QTimer  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from app.knowledge.service import KnowledgeService  # noqa: E402
from app.knowledge.types import ItemStatus  # noqa: E402
from app.runtime.executor import JobExecutor, default_worker_cap  # noqa: E402
from app.runtime.process_executor import Executor, ProcessExecutor  # noqa: E402
from app.ui.context import UiContext  # noqa: E402
from app.ui.launcher import settle_heap  # noqa: E402
from app.ui.main_window import MainWindow  # noqa: E402
from app.ui.notifications import Notifier  # noqa: E402
from app.ui.tasks import BackgroundTasks  # noqa: E402
from app.ui.waiting import wait_until  # noqa: E402

TICK_MS = 10


MACHINE_STALL_MS = 50
_CONTROL = f"""
import sys, time
last = time.monotonic()
while True:
    time.sleep(0.005)
    now = time.monotonic()
    if (now - last) * 1000 >= {MACHINE_STALL_MS}:
        print(last, now, flush=True)
    last = now
"""


class MachineControl:
    """A separate, idle Python process that sleeps 5 ms at a time and reports when it woke
    late: when it and the window stall at the same moment, the machine paused, not Trove.
    It shares no GIL with the window and runs at normal priority (Trove's job threads and
    reader processes run below it)."""

    def __init__(self) -> None:
        self._process = subprocess.Popen(
            [sys.executable, "-c", _CONTROL], stdout=subprocess.PIPE, text=True
        )

    def stop(self) -> list[tuple[float, float]]:
        self._process.terminate()
        out, _ = self._process.communicate(timeout=10)
        return [(float(a), float(b)) for a, b in (line.split() for line in out.splitlines())]


def corpus(folder: Path, count: int) -> list[str]:
    folder.mkdir(parents=True)
    paths = []
    for n in range(count):
        path = folder / f"doc-{n:04d}.md"
        words = " ".join(f"word{(n * 7 + k) % 997} topic{n % 13}" for k in range(120))
        path.write_text(f"# Document {n}\n\n{words}\n", encoding="utf-8")
        paths.append(str(path))
    return paths


def scanned_pdf(folder: Path, pages: int) -> str:
    from tests.ocr_samples import Line, page_image, scanned_pdf_bytes

    images = [
        page_image([Line(f"Scanned page {n} of the harbour ledger"), Line("tide and cargo")])
        for n in range(pages)
    ]
    path = folder / "scanned.pdf"
    path.write_bytes(scanned_pdf_bytes(images))
    return str(path)


ASK_TOKENS_PER_SECOND = 200
ASK_ANSWER_TOKENS = 400


_CHAT_SERVER = f"""
import sys
sys.path.insert(0, {str(ROOT)!r})
from tests.providers.fake_chat import FakeChat
words = [f"word{{n}} [1]" if n % 40 == 39 else f"word{{n}}" for n in range({ASK_ANSWER_TOKENS})]
with FakeChat(reply=" ".join(words), delay=1 / {ASK_TOKENS_PER_SECOND}) as chat:
    print(chat.base_url, flush=True)
    sys.stdin.read()
"""


class Asking:
    """The Ask view streaming answers until stopped, from a loopback chat server in a process
    of its own, as a real model server is (in the window's process its threads would compete
    with the window for the GIL)."""

    def __init__(self, window: MainWindow, service: KnowledgeService) -> None:
        self._server = subprocess.Popen(
            [sys.executable, "-c", _CHAT_SERVER],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self._server.stdout is not None
        base_url = self._server.stdout.readline().strip()
        service.save_provider("chat", "openai", base_url=base_url, models=["bench"])
        self.view = window.ask
        self.view.model_box().setCurrentText("chat:bench")
        window.query_tabs.setCurrentWidget(self.view)
        self.answers = 0
        self.tokens = 0
        self.seconds = 0.0
        self._running = False
        self.view.answerFinished.connect(self._on_finished)
        self.view.askFailed.connect(self._on_failed)

    def start(self) -> None:
        self._running = True
        self._ask()

    def stop(self) -> None:
        self._running = False
        self.view.stop()
        self._server.communicate(timeout=30)  # closes its stdin: the server ends

    def _ask(self) -> None:
        self.view.ask("word3 word7")

    def _on_finished(self, answer: object) -> None:
        from app.knowledge.types import AnswerState, AskAnswer

        assert isinstance(answer, AskAnswer)
        first = answer.metrics.first_token_ms
        if answer.turn.state is AnswerState.COMPLETE and first is not None:
            # The streaming rate: from the first token to the last (retrieval excluded).
            self.answers += 1
            self.tokens += ASK_ANSWER_TOKENS
            self.seconds += (answer.metrics.total_ms - first) / 1000
        if self._running:
            QTimer.singleShot(0, self._ask)

    def _on_failed(self, error: object) -> None:
        raise RuntimeError(f"an ask failed during the bench: {error}")


def _event_loop(app: QCoreApplication) -> object:
    """A qasync loop over the application, marked running as the launcher's is (the window
    awaits its chat streams on it); events are processed by wait_until."""
    import asyncio

    import qasync

    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    asyncio.events._set_running_loop(loop)
    return loop


_HOG = "while True: pass"


class CpuHogs:
    """`count` processes that keep a core each at 100 % (another program busy on the
    machine), at normal priority."""

    def __init__(self, count: int) -> None:
        self._processes = [subprocess.Popen([sys.executable, "-c", _HOG]) for _ in range(count)]

    def stop(self) -> None:
        for process in self._processes:
            process.kill()
            process.wait()


def run(
    files: int,
    workers: int | None,
    model: str,
    scanned_pages: int = 0,
    ask: bool = False,
    hogs: int = 0,
    executor: str = "process",
) -> dict[str, object]:
    app = QApplication.instance() or QApplication(sys.argv[:1])
    if ask:
        _event_loop(app)
    tmp = Path(tempfile.mkdtemp(prefix="trove-resp-"))
    models = None
    if model == "fake":
        from tests.fakes import FakeModels

        models = FakeModels()
    service = KnowledgeService(tmp / "home", models=models)
    jobs: Executor = (
        ProcessExecutor(tmp / "home")
        if executor == "process"
        else JobExecutor(service, max_workers=workers)
    )
    ctx = UiContext(
        service=service,
        executor=jobs,
        tasks=BackgroundTasks(),
        settings=QSettings(str(tmp / "settings.ini"), QSettings.Format.IniFormat),
        notifier=Notifier(),
    )
    embedding = {"local": service.offline_model(), "bm25": None, "fake": "fake:bow"}[model]
    service.create_base("load", embedding_model=embedding)
    # What the window does at start (launcher.run_window); a person's first drop comes later.
    for started_worker in service.warm_up():
        started_worker.result(timeout=120)
    ctx.executor.start()
    window = MainWindow(ctx)
    window.confirm_quit = lambda _running: True
    window.show()
    window.start()
    settle_heap(window)
    wait_until(lambda: window.current_base() is not None, 30, "the base")
    paths = corpus(tmp / "corpus", files)
    if scanned_pages:
        paths.append(scanned_pdf(tmp / "corpus", scanned_pages))
    documents = len(paths)
    # (start, end) in time.monotonic() seconds, comparable with the control process's
    gaps: list[tuple[float, float]] = []
    last: list[float | None] = [None]  # the first tick has no predecessor to measure from

    def tick() -> None:
        now = time.monotonic()
        if last[0] is not None:
            gaps.append((last[0], now))
        last[0] = now

    timer = QTimer()
    timer.setInterval(TICK_MS)
    timer.timeout.connect(tick)
    asking = Asking(window, service) if ask else None
    control = MachineControl()
    hog = CpuHogs(hogs)
    timer.start()
    started = time.perf_counter()
    if asking is not None:
        asking.start()
    window.items.add_paths(paths)
    wait_until(
        lambda: window.items.model.status_counts()[ItemStatus.COMPLETED] == documents,
        900,
        "indexing",
    )
    searchable = time.perf_counter() - started
    # Documents are searchable before their vectors exist; the stalls count until the
    # vector stage is done too (in the job process, or in this one with --executor thread).
    base_id = service.list_bases()[0].id
    wait_until(lambda: service.vector_status(base_id).done, 3600, "the vectors")
    seconds = time.perf_counter() - started
    timer.stop()
    if asking is not None:
        asking.stop()
    machine_stalls = control.stop()
    hog.stop()
    ctx.executor.shutdown()
    ctx.tasks.wait()
    window.close()
    service.close()
    app.processEvents()
    ordered = sorted((end - start) * 1000 for start, end in gaps)
    own = [
        (end - start) * 1000
        for start, end in gaps
        if not any(m_start < end and start < m_end for m_start, m_end in machine_stalls)
    ]
    streamed: dict[str, object] = {}
    if asking is not None:
        streamed = {
            "askAnswers": asking.answers,
            "askTokensPerSecond": round(asking.tokens / asking.seconds, 1)
            if asking.seconds
            else 0.0,
        }
    return {
        **streamed,
        "files": files,
        "executor": executor,
        "scannedPages": scanned_pages,
        "model": embedding or "none (BM25)",
        "workers": workers or default_worker_cap(),
        "secondsUntilSearchable": round(searchable, 2),
        "seconds": round(seconds, 2),
        "hogs": hogs,
        "filesPerSecond": round(files / seconds, 1),
        "ticks": len(gaps),
        "medianGapMs": round(statistics.median(ordered), 1),
        "p99GapMs": round(ordered[int(len(ordered) * 0.99)], 1),
        "maxStallMs": round(max(0.0, ordered[-1] - TICK_MS), 1),
        # The same, leaving out gaps during which a separate idle process was also held up
        # for MACHINE_STALL_MS or more: on a shared VM the whole machine sometimes pauses.
        "machineStalls": len(machine_stalls),
        "maxAppStallMs": round(max(0.0, max(own, default=TICK_MS) - TICK_MS), 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--files", type=int, default=300)
    parser.add_argument("--workers", type=int)
    parser.add_argument("--model", choices=("local", "bm25", "fake"), default="local")
    parser.add_argument("--scanned-pages", type=int, default=0)
    parser.add_argument(
        "--ask", action="store_true", help="stream chat answers at 200 tokens/s meanwhile"
    )
    parser.add_argument(
        "--hog",
        action="store_true",
        help="also run with a CPU hog on every core (another program busy) and print both",
    )
    parser.add_argument("--executor", choices=("process", "thread"), default="process")
    args = parser.parse_args()
    if args.executor == "process" and args.model == "fake":
        parser.error("the fake model lives in this process: use --executor thread")
    quiet = run(
        args.files, args.workers, args.model, args.scanned_pages, args.ask, 0, args.executor
    )
    if not args.hog:
        print(json.dumps(quiet))
        return
    hogs = os.cpu_count() or 2
    busy = run(
        args.files, args.workers, args.model, args.scanned_pages, args.ask, hogs, args.executor
    )
    print(json.dumps({"quiet": quiet, "hog": busy}))


if __name__ == "__main__":
    main()
