"""Background work yields to the window: reader processes start with the window, and job
threads and reader processes run at a lower priority."""

from __future__ import annotations

import os
import sys
import threading

import pytest

from app.knowledge.jobs.reader_pool import ExtractionPool, InlineExtraction
from app.knowledge.worker_process import WORKER_NICENESS
from app.runtime.executor import JOB_THREAD_NICENESS, lower_thread_priority

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="niceness is Linux")


def _niceness_of_this_process() -> int:
    return os.getpriority(os.PRIO_PROCESS, 0)


@linux_only
def test_warm_starts_every_reader_process_at_lower_priority() -> None:
    pool = ExtractionPool(workers=2)
    try:
        pids = {future.result(timeout=120) for future in pool.warm()}
        assert os.getpid() not in pids and 1 <= len(pids) <= 2
        ours = _niceness_of_this_process()
        for pid in pids:
            assert os.getpriority(os.PRIO_PROCESS, pid) == min(19, ours + WORKER_NICENESS)
        assert pool.run(_niceness_of_this_process, cancelled=lambda: None) == min(
            19, ours + WORKER_NICENESS
        )
    finally:
        pool.shutdown()


def test_inline_extraction_has_nothing_to_warm() -> None:
    assert InlineExtraction().warm() == []


@linux_only
def test_job_threads_lower_their_own_priority_only() -> None:
    before = _niceness_of_this_process()
    seen: list[int] = []

    def job_thread() -> None:
        lower_thread_priority()
        seen.append(os.getpriority(os.PRIO_PROCESS, threading.get_native_id()))

    thread = threading.Thread(target=job_thread)
    thread.start()
    thread.join()
    assert seen == [min(19, before + JOB_THREAD_NICENESS)]
    assert _niceness_of_this_process() == before  # the GUI thread keeps its priority
