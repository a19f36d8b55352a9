"""Installed model folders under `$TROVE_HOME/models/`: atomic installs, imports from a folder,
removal, listing, and the clean-up of what a crash or a cancel left behind.

An install fills `models/.staging-<id>-<random>/` (the files, then the manifest last, each
fsynced), then renames it to `models/<id>/`; an older install is first renamed aside to
`.old-<id>-<random>` and deleted only once the new one is in place. So `models/<id>/` is
always a whole model or absent, never half of one. A removal renames the folder to
`.removed-<id>-<random>` before deleting it, for the same reason.

`settle` finishes or undoes what an interrupted step left: when `models/<id>/` is missing, a
complete staging folder (its manifest is written last) or the `.old-` copy is put back;
every other leftover is deleted. It runs under the model's lock (locking.py), so it never
touches a folder another process is still writing.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
import re
import secrets
import shutil
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from app.providers.interfaces import INVALID_ARGUMENT, ProviderError
from app.providers.model_store.errors import (
    CHECKSUM_MISMATCH,
    FILES_MISSING,
    FULL_ERRNOS,
    NO_MANIFEST,
    NOT_A_FOLDER,
    NOT_A_MODEL,
    OPEN,
    disk_full,
    write_refused,
)
from app.providers.model_store.locking import LOCKS_DIR, model_lock
from app.providers.model_store.manifest import (
    MANIFEST_FILE,
    MODELS_DIR,
    ModelManifest,
    load_manifest,
    model_folder,
    save_manifest,
)

PARTIAL_DIR = ".partial"  # resumable downloads: .partial/<id>/<name>.part
STAGING = ".staging-"
OLD = ".old-"
REMOVED = ".removed-"
_LEFTOVER_PREFIXES = (STAGING, OLD, REMOVED)
# Room left on the disk beyond the model itself (SQLite journals, logs, the system).
SPACE_MARGIN = 64 * 1024 * 1024
COPY_CHUNK = 1024 * 1024
_PLAIN_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
# The first field of an ONNX ModelProto is ir_version (field 1, a varint): tag byte 0x08,
# then the version, a small number (10 in 2024).
_ONNX_TAG = 0x08
_MAX_IR_VERSION = 64

Cancel = Callable[[], bool]
# Called with the incoming manifest and the installed one (None: not installed) under the
# model's lock before an import replaces anything; it raises to refuse.
SwapGuard = Callable[[ModelManifest, ModelManifest | None], None]


@dataclass(frozen=True, slots=True)
class InstalledFolder:
    """A folder under models/ that claims to be a model."""

    id: str
    folder: Path
    manifest: ModelManifest | None  # None when its manifest cannot be read
    size_bytes: int
    problem: str | None = None  # what makes it unusable, in English


@dataclass(frozen=True, slots=True)
class FileSum:
    size: int
    sha256: str

    def to_json(self) -> dict[str, object]:
        return {"size": self.size, "sha256": self.sha256}


def models_dir(home: Path) -> Path:
    return home / MODELS_DIR


def partial_dir(models: Path, model_id: str) -> Path:
    return models / PARTIAL_DIR / model_id


# -- disk space --------------------------------------------------------------------------------


def free_bytes(path: Path) -> int:
    """Free space on the disk that holds `path` (or its nearest existing parent)."""
    probe = path
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    return shutil.disk_usage(probe).free


def check_space(models: Path, needed: int, what: str, then: str) -> None:
    """Refuse up front, before a byte is written, when the disk cannot take `needed` bytes."""
    free = free_bytes(models)
    if needed + SPACE_MARGIN > free:
        raise disk_full(what, needed + SPACE_MARGIN, free, then)


# -- what a model's files must look like -------------------------------------------------------


def check_onnx(path: Path, shown: str) -> None:
    """An empty file, or one that does not start like an ONNX protobuf (an HTML error page,
    a Git LFS pointer), is refused naming the file."""
    with open(path, "rb") as stream:
        head = stream.read(2)
    if not head:
        raise _not_a_model(shown, "it is empty")
    if len(head) < 2 or head[0] != _ONNX_TAG or not 1 <= head[1] <= _MAX_IR_VERSION:
        start = head.decode("ascii", "replace")
        hint = " (a Git LFS pointer?)" if start == "ve" else ""
        raise _not_a_model(shown, f"it does not start like an ONNX model{hint}")


def check_tokenizer(path: Path, shown: str) -> None:
    try:
        data = json.loads(path.read_bytes())
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise _not_a_model(shown, f"it is not a tokenizer.json ({exc})") from None
    if not isinstance(data, dict):
        raise _not_a_model(shown, "it is not a tokenizer.json (no JSON object)")


def _not_a_model(shown: str, why: str) -> ProviderError:
    return ProviderError(
        INVALID_ARGUMENT,
        f"{shown} cannot be used: {why}",
        reason=NOT_A_MODEL,
        params={"file": shown},
    )


def file_names(manifest: ModelManifest) -> list[str]:
    """The files a model folder holds besides its manifest: the ONNX graph, the tokenizer,
    and any other file the manifest's `extra["files"]` lists."""
    names = [manifest.model_file, manifest.tokenizer_file]
    listed = manifest.extra.get("files")
    if isinstance(listed, dict):
        for name in listed:
            if not isinstance(name, str) or not _PLAIN_NAME.fullmatch(name):
                raise ProviderError(
                    INVALID_ARGUMENT,
                    f"model manifest: file name {name!r} must be a plain name inside the folder",
                )
            if name not in names and name != MANIFEST_FILE:
                names.append(name)
    return names


