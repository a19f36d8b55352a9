"""Downloading a catalog model from the Hugging Face hub (or a mirror) into `models/<id>/`.

1. Ask the hub about every file first (HEAD, redirects not followed: the hub's answer for a
   Git LFS file is a redirect to its CDN carrying the file's size `X-Linked-Size`, its sha256
   `X-Linked-Etag` and the commit `X-Repo-Commit`). Later files are fetched from the commit
   the first one resolved to, so the files of one install belong together.
2. Refuse up front when the disk cannot take what is left to fetch (plus a margin).
3. Fetch each file into `models/.partial/<id>/<name>.part` (redirects followed). A part left
   by a cut connection, a cancel, Ctrl-C or a crash is resumed with a `Range` request
   (`If-Range` with the ETag the server gave it); a connection cut mid-body is retried,
   resuming, without counting the attempts that made progress.
4. Check each file: the size the hub named, its sha256 against the hub's when the hub offers
   one (a mismatch deletes the part and fails clearly), an ONNX file that starts like one and
   a tokenizer that is JSON — a mirror's error page never becomes a model.
5. Install atomically (install.py): staging folder, manifest from the catalog entry with
   `source="hub:REPO@COMMIT"` and every file's size and sha256, fsync, rename.

Every step runs under the model's lock (locking.py). Cancelling (a callable checked between
chunks) leaves the parts for the next download to resume.
"""

from __future__ import annotations

import functools
import json
import re
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO, Any, TypeVar

import httpx

from app import __version__
from app.providers.http import Retry, transport_failure
from app.providers.interfaces import (
    CONNECTION_REFUSED,
    FETCH_FAILED,
    HOST_NOT_FOUND,
    HTTP_STATUS,
    MODEL_NOT_AVAILABLE,
    NOT_FOUND,
    TIMED_OUT,
    ProviderError,
)
from app.providers.model_store.catalog import CatalogEntry, HubFile
from app.providers.model_store.errors import (
    CHECKSUM_MISMATCH,
    FULL_ERRNOS,
    HUB_UNREACHABLE,
    SIZE_MISMATCH,
    DownloadCancelled,
    megabytes,
    write_refused,
)
from app.providers.model_store.hub import file_url, host_of
from app.providers.model_store.install import (
    check_onnx,
    check_space,
    check_tokenizer,
    install,
    models_dir,
    partial_dir,
    settle,
    sha256_of,
)
from app.providers.model_store.locking import model_lock
from app.providers.model_store.manifest import ModelManifest

Progress = Callable[[int, int], None]  # bytes done, bytes in all (0: not known yet)
Cancel = Callable[[], bool]
Sleep = Callable[[float], None]
T = TypeVar("T")

# Attempts per file that make no progress; one that fetched bytes does not count.
MAX_ATTEMPTS = 5
MAX_BACKOFF = 30.0
TIMEOUTS = httpx.Timeout(connect=15.0, read=60.0, write=60.0, pool=15.0)
MAX_REDIRECTS = 5
# Ranges and checksums are about the bytes as stored: ask for no content coding.
_HEADERS = {"Accept-Encoding": "identity"}
_SHA256 = re.compile(r"[0-9a-f]{64}")
_COMMIT = re.compile(r"[0-9a-f]{40}")
_CONTENT_RANGE = re.compile(r"bytes (\d+)-(\d+)/(\d+|\*)")
_TRANSIENT_STATUSES = frozenset({408, 425, 429, 500, 502, 503, 504})
PART = ".part"
META = ".part.json"


@dataclass(frozen=True, slots=True)
class RemoteFile:
    spec: HubFile
    url: str
    size: int | None
    sha256: str | None  # the hub's checksum; None when it offers none
    commit: str | None


