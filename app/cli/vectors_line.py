"""One line on a base's vector stage, for `trove vectors`, `trove status` and `add --wait`."""

from __future__ import annotations

from app.cli.output import shown
from app.knowledge.types import VectorStatus


def status_line(status: VectorStatus) -> str:
    """One line: how many chunks have vectors, and what the stage is doing."""
    if not status.has_model:
        return "vectors: none (this base searches by full text only)"
    line = (
        f"vectors: {status.vectors:,} of {status.chunks:,} chunks ({100.0 * status.coverage:.0f} %)"
    )
    if status.waiting_documents:
        line += f", {status.waiting_documents:,} document(s) searchable by full text meanwhile"
    if status.stopped is not None:
        line += (
            f"; stopped: {shown(status.stopped.code)}: {shown(status.stopped.message)} "
            "(trove vectors BASE --resume starts again)"
        )
    elif status.paused:
        line += "; paused (trove vectors BASE --resume)"
    return line