def listed_sums(manifest: ModelManifest) -> dict[str, str]:
    """name -> sha256 for the files the manifest records a checksum for."""
    listed = manifest.extra.get("files")
    if not isinstance(listed, dict):
        return {}
    sums: dict[str, str] = {}
    for name, info in listed.items():
        digest = info.get("sha256") if isinstance(info, dict) else None
        if isinstance(digest, str) and re.fullmatch(r"[0-9a-f]{64}", digest):
            sums[str(name)] = digest
    return sums


def sha256_of(path: Path, cancel: Cancel | None = None) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        while chunk := stream.read(COPY_CHUNK):
            digest.update(chunk)
            if cancel is not None and cancel():
                raise InterruptedError
    return digest.hexdigest()


# -- installing ---------------------------------------------------------------------------------


def install(
    models: Path,
    manifest: ModelManifest,
    sources: Mapping[str, Path],
    *,
    move: bool,
    expected: Mapping[str, str] | None = None,
) -> Path:
    """Put a complete model in place as `models/<id>/` (call it under the model's lock).

    `sources`: installed name -> file. `move` renames them into the staging folder (the
    download's verified partial files; put back if the install fails); otherwise they are
    copied, each checked against `expected` sha256 sums where given. The manifest is saved
    with every file's size and sha256 in `extra["files"]`.
    """
    target = model_folder(models.parent, manifest.id)
    staging = _new_path(models, STAGING, manifest.id)
    staging.mkdir(parents=True)
    moved: list[tuple[Path, Path]] = []
    try:
        sums: dict[str, FileSum] = {}
        for name, source in sources.items():
            dest = staging / name
            if move:
                os.replace(source, dest)
                moved.append((dest, source))
                sums[name] = FileSum(dest.stat().st_size, _recorded_sum(manifest, name, dest))
            else:
                sums[name] = FileSum(source.stat().st_size, _copy(source, dest))
                want = (expected or {}).get(name)
                if want is not None and want != sums[name].sha256:
                    raise _copy_differs(name, want, sums[name].sha256)
            _fsync(dest)
        files = {name: s.to_json() for name, s in sums.items()}
        final = dataclasses.replace(manifest, extra={**manifest.extra, "files": files})
        _fsync(save_manifest(staging, final))
        _fsync(staging)
        _promote(models, staging, target)
    except BaseException as exc:
        for dest, source in moved:  # a verified download is never thrown away
            with contextlib.suppress(OSError):
                os.replace(dest, source)
        shutil.rmtree(staging, ignore_errors=True)
        if isinstance(exc, OSError) and exc.errno in FULL_ERRNOS:
            raise write_refused(f"the model {manifest.id}", exc, "try again") from exc
        raise
    return target


