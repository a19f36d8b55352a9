"""`--self-test`: open the main window, index a note in a throwaway base, search it through
the window, print one JSON line and exit 0 (non-zero on any failure). The frozen build's
smoke test runs it; `windowShownMs` is the cold start from process start to a shown window."""

from __future__ import annotations

import json
import logging
import time

import psutil

from app.knowledge.types import Base, ItemStatus
from app.ui.context import UiContext
from app.ui.main_window import MainWindow
from app.ui.waiting import WaitTimeout, wait_until

log = logging.getLogger(__name__)

NOTE = "Trove self-test note: the quick brown fox jumps over the lazy dog."
QUERY = "brown fox"


def _since_process_start_ms() -> float:
    return (time.time() - psutil.Process().create_time()) * 1000


def _shown_base_id(window: MainWindow) -> str | None:
    base = window.current_base()
    return base.id if base is not None else None


def run_self_test(ctx: UiContext) -> int:
    window = MainWindow(ctx)
    window.confirm_quit = lambda _running: True  # scripted: nobody to answer
    window.show()
    window.start()
    base: Base | None = None
    try:
        wait_until(lambda: window.isVisible() and window.bases.loaded, 60, "the window")
        shown_ms = _since_process_start_ms()
        base = ctx.service.create_base("Trove self-test")
        ctx.service.add_note(base.id, "self-test", NOTE)
        ctx.executor.start()
        window.bases.reload(select=base.id)
        base_id = base.id
        wait_until(lambda: _shown_base_id(window) == base_id, 30, "the test base")
        wait_until(
            lambda: window.items.model.status_counts()[ItemStatus.COMPLETED] == 1,
            60,
            "the note indexed, as the window shows it",
        )
        answers: list[object] = []
        window.search.searchFinished.connect(answers.append)
        window.search.searchFailed.connect(answers.append)
        window.search.search(QUERY)
        wait_until(lambda: bool(answers), 60, "the search")
        results = window.search.model().rowCount()
        ok = results > 0 and not isinstance(answers[0], BaseException)
        print(
            json.dumps(
                {
                    "selfTest": "ok" if ok else "failed",
                    "windowShownMs": round(shown_ms, 1),
                    "results": results,
                }
            )
        )
        return 0 if ok else 1
    except (WaitTimeout, Exception) as exc:  # the smoke test reads the reason from stdout
        log.exception("self-test failed")
        print(json.dumps({"selfTest": "failed", "error": f"{type(exc).__name__}: {exc}"}))
        return 1
    finally:
        window.close()
        if base is not None:
            ctx.executor.shutdown()
            ctx.service.delete_base(base.id)
