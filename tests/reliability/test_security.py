"""The security checklist of issue #7, one test per threat, each naming the ErrorCode it
expects. Points other modules already prove are listed here and not repeated.

Keys only in the keychain
- here: a provider that echoes the key in its errors (401, 500) during ingestion, search and
  `trove provider test`: the key reaches no file under the data dir (catalog, WAL, index,
  raw/), no item error, no job record, no log line, no CLI output (PROVIDER_AUTH_FAILED,
  EMBEDDING_FAILED).
- tests/providers/test_engine_wiring.py::test_key_never_reaches_the_data_dir_or_logs (a
  working provider), tests/providers/test_key_hygiene.py (client errors, exception chains,
  retry logs), tests/providers/test_secrets.py (keychain errors, no files written).

URLs: http/https only, capped in size, redirects and time
- here: file:, ftp:, javascript:, data:, gopher: and credentials are refused before any
  item exists (FETCH_FAILED); a server that streams for ever (FILE_TOO_LARGE), answers
  nothing (FETCH_FAILED, read timeout), trickles for ever (FETCH_FAILED, total time) or
  redirects in a loop (FETCH_FAILED) fails its item in bounded time, retried only as the job
  policy allows.
- tests/unit/test_web_sources.py (check_url, redirect to a refused scheme, byte caps,
  timeouts, declared lengths), tests/integration/test_bad_input.py::test_bad_urls_fail_their_own_items
  (404, redirect loop, 50 MB page, file: at admission).

No path from user input escapes its base
- here: kb_read of a material whose file (or folder) under raw/ was replaced by a symlink to
  a secret outside the base; a job writing through such a folder; a deletion meeting such a
  link (UNSAFE_PATH, and the outside file is neither read, written nor deleted).
- tests/unit/test_agent_tools.py::test_unsafe_concept_ids_are_refused (../, absolute, drive,
  backslash, NUL, .trove: UNSAFE_PATH), tests/unit/test_path_safety.py (resolve_below and symlinks,
  sanitising, allocation), tests/integration/test_mcp.py (the same over MCP).

FTS query syntax injection
- here: the operators and quoting of FTS5 through the real search of a hybrid base: every
  query either means its plain words (same results as the words alone) or, with no word,
  fails with NO_SEARCHABLE_TOKEN; never an SQL/FTS error.
- tests/unit/test_tokenize.py (hypothesis: any query is a valid MATCH expression),
  tests/unit/test_search_pipeline.py::test_hostile_queries_never_raise_unexpectedly,
  tests/reliability/test_fuzz.py (hypothesis through a real search).

File names with control characters or reserved Windows names
- here: CON, nul.txt, COM1, aux, LPT9, names with tabs, newlines, escape sequences, DEL,
  trailing dots and spaces, all in one folder: indexed under safe portable names and found
  by search; the names without a usable extension fail with UNSUPPORTED_FILE_TYPE.
- tests/unit/test_path_safety.py (sanitize_file_name, device names, properties),
  tests/integration/test_bad_input.py (emoji, dots, hidden names).

Agent tools adding paths
- here: kb_manage may add nothing (absolute paths, folders, URLs) until the person enables
  agent writes for that base (AGENT_WRITES_DISABLED), and even then non-http URLs are
  refused (FETCH_FAILED) and relative paths too (INVALID_ARGUMENT).
- tests/unit/test_agent_tools.py::test_manage_is_refused_until_the_person_enables_agent_writes.
"""

from __future__ import annotations

import json
import logging
import threading
import time
import traceback
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import keyring
import pytest

from app import cli
from app.agent.errors import ToolResult
from app.agent.tools import ConceptTools
from app.knowledge import path_safety, providers_config
from app.knowledge.catalog import Catalog
from app.knowledge.jobs.reader_pool import InlineExtraction
from app.knowledge.material_paths import material_path
from app.knowledge.pipeline.sources.web import FetchLimits
from app.knowledge.service import KnowledgeService
from app.knowledge.types import (
    Base,
    ErrorCode,
    Item,
    ItemStatus,
    ItemType,
    SearchMode,
    TroveError,
)
from app.providers import secrets
from app.providers.factory import build_embedder
from app.providers.http import RetryPolicy, Timeouts
from app.providers.interfaces import Embedder
from app.providers.registry import ProviderRegistry
from tests.conftest import write_files
from tests.httpserver import LoopbackServer, Response
from tests.providers.conftest import KEY, MemoryKeyring
from tests.providers.fake_api import EMBEDDINGS, FakeApi, Fault

