"""The vector stage of a base, as a person controls and sees it: paused or running, and
why it stopped when its provider refused for good.

On a base with an embedding model a document is searchable by full text as soon as it is
read and chunked; its vectors come after (jobs/embed_vectors.py). Both facts here are kept
in the catalog's settings, so a restart keeps them; on a base shared through a server
they are this desktop's (another desktop may still compute the base's vectors).
"""

from __future__ import annotations

import json

from app.knowledge.catalog import Catalog
from app.knowledge.types import VectorStop

_PAUSED = "vectors.paused:"
_STOPPED = "vectors.stopped:"


def is_paused(catalog: Catalog, base_id: str) -> bool:
    return catalog.get_setting(_PAUSED + base_id) is not None


def set_paused(catalog: Catalog, base_id: str, paused: bool) -> None:
    catalog.set_setting(_PAUSED + base_id, "1" if paused else None)


def stopped(catalog: Catalog, base_id: str) -> VectorStop | None:
    value = catalog.get_setting(_STOPPED + base_id)
    if value is None:
        return None
    try:
        data = json.loads(value)
        return VectorStop(str(data["code"]), str(data["message"]))
    except (ValueError, KeyError, TypeError):  # a damaged row still says it stopped
        return VectorStop("EMBEDDING_FAILED", value[:500])


def set_stopped(catalog: Catalog, base_id: str, stop: VectorStop | None) -> None:
    value = None if stop is None else json.dumps({"code": stop.code, "message": stop.message})
    catalog.set_setting(_STOPPED + base_id, value)


def forget(catalog: Catalog, base_id: str) -> None:
    """A deleted base leaves no settings behind."""
    set_paused(catalog, base_id, False)
    set_stopped(catalog, base_id, None)
