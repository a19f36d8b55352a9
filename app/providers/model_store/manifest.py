"""A local model folder's manifest (`trove-model.json`): what Trove needs to run a model it
did not ship — what the model is for, how to turn its outputs into vectors or scores, how
much it reads, which languages it covers and where it came from.

Installed models live in `$TROVE_HOME/models/<id>/` (the manifest, the ONNX graph and the
tokenizer). Downloads write the manifest from the catalog entry; `trove model import DIR`
reads the one the person's folder carries. A manifest of a newer format is refused, never
guessed at.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from app.providers.interfaces import INVALID_ARGUMENT, MODEL_NOT_AVAILABLE, ProviderError
from app.providers.model_store.errors import BAD_MANIFEST

MANIFEST_FILE = "trove-model.json"
FORMAT = 1
MODELS_DIR = "models"
# A model id names a folder and follows "local:" in a base's model id.
_ID = re.compile(r"[a-z0-9][a-z0-9._-]{0,79}")
_FILE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
# "multilingual" covers every language; otherwise ISO 639-1 codes ("en", "zh").
MULTILINGUAL = "multilingual"


class ModelKind(StrEnum):
    EMBEDDING = "embedding"
    RERANK = "rerank"


class Pooling(StrEnum):
    MEAN = "mean"  # the attention-masked mean of the last hidden states
    CLS = "cls"  # the first token's hidden state


@dataclass(frozen=True, slots=True)
class ModelManifest:
    id: str
    kind: ModelKind
    name: str  # what the window shows
    license: str
    languages: tuple[str, ...]
    max_tokens: int  # the model's input size, its special tokens included
    model_file: str = "model.onnx"
    tokenizer_file: str = "tokenizer.json"
    dimensions: int | None = None  # embedding models only
    pooling: Pooling = Pooling.MEAN
    normalize: bool = True
    # Text put in front of a query and of a passage before embedding (e5: "query: ").
    query_prefix: str = ""
    passage_prefix: str = ""
    source: str = ""  # "hub:REPO@REVISION", "import", ...
    extra: dict[str, Any] = field(default_factory=dict)

    def covers(self, language: str) -> bool:
        return MULTILINGUAL in self.languages or language in self.languages

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["format"] = FORMAT
        data["kind"] = str(self.kind)
        data["pooling"] = str(self.pooling)
        data["languages"] = list(self.languages)
        return data

    @classmethod
    def from_json(cls, data: object) -> ModelManifest:
        """A validated manifest, or ProviderError(INVALID_ARGUMENT) saying what is wrong."""
        if not isinstance(data, dict):
            raise _invalid("the manifest is not a JSON object")
        version = data.get("format", FORMAT)
        if not isinstance(version, int) or version > FORMAT:
            raise _invalid(
                f"the manifest has format {version!r}; this Trove reads format {FORMAT} "
                "(update Trove to use this model)"
            )
        try:
            manifest = cls(
                id=_text(data, "id"),
                kind=ModelKind(_text(data, "kind")),
                name=_text(data, "name"),
                license=str(data.get("license") or "unknown"),
                languages=_languages(data.get("languages")),
                max_tokens=_positive(data, "max_tokens"),
                model_file=str(data.get("model_file") or "model.onnx"),
                tokenizer_file=str(data.get("tokenizer_file") or "tokenizer.json"),
                dimensions=_positive(data, "dimensions") if data.get("dimensions") else None,
                pooling=Pooling(data.get("pooling") or Pooling.MEAN),
                normalize=bool(data.get("normalize", True)),
                query_prefix=str(data.get("query_prefix") or ""),
                passage_prefix=str(data.get("passage_prefix") or ""),
                source=str(data.get("source") or ""),
                extra=dict(data.get("extra") or {}),
            )
        except ValueError as exc:  # an unknown kind or pooling
            raise _invalid(str(exc)) from None
        manifest.check()
        return manifest

    def check(self) -> None:
        if not _ID.fullmatch(self.id):
            raise _invalid(f"model id {self.id!r}: use lower-case letters, digits, '.', '-', '_'")
        for name in (self.model_file, self.tokenizer_file):
            if not _FILE.fullmatch(name):
                raise _invalid(f"file name {name!r} must be a plain name inside the folder")
        if self.kind is ModelKind.EMBEDDING and self.dimensions is None:
            raise _invalid("an embedding model's manifest needs its dimensions")


def model_folder(home: Path, model_id: str) -> Path:
    if not _ID.fullmatch(model_id):
        raise _invalid(f"model id {model_id!r} is not a valid model id")
    return home / MODELS_DIR / model_id


def load_manifest(folder: Path) -> ModelManifest:
    path = folder / MANIFEST_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ProviderError(MODEL_NOT_AVAILABLE, f"{folder} has no {MANIFEST_FILE}") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise _invalid(f"{path} cannot be read: {exc}") from None
    return ModelManifest.from_json(data)


def save_manifest(folder: Path, manifest: ModelManifest) -> Path:
    manifest.check()
    path = folder / MANIFEST_FILE
    path.write_text(json.dumps(manifest.to_json(), indent=2, ensure_ascii=False), encoding="utf-8")
    return path


def _invalid(message: str) -> ProviderError:
    return ProviderError(
        INVALID_ARGUMENT,
        f"model manifest: {message}",
        reason=BAD_MANIFEST,
        params={"file": MANIFEST_FILE},
    )


def _text(data: dict[str, Any], key: str) -> str:
    value = data.get(key)
    if not isinstance(value, str) or not value.strip():
        raise _invalid(f"{key!r} is missing")
    return value.strip()


def _positive(data: dict[str, Any], key: str) -> int:
    value = data.get(key)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise _invalid(f"{key!r} must be a positive whole number")
    return value


def _languages(value: object) -> tuple[str, ...]:
    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        raise _invalid('\'languages\' must be a list like ["en"] or ["multilingual"]')
    return tuple(v.strip().lower() for v in value)