@dataclass(frozen=True, slots=True)
class Downloaded:
    manifest: ModelManifest
    folder: Path
    endpoint: str
    commit: str | None
    verified: tuple[str, ...]  # installed names whose sha256 matched the hub's
    unverified: tuple[str, ...]  # the hub offered no checksum: only the size was checked
    fetched_bytes: int  # by this call (a resumed download fetches only the rest)


def download(
    home: Path,
    entry: CatalogEntry,
    endpoint: str,
    *,
    progress: Progress | None = None,
    cancel: Cancel | None = None,
    transport: httpx.BaseTransport | None = None,
    sleep: Sleep = time.sleep,
) -> Downloaded:
    """Download and install `entry` from `endpoint`; see the module's docstring.

    Raises ProviderError (FETCH_FAILED, MODEL_NOT_AVAILABLE, STORAGE_FULL; INVALID_ARGUMENT
    with reason busy while another caller holds the model) or DownloadCancelled."""
    models = models_dir(home)
    models.mkdir(parents=True, exist_ok=True)
    with model_lock(models, entry.id):
        settle(models, held=entry.id)
        client = httpx.Client(
            timeout=TIMEOUTS,
            follow_redirects=True,
            headers={"User-Agent": f"Trove/{__version__}"},
            transport=transport,
        )
        with client:
            run = _Run(client, entry, partial_dir(models, entry.id), progress, cancel, sleep)
            remote = run.probe_all(endpoint)
            needed = run.prepare(remote)
            check_space(models, needed, entry.name, "download it again (it resumes)")
            sums = {}
            for file in remote:
                run.fetch(file)
                sums[file.spec.install_as] = run.verify(file)
        commit = next((f.commit for f in remote if f.commit), None)
        files = {
            f.spec.install_as: {
                "size": run.part(f).stat().st_size,
                "sha256": sums[f.spec.install_as],
            }
            for f in remote
        }
        manifest = entry.manifest(
            f"hub:{entry.repo}@{commit or entry.revision}", extra={"files": files}
        )
        folder = install(
            models,
            manifest,
            {f.spec.install_as: run.part(f) for f in remote},
            move=True,
        )
        shutil.rmtree(run.partial, ignore_errors=True)
    return Downloaded(
        manifest=manifest,
        folder=folder,
        endpoint=endpoint,
        commit=commit,
        verified=tuple(f.spec.install_as for f in remote if f.sha256),
        unverified=tuple(f.spec.install_as for f in remote if not f.sha256),
        fetched_bytes=run.fetched,
    )


class _Transient(Exception):
    """A failure worth another attempt (a cut connection, a timeout, a 5xx)."""

    def __init__(self, message: str, reason: str, params: dict[str, str | int]) -> None:
        super().__init__(message)
        self.message = message
        self.reason = reason
        self.params = params


