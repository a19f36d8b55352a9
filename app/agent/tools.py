"""The agent tools kb_search / kb_read / kb_tree / kb_manage over one `KnowledgeService`.

A Concept ID is the relative path of an item's material under ``raw/``: a file's stored
copy when it is plain text, else its ``.md`` product; the snapshot of a URL or a note
(`app.knowledge.material_paths.material_path`). It is what search hits carry and what agents
pass back to read or change a document.

A Concept ID is never trusted: on every use it is checked for shape (`concept_ids`),
resolved against the base's index, and the item that owns it is re-checked in the catalog:
it must belong to the base and be ``completed`` (so not failed, still processing, deleting
or gone).

The tools take JSON-like arguments and return JSON-ready dicts; any failure comes back as
``{"error": {"code", "message"}}`` with a stable code, never as a traceback. The MCP server
(`app.agent.server`) and any other caller use this class as it is.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

from app.agent.args import ToolArgs
from app.agent.concept_ids import Concept, check_concept_id
from app.agent.errors import ToolError, ToolErrorCode, ToolResult, invalid
from app.agent.grep import GrepPattern, compile_pattern, grep_lines
from app.agent.specs import (
    DEFAULT_CONTEXT_LINES,
    DEFAULT_GREP_MATCHES,
    DEFAULT_TREE_PAGE,
    DEFAULT_WAIT_SECONDS,
    MAX_CONTEXT_LINES,
    MAX_GREP_MATCHES,
    MAX_MANAGE_TARGETS,
    MAX_PATTERN_CHARS,
    MAX_QUERY_CHARS,
    MAX_READ_CHARS,
    MAX_SEARCH_BASES,
    MAX_TOP_K,
    MAX_TREE_DEPTH,
    MAX_TREE_PAGE,
    SPECS,
)
from app.agent.tree import build_tree, decode_cursor, flatten, next_cursor
from app.agent.views import concept_json, hit_json, item_json
from app.knowledge import path_safety
from app.knowledge.material_paths import CONTAINER_TYPES, material_path
from app.knowledge.multi_search import interleave as interleave  # merged as the window does
from app.knowledge.query import derive_mode
from app.knowledge.service import KnowledgeService, Origin
from app.knowledge.types import (
    AddReport,
    Base,
    ErrorCode,
    Item,
    ItemStatus,
    TroveError,
    low_relevance_json,
)

log = logging.getLogger(__name__)

# kb_manage wait=true polls the catalog for items whose jobs another process runs.
SETTLE_POLL_FIRST = 0.05
SETTLE_POLL_MAX = 0.5
SETTLE_RECOVER_EVERY = 2.0
UNSETTLED_STATUSES = frozenset({ItemStatus.PREPARING, ItemStatus.PROCESSING, ItemStatus.DELETING})
_SKIP_CHUNK = 1 << 20

_URL_LIKE = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://|^(?:file|javascript|data|mailto|about):", re.I)

_NOT_VISIBLE = {
    ItemStatus.DELETING: "is being deleted",
    ItemStatus.FAILED: "failed to index",
    ItemStatus.PROCESSING: "is still being indexed",
    ItemStatus.PREPARING: "is still being prepared",
}


class JobWaker(Protocol):
    """What processes the queued work (`app.agent.jobs.BackgroundJobs`)."""

    def request(self) -> None: ...


class ConceptTools:
    """The four agent tools over one `KnowledgeService`.

    `jobs` processes what kb_manage queues; without it the work stays queued for the app or
    the CLI to run (the result says so).
    """

    def __init__(
        self,
        service: KnowledgeService,
        *,
        jobs: JobWaker | None = None,
        wait_seconds: float = DEFAULT_WAIT_SECONDS,
    ) -> None:
        self._service = service
        self._jobs = jobs
        self._wait_seconds = wait_seconds
        self._handlers: dict[str, Callable[[object], dict[str, Any]]] = {
            "kb_search": self.kb_search,
            "kb_read": self.kb_read,
            "kb_tree": self.kb_tree,
            "kb_manage": self.kb_manage,
        }

    def call(self, name: str, arguments: object) -> ToolResult:
        """Run a tool by name; every failure becomes an error result, never an exception."""
        handler = self._handlers.get(name)
        if handler is None:
            return ToolResult.failure(
                ToolErrorCode.UNKNOWN_TOOL,
                f"no tool named {name!r}; the tools are {', '.join(self._handlers)}",
            )
        try:
            return ToolResult(handler(arguments))
        except (ToolError, TroveError) as exc:
            return ToolResult.failure(str(exc.code), exc.message)
        except path_safety.UnsafePathError as exc:
            return ToolResult.failure(ErrorCode.UNSAFE_PATH, str(exc))
        except Exception:
            log.exception("agent tool %s failed", name)
            return ToolResult.failure(
                ToolErrorCode.INTERNAL_ERROR,
                f"{name} failed unexpectedly; the details are in Trove's log",
            )

    # -- shared --------------------------------------------------------------------------

    def _base(self, ref: str) -> Base:
        return self._service.resolve_base(ref)

    def resolve(self, base_ref: str, concept_id: object) -> Concept:
        """Resolve a Concept ID against the index, then require a visible item behind it."""
        cid = check_concept_id(concept_id)
        base = self._base(base_ref)
        info = self._service.find_material(base.id, cid)
        item = self._service.find_item(info.item_id) if info is not None else None
        if item is None or item.base_id != base.id or material_path(item) != cid:
            holder = self._item_at(base, cid)
            if holder is not None and holder.status is not ItemStatus.COMPLETED:
                raise self._not_visible(base, cid, holder)
            raise ToolError(
                ToolErrorCode.CONCEPT_NOT_FOUND,
                f"knowledge base {base.name!r} has no document {cid!r} "
                "(it may have been deleted; kb_tree lists what there is)",
            )
        if item.status is not ItemStatus.COMPLETED:
            raise self._not_visible(base, cid, item)
        assert info is not None
        return Concept(base, item, cid, info.char_count)

    def _item_at(self, base: Base, cid: str) -> Item | None:
        for item in self._service.list_items(base.id):
            if item.type not in CONTAINER_TYPES and material_path(item) == cid:
                return item
        return None

    @staticmethod
    def _not_visible(base: Base, cid: str, item: Item) -> ToolError:
        why = _NOT_VISIBLE.get(item.status, f"is {item.status}")
        return ToolError(
            ToolErrorCode.CONCEPT_NOT_VISIBLE,
            f"document {cid!r} in knowledge base {base.name!r} {why}; only completed "
            "documents can be used",
        )

    def _recheck(self, concept: Concept) -> None:
        """After a read: the item may have started deleting meanwhile."""
        item = self._service.find_item(concept.item.id)
        if item is None:
            raise ToolError(
                ToolErrorCode.CONCEPT_NOT_FOUND, f"document {concept.concept_id!r} was deleted"
            )
        if item.status is not ItemStatus.COMPLETED:
            raise self._not_visible(concept.base, concept.concept_id, item)

    def _material_file(self, concept: Concept) -> Path:
        path = self._service.material_file(concept.base.id, concept.concept_id)
        if not path.is_file():
            self._recheck(concept)
            raise ToolError(
                ErrorCode.READ_FAILED,
                f"the stored text of {concept.concept_id!r} is missing; refresh or restore "
                "the knowledge base",
            )
        return path

    # -- kb_search -----------------------------------------------------------------------

    def kb_search(self, arguments: object) -> dict[str, Any]:
        args = ToolArgs(SPECS["kb_search"], arguments)
        query = args.required_text("query", max_len=MAX_QUERY_CHARS)
        refs = args.texts("baseIds", max_items=MAX_SEARCH_BASES)
        top_k = args.integer("topK", low=1, high=MAX_TOP_K)
        base_ids = [self._base(r).id for r in refs] if refs else None
        found = self._service.search_many(base_ids, query, top_k=top_k)
        items = self._service.items(hit.result.item_id for hit in found.hits)
        hits = []
        for hit in found.hits:
            item = items.get(hit.result.item_id)
            hits.append(hit_json(hit.rank, hit.base, hit.result, item.type if item else None))
        return {
            "query": query,
            "results": hits,
            **low_relevance_json(found.low_relevance),
            "degraded": [{"baseId": b.id, **d.to_json()} for b, d in found.degraded],
            "bases": [
                {
                    "baseId": b.id,
                    "name": b.name,
                    "mode": str(resp.mode),
                    "hitCount": len(resp.results),
                    # Below 1 while the base's vectors are still computed: the rest of it
                    # is found by its words only.
                    **(
                        {}
                        if resp.metrics.vector_coverage is None
                        else {"vectorCoverage": round(resp.metrics.vector_coverage, 4)}
                    ),
                }
                for b, resp in found.searched
            ],
            "errors": [f.to_json() for f in found.failures],
        }

    # -- kb_read -------------------------------------------------------------------------

    def kb_read(self, arguments: object) -> dict[str, Any]:
        args = ToolArgs(SPECS["kb_read"], arguments)
        base_ref = args.required_text("baseId")
        concept_id = args.required_text("conceptId")
        start = args.integer("charStart", low=0)
        end = args.integer("charEnd", low=0)
        pattern = args.text("pattern", max_len=MAX_PATTERN_CHARS)
        ignore_case = args.flag("ignoreCase")
        context = args.integer("contextLines", low=0, high=MAX_CONTEXT_LINES)
        max_matches = args.integer("maxMatches", low=1, high=MAX_GREP_MATCHES)
        if pattern is not None and (start is not None or end is not None):
            raise invalid("kb_read: give either a character range or a pattern, not both")
        if pattern is None and (ignore_case or context is not None or max_matches is not None):
            raise invalid("kb_read: ignoreCase, contextLines and maxMatches need a pattern")
        compiled = compile_pattern(pattern, ignore_case=ignore_case) if pattern else None
        concept = self.resolve(base_ref, concept_id)
        if compiled is not None:
            return self._grep(
                concept,
                compiled,
                DEFAULT_CONTEXT_LINES if context is None else context,
                max_matches or DEFAULT_GREP_MATCHES,
            )
        return self._slice(concept, start or 0, end)

    def _slice(self, concept: Concept, start: int, end: int | None) -> dict[str, Any]:
        total = concept.char_count
        if end is not None and end < start:
            raise invalid("kb_read: charEnd must not be before charStart")
        if start > total:
            raise invalid(
                f"kb_read: charStart {start} is past the end of {concept.concept_id!r} "
                f"({total} characters)"
            )
        wanted_end = total if end is None else min(end, total)
        stop = min(wanted_end, start + MAX_READ_CHARS)
        path = self._material_file(concept)
        text = _read_range(path, start, stop)
        self._recheck(concept)
        stop = start + len(text)
        truncated = stop < wanted_end
        return {
            **concept_json(concept),
            "charStart": start,
            "charEnd": stop,
            "totalChars": total,
            "truncated": truncated,
            "nextCharStart": stop if stop < total else None,
            "text": text,
        }

    def _grep(
        self, concept: Concept, pattern: GrepPattern, context: int, max_matches: int
    ) -> dict[str, Any]:
        path = self._material_file(concept)
        # newline="": offsets count "\r\n" as two characters, as the index does.
        with path.open("r", encoding="utf-8", errors="replace", newline="") as fh:
            text = fh.read()
        self._recheck(concept)
        found = grep_lines(text, pattern, context=context, max_matches=max_matches)
        return {
            **concept_json(concept),
            "pattern": pattern.pattern,
            "ignoreCase": pattern.ignore_case,
            "totalChars": concept.char_count,
            **found,
        }

    # -- kb_tree -------------------------------------------------------------------------

    def kb_tree(self, arguments: object) -> dict[str, Any]:
        args = ToolArgs(SPECS["kb_tree"], arguments)
        base_ref = args.text("baseId")
        max_depth = args.integer("maxDepth", low=1, high=MAX_TREE_DEPTH)
        cursor = args.text("cursor")
        limit = args.integer("limit", low=1, high=MAX_TREE_PAGE) or DEFAULT_TREE_PAGE
        if base_ref is None:
            if max_depth is not None:
                raise invalid("kb_tree: maxDepth applies to one base; give baseId too")
            offset = decode_cursor(cursor, "bases")
            bases = self._service.list_bases()
            page = bases[offset : offset + limit]
            return {
                "bases": [self._base_json(b) for b in page],
                "total": len(bases),
                "nextCursor": next_cursor("bases", offset, limit, len(bases)),
            }
        base = self._base(base_ref)
        signature = f"tree:{base.id}:{max_depth or 0}"
        offset = decode_cursor(cursor, signature)
        root = build_tree(self._service.list_items(base.id))
        nodes: list[dict[str, Any]] = []
        flatten(root, max_depth, nodes)
        return {
            **self._base_json(base),
            "nodes": nodes[offset : offset + limit],
            "total": len(nodes),
            "nextCursor": next_cursor(signature, offset, limit, len(nodes)),
        }

    def _base_json(self, base: Base) -> dict[str, Any]:
        counts = {
            str(status): n
            for status in ItemStatus
            if (n := self._service.count_items(base.id, status))
        }
        return {
            "baseId": base.id,
            "name": base.name,
            "status": str(base.status),
            "statusReason": base.status_reason,
            "mode": str(derive_mode(base)),
            "embeddingModel": base.embedding_model,
            "rerankModel": base.rerank_model,
            "documentCount": base.document_count,
            "agentWrites": base.agent_writes,
            "agentPrivateUrls": base.agent_private_urls,
            "items": sum(counts.values()),
            "statusCounts": counts,
        }

    # -- kb_manage -----------------------------------------------------------------------

    def kb_manage(self, arguments: object) -> dict[str, Any]:
        args = ToolArgs(SPECS["kb_manage"], arguments)
        base_ref = args.required_text("baseId")
        action = args.choice("action", ("add", "delete", "refresh"))
        concept_ids = args.texts("conceptIds", max_items=MAX_MANAGE_TARGETS)
        sources = args.texts("sources", max_items=MAX_MANAGE_TARGETS)
        wait = args.flag("wait")
        if action == "add" and (concept_ids or not sources):
            raise invalid("kb_manage: add needs sources (absolute paths or URLs), no conceptIds")
        if action != "add" and (sources or not concept_ids):
            raise invalid(f"kb_manage: {action} needs conceptIds, no sources")
        base = self._base(base_ref)
        if not base.agent_writes:
            raise ToolError(
                ToolErrorCode.AGENT_WRITES_DISABLED,
                f"agents may not change knowledge base {base.name!r}: the person has not "
                "enabled agent writes for it in Trove's settings",
            )
        result: dict[str, Any] = {"action": action, "baseId": base.id}
        if action == "add":
            report = self._add(base, sources or [])
            touched = [i.id for i in report.added]
            result.update(
                skipped=[{"source": s, "reason": r} for s, r in report.skipped],
                errors=[{"source": s, "message": m} for s, m in report.errors],
            )
        else:
            concepts = [self.resolve(base.id, cid) for cid in concept_ids or []]
            ids = [c.item.id for c in concepts]
            if action == "delete":
                touched = self._service.delete_items(base.id, ids)
            else:
                touched = [i.id for i in self._service.reindex(base.id, ids)]
            result["conceptIds"] = [c.concept_id for c in concepts]

        result["processing"] = self._process(base.id, wait, touched) if touched else "done"
        items = self._service.items(touched)
        if action == "delete":
            result["deleted"] = [i for i in touched if i not in items]
            result["items"] = [item_json(items[i]) for i in touched if i in items]
        else:
            result["items"] = [self._item_summary(items[i]) for i in touched if i in items]
        return result

    def _add(self, base: Base, sources: list[str]) -> AddReport:
        urls = [s for s in sources if _URL_LIKE.match(s)]
        files = [s for s in sources if not _URL_LIKE.match(s)]
        relative = [f for f in files if not Path(f).expanduser().is_absolute()]
        if relative:
            raise invalid(
                f"kb_manage: file and folder sources must be absolute paths (got {relative[0]!r})"
            )
        report = AddReport()
        if files:
            _merge(report, self._service.add(base.id, files))
        if urls:
            _merge(report, self._service.add_urls(base.id, urls, origin=Origin.AGENT))
        return report

    def _process(self, base_id: str, wait: bool, touched: Sequence[str]) -> str:
        """'done' when processed, 'running' in the background, 'queued' when nobody runs it."""
        if self._jobs is None:
            return "queued"
        self._jobs.request()
        if not wait:
            return "running"
        deadline = time.monotonic() + self._wait_seconds
        return "done" if self._settle(base_id, touched, deadline) else "running"

    def _settle(self, base_id: str, touched: Sequence[str], deadline: float) -> bool:
        """Wait until the touched items are settled (or gone), wherever their jobs run.

        This process's executor works on them, but the window or a terminal on the same data
        folder may have claimed some of the jobs: "done" must mean done there too. A process
        that dies meanwhile is recovered here (its items fail as interrupted), so the wait
        never outlives the work."""
        assert self._jobs is not None
        pause, recovered_at = SETTLE_POLL_FIRST, time.monotonic()
        while True:
            items = self._service.items(list(touched)).values()
            if not any(i.status in UNSETTLED_STATUSES for i in items):
                return True
            now = time.monotonic()
            if now >= deadline:
                return False
            if self._service.jobs.counts(base_id)[0]:
                # Work queued again (a retry came due, a dead writer's deletion resumed).
                self._jobs.request()
            elif now - recovered_at >= SETTLE_RECOVER_EVERY:
                # Recovery takes the catalog's write lock for every base: run it only when a
                # writer of this base died (or left work with no job), not on every check.
                activity = self._service.activity(base_id)
                if activity.dead_owners or activity.jobless:
                    self._service.recover()
                recovered_at = now
            time.sleep(min(pause, max(0.0, deadline - time.monotonic())))
            pause = min(pause * 2, SETTLE_POLL_MAX)

    def _item_summary(self, item: Item) -> dict[str, Any]:
        data = item_json(item)
        if item.type in CONTAINER_TYPES:
            counts = self._service.child_status_counts(item.id)
            data["children"] = {str(s): n for s, n in counts.items()}
        return data


# -- helpers ---------------------------------------------------------------------------------


def _merge(into: AddReport, report: AddReport) -> None:
    into.added.extend(report.added)
    into.skipped.extend(report.skipped)
    into.replaced.extend(report.replaced)
    into.errors.extend(report.errors)


def _read_range(path: Path, start: int, stop: int) -> str:
    """Characters [start, stop) of a UTF-8 material, without reading what comes after."""
    with path.open("r", encoding="utf-8", errors="replace", newline="") as fh:
        skip = start
        while skip > 0:
            got = fh.read(min(skip, _SKIP_CHUNK))
            if not got:
                return ""
            skip -= len(got)
        return fh.read(stop - start)
