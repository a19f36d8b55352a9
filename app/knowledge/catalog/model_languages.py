"""Catalog rows of the `model_languages` table: the person's word on what a model covers."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence

from app.knowledge.catalog.connection import CatalogConnection


class ModelLanguageRows(CatalogConnection):
    """Read and write per-model language overrides (model id -> language codes)."""

    def model_language_override(self, model_id: str) -> tuple[str, ...] | None:
        rows = self._rows("SELECT languages FROM model_languages WHERE model_id = ?", (model_id,))
        if not rows:
            return None
        try:
            codes = json.loads(rows[0][0])
        except (TypeError, ValueError):
            return None  # a row edited by hand: as if there were none
        if not isinstance(codes, list) or not all(isinstance(c, str) for c in codes):
            return None
        return tuple(codes) or None

    def set_model_language_override(self, model_id: str, languages: Sequence[str]) -> None:
        """Store the override; an empty `languages` removes it."""
        if not languages:
            self._exec("DELETE FROM model_languages WHERE model_id = ?", (model_id,))
            return
        self._exec(
            "INSERT INTO model_languages (model_id, languages, updated_at) VALUES (?,?,?) "
            "ON CONFLICT(model_id) DO UPDATE SET languages = excluded.languages, "
            "updated_at = excluded.updated_at",
            (model_id, json.dumps(list(languages)), time.time()),
        )