class _Run:
    """One download: the client, the progress so far, the cancel check."""

    def __init__(
        self,
        client: httpx.Client,
        entry: CatalogEntry,
        partial: Path,
        progress: Progress | None,
        cancel: Cancel | None,
        sleep: Sleep,
    ) -> None:
        self.client = client
        self.entry = entry
        self.partial = partial
        self._progress = progress
        self._cancel = cancel
        self._sleep = sleep
        self._have: dict[str, int] = {}
        self._total = 0
        self.fetched = 0

    # -- progress and cancel

    @property
    def done(self) -> int:
        return sum(self._have.values())

    def _set(self, file: RemoteFile, size: int) -> None:
        self._have[file.spec.install_as] = size
        self._report()

    def _add(self, file: RemoteFile, size: int) -> None:
        self._have[file.spec.install_as] = self._have.get(file.spec.install_as, 0) + size
        self.fetched += size
        self._report()

    def _report(self) -> None:
        if self._progress is not None:
            self._progress(self.done, self._total)

    def _check_cancel(self) -> None:
        if self._cancel is not None and self._cancel():
            raise DownloadCancelled(self.entry.id, self.done)

    # -- asking the hub

    def probe_all(self, endpoint: str) -> list[RemoteFile]:
        revision = self.entry.revision
        found: list[RemoteFile] = []
        for spec in self.entry.files:
            url = file_url(endpoint, self.entry.repo, revision, spec.path)
            remote = self._retrying(functools.partial(self._probe, url, spec), url)
            if remote.commit and remote.commit != revision and _COMMIT.fullmatch(remote.commit):
                revision = remote.commit  # the rest comes from the same commit
                remote = replace(
                    remote, url=file_url(endpoint, self.entry.repo, revision, spec.path)
                )
            found.append(remote)
        self._total = sum(f.size or 0 for f in found)
        return found

    def _probe(self, url: str, spec: HubFile) -> RemoteFile:
        current = url
        for _ in range(MAX_REDIRECTS):
            try:
                response = self.client.head(current, follow_redirects=False, headers=_HEADERS)
            except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
                raise _unreachable(url, exc) from None  # offline: retrying will not help
            except httpx.TransportError as exc:
                raise _transport_error(url, exc) from None
            linked = "x-linked-size" in response.headers or "x-linked-etag" in response.headers
            location = response.headers.get("location")
            if not (response.is_redirect and location and not linked):
                break
            current = str(response.url.join(location))  # a renamed repo: follow the hub
        headers = response.headers
        if response.is_redirect or response.status_code == 200:
            size_text = headers.get("x-linked-size") or (
                None if response.is_redirect else headers.get("content-length")
            )
            return RemoteFile(
                spec=spec,
                url=url,
                size=int(size_text) if size_text and size_text.isdigit() else None,
                sha256=_sha256(headers.get("x-linked-etag")) or _sha256(headers.get("etag")),
                commit=headers.get("x-repo-commit") or None,
            )
        raise self._status_failure(response.status_code, url, spec.path)

    def _status_failure(self, status: int, url: str, path: str) -> Exception:
        host = host_of(url)
        where = f"{self.entry.repo}/{path}"
        if status in _TRANSIENT_STATUSES or status >= 500:
            return _Transient(
                f"{host} answered HTTP {status} for {where}",
                HTTP_STATUS,
                {"status": status, "server": host},
            )
        if status == 404:
            return ProviderError(
                MODEL_NOT_AVAILABLE,
                f"{host} has no {where} (HTTP 404): the repository may have moved, or the "
                "mirror does not carry it; try another mirror or `trove model import DIR`",
                reason=NOT_FOUND,
                params={"server": host, "file": path},
            )
        if status in (401, 403):
            detail = "the repository may need a login or an accepted licence"
        else:
            detail = "the request was refused"
        return ProviderError(
            FETCH_FAILED,
            f"{host} answered HTTP {status} for {where} ({detail})",
            reason=HTTP_STATUS,
            params={"status": status, "server": host},
        )

    # -- fetching

    def part(self, file: RemoteFile) -> Path:
        return self.partial / f"{file.spec.install_as}{PART}"

    def _meta(self, file: RemoteFile) -> Path:
        return self.partial / f"{file.spec.install_as}{META}"

    def prepare(self, remote: list[RemoteFile]) -> int:
        """Keep the parts that belong to these files (drop others); the bytes still to fetch."""
        self.partial.mkdir(parents=True, exist_ok=True)
        needed = 0
        for file in remote:
            have = self._usable_part(file)
            self._have[file.spec.install_as] = have
            needed += max(0, (file.size or 0) - have)
        self._report()
        return needed

    def _usable_part(self, file: RemoteFile) -> int:
        part, meta = self.part(file), self._meta(file)
        if not part.exists():
            meta.unlink(missing_ok=True)
            return 0
        recorded = _read_json(meta)
        if file.sha256:
            same = recorded.get("sha256") == file.sha256
        else:
            same = recorded.get("url") == file.url and recorded.get("size") == file.size
        size = part.stat().st_size
        if not same or (file.size is not None and size > file.size):
            part.unlink()
            meta.unlink(missing_ok=True)
            return 0
        return size

    def fetch(self, file: RemoteFile) -> None:
        self._retrying(lambda: self._fetch_once(file), file.url)

    def _fetch_once(self, file: RemoteFile) -> None:
        self._check_cancel()
        part, meta = self.part(file), self._meta(file)
        have = part.stat().st_size if part.exists() else 0
        self._set(file, have)
        if file.size is not None and have == file.size:
            return
        headers = dict(_HEADERS)
        etag = _read_json(meta).get("etag")
        if have:
            headers["Range"] = f"bytes={have}-"
            if isinstance(etag, str) and etag and not etag.startswith("W/"):
                headers["If-Range"] = etag
        try:
            with self.client.stream("GET", file.url, headers=headers) as response:
                offset = self._body_offset(response, file, have)
                _write_json(meta, _meta_of(file, response.headers.get("etag")))
                if offset == 0:
                    self._set(file, 0)
                self._receive(response, file, part, "ab" if offset else "wb")
        except httpx.TransportError as exc:
            raise _transport_error(file.url, exc) from None
        size = part.stat().st_size
        if file.size is not None and size < file.size:
            raise _Transient(
                f"the connection closed after {megabytes(size)} of {megabytes(file.size)} "
                f"of {file.spec.path}",
                HTTP_STATUS,
                {"server": host_of(file.url)},
            )
        if file.size is not None and size > file.size:
            self._discard(file)
            raise ProviderError(
                FETCH_FAILED,
                f"{host_of(file.url)} sent {size} bytes of {file.spec.path}; the hub said "
                f"{file.size}; the download was deleted, try again",
                reason=SIZE_MISMATCH,
                params={"file": file.spec.path, "expected": file.size, "got": size},
            )

    def _body_offset(self, response: httpx.Response, file: RemoteFile, have: int) -> int:
        status = response.status_code
        if status == 200:
            return 0
        if status == 206:
            match = _CONTENT_RANGE.fullmatch(response.headers.get("content-range", ""))
            if match is None or int(match.group(1)) != have:
                self._discard(file)
                raise _Transient(
                    f"{host_of(str(response.url))} resumed {file.spec.path} at another "
                    "place; starting that file again",
                    HTTP_STATUS,
                    {"server": host_of(str(response.url))},
                )
            return have
        if status == 416:  # nothing to resume: the part does not fit the file
            self._discard(file)
            raise _Transient(
                f"{host_of(str(response.url))} could not resume {file.spec.path}; "
                "starting that file again",
                HTTP_STATUS,
                {"server": host_of(str(response.url))},
            )
        raise self._status_failure(status, str(response.url), file.spec.path)

    def _receive(self, response: httpx.Response, file: RemoteFile, part: Path, mode: str) -> None:
        try:
            with open(part, mode) as out:
                for chunk in response.iter_bytes():  # as received: a cut loses nothing
                    append(out, chunk)
                    self._add(file, len(chunk))
                    self._check_cancel()
        except OSError as exc:
            if exc.errno in FULL_ERRNOS:
                raise write_refused(
                    self.entry.name, exc, "download it again (it resumes)"
                ) from None
            raise

    def _discard(self, file: RemoteFile) -> None:
        self.part(file).unlink(missing_ok=True)
        self._meta(file).unlink(missing_ok=True)
        self._set(file, 0)

    # -- checking

    def verify(self, file: RemoteFile) -> str:
        """The file's sha256, once it matches the hub's and looks like what it should be."""
        part = self.part(file)
        try:
            digest = sha256_of(part, self._cancel)
        except InterruptedError:
            raise DownloadCancelled(self.entry.id, self.done) from None
        host = host_of(file.url)
        if file.sha256 and digest != file.sha256:
            self._discard(file)
            raise ProviderError(
                FETCH_FAILED,
                f"{file.spec.path} from {host} does not match the sha256 the hub publishes "
                f"for it (expected {file.sha256}, got {digest}); the damaged download was "
                "deleted; download again, or use another mirror",
                reason=CHECKSUM_MISMATCH,
                params={"file": file.spec.path, "expected": file.sha256, "got": digest},
            )
        try:
            if file.spec is self.entry.model_file:
                check_onnx(part, file.spec.path)
            elif file.spec is self.entry.tokenizer_file:
                check_tokenizer(part, file.spec.path)
        except ProviderError as exc:
            self._discard(file)
            raise ProviderError(
                FETCH_FAILED,
                f"{host} sent something other than the model file: {exc.message}; "
                "the download was deleted; try another mirror",
                reason=exc.reason,
                params=exc.params,
            ) from None
        return digest

    # -- retrying

    def _retrying(self, attempt: Callable[[], T], url: str) -> T:
        failures = 0
        while True:
            before = self.done
            try:
                return attempt()
            except _Transient as exc:
                failures = 1 if self.done > before else failures + 1
                if failures >= MAX_ATTEMPTS:
                    raise self._gave_up(exc, url) from None
                self._wait(min(MAX_BACKOFF, 0.5 * 2 ** (failures - 1)))

    def _gave_up(self, exc: _Transient, url: str) -> ProviderError:
        kept = f"; {megabytes(self.done)} downloaded so far is kept" if self.done else ""
        return ProviderError(
            FETCH_FAILED,
            f"{exc.message}; gave up after {MAX_ATTEMPTS} attempts{kept}; run the download "
            "again to resume",
            retryable=True,
            reason=exc.reason,
            params={**exc.params, "url": url},
        )

    def _wait(self, seconds: float) -> None:
        """Pause before another attempt, in short steps so a cancel is heard."""
        left = seconds
        while left > 0:
            self._check_cancel()
            step = min(0.25, left)
            self._sleep(step)
            left -= step
        self._check_cancel()