SECRET = "TOP-SECRET-outside-the-base"


def ok(result: ToolResult) -> dict[str, Any]:
    assert not result.is_error, result.data
    return result.data


def err(result: ToolResult, code: str) -> str:
    assert result.is_error, result.data
    assert result.data["error"]["code"] == code, result.data
    message = str(result.data["error"]["message"])
    assert message and "Traceback" not in message
    return message


def _files(svc: KnowledgeService, base_id: str) -> list[Item]:
    return [i for i in svc.list_items(base_id) if i.type not in (ItemType.DIRECTORY,)]


# -- keys only in the keychain ------------------------------------------------------------------


@pytest.fixture
def memory_keyring() -> Iterator[MemoryKeyring]:
    previous = keyring.get_keyring()
    backend = MemoryKeyring()
    keyring.set_keyring(backend)
    yield backend
    keyring.set_keyring(previous)


def _fast_registry(catalog: Catalog, provider: str) -> ProviderRegistry:
    """The configured provider with quick retries (the key still comes from the keychain)."""
    settings = providers_config.find_settings(catalog, provider)
    registry = ProviderRegistry()

    def embedder(model: str) -> Embedder:
        return build_embedder(
            settings,
            model,
            secrets.get_key,
            timeouts=Timeouts(connect=2.0, read=2.0),
            retry=RetryPolicy(max_attempts=2, base_delay=0.01, max_delay=0.02),
        )

    registry.register_embedder(provider, embedder)
    return registry


def _everything_under(folder: Path) -> Iterable[tuple[Path, bytes]]:
    for path in folder.rglob("*"):
        if path.is_file():
            yield path, path.read_bytes()


def test_api_key_echoed_by_a_hostile_provider_stays_in_the_keychain_PROVIDER_AUTH_FAILED(
    tmp_path: Path,
    memory_keyring: MemoryKeyring,
    caplog: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
) -> None:
    caplog.set_level(logging.DEBUG)
    home = tmp_path / "home"
    docs = write_files(
        tmp_path / "docs", {f"doc{n}.md": f"# Doc {n}\n\nkeyword{n} text.\n" for n in range(4)}
    )
    with FakeApi(api_key=KEY, dims=8) as api:
        setup = KnowledgeService(home, extraction=InlineExtraction())
        try:
            setup.save_provider("acme", "openai", base_url=api.base_url, models=["m"], key=KEY)
            registry = _fast_registry(setup.catalog, "acme")
        finally:
            setup.close()
        svc = KnowledgeService(home, models=registry, extraction=InlineExtraction())
        try:
            base = svc.create_base("kb", embedding_model="acme:m")
            # The vector stage meets a 500 that quotes the Authorization header (a retry),
            # then a 401 that does: it stops, its reason kept in the catalog.
            api.fail(EMBEDDINGS, Fault.http(500, echo_auth=True), Fault.http(401, echo_auth=True))
            svc.add(base.id, [docs])
            svc.run_pending_jobs(base.id)
            codes = sorted(str(i.status) for i in _files(svc, base.id))
            assert codes == ["completed"] * 4, codes  # searchable by their words
            stop = svc.vector_status(base.id).stopped
            assert stop is not None and stop.code == ErrorCode.PROVIDER_AUTH_FAILED, stop
            api.fail(EMBEDDINGS, Fault.http(401, echo_auth=True))
            # A refused key degrades the search to full text; the reason names no key.
            searched = svc.search(base.id, "keyword1")
            assert [d.code for d in searched.degraded] == [ErrorCode.PROVIDER_AUTH_FAILED]
            failures = [
                *(f"{i.error_code}: {i.error_message}" for i in _files(svc, base.id)),
                f"{stop.code}: {stop.message}",
                *(str(j.last_error) for j in svc.catalog.list_jobs()),
                *(d.message for d in searched.degraded),
            ]
        finally:
            svc.close()
        api.fail("/v1/embeddings", Fault.http(401, echo_auth=True))
        capsys.readouterr()
        assert cli.main(["--home", str(home), "provider", "test", "acme"]) == cli.EXIT_FAILED
        assert cli.main(["--home", str(home), "provider", "list", "--json"]) == cli.EXIT_OK
        printed = capsys.readouterr()

    assert memory_keyring.store == {("Trove", "acme"): KEY}  # the one place it lives
    assert "PROVIDER_AUTH_FAILED" in printed.err
    said = "\n".join(
        [
            *failures,
            printed.out,
            printed.err,
            *(r.getMessage() for r in caplog.records),
            *(
                "".join(traceback.format_exception(*r.exc_info))
                for r in caplog.records
                if r.exc_info
            ),
        ]
    )
    assert "Authorization" in said  # the servers did echo the header: the scrubber ran
    assert KEY not in said and KEY[:12] not in said
    scanned = 0
    for path, data in _everything_under(home):
        scanned += 1
        for form in (KEY.encode(), KEY.encode("utf-16-le"), KEY[:12].encode()):
            assert form not in data, path
    assert scanned >= 4  # catalog (and its WAL), the index, the raw/ copies


