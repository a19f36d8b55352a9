"""The model manager: local models beyond the built-in one (the catalog, downloads, imports,
removal and the hub mirror), for KnowledgeService to forward to.

The files themselves are app/providers/model_store's business; here is what only the engine
knows: which bases use a model (a model a base uses is never removed), where the mirror
setting is kept (the catalog's settings table), and how failures become TroveErrors.
A base names an installed model `local:<id>`; every method also takes the bare id.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

import httpx

from app.knowledge.catalog import Catalog
from app.knowledge.jobs.errors import storage_failure
from app.knowledge.provider_errors import provider_failure
from app.knowledge.types import ErrorCode, TroveError
from app.providers import execution
from app.providers.execution import RunsOn
from app.providers.interfaces import ProviderError
from app.providers.local_model import (
    LOCAL_DIMS,
    LOCAL_MODEL_NAME,
    LOCAL_PROVIDER,
    MAX_TOKENS,
    local_model_available,
)
from app.providers.local_runtime import available_providers, physical_cores
from app.providers.model_store import download as hub_download
from app.providers.model_store import install
from app.providers.model_store.catalog import CATALOG, CatalogEntry, PublishedScore, catalog_entry
from app.providers.model_store.errors import DownloadCancelled
from app.providers.model_store.hub import HubEndpoint as HubEndpoint
from app.providers.model_store.hub import clean_endpoint, effective_endpoint
from app.providers.model_store.manifest import ModelKind, ModelManifest

MIRROR_SETTING = "models.hub_endpoint"
MODEL_IN_USE = "model_in_use"  # TroveError.params["reason"] of a refused removal
LOCAL_PREFIX = f"{LOCAL_PROVIDER}:"
RUNTIME_HINT = "install the local extra: pip install 'trove[local]'"

Progress = Callable[[int, int], None]  # bytes done, bytes in all (0 until known)
Cancel = Callable[[], bool]


class ModelState(StrEnum):
    BUILT_IN = "built-in"  # ships with Trove (needs the `local` extra)
    INSTALLED = "installed"
    AVAILABLE = "available"  # in the catalog, not installed (maybe partly downloaded)
    DAMAGED = "damaged"  # a folder under models/ that cannot be used: `problem` says why


@dataclass(frozen=True, slots=True)
class ModelListing:
    """One model the manager knows: installed, built in, or offered by the catalog."""

    id: str  # the folder's name: "multilingual-e5-small"
    model_id: str  # what a base's settings name: "local:multilingual-e5-small"
    kind: ModelKind
    name: str
    state: ModelState
    license: str
    non_commercial: bool
    languages: tuple[str, ...]
    max_tokens: int | None
    dimensions: int | None = None
    approx_bytes: int | None = None  # the catalog's download size, approximate
    size_on_disk: int | None = None  # installed models
    partial_bytes: int = 0  # an interrupted download a new one resumes from
    source: str = ""  # "hub:REPO@COMMIT", "import", "built-in"
    quality: tuple[PublishedScore, ...] = ()
    summary: str = ""
    used_by: tuple[str, ...] = ()  # names of the bases that use it
    problem: str | None = None  # why it cannot be used, in English
    in_catalog: bool = False
    # What runs it (the CPU, an accelerator); None when it is not installed.
    runs_on: RunsOn | None = None


@dataclass(frozen=True, slots=True)
class ModelDownload:
    model: ModelListing
    endpoint: str
    verified: tuple[str, ...]  # files whose sha256 matched the hub's
    unverified: tuple[str, ...]  # the hub offered no checksum: only their size was checked
    fetched_bytes: int
    already_installed: bool = False  # nothing was fetched: the model is installed and usable


@dataclass(frozen=True, slots=True)
class ModelImport:
    model: ModelListing
    replaced: bool  # an installed copy of the same model was replaced


class ModelDownloadCancelled(Exception):
    """The caller's cancel check stopped a download; what was fetched is kept, and the next
    download of the model resumes from it."""

    def __init__(self, model_id: str, kept_bytes: int) -> None:
        super().__init__(f"download of {model_id} cancelled")
        self.model_id = model_id
        self.kept_bytes = kept_bytes


# -- listing ---------------------------------------------------------------------------------


def list_models(home: Path, catalog: Catalog, *, writable: bool = True) -> list[ModelListing]:
    """The built-in model, then the catalog's (installed or not), then other installed ones."""
    models = install.models_dir(home)
    if writable:
        with contextlib.suppress(OSError):  # a clean-up that fails must not hide the list
            install.settle(models)
    usage = _usage(catalog)
    folders = {folder.id: folder for folder in install.installed(models)}
    listings = [_builtin(usage)]
    for entry in CATALOG:
        listings.append(_listing(models, entry.id, entry, folders.pop(entry.id, None), usage))
    for folder in folders.values():
        listings.append(_listing(models, folder.id, None, folder, usage))
    return listings


def find_model(home: Path, catalog: Catalog, model_id: str) -> ModelListing | None:
    bare = bare_id(model_id)
    return next((m for m in list_models(home, catalog, writable=False) if m.id == bare), None)


