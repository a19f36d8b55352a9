"""Export a hybrid base, delete it, import it: the same results, no embedding call; and
files that are damaged, cut short or from a newer Trove are refused leaving nothing."""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.knowledge.portable.archive import MANIFEST
from app.knowledge.types import ErrorCode, TroveError
from tests.fakes import FakeModels
from tests.portable.world import (
    KEY,
    World,
    build,
    embed_calls,
    queries,
    search_all,
    service,
    trove,
)
from tests.providers.fake_api import FakeApi


@pytest.fixture
def api() -> Iterator[FakeApi]:
    with FakeApi(api_key=KEY, dims=8) as server:
        yield server


@pytest.fixture
def world(tmp_path: Path, api: FakeApi) -> World:
    return build(tmp_path, api)


def test_round_trip_through_the_cli_keeps_every_result_and_embeds_nothing(
    tmp_path: Path, api: FakeApi, world: World
) -> None:
    asked = queries(50)
    before = search_all(world.home, world.base_id, asked)
    assert sum(len(r) for r in before) > 100  # the queries find things
    target = tmp_path / "garden.trovebase"

    exported = trove(world.home, "base", "export", "garden", str(target), "--json")
    assert exported.returncode == 0, exported.stderr
    assert json.loads(exported.stdout)["vectors"] > 0
    assert not target.with_name(target.name + ".part").exists()
    assert trove(world.home, "base", "delete", "garden").returncode == 0

    calls = embed_calls(api)
    imported = trove(world.home, "base", "import", str(target), "--json")
    assert imported.returncode == 0, imported.stderr
    assert embed_calls(api) == calls, "import must not embed anything"
    made = json.loads(imported.stdout)
    assert made["name"] == "garden" and made["modelAvailable"] is True
    assert made["id"] != world.base_id

    assert search_all(world.home, made["id"], asked) == before
    doctor = trove(world.home, "doctor")
    assert doctor.returncode == 0, doctor.stdout


def test_import_never_replaces_a_base_and_takes_a_free_name(tmp_path: Path, world: World) -> None:
    svc = service(world.home)
    try:
        target = tmp_path / "g.trovebase"
        svc.export_base(world.base_id, target)
        first = svc.import_base(target)
        second = svc.import_base(target)
        named = svc.import_base(target, name="Shared garden")
        assert [first.base.name, second.base.name, named.base.name] == [
            "garden (2)",
            "garden (3)",
            "Shared garden",
        ]
        assert len({world.base_id, first.base.id, second.base.id, named.base.id}) == 4
        original = svc.list_items(world.base_id)
        assert len(svc.list_items(first.base.id)) == len(original)
        assert svc.doctor().clean
    finally:
        svc.close()


def _rewrite(src: Path, dst: Path, change: dict[str, bytes]) -> None:
    """A copy of the zip with some members' bytes replaced (the manifest left as it was)."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_STORED) as zout:
        for info in zin.infolist():
            zout.writestr(info, change.get(info.filename, zin.read(info)))


def _flip_member_byte(src: Path, dst: Path, member: str) -> None:
    """Flip one byte inside a stored member, in place, CRC and all left as they were."""
    data = bytearray(src.read_bytes())
    with zipfile.ZipFile(io.BytesIO(bytes(data))) as zf:
        info = zf.getinfo(member)
    # Local header: 30 bytes, then the name and the extra field, then the stored bytes.
    name_len = int.from_bytes(data[info.header_offset + 26 : info.header_offset + 28], "little")
    extra_len = int.from_bytes(data[info.header_offset + 28 : info.header_offset + 30], "little")
    start = info.header_offset + 30 + name_len + extra_len
    data[start + info.file_size // 2] ^= 0x01
    dst.write_bytes(bytes(data))


def _newer(src: Path, dst: Path) -> None:
    with zipfile.ZipFile(src) as zf:
        manifest = json.loads(zf.read(MANIFEST))
    manifest["formatVersion"] = 99
    manifest["appVersion"] = "9.0.0"
    _rewrite(src, dst, {MANIFEST: json.dumps(manifest).encode()})


def _forged(src: Path, dst: Path) -> None:
    """A raw copy changed and its zip CRC fixed: only the manifest's sha256 can tell."""
    with zipfile.ZipFile(src) as zf:
        raw = next(n for n in zf.namelist() if n.startswith("raw/"))
        data = zf.read(raw)
    _rewrite(src, dst, {raw: data.replace(b"#", b"!", 1)})