def _recorded_sum(manifest: ModelManifest, name: str, path: Path) -> str:
    return listed_sums(manifest).get(name) or sha256_of(path)


def _copy(source: Path, dest: Path) -> str:
    digest = hashlib.sha256()
    with open(source, "rb") as reading, open(dest, "wb") as writing:
        while chunk := reading.read(COPY_CHUNK):
            digest.update(chunk)
            writing.write(chunk)
    return digest.hexdigest()


def _copy_differs(name: str, want: str, got: str) -> ProviderError:
    return ProviderError(
        INVALID_ARGUMENT,
        f"{name} does not match the sha256 its manifest records (expected {want}, got {got}): "
        "the copy is damaged or incomplete; copy the folder again",
        reason=CHECKSUM_MISMATCH,
        params={"file": name, "expected": want, "got": got},
    )


def _promote(models: Path, staging: Path, target: Path) -> None:
    old: Path | None = None
    if target.exists():
        old = _new_path(models, OLD, target.name)
        _rename_away(target, old)
    os.replace(staging, target)
    _fsync(models)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def _rename_away(folder: Path, to: Path) -> None:
    try:
        os.replace(folder, to)
    except PermissionError as exc:  # Windows: a file of the model is open
        raise ProviderError(
            INVALID_ARGUMENT,
            f"{folder.name} is in use ({exc.strerror}); stop searches and indexing that use "
            "it (or close Trove), then try again",
            reason=OPEN,
            params={"model": folder.name},
        ) from exc


def _new_path(models: Path, prefix: str, model_id: str) -> Path:
    return models / f"{prefix}{model_id}-{secrets.token_hex(4)}"


def _fsync(path: Path) -> None:
    if path.is_dir():
        if os.name == "nt":
            return  # Windows cannot open a folder to flush it; NTFS journals renames
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        return
    with open(path, "rb+") as stream:
        os.fsync(stream.fileno())


# -- importing a folder -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Imported:
    manifest: ModelManifest
    folder: Path
    replaced: bool  # an installed copy of the model was replaced


def import_folder(models: Path, source: Path, *, guard: SwapGuard | None = None) -> Imported:
    """Install the model a folder holds (its `trove-model.json` and the files it names), for
    a machine without access to the hub. Checked before anything is copied; copied atomically."""
    if not source.is_dir():
        raise ProviderError(
            INVALID_ARGUMENT,
            f"{source} is not a folder",
            reason=NOT_A_FOLDER,
            params={"folder": str(source)},
        )
    if not (source / MANIFEST_FILE).is_file():
        raise ProviderError(
            INVALID_ARGUMENT,
            f"{source} has no {MANIFEST_FILE}: copy the whole folder of an installed model "
            f"(models/<id>/ in Trove's data folder on another machine)",
            reason=NO_MANIFEST,
            params={"folder": str(source)},
        )
    manifest = load_manifest(source)
    names = file_names(manifest)
    missing = [name for name in names if not (source / name).is_file()]
    if missing:
        raise ProviderError(
            INVALID_ARGUMENT,
            f"{source} lacks {', '.join(missing)}, named by its {MANIFEST_FILE}",
            reason=FILES_MISSING,
            params={"folder": str(source), "files": ", ".join(missing)},
        )
    check_onnx(source / manifest.model_file, manifest.model_file)
    check_tokenizer(source / manifest.tokenizer_file, manifest.tokenizer_file)
    needed = sum((source / name).stat().st_size for name in names)
    with model_lock(models, manifest.id):
        settle(models, held=manifest.id)
        check_space(models, needed, f"the model {manifest.id}", "import it again")
        replaced = (models / manifest.id).exists()
        if guard is not None:
            guard(manifest, _installed_manifest(models / manifest.id) if replaced else None)
        final = dataclasses.replace(manifest, source=manifest.source or "import")
        folder = install(
            models,
            final,
            {name: source / name for name in names},
            move=False,
            expected=listed_sums(manifest),
        )
    return Imported(final, folder, replaced)


# -- listing, removing, cleaning up ---------------------------------------------------------------


