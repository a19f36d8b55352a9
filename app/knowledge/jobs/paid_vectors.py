"""Vectors an index job already paid for, kept across its retries.

Since the vector stage (embed_vectors.py) index jobs no longer embed: they write each
batch of vectors straight into the index as it comes. These records are what a Trove of
before left beside an interrupted item; index jobs still read them (the vectors are reused,
not paid again) and remove them, and recovery and the doctor know their names. `add` is
kept for the tests that lay such a record down.

A job whose provider fails half-way (a rate limit, an outage) is queued again by the job
runner; on that retry the batches embedded before the failure must not be paid for twice.
Their vectors are appended, batch by batch, to a scratch file beside the item's material:
fixed-size records of the chunk text's hash and its float32 vector. The file's name
carries the model and vector size, so a base switched to another model never reads them.

A file rather than memory: another Trove process may run the retry, and the name follows
the temporary-file pattern of the material's writes (`temp_prefix` ... `.part`), so
deletion removes a leftover with the item's other temporaries. The record outlives a stop
too: a normal exit hands the job back (hand_back.py), and after a crash recovery keeps the
record beside the interrupted item, so `trove resume` (or a reindex) finishes it without
paying for those batches again.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from app.knowledge.pipeline.store.vector_codes import FloatMatrix

HASH_BYTES = 32  # text_hash: 32 hex characters


SCRATCH_STEM = "vectors-"


def scratch_name(prefix: str, suffix: str, model_id: str, dims: int) -> str:
    tag = hashlib.sha256(f"{model_id}\0{dims}".encode()).hexdigest()[:12]
    return f"{prefix}{SCRATCH_STEM}{tag}{suffix}"


def is_scratch(name: str, prefix: str) -> bool:
    """Whether a temporary file named `name` (of a target whose temporaries start with
    `prefix`) is a record of paid vectors, for any model."""
    return name.startswith(prefix + SCRATCH_STEM)


class PaidVectors:
    """The append-only record of one item's embedded batches for one model."""

    def __init__(self, path: Path, dims: int) -> None:
        self.path = path
        self._record = np.dtype([("hash", f"S{HASH_BYTES}"), ("vector", "<f4", (dims,))])

    def load(self, wanted: Iterable[str]) -> dict[str, FloatMatrix]:
        """The kept vectors of the wanted hashes; a record cut short by a crash is ignored."""
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return {}
        whole = len(data) - len(data) % self._record.itemsize
        records = np.frombuffer(data[:whole], dtype=self._record)
        wanted_set = set(wanted)
        found: dict[str, FloatMatrix] = {}
        for record in records:
            text_hash = record["hash"].decode("ascii")
            if text_hash in wanted_set:
                found[text_hash] = np.array(record["vector"], dtype=np.float32)
        return found

    def add(self, hashes: list[str], vectors: FloatMatrix) -> None:
        records = np.empty(len(hashes), dtype=self._record)
        records["hash"] = [h.encode("ascii") for h in hashes]
        records["vector"] = vectors
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("ab") as fh:
            fh.write(records.tobytes())

    def discard(self) -> None:
        self.path.unlink(missing_ok=True)
