"""A fork server for CLI runs that a test kills: each `trove` command starts in ~30 ms.

`python -m app sync` spends about a second importing before it looks at anything, so a
SIGKILL at a random moment of a real run mostly lands in imports. The zygote imports the
CLI once; each run is a fork of it that calls the CLI's `main(argv)` in a session of its
own, with its output in a log, and ends with `os._exit(main's code)`. What runs is the
real command, start to finish, in a real process that SIGKILL kills like any other: only
the interpreter's start-up is shared. Reading runs in the process (no reader workers to
spawn, which is test_crash_recovery's subject).

Protocol, one JSON object per line: the client writes {"argv": [...], "log": PATH}; the
zygote answers {"pid": N} and later {"exit": N, "code": C} once it has reaped the run
(C is negative for a signal, as subprocess reports it).

    zygote = Zygote(); run = zygote.spawn(["--home", H, "sync", "kb"], log)
    zygote.kill(run)  # SIGKILL, then wait until it is reaped
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
REAP_S = 60.0


@dataclass
class Run:
    pid: int
    ended: threading.Event = field(default_factory=threading.Event)
    code: int | None = None


class Zygote:
    """The client side: starts the zygote process and talks to it."""

    def __init__(self, env: dict[str, str] | None = None) -> None:
        environment = dict(os.environ if env is None else env)
        # One thread per numeric library: a fork must not inherit a pool of them.
        environment.update({"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"})
        environment.pop("TROVE_HOME", None)
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "tests.reliability.cli_zygote"],
            cwd=ROOT,
            env=environment,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            bufsize=1,
        )
        self._lock = threading.Lock()
        self._runs: dict[int, Run] = {}
        self._started: list[int] = []
        self._spawned = threading.Condition(self._lock)
        ready = self._proc.stdout.readline() if self._proc.stdout else ""
        if json.loads(ready or "{}").get("ready") is not True:
            raise RuntimeError("the CLI zygote did not start")
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def spawn(self, argv: list[str], log: Path) -> Run:
        assert self._proc.stdin is not None
        with self._lock:
            self._proc.stdin.write(json.dumps({"argv": argv, "log": str(log)}) + "\n")
            self._proc.stdin.flush()
            while not self._started:
                if not self._spawned.wait(REAP_S):
                    raise RuntimeError("the CLI zygote did not fork")
            pid = self._started.pop(0)
            return self._runs.setdefault(pid, Run(pid))

    def wait(self, run: Run, timeout: float) -> int | None:
        """The run's exit code, or None if it is still running after `timeout` seconds."""
        return run.code if run.ended.wait(timeout) else None

    def kill(self, run: Run) -> int | None:
        """SIGKILL the run (alone: its session keeps nothing else) and wait until reaped:
        a reaped pid no longer looks alive to the catalog's owner checks."""
        with contextlib.suppress(ProcessLookupError):  # it ended just now
            os.kill(run.pid, signal.SIGKILL)
        return self.wait(run, REAP_S)

    def close(self) -> None:
        with self._lock:
            if self._proc.stdin is not None:
                self._proc.stdin.close()
            live = [r for r in self._runs.values() if not r.ended.is_set()]
        for run in live:
            self.kill(run)
        self._proc.wait(REAP_S)

    def _read(self) -> None:
        assert self._proc.stdout is not None
        for line in self._proc.stdout:
            message = json.loads(line)
            with self._lock:
                if "pid" in message:
                    self._started.append(int(message["pid"]))
                    self._runs.setdefault(int(message["pid"]), Run(int(message["pid"])))
                    self._spawned.notify_all()
                elif "exit" in message:
                    run = self._runs.setdefault(int(message["exit"]), Run(int(message["exit"])))
                    run.code = int(message["code"])
                    run.ended.set()


# -- the zygote process ----------------------------------------------------------------------


def _child(argv: list[str], log: str) -> None:
    """In the fork: a session of its own, output to the log, the CLI, and out."""
    code = 1
    try:
        os.setsid()
        out = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        os.dup2(out, 1)
        os.dup2(out, 2)
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        # Fresh streams on the new descriptors (nothing buffered for the zygote's pipe).
        sys.stdout = open(1, "w", encoding="utf-8", closefd=False, buffering=1)  # noqa: SIM115
        sys.stderr = open(2, "w", encoding="utf-8", closefd=False, buffering=1)  # noqa: SIM115
        signal.signal(signal.SIGINT, signal.default_int_handler)
        from app.cli.entry import main
        from app.knowledge.jobs.owner import current_owner

        current_owner.cache_clear()  # this process's own pid, not the zygote's
        code = main(argv)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException:
        import traceback

        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def _serve() -> None:
    """Fork a run per request; reap runs between requests. One thread only, so a fork
    copies no lock another thread holds."""
    # Everything a run imports, imported once here.
    import app.cli.entry
    import app.knowledge.service as service_module
    import app.runtime.headless  # noqa: F401
    from app.knowledge.jobs.reader_pool import InlineExtraction

    service_module.shared_pool = InlineExtraction  # type: ignore[assignment]
    requests = sys.stdin.buffer

    def say(message: dict[str, int | bool]) -> None:
        sys.stdout.write(json.dumps(message) + "\n")
        sys.stdout.flush()

    def reap() -> None:
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            code = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
            say({"exit": pid, "code": code})

    say({"ready": True})
    pending = b""
    while True:
        readable, _, _ = select.select([requests], [], [], 0.02)
        reap()
        if not readable:
            continue
        chunk = os.read(requests.fileno(), 65536)
        if not chunk:
            break
        pending += chunk
        while b"\n" in pending:
            line, pending = pending.split(b"\n", 1)
            request = json.loads(line)
            pid = os.fork()
            if pid == 0:
                _child(list(request["argv"]), str(request["log"]))
            say({"pid": pid})
    # The client went away: wait for the runs left (it killed the live ones).
    while True:
        try:
            pid, status = os.wait()
        except ChildProcessError:
            return
        code = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
        say({"exit": pid, "code": code})


if __name__ == "__main__":
    _serve()