def installed(models: Path) -> list[InstalledFolder]:
    """Every model folder under models/, usable or not, by id."""
    if not models.is_dir():
        return []
    found = [
        _inspect(entry)
        for entry in sorted(models.iterdir())
        if entry.is_dir() and not entry.name.startswith(".")
    ]
    return found


def _installed_manifest(folder: Path) -> ModelManifest | None:
    try:
        return load_manifest(folder)
    except ProviderError:
        return None


def _inspect(folder: Path) -> InstalledFolder:
    size = folder_size(folder)
    try:
        manifest = load_manifest(folder)
    except ProviderError as exc:
        return InstalledFolder(folder.name, folder, None, size, exc.message)
    problem: str | None = None
    if manifest.id != folder.name:
        problem = f"its manifest names the model {manifest.id!r}, not {folder.name!r}"
    else:
        try:
            missing = [name for name in file_names(manifest) if not (folder / name).is_file()]
            if missing:
                problem = f"{', '.join(missing)} missing"
            else:
                check_onnx(folder / manifest.model_file, manifest.model_file)
        except (ProviderError, OSError) as exc:
            problem = exc.message if isinstance(exc, ProviderError) else str(exc)
    return InstalledFolder(folder.name, folder, manifest, size, problem)


def folder_size(folder: Path) -> int:
    total = 0
    for path in folder.rglob("*"):
        with contextlib.suppress(OSError):
            if path.is_file():
                total += path.stat().st_size
    return total


def partial_bytes(models: Path, model_id: str) -> int:
    """Bytes of an interrupted download of the model that a new download resumes from."""
    folder = partial_dir(models, model_id)
    if not folder.is_dir():
        return 0
    return sum(p.stat().st_size for p in folder.glob("*.part") if p.is_file())


def remove(models: Path, model_id: str) -> bool:
    """Delete an installed model and any partial download of it; False when neither exists."""
    target = model_folder(models.parent, model_id)
    with model_lock(models, model_id):
        settle(models, held=model_id)
        found = False
        if target.exists():
            trash = _new_path(models, REMOVED, model_id)
            _rename_away(target, trash)
            _fsync(models)
            shutil.rmtree(trash, ignore_errors=True)
            found = True
        partial = partial_dir(models, model_id)
        if partial.exists():
            shutil.rmtree(partial, ignore_errors=True)
            found = True
    return found


def settle(models: Path, held: str | None = None) -> None:
    """Finish or undo what interrupted installs and removals left (see the module's
    docstring). `held`: the model whose lock the caller holds; other models' leftovers are
    settled under their own lock, or left alone while another process holds it."""
    if not models.is_dir():
        return
    leftovers: dict[str, list[Path]] = {}
    for entry in models.iterdir():
        model_id = _leftover_of(entry.name)
        if model_id is not None:
            leftovers.setdefault(model_id, []).append(entry)
    for model_id, paths in sorted(leftovers.items()):
        if model_id == held:
            _settle_one(models, model_id, paths)
            continue
        try:
            with model_lock(models, model_id):
                _settle_one(models, model_id, paths)
        except ProviderError:
            continue  # its owner is at work on it


def _leftover_of(name: str) -> str | None:
    for prefix in _LEFTOVER_PREFIXES:
        if name.startswith(prefix):
            model_id, sep, _token = name[len(prefix) :].rpartition("-")
            if sep and model_id and model_id not in (PARTIAL_DIR, LOCKS_DIR):
                return model_id
    return None


def _settle_one(models: Path, model_id: str, paths: Iterable[Path]) -> None:
    target = models / model_id
    ordered = sorted(paths, key=_mtime, reverse=True)
    if not target.exists():
        # A crash between "old install aside" and "new install in place": the newer
        # complete folder wins; a removed model stays removed.
        candidates = [p for p in ordered if p.name.startswith(STAGING)]
        candidates += [p for p in ordered if p.name.startswith(OLD)]
        for candidate in candidates:
            if _complete(candidate):
                os.replace(candidate, target)
                break
    for path in ordered:
        if path.exists():
            shutil.rmtree(path, ignore_errors=True)


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def _complete(folder: Path) -> bool:
    try:
        manifest = load_manifest(folder)
        return all((folder / name).is_file() for name in file_names(manifest))
    except (ProviderError, OSError):
        return False