# -- URLs ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "url",
    [
        "file:///etc/passwd",
        "FILE:///etc/passwd",
        "ftp://127.0.0.1/x.txt",
        "javascript:alert(1)",
        "data:text/html,<h1>hi</h1>",
        "gopher://127.0.0.1:70/",
        "http://user:s3cr3t@127.0.0.1/",
        "//127.0.0.1/no-scheme",
    ],
)
def test_non_http_url_schemes_are_refused_before_any_item_FETCH_FAILED(
    svc: KnowledgeService, url: str
) -> None:
    base = svc.create_base("kb")
    report = svc.add_urls(base.id, [url])
    ((refused, why),) = report.errors
    assert refused == url and why.startswith(f"{ErrorCode.FETCH_FAILED}:")
    assert "s3cr3t" not in why  # a password in a URL is not repeated
    assert report.added == [] and svc.list_items(base.id) == []
    assert svc.catalog.list_jobs() == []


def test_hostile_web_servers_fail_their_items_in_bounded_time_FILE_TOO_LARGE_FETCH_FAILED(
    svc: KnowledgeService,
) -> None:
    stop = threading.Event()

    def forever() -> Iterator[bytes]:
        yield b"<html><head><title>Endless</title></head><body>"
        while not stop.is_set():
            yield b"<p>endless words and more endless words</p>\n" * 256

    def trickle() -> Iterator[bytes]:
        yield b"<html><body>"
        while not stop.wait(0.02):  # each byte comes before any read timeout
            yield b"."

    with LoopbackServer() as server:
        server.route("/forever", Response(body=forever, content_type="text/html", chunked=True))
        server.route("/trickle", Response(body=trickle, content_type="text/html", chunked=True))
        server.route("/silent", Response.text("late", gate=threading.Event()))
        server.redirect("/loop-a", "/loop-b")
        server.redirect("/loop-b", "/loop-a")
        svc.parts.fetch_limits = FetchLimits(
            max_bytes=200_000, max_redirects=3, read_timeout=0.3, total_timeout=0.6
        )
        base = svc.create_base("kb")
        names = ("forever", "trickle", "silent", "loop-a")
        report = svc.add_urls(base.id, [server.url(f"/{n}") for n in names])
        assert len(report.added) == 4
        started = time.monotonic()
        try:
            svc.run_pending_jobs(base.id)
        finally:
            stop.set()
        elapsed = time.monotonic() - started
        hits = {n: server.hits(f"/{n}") for n in (*names, "loop-b")}

    items = {i.source.rsplit("/", 1)[1]: i for i in svc.list_items(base.id)}
    expected = {
        "forever": (ErrorCode.FILE_TOO_LARGE, "limit"),
        "trickle": (ErrorCode.FETCH_FAILED, "longer than 0.6 s"),
        "silent": (ErrorCode.FETCH_FAILED, "timeout"),
        "loop-a": (ErrorCode.FETCH_FAILED, "redirects"),
    }
    for name, (code, words) in expected.items():
        item = items[name]
        assert (item.status, item.error_code) == (ItemStatus.FAILED, code), item
        assert words in (item.error_message or ""), item.error_message
    # Timeouts are transient: the job tries 3 times (1 s and 2 s apart), then gives up;
    # a size cap or a redirect loop is final at once.
    assert hits["trickle"] == hits["silent"] == 3, hits
    assert hits["forever"] == 1, hits
    assert hits["loop-a"] + hits["loop-b"] == 3 + 1, hits  # max_redirects, once
    assert elapsed < 15, elapsed


