"""A fake Hugging Face hub on 127.0.0.1 that serves the hub's URL layout, for model downloads.

    with FakeHub() as hub:
        hub.publish("Xenova/multilingual-e5-small", {"onnx/model_quantized.onnx": onnx_bytes(),
                                                     "tokenizer.json": tokenizer_bytes()})
        download(home, entry, hub.endpoint)

`/{repo}/resolve/{revision}/{path}` (revision: "main" or the commit) answers a Git LFS file
with a 302 to `/cdn/{repo}/{sha256}` and the hub's headers: X-Linked-Size, X-Linked-Etag (the sha256)
and X-Repo-Commit. A file published with `lfs=False` is served there directly with a Git
blob ETag (no sha256), as the hub serves small files kept in Git. Both honour `Range:
bytes=N-` with a 206 and `If-Range` against their ETag.

Faults, each for one file: `fail` answers the next GETs with error statuses, `cut_once` drops the connection after some body bytes (once),
`corrupt` serves other bytes than the checksum says, `stall` sends some bytes and then holds
the connection until the hub closes (a download a person interrupts).
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from types import TracebackType

from tests.httpserver import GATE_TIMEOUT, Handler, LoopbackServer, Request, Response

COMMIT = "0123456789abcdef0123456789abcdef01234567"
_RANGE = re.compile(r"bytes=(\d+)-")


def onnx_bytes(size: int = 1_500_000, seed: int = 1) -> bytes:
    """Bytes that start like an ONNX ModelProto (ir_version 8, producer "pytorch"); the rest
    is noise: the download never runs the model."""
    head = b"\x08\x08\x12\x07pytorch"
    noise = hashlib.sha256(str(seed).encode()).digest() * (size // 32 + 1)
    return (head + noise)[:size]


def tokenizer_bytes(words: int = 2_000) -> bytes:
    vocab = {f"word{i}": i for i in range(words)}
    return json.dumps({"version": "1.0", "model": {"type": "WordPiece", "vocab": vocab}}).encode()


@dataclass
class _File:
    repo: str
    path: str
    data: bytes
    lfs: bool

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()

    @property
    def etag(self) -> str:
        if self.lfs:
            return f'"{self.sha256}"'
        blob = hashlib.sha1(b"blob %d\0" % len(self.data) + self.data).hexdigest()
        return f'"{blob}"'


class FakeHub:
    def __init__(self) -> None:
        self.server = LoopbackServer()
        self._lock = threading.Lock()
        self._files: dict[str, _File] = {}  # "repo/path" -> file
        self._cuts: dict[str, int] = {}
        self._corrupt: set[str] = set()
        self._stalls: dict[str, int] = {}
        self._failures: dict[str, list[int]] = {}
        self._release = threading.Event()

    def __enter__(self) -> FakeHub:
        self.server.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._release.set()
        self.server.close()

    @property
    def endpoint(self) -> str:
        return self.server.base_url

    # publishing

    def publish(self, repo: str, files: dict[str, bytes], *, small: tuple[str, ...] = ()) -> None:
        """Serve `files` (path in the repo -> bytes); paths in `small` as plain Git files."""
        for path, data in files.items():
            key = f"{repo}/{path}"
            file = _File(repo, path, data, lfs=path not in small)
            with self._lock:
                self._files[key] = file
            for revision in ("main", COMMIT):
                self.server.route(self.resolve_path(repo, path, revision), self._resolve(key))
            if file.lfs:
                self.server.route(self.cdn_path(repo, path), self._cdn(key))

    def resolve_path(self, repo: str, path: str, revision: str = "main") -> str:
        return f"/{repo}/resolve/{revision}/{path}"

    def cdn_path(self, repo: str, path: str) -> str:
        # One path per repository: two repositories may hold the same bytes.
        return f"/cdn/{repo}/{self._files[f'{repo}/{path}'].sha256}"

    def sha256(self, repo: str, path: str) -> str:
        return self._files[f"{repo}/{path}"].sha256

    # faults

    def cut_once(self, repo: str, path: str, after: int) -> None:
        with self._lock:
            self._cuts[f"{repo}/{path}"] = after

    def corrupt(self, repo: str, path: str) -> None:
        with self._lock:
            self._corrupt.add(f"{repo}/{path}")

    def stall(self, repo: str, path: str, after: int) -> None:
        with self._lock:
            self._stalls[f"{repo}/{path}"] = after

    def fail(self, repo: str, path: str, *statuses: int) -> None:
        """Answer the next requests for the file's body with these statuses, one each."""
        with self._lock:
            self._failures.setdefault(f"{repo}/{path}", []).extend(statuses)

    def heal(self) -> None:
        with self._lock:
            self._failures.clear()
            self._cuts.clear()
            self._corrupt.clear()
            self._stalls.clear()

    # routes

    def _resolve(self, key: str) -> Handler:
        def handler(request: Request) -> Response:
            file = self._files[key]
            if not file.lfs:
                return self._body(request, key, [("X-Repo-Commit", COMMIT)])
            location = self.server.url(self.cdn_path(file.repo, file.path))
            return Response(
                status=302,
                headers=[
                    ("Location", location),
                    ("X-Linked-Size", str(len(file.data))),
                    ("X-Linked-Etag", file.etag),
                    ("X-Repo-Commit", COMMIT),
                    ("ETag", file.etag),
                ],
            )

        return handler

    def _cdn(self, key: str) -> Handler:
        def handler(request: Request) -> Response:
            return self._body(request, key, [])

        return handler

    def _body(self, request: Request, key: str, extra: list[tuple[str, str]]) -> Response:
        file = self._files[key]
        with self._lock:
            failures = self._failures.get(key)
            failed = failures.pop(0) if failures and request.method == "GET" else None
        if failed is not None:
            return Response.text(f"injected HTTP {failed}", status=failed)
        with self._lock:
            data = _damaged(file.data) if key in self._corrupt else file.data
            cut = self._cuts.pop(key, None)
            stall = self._stalls.get(key)
        headers = [("ETag", file.etag), ("Accept-Ranges", "bytes"), *extra]
        start = 0
        match = _RANGE.fullmatch(request.headers.get("range", ""))
        if_range = request.headers.get("if-range")
        if match is not None and (if_range is None or if_range == file.etag):
            start = int(match.group(1))
            if start >= len(data):
                return Response(status=416, headers=[("Content-Range", f"bytes */{len(data)}")])
            headers.append(("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}"))
        status = 206 if start else 200
        body = data[start:]
        if request.method == "HEAD":
            return Response(status=status, body=body, headers=headers)
        if cut is None and stall is None:
            return Response(status=status, body=body, headers=headers)
        headers.append(("Content-Length", str(len(body))))
        return Response(status=status, body=self._partly(body, cut, stall), headers=headers)

    def _partly(
        self, body: bytes, cut: int | None, stall: int | None
    ) -> Callable[[], Iterator[bytes]]:
        release = self._release

        def chunks() -> Iterator[bytes]:
            limit = cut if cut is not None else stall
            assert limit is not None
            yield body[:limit]
            if stall is not None and cut is None:
                release.wait(GATE_TIMEOUT)  # held until the hub closes; then cut

        return chunks


def _damaged(data: bytes) -> bytes:
    """The same length, one byte changed past the header (still starts like ONNX)."""
    middle = len(data) // 2
    return data[:middle] + bytes([data[middle] ^ 0xFF]) + data[middle + 1 :]
