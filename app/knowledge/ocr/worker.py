"""The text-recognition worker process: one document at a time, one page at a time, results
streamed.

Started by `ocr.tasks.start_if_free` (multiprocessing, spawn) and handed work folders
through a queue, it keeps its models loaded between documents; for each folder it reads
the request, appends each page's text to the pages file as soon as it is read, and ends
with a result file. Like the document readers it leaves with its parent, runs at low priority and
within an address-space limit (Linux; on macOS and Windows there is no such limit and a
runaway page is stopped by the memory check of the job executor instead). Pages already in the pages
file are skipped, so a worker started again after a crash resumes where the last one was.
"""

from __future__ import annotations

import json
import os
import queue
import time
from pathlib import Path
from typing import Any

from app.knowledge.pipeline.readers.errors import ReaderError
from app.knowledge.pipeline.recognised_pages import append_page, read_pages
from app.knowledge.process_identity import current_owner
from app.knowledge.types import ErrorCode
from app.knowledge.worker_process import init_worker

REQUEST = "request.json"
PAGES = "pages.jsonl"
RESULT = "result.json"
WORKER = "worker.json"

# The models take ~0.6 GB resident and onnxruntime reserves more address space than that;
# a page that needs more than this is a pathological one.
OCR_MEMORY_LIMIT = 3 * 1024**3
# A worker with nothing to do this long leaves, giving its ~0.6 GB back.
IDLE_EXIT_S = 30.0
# Below the reader workers (niceness 5 + this): a page keeps a core busy for seconds, and
# the window and the readers of other documents come first.
EXTRA_NICENESS = 5


def serve(inbox: Any, memory_limit: int, parent_owner: str) -> None:
    """The worker's whole life (the multiprocessing target): work folders from `inbox`, one
    at a time, with the models loaded once; it leaves when none came for IDLE_EXIT_S.
    This module imports little: what a spawned worker imports before it lowers its
    priority competes with the window."""
    init_worker(memory_limit, parent_owner)
    if hasattr(os, "nice"):
        os.nice(EXTRA_NICENESS)
    models = _Models()
    while True:
        try:
            folder = inbox.get(timeout=IDLE_EXIT_S)
        except queue.Empty:
            return
        work_on(Path(folder), models)


def work_on(folder: Path, models: _Models) -> None:
    """Recognise one folder's request and write its result, whatever happens."""
    try:
        write_json(folder / WORKER, {"owner": current_owner(), "started": time.time()})
        _finish(folder, *_outcome(folder, models))
    except FileNotFoundError:
        return  # the folder was removed (its item deleted): nobody waits for a result


def _outcome(folder: Path, models: _Models) -> tuple[str, str, str]:
    """(state, code, message) of recognising the folder's request."""
    try:
        request = json.loads((folder / REQUEST).read_text(encoding="utf-8"))
        _recognise(folder, request, models)
    except ReaderError as exc:
        return "failed", str(exc.code), exc.message
    except MemoryError:
        return "failed", ErrorCode.OCR_FAILED, OUT_OF_MEMORY
    except FileNotFoundError:
        if not folder.is_dir():
            raise  # removed meanwhile
        return "failed", ErrorCode.SOURCE_MISSING, "the file to recognise is gone"
    except Exception as exc:  # a model or renderer failure fails the item, with its reason
        return "failed", ErrorCode.OCR_FAILED, f"text recognition failed: {exc}"
    return "done", "", ""


class _Models:
    """The recognizer, loaded on the first page and kept for the next documents."""

    def __init__(self) -> None:
        self._recognizer: Any = None

    def recognizer(self, languages: tuple[str, ...]) -> Any:
        if self._recognizer is None:
            from app.knowledge.ocr.recognizer import Recognizer

            self._recognizer = Recognizer(languages)
        return self._recognizer


OUT_OF_MEMORY = "recognising text on this page needed more memory than allowed"


def _recognise(folder: Path, request: dict[str, object], models: _Models) -> None:
    from app.knowledge.ocr.page_images import page_images

    pages = [int(p) for p in request["pages"]]  # type: ignore[attr-defined]
    languages = tuple(str(code) for code in request["languages"])  # type: ignore[attr-defined]
    done = read_pages(folder / PAGES)
    todo = [p for p in pages if p not in done]
    if not todo:
        return
    recognizer = models.recognizer(languages)
    with (
        page_images(Path(str(request["source"]))) as images,
        (folder / PAGES).open("a", encoding="utf-8") as sink,
    ):
        for index in todo:
            image = images.page(index)
            text = recognizer.read(image)
            del image
            append_page(sink, index, text)


def _finish(folder: Path, state: str, code: str = "", message: str = "") -> None:
    write_json(folder / RESULT, {"state": state, "code": str(code), "message": message})


def write_json(path: Path, data: dict[str, object]) -> None:
    """Write whole or not at all: the reader never sees half a file."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    os.replace(tmp, path)
