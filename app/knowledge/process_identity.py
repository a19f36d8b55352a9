"""Which process owns a running job, and whether that process is still alive.

A pid alone can be reused after a crash; pid plus the process's start time cannot.
"""

from __future__ import annotations

import os
import socket
from functools import cache

import psutil


@cache
def current_owner() -> str:
    return f"{os.getpid()}:{psutil.Process().create_time():.3f}"


def owner_alive(owner: str | None) -> bool:
    """Whether the owner runs. An owner on another machine (`host/pid:start`, the jobs of
    a base on a server) cannot be checked from here: it counts as alive; its server
    tells (catalog.job_owner_alive)."""
    if not owner:
        return False
    host, slash, local = owner.rpartition("/")
    if slash:
        if host != socket.gethostname():
            return True
        owner = local
    pid_text, _, started = owner.partition(":")
    try:
        process = psutil.Process(int(pid_text))
        # A killed process its parent has not reaped yet is a zombie: it runs nothing.
        return (
            f"{process.create_time():.3f}" == started and process.status() != psutil.STATUS_ZOMBIE
        )
    except (ValueError, psutil.Error):
        return False