# -- paths -------------------------------------------------------------------------------------


@pytest.fixture
def secret(tmp_path: Path) -> Path:
    outside = tmp_path / "outside"
    outside.mkdir()
    path = outside / "secret.md"
    path.write_text(f"# Secret\n\n{SECRET}\n", encoding="utf-8")
    return path


@pytest.fixture
def noted(svc: KnowledgeService) -> tuple[Base, Item]:
    base = svc.create_base("kb")
    note = svc.add_note(base.id, "Plain", "A plain note with the plainword in it.")
    svc.run_pending_jobs(base.id)
    assert svc.get_item(note.id).status is ItemStatus.COMPLETED
    return base, svc.get_item(note.id)


def test_kb_read_through_a_symlink_planted_in_raw_is_refused_UNSAFE_PATH(
    svc: KnowledgeService, noted: tuple[Base, Item], secret: Path
) -> None:
    base, note = noted
    cid = material_path(note)
    assert cid is not None
    tools = ConceptTools(svc)
    assert "plainword" in ok(tools.call("kb_read", {"baseId": base.id, "conceptId": cid}))["text"]
    material = svc.layout.raw_dir(base.id) / cid
    material.unlink()
    material.symlink_to(secret)  # the file itself now points outside the base
    message = err(tools.call("kb_read", {"baseId": base.id, "conceptId": cid}), "UNSAFE_PATH")
    assert SECRET not in message
    grep = {"baseId": base.id, "conceptId": cid, "pattern": "SECRET"}
    assert SECRET not in err(tools.call("kb_read", grep), "UNSAFE_PATH")
    with pytest.raises(path_safety.UnsafePathError):
        svc.material_file(base.id, cid)

    # A whole folder of raw/ swapped for a link to elsewhere is refused the same way.
    material.unlink()
    notes = material.parent
    notes.rmdir()
    notes.symlink_to(secret.parent, target_is_directory=True)
    secret.rename(secret.parent / material.name)
    err(tools.call("kb_read", {"baseId": base.id, "conceptId": cid}), "UNSAFE_PATH")


def test_jobs_never_write_or_delete_through_a_symlink_out_of_raw_UNSAFE_PATH(
    svc: KnowledgeService, noted: tuple[Base, Item], secret: Path
) -> None:
    base, note = noted
    raw = svc.layout.raw_dir(base.id)
    # A new note is admitted (its name allocated under raw/notes/), then, before its job
    # runs, the folder is swapped for a link to a folder outside the base.
    pending = svc.add_note(base.id, "Pending", "The pendingword note.")
    (raw / "notes").rename(raw / "notes-moved")
    (raw / "notes").symlink_to(secret.parent, target_is_directory=True)
    svc.run_pending_jobs(base.id)
    item = svc.get_item(pending.id)
    assert (item.status, item.error_code) == (ItemStatus.FAILED, ErrorCode.UNSAFE_PATH)
    assert sorted(p.name for p in secret.parent.iterdir()) == ["secret.md"]  # nothing written

    # Deleting both notes: the deletion refuses to follow the link, the secret survives.
    svc.delete_items(base.id, [note.id, pending.id])
    svc.run_pending_jobs(base.id)
    assert svc.list_items(base.id) == []
    assert secret.read_text(encoding="utf-8").endswith(f"{SECRET}\n")
    assert secret.parent.is_dir()


# -- FTS query syntax --------------------------------------------------------------------------