def _builtin(usage: dict[str, list[str]]) -> ModelListing:
    available = local_model_available()
    return ModelListing(
        id=LOCAL_MODEL_NAME,
        model_id=f"{LOCAL_PREFIX}{LOCAL_MODEL_NAME}",
        kind=ModelKind.EMBEDDING,
        name=f"{LOCAL_MODEL_NAME} (built in)",
        state=ModelState.BUILT_IN,
        license="Apache-2.0",
        non_commercial=False,
        languages=("en",),
        max_tokens=MAX_TOKENS,
        dimensions=LOCAL_DIMS,
        source="built-in",
        summary="ships with Trove; English",
        used_by=tuple(usage.get(LOCAL_MODEL_NAME, ())),
        problem=None if available else f"its runtime is not installed; {RUNTIME_HINT}",
        runs_on=runs_on(f"{LOCAL_PREFIX}{LOCAL_MODEL_NAME}") if available else None,
    )


def _listing(
    models: Path,
    model_id: str,
    entry: CatalogEntry | None,
    folder: install.InstalledFolder | None,
    usage: dict[str, list[str]],
) -> ModelListing:
    manifest = folder.manifest if folder is not None else None
    if folder is None:
        state = ModelState.AVAILABLE
    elif folder.problem:
        state = ModelState.DAMAGED
    else:
        state = ModelState.INSTALLED
    described = manifest or (entry.manifest(source="") if entry is not None else None)
    license_name = described.license if described else "unknown"
    return ModelListing(
        id=model_id,
        model_id=f"{LOCAL_PREFIX}{model_id}",
        kind=described.kind if described else ModelKind.EMBEDDING,
        name=described.name if described else model_id,
        state=state,
        license=license_name,
        non_commercial=(entry.non_commercial if entry else False) or "-NC" in license_name.upper(),
        languages=described.languages if described else (),
        max_tokens=described.max_tokens if described else None,
        dimensions=described.dimensions if described else None,
        approx_bytes=entry.approx_bytes if entry else None,
        size_on_disk=folder.size_bytes if folder else None,
        partial_bytes=install.partial_bytes(models, model_id),
        source=manifest.source if manifest else "",
        quality=entry.quality if entry else (),
        summary=entry.summary if entry else "",
        used_by=tuple(usage.get(model_id, ())),
        problem=folder.problem if folder else None,
        in_catalog=entry is not None,
        runs_on=runs_on(f"{LOCAL_PREFIX}{model_id}") if state is ModelState.INSTALLED else None,
    )


def runs_on(model_id: str) -> RunsOn:
    """Where a local model runs (loaded here), ran (measured before), or will run."""
    return execution.expected_placement(model_id, available_providers(), physical_cores())


def _usage(catalog: Catalog) -> dict[str, list[str]]:
    """bare model id -> names of the bases whose embedding or rerank model it is."""
    usage: dict[str, list[str]] = {}
    for base in catalog.list_bases():
        for model in {base.embedding_model, base.rerank_model}:
            if model and model.startswith(LOCAL_PREFIX):
                usage.setdefault(model.removeprefix(LOCAL_PREFIX), []).append(base.name)
    return usage


def bare_id(model_id: str) -> str:
    return model_id.strip().removeprefix(LOCAL_PREFIX)


# -- downloading and importing -----------------------------------------------------------------


def download_model(
    home: Path,
    catalog: Catalog,
    model_id: str,
    *,
    progress: Progress | None = None,
    cancel: Cancel | None = None,
    mirror: str | None = None,
    force: bool = False,
    transport: httpx.BaseTransport | None = None,
) -> ModelDownload:
    bare = bare_id(model_id)
    _refuse_builtin(bare, "needs no download")
    entry = catalog_entry(bare)
    if entry is None:
        raise TroveError(
            ErrorCode.MODEL_NOT_AVAILABLE,
            f"no model {bare!r} in Trove's catalog ({', '.join(e.id for e in CATALOG)}); "
            "a model from elsewhere is installed with `trove model import DIR`",
            {"model": bare},
        )
    endpoint = hub_endpoint(catalog, mirror)
    if not force:
        existing = find_model(home, catalog, bare)
        if existing is not None and existing.state is ModelState.INSTALLED:
            return ModelDownload(existing, endpoint.url, (), (), 0, already_installed=True)
    try:
        done = hub_download.download(
            home, entry, endpoint.url, progress=progress, cancel=cancel, transport=transport
        )
    except DownloadCancelled as exc:
        raise ModelDownloadCancelled(bare, exc.kept_bytes) from None
    except ProviderError as exc:
        raise provider_failure(exc, ErrorCode.FETCH_FAILED) from exc
    except OSError as exc:
        failure = _storage_failure(exc, home, "download it again (it resumes)")
        if failure is None:
            raise
        raise failure from exc
    return ModelDownload(
        model=_require(home, catalog, bare),
        endpoint=done.endpoint,
        verified=done.verified,
        unverified=done.unverified,
        fetched_bytes=done.fetched_bytes,
    )


