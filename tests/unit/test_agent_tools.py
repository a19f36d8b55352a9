"""Concept IDs and the agent tools (app/agent), on a real engine in-process."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from app.agent.errors import ToolResult
from app.agent.grep import GREP_TIME_BUDGET, compile_pattern, grep_lines
from app.agent.jobs import BackgroundJobs
from app.agent.specs import MAX_READ_CHARS, TOOLS
from app.agent.tools import ConceptTools, interleave
from app.knowledge import db
from app.knowledge.catalog import Catalog
from app.knowledge.catalog import migrations as catalog_migrations
from app.knowledge.jobs.reader_pool import InlineExtraction
from app.knowledge.service import KnowledgeService
from app.knowledge.types import Base, BaseStatus, ItemStatus, ScoreKind, SearchResult
from tests.conftest import write_files

GARDEN = {
    "garden/tomatoes.txt": "Tomatoes need full sun.\nWater them in summer.\nStake the tall ones.\n",
    "garden/roses.md": "# Roses\n\nPrune roses in late winter.\nFeed roses compost in spring.\n",
    "kitchen/bread.txt": "A sourdough starter needs flour, water and patience.\r\nBake hot.\r\n",
}


@pytest.fixture
def tools(svc: KnowledgeService) -> ConceptTools:
    return ConceptTools(svc)


def seed(svc: KnowledgeService, root: Path, name: str, files: dict[str, str]) -> Base:
    base = svc.create_base(name)
    write_files(root, files)
    report = svc.add(base.id, [root / top for top in sorted({f.split("/")[0] for f in files})])
    assert not report.errors
    svc.run_pending_jobs(base.id)
    return base


@pytest.fixture
def garden(svc: KnowledgeService, tmp_path: Path) -> Base:
    return seed(svc, tmp_path / "src", "Garden", GARDEN)


def ok(result: ToolResult) -> dict[str, Any]:
    assert not result.is_error, result.data
    return result.data


def err(result: ToolResult, code: str) -> str:
    assert result.is_error, result.data
    assert result.data["error"]["code"] == code, result.data
    message = result.data["error"]["message"]
    assert isinstance(message, str) and message
    assert "Traceback" not in message
    return message


# -- tool definitions ------------------------------------------------------------------------


def test_every_tool_has_a_strict_object_schema() -> None:
    assert [t.name for t in TOOLS] == ["kb_search", "kb_read", "kb_tree", "kb_manage"]
    for spec in TOOLS:
        schema = spec.input_schema
        assert schema["type"] == "object"
        assert schema["additionalProperties"] is False
        assert set(schema["required"]) <= set(schema["properties"])
        assert spec.description
    assert [t.name for t in TOOLS if not t.read_only] == ["kb_manage"]


def test_unknown_tool_and_unknown_arguments(tools: ConceptTools, garden: Base) -> None:
    err(tools.call("kb_delete_everything", {}), "UNKNOWN_TOOL")
    message = err(tools.call("kb_search", {"query": "sun", "top_k": 3}), "INVALID_ARGUMENT")
    assert "top_k" in message and "topK" in message
    err(tools.call("kb_search", ["sun"]), "INVALID_ARGUMENT")
    err(tools.call("kb_search", {}), "INVALID_ARGUMENT")


def test_unexpected_failures_are_results_not_tracebacks(
    tools: ConceptTools, svc: KnowledgeService, garden: Base, monkeypatch: pytest.MonkeyPatch
) -> None:
    def boom(*args: object, **kwargs: object) -> None:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(svc, "search", boom)
    message = err(tools.call("kb_search", {"query": "sun"}), "INTERNAL_ERROR")
    assert "disk on fire" not in message


# -- Concept IDs -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "concept_id",
    [
        "..",
        "../outside.txt",
        "garden/../../outside.txt",
        "/etc/passwd",
        "C:/Windows/win.ini",
        "garden\\tomatoes.txt",
        "..\\outside.txt",
        "garden/tomatoes.txt\x00",
        ".trove/index.sqlite",
        ".TROVE/index.sqlite",
        "garden/.trove/x.txt",
    ],
)
def test_unsafe_concept_ids_are_refused(tools: ConceptTools, garden: Base, concept_id: str) -> None:
    result = tools.call("kb_read", {"baseId": garden.id, "conceptId": concept_id})
    err(result, "UNSAFE_PATH")


def test_concept_id_must_be_a_string(tools: ConceptTools, garden: Base) -> None:
    err(tools.call("kb_read", {"baseId": garden.id, "conceptId": 7}), "INVALID_ARGUMENT")


def test_concept_ids_of_unfinished_deleting_and_deleted_items_are_refused(
    tools: ConceptTools, svc: KnowledgeService, garden: Base, tmp_path: Path
) -> None:
    by_cid = {i.relative_path: i for i in svc.list_items(garden.id)}

    # deleting: marked, its delete job not run yet
    svc.delete_items(garden.id, [by_cid["garden/roses.md"].id])
    message = err(
        tools.call("kb_read", {"baseId": garden.id, "conceptId": "garden/roses.md"}),
        "CONCEPT_NOT_VISIBLE",
    )
    assert "being deleted" in message
    # deleted: the job ran, the row and the material are gone
    svc.run_pending_jobs(garden.id)
    err(
        tools.call("kb_read", {"baseId": garden.id, "conceptId": "garden/roses.md"}),
        "CONCEPT_NOT_FOUND",
    )
    # not completed: queued, not yet indexed
    extra = write_files(tmp_path / "more", {"late.txt": "arrives late"})
    svc.add(garden.id, [extra / "late.txt"])
    message = err(
        tools.call("kb_read", {"baseId": garden.id, "conceptId": "late.txt"}),
        "CONCEPT_NOT_VISIBLE",
    )
    assert "still being indexed" in message
    # failed: an empty file has no text to index
    svc.run_pending_jobs(garden.id)
    (extra / "empty.txt").write_text("", encoding="utf-8")
    svc.add(garden.id, [extra / "empty.txt"])
    svc.run_pending_jobs(garden.id)
    message = err(
        tools.call("kb_read", {"baseId": garden.id, "conceptId": "empty.txt"}),
        "CONCEPT_NOT_VISIBLE",
    )
    assert "failed" in message
    # never existed
    err(
        tools.call("kb_read", {"baseId": garden.id, "conceptId": "garden/lilies.md"}),
        "CONCEPT_NOT_FOUND",
    )


def test_a_concept_id_is_resolved_within_its_own_base(
    tools: ConceptTools, svc: KnowledgeService, garden: Base
) -> None:
    other = svc.create_base("Other")
    err(
        tools.call("kb_read", {"baseId": other.id, "conceptId": "garden/tomatoes.txt"}),
        "CONCEPT_NOT_FOUND",
    )
    err(
        tools.call("kb_read", {"baseId": "nope", "conceptId": "garden/tomatoes.txt"}),
        "BASE_NOT_FOUND",
    )


# -- kb_search -------------------------------------------------------------------------------


def test_search_hits_carry_what_an_agent_needs(tools: ConceptTools, garden: Base) -> None:
    data = ok(tools.call("kb_search", {"query": "prune roses", "baseIds": ["Garden"]}))
    assert data["bases"] == [{"baseId": garden.id, "name": "Garden", "mode": "bm25", "hitCount": 1}]
    (hit,) = data["results"]
    assert hit["conceptId"] == "garden/roses.md"
    assert hit["baseId"] == garden.id
    assert hit["type"] == "file"
    assert hit["scoreKind"] == "ranking"
    assert hit["rank"] == hit["baseRank"] == 1
    assert "Prune roses" in hit["text"]
    assert "page" not in hit  # unknown for Markdown

    # The offsets read back exactly the hit's text.
    read = ok(
        tools.call(
            "kb_read",
            {
                "baseId": garden.id,
                "conceptId": hit["conceptId"],
                "charStart": hit["charStart"],
                "charEnd": hit["charEnd"],
            },
        )
    )
    assert read["text"] == hit["text"]


def test_search_across_bases_interleaves_by_rank(
    tools: ConceptTools, svc: KnowledgeService, garden: Base, tmp_path: Path
) -> None:
    second = seed(
        svc,
        tmp_path / "src2",
        "Allotment",
        {
            "plot/water.txt": "Water the beds at dawn.",
            "plot/rain.txt": "Rain water in barrels for summer watering.",
        },
    )
    data = ok(tools.call("kb_search", {"query": "water summer"}))
    order = [(h["baseId"], h["baseRank"]) for h in data["results"]]
    per_base = {b: sum(1 for x, _ in order if x == b) for b in (garden.id, second.id)}
    assert per_base[garden.id] >= 1 and per_base[second.id] >= 1
    # every base's #1 comes before any #2
    ranks = [r for _, r in order]
    assert ranks == sorted(ranks)
    assert [h["rank"] for h in data["results"]] == list(range(1, len(order) + 1))

    limited = ok(tools.call("kb_search", {"query": "water summer", "topK": 1}))
    assert len(limited["results"]) == 1


def _result(score: float, kind: ScoreKind, rank: int, name: str) -> SearchResult:
    return SearchResult(rank, score, kind, name, "src", name, f"{name}.md", 0, 1, "t")


def test_interleave_never_compares_scores_of_different_bases() -> None:
    a = Base("a", "A", None, None, None, 10, None, 512, 64, BaseStatus.COMPLETED, None, 0, 0)
    b = Base("b", "B", None, None, None, 10, None, 512, 64, BaseStatus.COMPLETED, None, 0, 0)
    bm25 = [(a, _result(50.0, ScoreKind.RANKING, i, f"a{i}")) for i in (1, 2)]
    rerank = [(b, _result(s, ScoreKind.RELEVANCE, i, f"b{i}")) for i, s in ((1, 0.2), (2, 0.1))]
    rerank.append((b, _result(0.05, ScoreKind.RELEVANCE, 3, "b3")))
    merged = interleave([bm25, rerank])
    assert [r.item_id for _, r in merged] == ["a1", "b1", "a2", "b2", "b3"]
    assert interleave([rerank, bm25])[0][1].item_id == "b1"


def test_search_reports_a_failed_base_and_searches_the_rest(
    tools: ConceptTools, svc: KnowledgeService, garden: Base
) -> None:
    broken = svc.create_base("Broken")
    svc.catalog.set_base_status(broken.id, BaseStatus.FAILED, "missing_embedding_model")
    data = ok(tools.call("kb_search", {"query": "roses"}))
    assert [e["baseId"] for e in data["errors"]] == [broken.id]
    assert data["errors"][0]["code"] == "BASE_FAILED"
    assert data["results"]
    err(tools.call("kb_search", {"query": "roses", "baseIds": [broken.id]}), "BASE_FAILED")


@pytest.mark.parametrize(
    ("arguments", "code"),
    [
        ({"query": "?!"}, "NO_SEARCHABLE_TOKEN"),
        ({"query": "roses", "topK": 0}, "INVALID_ARGUMENT"),
        ({"query": "roses", "topK": True}, "INVALID_ARGUMENT"),
        ({"query": "roses", "topK": "5"}, "INVALID_ARGUMENT"),
        ({"query": "roses", "baseIds": "Garden"}, "INVALID_ARGUMENT"),
        ({"query": "roses", "baseIds": ["nope"]}, "BASE_NOT_FOUND"),
        ({"query": "x" * 1001}, "INVALID_ARGUMENT"),
    ],
)
def test_search_errors(
    tools: ConceptTools, garden: Base, arguments: dict[str, Any], code: str
) -> None:
    err(tools.call("kb_search", arguments), code)


def test_search_with_no_bases_finds_nothing(tools: ConceptTools) -> None:
    assert ok(tools.call("kb_search", {"query": "roses"}))["results"] == []


# -- kb_read ---------------------------------------------------------------------------------


def test_read_returns_the_exact_slice(tools: ConceptTools, garden: Base) -> None:
    whole = ok(tools.call("kb_read", {"baseId": "Garden", "conceptId": "kitchen/bread.txt"}))
    text = GARDEN["kitchen/bread.txt"]
    assert whole["text"] == text  # CRLF kept: offsets are into this exact text
    assert whole["totalChars"] == len(text)
    assert whole["truncated"] is False and whole["nextCharStart"] is None

    part = ok(
        tools.call(
            "kb_read",
            {"baseId": garden.id, "conceptId": "kitchen/bread.txt", "charStart": 2, "charEnd": 11},
        )
    )
    assert part["text"] == text[2:11] == "sourdough"
    assert (part["charStart"], part["charEnd"], part["truncated"]) == (2, 11, False)
    # an end past the document is clamped, not an error
    tail = ok(
        tools.call(
            "kb_read",
            {
                "baseId": garden.id,
                "conceptId": "kitchen/bread.txt",
                "charStart": 60,
                "charEnd": 10**6,
            },
        )
    )
    assert tail["text"] == text[60:]


def test_read_is_capped_and_pages_through_a_long_document(
    tools: ConceptTools, svc: KnowledgeService, tmp_path: Path
) -> None:
    lines = [f"line {n:05d} of the long document" for n in range(2000)]
    text = "\n".join(lines) + "\n"
    assert len(text) > 2 * MAX_READ_CHARS
    seed(svc, tmp_path / "src", "Long", {"long/doc.txt": text})
    first = ok(tools.call("kb_read", {"baseId": "Long", "conceptId": "long/doc.txt"}))
    assert first["text"] == text[:MAX_READ_CHARS]
    assert first["truncated"] is True and first["nextCharStart"] == MAX_READ_CHARS
    assert first["totalChars"] == len(text)
    got = first["text"]
    start = first["nextCharStart"]
    while start is not None:
        page = ok(
            tools.call(
                "kb_read", {"baseId": "Long", "conceptId": "long/doc.txt", "charStart": start}
            )
        )
        got += page["text"]
        start = page["nextCharStart"]
    assert got == text
    wide = ok(
        tools.call(
            "kb_read",
            {"baseId": "Long", "conceptId": "long/doc.txt", "charStart": 5, "charEnd": 40_000},
        )
    )
    assert wide["text"] == text[5 : 5 + MAX_READ_CHARS] and wide["truncated"] is True


@pytest.mark.parametrize(
    "arguments",
    [
        {"charStart": 10_000},
        {"charStart": 10, "charEnd": 5},
        {"charStart": -1},
        {"charStart": 1, "pattern": "sun"},
        {"ignoreCase": True},
        {"pattern": "sun", "contextLines": 11},
        {"pattern": "sun", "maxMatches": 0},
    ],
)
def test_read_argument_errors(tools: ConceptTools, garden: Base, arguments: dict[str, Any]) -> None:
    arguments = {"baseId": garden.id, "conceptId": "garden/tomatoes.txt", **arguments}
    err(tools.call("kb_read", arguments), "INVALID_ARGUMENT")


def test_grep_finds_lines_with_numbers_offsets_and_context(
    tools: ConceptTools, garden: Base
) -> None:
    data = ok(
        tools.call(
            "kb_read",
            {"baseId": garden.id, "conceptId": "garden/roses.md", "pattern": r"roses? \w+"},
        )
    )
    text = GARDEN["garden/roses.md"]
    assert [m["line"] for m in data["matches"]] == [3, 4]
    first, second = data["matches"]
    assert first["text"] == "Prune roses in late winter."
    assert text[first["charStart"] : first["charEnd"]] == "roses in"
    assert first["before"] == [""] and first["after"] == ["Feed roses compost in spring."]
    assert text[second["charStart"] : second["charEnd"]] == "roses compost"
    assert data["truncated"] is False and data["timedOut"] is False
    assert data["totalLines"] == 4

    assert (
        ok(
            tools.call(
                "kb_read",
                {"baseId": garden.id, "conceptId": "garden/roses.md", "pattern": "PRUNE"},
            )
        )["matches"]
        == []
    )
    loud = ok(
        tools.call(
            "kb_read",
            {
                "baseId": garden.id,
                "conceptId": "garden/roses.md",
                "pattern": "PRUNE",
                "ignoreCase": True,
                "contextLines": 0,
            },
        )
    )
    assert [(m["line"], m["before"], m["after"]) for m in loud["matches"]] == [(3, [], [])]
    capped = ok(
        tools.call(
            "kb_read",
            {"baseId": garden.id, "conceptId": "garden/roses.md", "pattern": "e", "maxMatches": 2},
        )
    )
    assert capped["matchCount"] == 2 and capped["truncated"] is True


def test_grep_offsets_count_crlf_as_two_characters(tools: ConceptTools, garden: Base) -> None:
    text = GARDEN["kitchen/bread.txt"]
    data = ok(
        tools.call(
            "kb_read", {"baseId": garden.id, "conceptId": "kitchen/bread.txt", "pattern": "Bake"}
        )
    )
    (match,) = data["matches"]
    assert match["line"] == 2 and match["text"] == "Bake hot."
    assert text[match["charStart"] : match["charEnd"]] == "Bake"


CATASTROPHIC = [
    "(a+)+$",
    "(a*)*b",
    r"(\w+\s?)*$",
    "(a|aa)*c",
    "(?:a|aa)+$",
    ".*.*.*.*x",
    "a*a*a*a*a*x",
    "(?:.*a){3}x",
    "x{1,50}" * 2 + "(a{2,100})+$",
]


@pytest.mark.parametrize("pattern", ["[unclosed", "(?P<w>a)(?P=v)", "a{2,1}", "a" * 300])
def test_invalid_patterns_are_refused_fast(tools: ConceptTools, garden: Base, pattern: str) -> None:
    started = time.monotonic()
    err(
        tools.call(
            "kb_read", {"baseId": garden.id, "conceptId": "garden/roses.md", "pattern": pattern}
        ),
        "INVALID_PATTERN" if len(pattern) <= 256 else "INVALID_ARGUMENT",
    )
    assert time.monotonic() - started < 1.0


@pytest.mark.parametrize("pattern", CATASTROPHIC)
def test_catastrophic_patterns_stop_at_the_time_budget(pattern: str) -> None:
    # Exponential backtracking on a plain backtracking engine: (a+)+$ on 'aaa…b'.
    text = "a" * 30_000 + "b\nthe end\n"
    started = time.monotonic()
    found = grep_lines(text, compile_pattern(pattern), time_budget=0.3)
    # The timeout is exact on an idle machine; the margin is for a loaded one.
    assert time.monotonic() - started < 2.0
    assert found["matches"] == [] or found["matches"][0]["line"] == 1
    if found["timedOut"]:
        assert "simpler pattern" in found["note"]


def test_a_catastrophic_pattern_over_a_document_answers_in_time(
    tools: ConceptTools, svc: KnowledgeService, tmp_path: Path
) -> None:
    base = seed(svc, tmp_path / "long", "Long", {"long/a.txt": "a" * 50_000 + "b\n"})
    started = time.monotonic()
    data = ok(
        tools.call("kb_read", {"baseId": base.id, "conceptId": "long/a.txt", "pattern": "(a+)+$"})
    )
    # The budget is wall-clock time (test_grep_wall_clock.py); the margin is for a loaded machine.
    assert time.monotonic() - started < GREP_TIME_BUDGET * 4
    assert data["matches"] == [] and data["timedOut"] is True


@pytest.mark.parametrize(
    "pattern",
    [
        r"\bsun\b",
        r"(\d{1,3}\.){3}\d{1,3}",
        "a+b*c",
        "(ab)+",
        "[ab]+",
        "foo.*bar",
        r"\d{4}-\d{2}-\d{2}",
        r"https?://\S+",
        r"\w+@\w+\.\w+",
        "error|warning",
        r"(a)\1",
        "(?<=Prune )roses",
    ],
)
def test_ordinary_patterns_are_accepted(pattern: str) -> None:
    assert compile_pattern(pattern).pattern == pattern


def test_grep_keeps_python_regex_semantics() -> None:
    # Unicode classes as in `re` (an engine with ASCII \w would miss these), backreferences
    # and lookaround.
    text = "Prune roses.\nCafé crème\n番茄需要阳光\nbeep boop\n"
    words = grep_lines(text, compile_pattern(r"^\w+\s\w+$"))
    assert [m["line"] for m in words["matches"]] == [2, 4]
    assert [m["line"] for m in grep_lines(text, compile_pattern(r"\w{6}"))["matches"]] == [3]
    doubled = grep_lines(text, compile_pattern(r"(\w)\1"))
    assert [m["line"] for m in doubled["matches"]] == [4]
    behind = grep_lines(text, compile_pattern("(?<=Prune )roses"))
    assert text[behind["matches"][0]["charStart"] :].startswith("roses.")
    assert grep_lines(text, compile_pattern("CAFÉ", ignore_case=True))["matchCount"] == 1


def test_heavy_but_accepted_patterns_stay_within_the_time_budget() -> None:
    started = time.monotonic()
    found = grep_lines("a" * 20_000 + "\n" + "b\n", compile_pattern(".*.*.*x"))
    assert time.monotonic() - started < GREP_TIME_BUDGET + 1.5
    assert found["matches"] == []


def test_grep_searches_long_lines_whole_and_keeps_offsets() -> None:
    needle = compile_pattern("needle")
    line = "x" * 10_017 + "needle" + "y" * 12_000
    text = "first\n" + line + "\nlast\n"
    found = grep_lines(text, needle)
    (match,) = found["matches"]
    assert match["line"] == 2
    assert text[match["charStart"] : match["charEnd"]] == "needle"
    assert len(match["text"]) <= 402 and "needle" in match["text"]
    assert "note" not in found
    # a match longer than any search window a guard could use is found whole
    long_match = grep_lines("z" * 9_000 + "q", compile_pattern("z+q"))["matches"][0]
    assert (long_match["charStart"], long_match["charEnd"]) == (0, 9_001)


def test_grep_stops_at_its_time_budget() -> None:
    found = grep_lines("a\n" * 1000, compile_pattern("b"), time_budget=0.0)
    assert found["timedOut"] is True
    assert "note" in found
    assert found["linesScanned"] < 1000


# -- kb_tree ---------------------------------------------------------------------------------


def test_tree_lists_bases_with_counts(
    tools: ConceptTools, svc: KnowledgeService, garden: Base
) -> None:
    svc.create_base("Empty")
    data = ok(tools.call("kb_tree", {}))
    assert data["total"] == 2 and data["nextCursor"] is None
    by_name = {b["name"]: b for b in data["bases"]}
    assert by_name["Garden"]["statusCounts"] == {"completed": 5}
    assert by_name["Garden"]["items"] == 5
    assert by_name["Garden"]["mode"] == "bm25"
    assert by_name["Garden"]["agentWrites"] is False
    assert by_name["Empty"]["items"] == 0


def test_tree_of_a_base_shows_folders_documents_and_statuses(
    tools: ConceptTools, svc: KnowledgeService, garden: Base, tmp_path: Path
) -> None:
    (tmp_path / "empty.txt").write_text("", encoding="utf-8")
    svc.add(garden.id, [tmp_path / "empty.txt"])
    svc.run_pending_jobs(garden.id)
    data = ok(tools.call("kb_tree", {"baseId": "Garden"}))
    summary = [(n["kind"], n["depth"], n.get("path") or n.get("conceptId")) for n in data["nodes"]]
    assert summary == [
        ("folder", 0, "garden"),
        ("document", 1, "garden/roses.md"),
        ("document", 1, "garden/tomatoes.txt"),
        ("folder", 0, "kitchen"),
        ("document", 1, "kitchen/bread.txt"),
        ("document", 0, "empty.txt"),
    ]
    garden_folder = data["nodes"][0]
    assert garden_folder["documents"] == 2
    assert garden_folder["statusCounts"] == {"completed": 2}
    assert garden_folder["item"]["type"] == "directory"
    failed = data["nodes"][-1]
    assert failed["status"] == "failed" and failed["errorCode"] == "EMPTY_INDEXABLE_TEXT"
    assert data["statusCounts"] == {"completed": 5, "failed": 1}

    top = ok(tools.call("kb_tree", {"baseId": garden.id, "maxDepth": 1}))
    assert [(n["kind"], n["name"], n.get("collapsed")) for n in top["nodes"]] == [
        ("folder", "garden", True),
        ("folder", "kitchen", True),
        ("document", "empty.txt", None),
    ]


def test_tree_pages_with_an_opaque_cursor(
    tools: ConceptTools, svc: KnowledgeService, garden: Base
) -> None:
    full = ok(tools.call("kb_tree", {"baseId": garden.id}))["nodes"]
    pages: list[list[dict[str, Any]]] = []
    cursor = None
    while True:
        args: dict[str, Any] = {"baseId": garden.id, "limit": 2}
        if cursor:
            args["cursor"] = cursor
        page = ok(tools.call("kb_tree", args))
        pages.append(page["nodes"])
        cursor = page["nextCursor"]
        if cursor is None:
            break
    assert [len(p) for p in pages] == [2, 2, 1]
    assert [n for p in pages for n in p] == full

    first = ok(tools.call("kb_tree", {"baseId": garden.id, "limit": 2}))
    other = svc.create_base("Other")
    err(
        tools.call("kb_tree", {"baseId": other.id, "cursor": first["nextCursor"]}), "INVALID_CURSOR"
    )
    err(
        tools.call("kb_tree", {"baseId": garden.id, "maxDepth": 1, "cursor": first["nextCursor"]}),
        "INVALID_CURSOR",
    )
    err(tools.call("kb_tree", {"cursor": first["nextCursor"]}), "INVALID_CURSOR")
    err(tools.call("kb_tree", {"baseId": garden.id, "cursor": "not a cursor"}), "INVALID_CURSOR")

    bases = ok(tools.call("kb_tree", {"limit": 1}))
    assert len(bases["bases"]) == 1 and bases["nextCursor"]
    rest = ok(tools.call("kb_tree", {"limit": 1, "cursor": bases["nextCursor"]}))
    assert {bases["bases"][0]["name"], rest["bases"][0]["name"]} == {"Garden", "Other"}


# -- kb_manage -------------------------------------------------------------------------------


def test_manage_is_refused_until_the_person_enables_agent_writes(
    tools: ConceptTools, svc: KnowledgeService, garden: Base, tmp_path: Path
) -> None:
    new = write_files(tmp_path / "new", {"beans.txt": "Runner beans climb poles."})
    add = {"baseId": garden.id, "action": "add", "sources": [str(new / "beans.txt")]}
    message = err(tools.call("kb_manage", add), "AGENT_WRITES_DISABLED")
    assert "Garden" in message
    delete = {"baseId": garden.id, "action": "delete", "conceptIds": ["garden/roses.md"]}
    err(tools.call("kb_manage", delete), "AGENT_WRITES_DISABLED")
    assert svc.catalog.count_live_jobs(garden.id) == 0
    assert len(svc.list_items(garden.id)) == 5

    assert svc.set_agent_writes(garden.id, True).agent_writes is True
    data = ok(tools.call("kb_manage", add))
    assert data["processing"] == "queued"  # no runner here: the app or the CLI runs it
    (item,) = data["items"]
    assert item["conceptId"] == "beans.txt" and item["status"] == "processing"
    svc.run_pending_jobs(garden.id)
    hits = ok(tools.call("kb_search", {"query": "runner beans"}))["results"]
    assert hits[0]["conceptId"] == "beans.txt"

    assert svc.set_agent_writes(garden.id, False).agent_writes is False
    err(tools.call("kb_manage", delete), "AGENT_WRITES_DISABLED")


@pytest.mark.parametrize(
    "arguments",
    [
        {"action": "add", "sources": ["relative/path.txt"]},
        {"action": "add", "conceptIds": ["garden/roses.md"]},
        {"action": "add"},
        {"action": "delete"},
        {"action": "delete", "sources": ["/tmp/x"]},
        {"action": "refresh", "conceptIds": []},
        {"action": "rename", "conceptIds": ["garden/roses.md"]},
        {"action": "delete", "conceptIds": ["garden/roses.md"], "wait": "yes"},
    ],
)
def test_manage_argument_errors(
    tools: ConceptTools, svc: KnowledgeService, garden: Base, arguments: dict[str, Any]
) -> None:
    svc.set_agent_writes(garden.id, True)
    err(tools.call("kb_manage", {"baseId": garden.id, **arguments}), "INVALID_ARGUMENT")
    assert svc.catalog.count_live_jobs(garden.id) == 0


def test_manage_refuses_concepts_that_are_not_visible(
    tools: ConceptTools, svc: KnowledgeService, garden: Base
) -> None:
    svc.set_agent_writes(garden.id, True)
    delete = {"baseId": garden.id, "action": "delete", "conceptIds": ["garden/roses.md"]}
    ok(tools.call("kb_manage", delete))  # now deleting, the job not run
    err(tools.call("kb_manage", delete), "CONCEPT_NOT_VISIBLE")
    refresh = {"baseId": garden.id, "action": "refresh", "conceptIds": ["../garden/roses.md"]}
    err(tools.call("kb_manage", refresh), "UNSAFE_PATH")


def test_manage_with_background_jobs_processes_and_waits(
    qapp: object, svc: KnowledgeService, garden: Base, tmp_path: Path
) -> None:
    svc.set_agent_writes(garden.id, True)
    runner = BackgroundJobs(svc)
    tools = ConceptTools(svc, jobs=runner, wait_seconds=30)
    try:
        new = write_files(tmp_path / "new", {"herbs/basil.txt": "Basil loves warmth."})
        added = ok(
            tools.call(
                "kb_manage",
                {
                    "baseId": garden.id,
                    "action": "add",
                    "sources": [str(new / "herbs")],
                    "wait": True,
                },
            )
        )
        assert added["processing"] == "done"
        (root,) = added["items"]
        assert root["type"] == "directory" and root["status"] == "completed"
        assert root["children"] == {"completed": 1}
        read = ok(tools.call("kb_read", {"baseId": garden.id, "conceptId": "herbs/basil.txt"}))
        assert read["text"] == "Basil loves warmth."

        # refresh re-reads the source
        (new / "herbs/basil.txt").write_text("Basil loves warmth and sun.", encoding="utf-8")
        refreshed = ok(
            tools.call(
                "kb_manage",
                {
                    "baseId": garden.id,
                    "action": "refresh",
                    "conceptIds": ["herbs/basil.txt"],
                    "wait": True,
                },
            )
        )
        assert refreshed["processing"] == "done"
        assert refreshed["items"][0]["status"] == "completed"
        read = ok(tools.call("kb_read", {"baseId": garden.id, "conceptId": "herbs/basil.txt"}))
        assert read["text"] == "Basil loves warmth and sun."

        deleted = ok(
            tools.call(
                "kb_manage",
                {
                    "baseId": garden.id,
                    "action": "delete",
                    "conceptIds": ["herbs/basil.txt", "garden/roses.md"],
                    "wait": True,
                },
            )
        )
        assert deleted["processing"] == "done"
        assert len(deleted["deleted"]) == 2 and deleted["items"] == []
        err(
            tools.call("kb_read", {"baseId": garden.id, "conceptId": "herbs/basil.txt"}),
            "CONCEPT_NOT_FOUND",
        )
        assert not ok(tools.call("kb_search", {"query": "prune roses"}))["results"]
    finally:
        runner.close()


# -- the agent_writes setting ----------------------------------------------------------------


def test_agent_writes_column_is_added_by_a_forward_migration(tmp_path: Path) -> None:
    path = tmp_path / "trove.sqlite"
    conn = db.connect(path)
    db.migrate(conn, catalog_migrations.MIGRATIONS[:3], "catalog")
    conn.execute(
        "INSERT INTO bases (id, name, document_count, chunk_size, chunk_overlap, status, "
        "created_at, updated_at) VALUES ('old', 'Old', 10, 512, 64, 'completed', 0, 0)"
    )
    conn.close()

    catalog = Catalog(path)
    try:
        assert db.schema_version(catalog._conn) == len(catalog_migrations.MIGRATIONS)
        assert catalog.require_base("old").agent_writes is False
        assert catalog.update_base("old", agent_writes=1).agent_writes is True
    finally:
        catalog.close()
    reopened = Catalog(path)
    try:
        assert reopened.require_base("old").agent_writes is True
        assert reopened.create_base("New").agent_writes is False
    finally:
        reopened.close()


def test_cli_base_set_agent_writes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from app.cli import main

    home = tmp_path / "home"
    svc = KnowledgeService(home, extraction=InlineExtraction())
    base = svc.create_base("Notes")
    svc.close()
    assert main(["--home", str(home), "base", "set", "Notes", "--agent-writes", "on"]) == 0
    assert "agent writes on" in capsys.readouterr().err
    svc = KnowledgeService(home, extraction=InlineExtraction())
    try:
        assert svc.get_base(base.id).agent_writes is True
    finally:
        svc.close()
    assert main(["--home", str(home), "base", "set", base.id, "--agent-writes", "off"]) == 0
    assert main(["--home", str(home), "base", "set", base.id]) == 2
    svc = KnowledgeService(home, extraction=InlineExtraction())
    try:
        assert svc.get_base(base.id).agent_writes is False
        assert {i.status for i in svc.list_items(base.id)} <= {ItemStatus.COMPLETED}
    finally:
        svc.close()