def _bad_settings(src: Path, dst: Path) -> None:
    """Checksums that agree with settings the catalog refuses: a file made by hand."""
    import hashlib

    with zipfile.ZipFile(src) as zf:
        manifest = json.loads(zf.read(MANIFEST))
        settings = json.loads(zf.read("base.json"))
    settings["documentCount"] = 5000
    data = json.dumps(settings).encode()
    for member in manifest["members"]:
        if member["name"] == "base.json":
            member.update(sha256=hashlib.sha256(data).hexdigest(), size=len(data))
    _rewrite(src, dst, {"base.json": data, MANIFEST: json.dumps(manifest).encode()})


def _truncated(src: Path, dst: Path) -> None:
    dst.write_bytes(src.read_bytes()[: src.stat().st_size * 2 // 3])


@pytest.mark.parametrize(
    ("damage", "code"),
    [
        (lambda s, d: _flip_member_byte(s, d, "index.sqlite"), ErrorCode.ARCHIVE_DAMAGED),
        (
            lambda s, d: _flip_member_byte(
                s, d, next(n for n in zipfile.ZipFile(s).namelist() if n.startswith("raw/"))
            ),
            ErrorCode.ARCHIVE_DAMAGED,
        ),
        (_forged, ErrorCode.ARCHIVE_DAMAGED),
        (_truncated, ErrorCode.ARCHIVE_DAMAGED),
        (_bad_settings, ErrorCode.ARCHIVE_DAMAGED),
        (_newer, ErrorCode.ARCHIVE_NEWER_FORMAT),
    ],
    ids=["index-byte", "raw-byte", "raw-forged-crc", "truncated", "bad-settings", "newer-format"],
)
def test_a_damaged_file_is_refused_and_leaves_nothing(
    tmp_path: Path, world: World, damage: object, code: ErrorCode
) -> None:
    good = tmp_path / "good.trovebase"
    bad = tmp_path / "bad.trovebase"
    svc = service(world.home)
    try:
        svc.export_base(world.base_id, good)
        assert callable(damage)
        damage(good, bad)
        bases_before = {b.id for b in svc.list_bases()}
        folders_before = sorted(p.name for p in svc.layout.bases_dir.iterdir())
        with pytest.raises(TroveError) as caught:
            svc.import_base(bad)
        assert caught.value.code is code
        assert {b.id for b in svc.list_bases()} == bases_before
        assert sorted(p.name for p in svc.layout.bases_dir.iterdir()) == folders_before
        staging = svc.layout.home / "staging"
        assert not staging.exists() or not any(staging.iterdir())
        assert svc.doctor().clean
    finally:
        svc.close()
    if code is ErrorCode.ARCHIVE_NEWER_FORMAT:
        said = trove(world.home, "base", "import", str(bad))
        assert said.returncode == 1
        assert "ARCHIVE_NEWER_FORMAT" in said.stderr and "newer Trove" in said.stderr
        assert "Traceback" not in said.stderr


class _NoModels(FakeModels):
    """A Trove where no embedding model is configured: every lookup fails."""

    def embedder(self, model_id: str):  # type: ignore[no-untyped-def]
        from app.providers.interfaces import MODEL_NOT_AVAILABLE, ProviderError

        raise ProviderError(MODEL_NOT_AVAILABLE, f"no provider for {model_id}")


def test_import_without_the_model_keeps_vectors_and_says_so(tmp_path: Path, world: World) -> None:
    from app.knowledge.jobs.reader_pool import InlineExtraction
    from app.knowledge.service import KnowledgeService

    target = tmp_path / "g.trovebase"
    svc = service(world.home)
    try:
        svc.export_base(world.base_id, target)
    finally:
        svc.close()
    elsewhere = KnowledgeService(
        tmp_path / "elsewhere", models=_NoModels(), extraction=InlineExtraction()
    )
    try:
        report = elsewhere.import_base(target)
        assert report.model_available is False
        assert report.vectors > 0 and report.base.embedding_model is not None
        # Full text still answers while the model is missing.
        found = elsewhere.search(report.base.id, "tomato")
        assert found.results
    finally:
        elsewhere.close()
    said = trove(tmp_path / "third", "base", "import", str(target))
    assert said.returncode == 0, said.stderr
    assert "is not configured here" in said.stderr and "trove restore" in said.stderr