def import_model(home: Path, catalog: Catalog, folder: Path) -> ModelImport:
    """Install the model a folder holds (air-gapped machines); see install.import_folder."""
    models = install.models_dir(home)
    try:
        imported = install.import_folder(
            models, folder, guard=lambda new, old: _guard_swap(catalog, new, old)
        )
    except ProviderError as exc:
        raise provider_failure(exc, ErrorCode.INVALID_ARGUMENT) from exc
    except OSError as exc:
        failure = _storage_failure(exc, home, "import it again", source=folder)
        if failure is None:
            raise
        raise failure from exc
    return ModelImport(_require(home, catalog, imported.manifest.id), imported.replaced)


def _guard_swap(catalog: Catalog, new: ModelManifest, old: ModelManifest | None) -> None:
    """Replacing a model that bases use with one of another kind or size of vectors would
    break them: refused. The same model again (a repair, a newer export) is fine."""
    if old is None or (old.kind, old.dimensions) == (new.kind, new.dimensions):
        return
    users = _usage(catalog).get(new.id, [])
    if users:
        raise TroveError(
            ErrorCode.INVALID_ARGUMENT,
            f"{new.id} is used by {_bases(users)}, and the folder holds a different model "
            f"({new.kind}, {new.dimensions or 'no'} dimensions instead of {old.kind}, "
            f"{old.dimensions or 'no'}); give those bases another model first",
            {"reason": MODEL_IN_USE, "model": new.id, "bases": ", ".join(users)},
        )


# -- removing --------------------------------------------------------------------------------


def remove_model(home: Path, catalog: Catalog, model_id: str) -> None:
    """Delete an installed model (and any partial download of it); refused while a base uses
    it, naming the bases."""
    bare = bare_id(model_id)
    _refuse_builtin(bare, "cannot be removed")
    users = _usage(catalog).get(bare, [])
    if users:
        raise TroveError(
            ErrorCode.INVALID_ARGUMENT,
            f"{bare} is used by {_bases(users)}; {_them(users)}",
            {"reason": MODEL_IN_USE, "model": bare, "bases": ", ".join(users)},
        )
    try:
        found = install.remove(install.models_dir(home), bare)
    except ProviderError as exc:
        raise provider_failure(exc, ErrorCode.INVALID_ARGUMENT) from exc
    except OSError as exc:
        failure = _storage_failure(exc, home, "remove it again")
        if failure is None:
            raise
        raise failure from exc
    if not found:
        raise TroveError(ErrorCode.MODEL_NOT_AVAILABLE, f"{bare} is not installed", {"model": bare})


def _storage_failure(
    exc: OSError, home: Path, then: str, *, source: Path | None = None
) -> TroveError | None:
    """A full disk or a read-only data folder as a TroveError, and a folder being imported
    that cannot be read as INVALID_ARGUMENT; None for anything else (a bug to see)."""
    failure = storage_failure(exc, home, then=then)
    if failure is not None:
        return TroveError(ErrorCode(failure.code), failure.message)
    if source is not None:
        return TroveError(ErrorCode.INVALID_ARGUMENT, f"{source} cannot be read: {exc}")
    return None


def _them(names: list[str]) -> str:
    if len(names) == 1:
        return "give it another model (or delete it) first"
    return "give them another model (or delete them) first"


def _bases(names: list[str]) -> str:
    quoted = ", ".join(repr(name) for name in names)
    return f"the knowledge base {quoted}" if len(names) == 1 else f"the knowledge bases {quoted}"


def _refuse_builtin(bare: str, what: str) -> None:
    if bare == LOCAL_MODEL_NAME:
        raise TroveError(
            ErrorCode.INVALID_ARGUMENT,
            f"{LOCAL_MODEL_NAME} is built into Trove and {what}",
            {"model": bare},
        )


def _require(home: Path, catalog: Catalog, bare: str) -> ModelListing:
    listing = find_model(home, catalog, bare)
    if listing is None:  # removed by another process in the meantime
        raise TroveError(ErrorCode.MODEL_NOT_AVAILABLE, f"{bare} is not installed")
    return listing


# -- the hub mirror ----------------------------------------------------------------------------


def hub_endpoint(catalog: Catalog, argument: str | None = None) -> HubEndpoint:
    """Where downloads go: `argument`, else TROVE_HF_ENDPOINT / HF_ENDPOINT, else the stored
    mirror, else huggingface.co."""
    try:
        return effective_endpoint(catalog.get_setting(MIRROR_SETTING), argument)
    except ProviderError as exc:
        raise provider_failure(exc, ErrorCode.INVALID_ARGUMENT) from exc


def set_hub_endpoint(catalog: Catalog, url: str | None) -> HubEndpoint:
    """Store the mirror (None or "" goes back to huggingface.co)."""
    try:
        value = clean_endpoint(url) if url and url.strip() else None
    except ProviderError as exc:
        raise provider_failure(exc, ErrorCode.INVALID_ARGUMENT) from exc
    catalog.set_setting(MIRROR_SETTING, value)
    return hub_endpoint(catalog)