def append(out: IO[bytes], chunk: bytes) -> None:
    """Write one chunk through to the OS, so the part on disk is always what was received."""
    out.write(chunk)
    out.flush()


def _sha256(etag: str | None) -> str | None:
    if not etag:
        return None
    value = etag.strip().removeprefix("W/").strip('"').lower()
    return value if _SHA256.fullmatch(value) else None


def _meta_of(file: RemoteFile, etag: str | None) -> dict[str, Any]:
    return {"url": file.url, "size": file.size, "sha256": file.sha256, "etag": etag}


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _write_json(path: Path, data: dict[str, Any]) -> None:
    path.write_text(json.dumps(data), encoding="utf-8")


def _unreachable(url: str, exc: httpx.TransportError) -> ProviderError:
    host = host_of(url)
    failure = transport_failure(exc, url, None)
    cause = failure.cause if isinstance(failure, Retry) else str(failure.reason)
    detail = _CAUSES.get(cause) or (
        failure.reason if isinstance(failure, Retry) else failure.message
    )
    return ProviderError(
        FETCH_FAILED,
        f"cannot reach {host} ({detail}). Check the internet connection; or use a mirror of "
        "the Hugging Face hub (`trove model mirror https://hf-mirror.com`, or the HF_ENDPOINT "
        "environment variable); or download the model on a connected machine, copy its "
        "folder here and run `trove model import DIR`",
        reason=HUB_UNREACHABLE,
        params={"host": host, "cause": cause},
    )


_CAUSES = {
    HOST_NOT_FOUND: "its name does not resolve: no network, or no DNS",
    CONNECTION_REFUSED: "the connection was refused",
    TIMED_OUT: "the connection timed out",
}


def _transport_error(url: str, exc: httpx.TransportError) -> Exception:
    """A cut connection or a timeout is worth another attempt; a malformed URL is not."""
    failure = transport_failure(exc, url, None)
    if isinstance(failure, Retry):
        return _Transient(failure.reason, failure.cause, {"server": host_of(url)})
    return failure
