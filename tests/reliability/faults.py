"""Catalog methods that raise a storage fault on chosen calls (tests only).

In-process tests wrap one catalog instance's methods (`inject`); a child process gets the
same faults from `TROVE_TEST_FAULTS` through tests/reliability/fault_hook/sitecustomize.py,
which wraps the `Catalog` class before the CLI starts — so the app has no test hooks.

    TROVE_TEST_FAULTS='[{"method": "set_item_status", "fault": "busy", "times": 1,
                         "status": "failed"}]'

`times` is how many matching calls raise (null: every one), after the first `after` of them
went through (0 unless given: a disk that fills once some work is done); `status`, when
given, limits the fault to calls whose status argument (set_item_status, finish_job) has
that value.
The fault is raised before the real method runs: the write does not happen.
"""

from __future__ import annotations

import errno
import functools
import json
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import apsw

ENV = "TROVE_TEST_FAULTS"

FAULTS: dict[str, Callable[[], BaseException]] = {
    "busy": lambda: apsw.BusyError("database is locked"),
    "full": lambda: apsw.FullError("database or disk is full"),
    "ioerr": lambda: apsw.IOError("disk I/O error"),
    "enospc": lambda: OSError(errno.ENOSPC, os.strerror(errno.ENOSPC)),
}

Matcher = Callable[[tuple[Any, ...], dict[str, Any]], bool]


@dataclass
class Fault:
    method: str
    fault: str
    times: int | None = 1  # None: always
    status: str | None = None
    matches: Matcher | None = None  # finer selection for in-process tests
    after: int = 0  # matching calls that pass before the fault starts
    raised: int = 0
    passed: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def should_raise(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
        if self.status is not None and _status_arg(args, kwargs) != self.status:
            return False
        if self.matches is not None and not self.matches(args, kwargs):
            return False
        with self._lock:  # jobs run on several threads
            if self.passed < self.after:
                self.passed += 1
                return False
            if self.times is not None and self.raised >= self.times:
                return False
            self.raised += 1
        return True


def _status_arg(args: tuple[Any, ...], kwargs: dict[str, Any]) -> str | None:
    # set_item_status(item_id, status, ...) and finish_job(job_id, status, ...)
    value = kwargs.get("status", args[1] if len(args) > 1 else None)
    return None if value is None else str(value)


def wrap(real: Callable[..., Any], fault: Fault) -> Callable[..., Any]:
    @functools.wraps(real)
    def faulty(*args: Any, **kwargs: Any) -> Any:
        if fault.should_raise(args, kwargs):
            raise FAULTS[fault.fault]()
        return real(*args, **kwargs)

    return faulty


def inject(catalog: Any, faults: list[Fault]) -> Callable[[], None]:
    """Wrap methods of one catalog object; returns the function that takes them away."""
    for fault in faults:
        setattr(catalog, fault.method, wrap(getattr(catalog, fault.method), fault))

    def lift() -> None:
        for fault in faults:
            vars(catalog).pop(fault.method, None)

    return lift


def install_from_env() -> None:
    """Wrap the Catalog class's methods as TROVE_TEST_FAULTS says (child processes)."""
    from app.knowledge.catalog import Catalog

    for spec in json.loads(os.environ[ENV]):
        # Class attributes are plain functions: `self` comes first, the arguments after it.
        fault = Fault(
            spec["method"],
            spec["fault"],
            spec.get("times", 1),
            spec.get("status"),
            after=spec.get("after", 0),
        )
        unbound = wrap(getattr(Catalog, fault.method), _skip_self(fault))
        setattr(Catalog, fault.method, unbound)


def _skip_self(fault: Fault) -> Fault:
    """The same fault, matching on the arguments after `self`."""
    status = fault.status
    fault.status = None
    if status is not None:
        fault.matches = lambda args, kwargs: _status_arg(args[1:], kwargs) == status
    return fault
