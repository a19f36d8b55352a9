"""Callbacks of background calls that outlive the widget which started them."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from PySide6.QtCore import QObject
from shiboken6 import isValid

T = TypeVar("T")


def while_alive(owner: QObject, callback: Callable[[T], None]) -> Callable[[T], None]:
    """Wraps a background call's callback so it is dropped once `owner` has been deleted
    (a dialog may close before the call it started returns)."""

    def call(value: T) -> None:
        if isValid(owner):
            callback(value)

    return call
