"""The app database `trove.sqlite`: bases, items, jobs, provider and app settings, model
languages, conversation turns.

One apsw connection guarded by a lock: catalog statements are short, and WAL lets the
per-base index stores be read and written on their own connections meanwhile.

`Catalog` is one class composed of a mixin per table over the shared connection, so every
caller keeps calling `catalog.get_item(...)`, `catalog.claim_next_job(...)` on one object, and
mypy checks each mixin against the connection helpers it inherits.
"""

from __future__ import annotations

from app.knowledge.catalog.ask import AskRows
from app.knowledge.catalog.bases import BaseRows
from app.knowledge.catalog.damaged import DamagedRows
from app.knowledge.catalog.items import ItemRows
from app.knowledge.catalog.jobs import JobRows
from app.knowledge.catalog.linked import LinkedFolderRows
from app.knowledge.catalog.model_languages import ModelLanguageRows
from app.knowledge.catalog.portable import PortableRows
from app.knowledge.catalog.providers import ProviderRows
from app.knowledge.catalog.routing import ServerRouting
from app.knowledge.catalog.rows import Job, new_id
from app.knowledge.catalog.settings import SettingRows

__all__ = ["Catalog", "Job", "new_id"]


class Catalog(
    ServerRouting,
    BaseRows,
    ItemRows,
    JobRows,
    DamagedRows,
    ProviderRows,
    ModelLanguageRows,
    SettingRows,
    PortableRows,
    LinkedFolderRows,
    AskRows,
):
    """Writes go through one connection under a lock; reads outside a write use a
    connection per thread, so in WAL mode the GUI and many workers read without waiting."""
