"""Text recognition as work submitted to a worker process and polled (the job side).

Each document being recognised has a work folder under its base's `.trove/ocr/<item id>`:
the request, the pages file the worker streams into, the worker's identity and, at the
end, its result. Everything a poll needs is in that folder, so any Trove process can poll
a recognition another one started, stop it (delete) or start it again after a crash.
"""

from __future__ import annotations

import json
import logging
import multiprocessing
import shutil
import threading
import time
from dataclasses import dataclass
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import Any

import psutil

from app.knowledge.data_layout import DataLayout
from app.knowledge.ocr import worker
from app.knowledge.pipeline.recognised_pages import read_pages
from app.knowledge.process_identity import current_owner, owner_alive

log = logging.getLogger(__name__)

OCR_DIR = ".trove/ocr"
# A worker that has not written its identity this long after it was started is not coming.
START_GRACE_S = 60.0


@dataclass(slots=True)
class _Server:
    """This process's recognition worker: it keeps its models loaded between documents
    and takes one work folder at a time from `inbox`. One per Trove process: the models
    take ~0.6 GB and a page keeps a core busy for seconds, so other documents wait their
    turn (their check jobs hand them over when the worker is free)."""

    process: BaseProcess
    inbox: Any  # a multiprocessing queue of work folders
    folder: str | None = None  # the folder it was last given


_server: _Server | None = None
_lock = threading.Lock()


@dataclass(frozen=True, slots=True)
class OcrState:
    """Where a document's recognition stands."""

    total: int  # pages asked for
    done: int  # pages read so far
    running: bool  # a worker is at it (in this or another live Trove process)
    starts: int  # how many workers were started for it (0: waiting for its turn)
    failure: tuple[str, str] | None  # (code, message) when the worker gave up
    finished: bool  # every page read (the result says done)


def work_dir(layout: DataLayout, base_id: str, item_id: str) -> Path:
    return layout.base_dir(base_id) / OCR_DIR / item_id


def pages_path(folder: Path) -> Path:
    return folder / worker.PAGES


def submit(folder: Path, source: Path, pages: list[int], languages: tuple[str, ...]) -> None:
    """Ask for these pages of `source` to be recognised; `start_if_free` starts the work."""
    folder.mkdir(parents=True, exist_ok=True)
    request: dict[str, object] = {
        "source": str(source),
        "pages": pages,
        "languages": list(languages),
        "starts": 0,
    }
    worker.write_json(folder / worker.REQUEST, request)


def start_if_free(folder: Path) -> bool:
    """Hand the folder's request to this process's worker (again: pages already read are
    kept), starting the worker if it is not running; False while it works on another."""
    global _server
    request = _read_json(folder / worker.REQUEST)
    if request is None:
        raise FileNotFoundError(folder / worker.REQUEST)
    with _lock:
        server = _live_server()
        if server is not None and _busy(server):
            return False
        request["starts"] = int(request.get("starts", 0)) + 1
        request["starter"] = current_owner()
        request["started_at"] = time.time()
        (folder / worker.RESULT).unlink(missing_ok=True)
        (folder / worker.WORKER).unlink(missing_ok=True)
        worker.write_json(folder / worker.REQUEST, request)
        if server is None:
            server = _server = _spawn()
        server.folder = str(folder)
        server.inbox.put(str(folder))
    return True


def _live_server() -> _Server | None:
    """This process's worker, when it is still alive (the lock is held)."""
    global _server
    if _server is not None and not _server.process.is_alive():
        _server.process.join(0)  # reap it
        _server = None
    return _server


def _busy(server: _Server) -> bool:
    """Whether the worker is still on its folder (no result yet, folder not deleted)."""
    if server.folder is None:
        return False
    folder = Path(server.folder)
    return folder.is_dir() and not (folder / worker.RESULT).exists()


def _spawn() -> _Server:
    # spawn, not fork: forking a process that runs Qt and SQLite threads is unsafe.
    context = multiprocessing.get_context("spawn")
    inbox = context.Queue()
    inbox.cancel_join_thread()  # a dead worker must never hold up this process's exit
    process = context.Process(
        target=worker.serve,
        args=(inbox, worker.OCR_MEMORY_LIMIT, current_owner()),
        name="trove-ocr",
        daemon=True,  # ends with a Trove that exits normally; a killed one: see worker.py
    )
    process.start()
    return _Server(process, inbox)


def state(folder: Path) -> OcrState | None:
    """The recognition's state, or None when none was submitted for this folder."""
    request = _read_json(folder / worker.REQUEST)
    if request is None:
        return None
    asked = [int(p) for p in request.get("pages", [])]
    got = read_pages(folder / worker.PAGES)
    result = _read_json(folder / worker.RESULT)
    failure = None
    if result is not None and result.get("state") == "failed":
        failure = (str(result.get("code")), str(result.get("message")))
    return OcrState(
        total=len(asked),
        done=sum(1 for p in asked if p in got),
        running=result is None and _running(folder, request),
        starts=int(request.get("starts", 0)),
        failure=failure,
        finished=result is not None and result.get("state") == "done",
    )


def _running(folder: Path, request: dict[str, Any]) -> bool:
    """Whether a worker is on the folder (its result not written yet: the caller checked)."""
    with _lock:
        server = _live_server()
        if server is not None and server.folder == str(folder):
            return True
        own_pid = server.process.pid if server is not None else None
    if not request.get("starts"):
        return False
    identity = _read_json(folder / worker.WORKER)
    if identity is not None:
        owner = str(identity.get("owner"))
        # This process's worker named there has moved on: it left the folder unfinished.
        return owner.partition(":")[0] != str(own_pid) and owner_alive(owner)
    # Started by another process that may still be spawning it.
    recent = time.time() - float(request.get("started_at", 0.0)) < START_GRACE_S
    return recent and owner_alive(str(request.get("starter")))


def stop(folder: Path) -> None:
    """Kill the folder's worker, wherever it runs (delete and cancel mid-recognition); a
    worker that finished the folder and moved on is left alone."""
    global _server
    with _lock:
        server = _live_server()
        if server is not None and server.folder == str(folder) and _busy(server):
            server.process.kill()
            server.process.join(5)
            _server = None
    if (folder / worker.RESULT).exists():
        return
    identity = _read_json(folder / worker.WORKER)
    owner = str(identity.get("owner")) if identity else ""
    if owner_alive(owner):
        try:
            psutil.Process(int(owner.partition(":")[0])).kill()
        except (psutil.Error, ValueError):
            log.debug("OCR worker %s was gone before it could be stopped", owner)


def discard(folder: Path) -> None:
    """Stop the worker and remove the folder."""
    stop(folder)
    shutil.rmtree(folder, ignore_errors=True)


def discard_base(layout: DataLayout, base_id: str) -> None:
    """Stop every recognition of a base (the base is being deleted)."""
    root = layout.base_dir(base_id) / OCR_DIR
    if root.is_dir():
        for folder in root.iterdir():
            discard(folder)


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None