FTS_DOCS = {
    "fruit.md": "# Fruit\n\nApples and pears grow in the orchard near the river.\n",
    "title.md": "# Title\n\nThe title of this note mentions apples once.\n",
    "river.md": "# River\n\nThe river runs near the old mill; no fruit here.\n",
}
# query -> the plain words it must mean (None: it has none)
HOSTILE_QUERIES: dict[str, str | None] = {
    '"': None,
    '""': None,
    "*": None,
    "^": None,
    "(": None,
    ")": None,
    ":": None,
    "{}": None,
    "-": None,
    "\x00": None,
    "NEAR(": "near",
    "NEAR(apples pears, 2)": "near apples pears 2",
    "apples OR pears": "apples or pears",
    "apples AND NOT pears": "apples and not pears",
    "apples NOT": "apples not",
    "title:apples": "title apples",
    "body:river": "body river",
    "{title body}: apples": "title body apples",
    "^apples": "apples",
    "appl*": "appl",
    '"apples': "apples",
    'apples"': "apples",
    '"apples pears': "apples pears",
    "-apples": "apples",
    "+pears": "pears",
    "apples\x00pears": "apples pears",
    "apples' OR 1=1 --": "apples or 1 1",
    "'); DROP TABLE chunks; --": "drop table chunks",
    "chunks_fts MATCH 'x'": "chunks fts match x",
}


@pytest.fixture
def hybrid_base(svc: KnowledgeService, tmp_path: Path) -> Base:
    base = svc.create_base("kb", embedding_model="fake:bow")
    svc.add(base.id, [write_files(tmp_path / "fts", FTS_DOCS)])
    svc.run_pending_jobs(base.id)
    return base


def _ranked(svc: KnowledgeService, base_id: str, query: str, mode: SearchMode) -> list[str]:
    return [r.item_id for r in svc.search(base_id, query, mode=mode).results]


@pytest.mark.parametrize(("query", "words"), list(HOSTILE_QUERIES.items()))
def test_fts_query_syntax_is_never_interpreted_NO_SEARCHABLE_TOKEN(
    svc: KnowledgeService, hybrid_base: Base, query: str, words: str | None
) -> None:
    store = svc.parts.stores.get(hybrid_base.id)
    for mode in (SearchMode.BM25, SearchMode.HYBRID):
        if words is None:
            with pytest.raises(TroveError) as caught:
                svc.search(hybrid_base.id, query, mode=mode)
            assert caught.value.code == ErrorCode.NO_SEARCHABLE_TOKEN
        elif mode is SearchMode.BM25:
            # The same hits in the same order as the plain words: no operator, column
            # filter, prefix or phrase took effect.
            assert _ranked(svc, hybrid_base.id, query, mode) == _ranked(
                svc, hybrid_base.id, words, mode
            )
        else:
            # The embedding model reads the query as written; FTS still gets only words.
            assert svc.search(hybrid_base.id, query, mode=mode).mode is SearchMode.HYBRID
    assert store.chunk_count() == len(FTS_DOCS) and store.fts_integrity_check() == []


def test_column_filters_and_boolean_operators_really_exist_in_fts5(
    svc: KnowledgeService, hybrid_base: Base
) -> None:
    """The injection test above can fail: raw FTS5 syntax does change the hits."""
    store = svc.parts.stores.get(hybrid_base.id)
    only_titles = store.bm25_search("title:fruit", 10)
    anywhere = store.bm25_search('"fruit"', 10)
    assert len(only_titles) == 1 and len(anywhere) == 2  # "no fruit here" in River's body
    # Through the search contract the filter is just two words, found in three documents.
    assert len(_ranked(svc, hybrid_base.id, "title:fruit", SearchMode.BM25)) == 3


# -- file names ----------------------------------------------------------------------------------

AWKWARD_NAMES = {
    "CON.md": "conword",
    "nul.txt": "nulword",
    "COM1.md": "comword",
    "aux.txt": "auxword",
    "LPT9.notes.md": "lptword",
    "tab\there.md": "tabword",
    "new\nline.md": "newlineword",
    "bell\x07ring.txt": "bellword",
    "esc\x1b[31mred.md": "escword",
    "del\x7f.md": "delword",
    "trailing space .md": "spaceword",
    "dots....md": "dotsword",
    " leading space.md": "leadingword",
}
# No usable extension left: Windows would even strip the trailing dot or space.
NO_EXTENSION = ["report.md.", "report.md ", "CON"]


