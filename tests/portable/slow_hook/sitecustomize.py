"""Imported at start-up by a child process with this folder on PYTHONPATH: it slows the
portable-base code down so a test can SIGKILL an export or import in the middle.

TROVE_TEST_PORTABLE_DELAY: seconds to wait before each member is copied.
TROVE_TEST_PORTABLE_STALL: "catalog" makes an import wait before its catalog rows, after its
base folder was moved into bases/ (the last moment before it becomes visible).
"""

import os
import time

_delay = float(os.environ.get("TROVE_TEST_PORTABLE_DELAY") or 0)
_stall = os.environ.get("TROVE_TEST_PORTABLE_STALL") or ""

if _delay or _stall:
    from app.knowledge.catalog.portable import PortableRows
    from app.knowledge.portable import archive

    _copy = archive.copy_hashed

    def _slow_copy(*args, **kwargs):  # type: ignore[no-untyped-def]
        time.sleep(_delay)
        return _copy(*args, **kwargs)

    archive.copy_hashed = _slow_copy  # type: ignore[assignment]

    if _stall == "catalog":
        _insert = PortableRows.insert_base_row

        def _stalled(self, base):  # type: ignore[no-untyped-def]
            time.sleep(600)
            return _insert(self, base)

        PortableRows.insert_base_row = _stalled  # type: ignore[method-assign]
