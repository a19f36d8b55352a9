"""The text-recognition worker process: one document, one page at a time, results streamed.

Started by `ocr.tasks.start` (multiprocessing, spawn), it reads its request from its work
folder, appends each page's text to the pages file as soon as it is read, and ends with a
result file. Like the document readers it leaves with its parent, runs at low priority and
within an address-space limit (Linux; on macOS and Windows there is no such limit and a
runaway page is stopped by the memory check of the job executor instead). Pages already in the pages
file are skipped, so a worker started again after a crash resumes where the last one was.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

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
# Below the reader workers (niceness 5 + this): a page keeps a core busy for seconds, and
# the window and the readers of other documents come first.
EXTRA_NICENESS = 5


def run(workdir: str, memory_limit: int, parent_owner: str) -> None:
    """The worker's whole life (the multiprocessing target). This module imports little:
    what a spawned worker imports before it lowers its priority competes with the window."""
    init_worker(memory_limit, parent_owner)
    if hasattr(os, "nice"):
        os.nice(EXTRA_NICENESS)
    folder = Path(workdir)
    write_json(folder / WORKER, {"owner": current_owner(), "started": time.time()})
    try:
        request = json.loads((folder / REQUEST).read_text(encoding="utf-8"))
        _recognise(folder, request)
    except ReaderError as exc:
        _finish(folder, "failed", str(exc.code), exc.message)
    except MemoryError:
        _finish(folder, "failed", ErrorCode.OCR_FAILED, OUT_OF_MEMORY)
    except Exception as exc:  # a model or renderer failure fails the item, with its reason
        _finish(folder, "failed", ErrorCode.OCR_FAILED, f"text recognition failed: {exc}")
    else:
        _finish(folder, "done")


OUT_OF_MEMORY = "recognising text on this page needed more memory than allowed"


def _recognise(folder: Path, request: dict[str, object]) -> None:
    from app.knowledge.ocr.page_images import page_images
    from app.knowledge.ocr.recognizer import Recognizer

    pages = [int(p) for p in request["pages"]]  # type: ignore[attr-defined]
    languages = tuple(str(code) for code in request["languages"])  # type: ignore[attr-defined]
    done = read_pages(folder / PAGES)
    todo = [p for p in pages if p not in done]
    if not todo:
        return
    recognizer = Recognizer(languages)
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
