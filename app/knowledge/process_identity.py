"""Which process owns a running job, and whether that process is still alive.

A pid alone can be reused after a crash; pid plus the process's start time cannot.
"""

from __future__ import annotations

import os
from functools import cache

import psutil


@cache
def current_owner() -> str:
    return f"{os.getpid()}:{psutil.Process().create_time():.3f}"


def owner_alive(owner: str | None) -> bool:
    if not owner:
        return False
    pid_text, _, started = owner.partition(":")
    try:
        process = psutil.Process(int(pid_text))
        # A killed process its parent has not reaped yet is a zombie: it runs nothing.
        return (
            f"{process.create_time():.3f}" == started and process.status() != psutil.STATUS_ZOMBIE
        )
    except (ValueError, psutil.Error):
        return False