def _portable(rel: str) -> list[str]:
    """What would stop `rel` from being a safe, portable name (empty: nothing)."""
    problems = []
    for segment in rel.split("/"):
        if any(ord(ch) < 32 or ord(ch) == 127 for ch in segment):
            problems.append(f"control character in {segment!r}")
        if segment != segment.strip(" ."):
            problems.append(f"leading/trailing dot or space in {segment!r}")
        head = segment.split(".", 1)[0].rstrip(" ").upper()
        if head in {"CON", "PRN", "AUX", "NUL"} or (
            head[:3] in ("COM", "LPT") and head[3:] in set("0123456789¹²³")
        ):
            problems.append(f"Windows device name {segment!r}")
    return problems


def test_awkward_file_names_are_indexed_under_portable_names_or_UNSUPPORTED_FILE_TYPE(
    svc: KnowledgeService, tmp_path: Path
) -> None:
    folder = tmp_path / "awkward"
    folder.mkdir()
    for name, word in AWKWARD_NAMES.items():
        (folder / name).write_text(f"The {word} is in here.\n", encoding="utf-8")
    for n, name in enumerate(NO_EXTENSION):
        (folder / name).write_text(f"nothing to see number {n}\n", encoding="utf-8")
    base = svc.create_base("kb")
    report = svc.add(base.id, [folder, *(folder / n for n in NO_EXTENSION)])
    assert report.errors == []
    svc.run_pending_jobs(base.id)

    items = {Path(i.source).name: i for i in _files(svc, base.id)}
    assert set(items) == {*AWKWARD_NAMES, *NO_EXTENSION}  # the folder scan skips those three
    tools = ConceptTools(svc)
    for name, word in AWKWARD_NAMES.items():
        item = items[name]
        assert item.status is ItemStatus.COMPLETED, (name, item.error_code, item.error_message)
        rel = item.relative_path or ""
        assert _portable(rel) == [], (name, rel)
        assert path_safety.check_relative_path(rel) == rel
        assert {r.item_id for r in svc.search(base.id, word).results} == {item.id}, name
        cid = material_path(item)
        read = ok(tools.call("kb_read", {"baseId": base.id, "conceptId": cid}))
        assert word in read["text"]
    for name in NO_EXTENSION:
        item = items[name]
        assert (item.status, item.error_code) == (
            ItemStatus.FAILED,
            ErrorCode.UNSUPPORTED_FILE_TYPE,
        ), name
    names = [p.name for p in svc.layout.raw_dir(base.id).rglob("*")]
    assert all(_portable(n) == [] for n in names), names


# -- agent tools adding paths ----------------------------------------------------------------


def test_agent_tools_add_nothing_until_the_person_allows_it_AGENT_WRITES_DISABLED(
    svc: KnowledgeService, secret: Path
) -> None:
    base = svc.create_base("kb")
    tools = ConceptTools(svc)
    with LoopbackServer() as server:
        server.route("/page", Response.text("<p>page</p>", content_type="text/html"))
        sources = [str(secret), str(secret.parent), server.url("/page"), "file:///etc/passwd"]
        for source in sources:
            add = {"baseId": base.id, "action": "add", "sources": [source]}
            err(tools.call("kb_manage", add), "AGENT_WRITES_DISABLED")
        assert server.hits("/page") == 0

        svc.set_agent_writes(base.id, True)
        refused = ok(
            tools.call(
                "kb_manage",
                {
                    "baseId": base.id,
                    "action": "add",
                    "sources": [
                        "file:///etc/passwd",
                        "javascript:alert(1)",
                        "data:text/plain,hi",
                        "ftp://127.0.0.1/x",
                    ],
                },
            )
        )
        assert [e["message"].split(":")[0] for e in refused["errors"]] == ["FETCH_FAILED"] * 4
        relative = {"baseId": base.id, "action": "add", "sources": ["../outside/secret.md"]}
        err(tools.call("kb_manage", relative), "INVALID_ARGUMENT")
        assert svc.list_items(base.id) == [] and svc.catalog.list_jobs() == []

        # Allowed, an absolute path is the person's choice for that base only.
        other = svc.create_base("other")
        blocked = {"baseId": other.id, "action": "add", "sources": [str(secret)]}
        err(tools.call("kb_manage", blocked), "AGENT_WRITES_DISABLED")
        added = ok(tools.call("kb_manage", {**blocked, "baseId": base.id}))
        assert [i["status"] for i in added["items"]] == ["processing"]
    assert svc.list_items(other.id) == []
    assert json.dumps(refused).count("passwd") >= 1  # the refused source is named back
