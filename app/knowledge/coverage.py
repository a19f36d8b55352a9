"""Which languages an embedding model covers, as the engine decides it for fusion: the
person's override (kept in the catalog), else an installed model's manifest, else the table
of known models, else unknown (app/providers/model_info.py)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from app.knowledge.catalog import Catalog
from app.knowledge.types import ErrorCode, TroveError
from app.providers import installed_models
from app.providers.local_model import LOCAL_PROVIDER
from app.providers.model_info import ModelLanguages, declared_languages
from app.providers.model_store.manifest import MULTILINGUAL

# ISO 639-1 (or 639-3) codes, lower case, or "multilingual".
_CODE = re.compile(r"[a-z]{2,3}")


def declared(catalog: Catalog, models_dir: Path, model_id: str) -> ModelLanguages:
    provider, _, name = model_id.partition(":")
    installed = (
        installed_models.declared_languages(models_dir, name)
        if provider == LOCAL_PROVIDER and name
        else None
    )
    override = catalog.model_language_override(model_id)
    return declared_languages(model_id, override=override, installed=installed)


def set_override(catalog: Catalog, model_id: str, languages: Sequence[str] | None) -> None:
    """Store what the person says `model_id` covers; None or an empty list forgets it."""
    provider, sep, name = model_id.partition(":")
    if not (provider and sep and name):
        raise TroveError(
            ErrorCode.INVALID_ARGUMENT, f"model ids look like PROVIDER:MODEL, got {model_id!r}"
        )
    codes = list(dict.fromkeys(code.strip().lower() for code in languages or ()))
    bad = [code for code in codes if code != MULTILINGUAL and not _CODE.fullmatch(code)]
    if bad:
        raise TroveError(
            ErrorCode.INVALID_ARGUMENT,
            f"not language codes: {', '.join(map(repr, bad))}; use codes like en, zh, ja "
            f"or {MULTILINGUAL!r}",
        )
    catalog.set_model_language_override(model_id, codes)
