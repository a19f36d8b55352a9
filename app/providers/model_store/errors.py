"""How the model store says what went wrong: the engine's stable codes (strings, so this layer
stays below the engine) and reasons finer than a code, for a window that speaks another
language than the English messages."""

from __future__ import annotations

import errno

from app.providers.interfaces import INVALID_ARGUMENT, ProviderError

# The code of app.knowledge.types.ErrorCode for a full disk (a string: this layer is below).
STORAGE_FULL = "STORAGE_FULL"

# Reasons (ProviderError.reason; TroveError.params["reason"] above).
CHECKSUM_MISMATCH = "checksum_mismatch"  # params: file, expected, got
SIZE_MISMATCH = "size_mismatch"  # params: file, expected, got
NOT_A_MODEL = "not_a_model"  # the ONNX file is empty or is no ONNX file; params: file
BUSY = "busy"  # another download, import or removal of the model is running
OPEN = "open"  # Windows: a file of the model is open, so its folder cannot move
DISK_FULL = "disk_full"  # params: needed, free (bytes)
HUB_UNREACHABLE = "hub_unreachable"  # params: host
# A folder to import: not a folder, without trove-model.json, without a file it names
# (params: folder; files), or a manifest that cannot be used (params: file).
NOT_A_FOLDER = "not_a_folder"
NO_MANIFEST = "no_manifest"
FILES_MISSING = "files_missing"
BAD_MANIFEST = "bad_manifest"

# A full disk and a full quota look the same to the person.
FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT})


class DownloadCancelled(Exception):
    """The caller's cancel check said stop; what was downloaded is kept for a resume."""

    def __init__(self, model_id: str, kept_bytes: int) -> None:
        super().__init__(f"download of {model_id} cancelled")
        self.model_id = model_id
        self.kept_bytes = kept_bytes


def model_busy(model_id: str) -> ProviderError:
    return ProviderError(
        INVALID_ARGUMENT,
        f"another download, import or removal of {model_id} is running (in this or another "
        "Trove window or command); wait for it to finish",
        reason=BUSY,
        params={"model": model_id},
    )


def disk_full(what: str, needed: int, free: int, then: str) -> ProviderError:
    return ProviderError(
        STORAGE_FULL,
        f"not enough free disk space for {what}: it needs about {megabytes(needed)} and "
        f"{megabytes(free)} is free; free some space, then {then}",
        reason=DISK_FULL,
        params={"needed": needed, "free": free},
    )


def write_refused(what: str, exc: OSError, then: str) -> ProviderError:
    return ProviderError(
        STORAGE_FULL,
        f"the disk is full ({exc.strerror or exc}) while writing {what}; free some space, "
        f"then {then}",
        reason=DISK_FULL,
        params={},
    )


def megabytes(size: int) -> str:
    return f"{size / 1_000_000:,.1f} MB"
