"""`trove base create|list|set|delete`."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from app.cli.output import EXIT_OK, EXIT_USAGE, base_json, print_json, table
from app.knowledge.server_index import address, with_password
from app.knowledge.service import KnowledgeService
from app.knowledge.types import IndexBackend


def ocr_options(args: argparse.Namespace) -> dict[str, Any]:
    """The OCR settings given on the command line (what is left out is not changed)."""
    options: dict[str, Any] = {}
    if args.ocr is not None:
        options["ocr_enabled"] = args.ocr == "on"
    if args.ocr_languages is not None:
        options["ocr_languages"] = tuple(args.ocr_languages.split(","))
    if args.ocr_max_pages is not None:
        options["ocr_max_pages"] = args.ocr_max_pages
    return options


def server_dsn(dsn: str | None) -> str | None:
    """The server address given on the command line, with the password from PGPASSWORD
    when the address has none (so it never shows in the process list)."""
    password = os.environ.get("PGPASSWORD")
    if dsn and password and "password" not in dsn:
        return with_password(dsn, password)
    return dsn


def server_options(args: argparse.Namespace) -> dict[str, Any]:
    """The backend and server address given on the command line."""
    if args.backend != "postgres":
        return {"dsn": args.dsn} if args.dsn else {}
    return {"backend": IndexBackend.POSTGRES, "dsn": server_dsn(args.dsn) or ""}


def cmd_base_create(svc: KnowledgeService, args: argparse.Namespace) -> int:
    base = svc.create_base(
        args.name,
        embedding_model=args.embedding,
        rerank_model=args.rerank,
        document_count=args.top_k,
        threshold=args.threshold,
        chunk_size=args.chunk_size,
        chunk_overlap=args.chunk_overlap,
        **ocr_options(args),
        **server_options(args),
    )
    if args.json:
        print_json(base_json(base))
    elif base.dsn:
        print(f"created knowledge base {base.name!r} (id {base.id}) on {address(base.dsn)}")
    else:
        print(f"created knowledge base {base.name!r} (id {base.id})")
    return EXIT_OK


def cmd_base_list(svc: KnowledgeService, args: argparse.Namespace) -> int:
    bases = svc.list_bases()
    if args.json:
        print_json([base_json(b) for b in bases])
        return EXIT_OK
    if not bases:
        print("no knowledge bases yet; create one with: trove base create NAME")
        return EXIT_OK
    rows = [
        (
            b.id,
            b.name,
            b.embedding_model or "(BM25 only)",
            address(b.dsn) if b.dsn else "this computer",
            str(b.status),
            str(svc.count_items(b.id)),
        )
        for b in bases
    ]
    print(table(rows, ("ID", "NAME", "EMBEDDING", "INDEX", "STATUS", "ITEMS")))
    return EXIT_OK


def cmd_base_set(svc: KnowledgeService, args: argparse.Namespace) -> int:
    base = svc.resolve_base(args.base)
    ocr = ocr_options(args)
    if (
        args.agent_writes is None
        and args.agent_private_urls is None
        and not ocr
        and args.ask_rewrite is None
    ):
        print(
            "error: nothing to set; e.g. --agent-writes on, --ocr off or --ask-rewrite on",
            file=sys.stderr,
        )
        return EXIT_USAGE
    if args.agent_writes is not None:
        base = svc.set_agent_writes(base.id, args.agent_writes == "on")
        state = "on" if base.agent_writes else "off"
        print(f"agent writes {state} for knowledge base {base.name!r} ({base.id})", file=sys.stderr)
    if args.agent_private_urls is not None:
        base = svc.set_agent_private_urls(base.id, args.agent_private_urls == "on")
        reach = (
            "may reach this computer and the local network"
            if base.agent_private_urls
            else "reach only public internet addresses"
        )
        print(f"web pages that agents add to {base.name!r} ({base.id}) {reach}", file=sys.stderr)
    if ocr:
        base = svc.update_base(base.id, **ocr)
        on = "on" if svc.ocr_on(base) else "off"
        print(
            f"OCR {on} for knowledge base {base.name!r} ({base.id}): languages "
            f"{','.join(base.ocr.languages)}, at most {base.ocr.max_pages} pages per document",
            file=sys.stderr,
        )
    if args.ask_rewrite is not None:
        svc.set_ask_rewrite(base.id, args.ask_rewrite == "on")
        print(
            f"question rewrite {args.ask_rewrite} for knowledge base {base.name!r} ({base.id})",
            file=sys.stderr,
        )
    return EXIT_OK


def cmd_base_delete(svc: KnowledgeService, args: argparse.Namespace) -> int:
    base = svc.resolve_base(args.base)
    svc.delete_base(base.id)
    print(f"deleted knowledge base {base.name!r} ({base.id})", file=sys.stderr)
    return EXIT_OK


def cmd_base_attach(svc: KnowledgeService, args: argparse.Namespace) -> int:
    base = svc.attach_base(server_dsn(args.dsn) or "", args.base)
    if args.json:
        print_json(base_json(base))
    else:
        where = address(base.dsn) if base.dsn else "its server"
        print(f"attached knowledge base {base.name!r} (id {base.id}) on {where}")
    return EXIT_OK


def cmd_base_detach(svc: KnowledgeService, args: argparse.Namespace) -> int:
    base = svc.resolve_base(args.base)
    svc.detach_base(base.id)
    print(
        f"detached knowledge base {base.name!r} ({base.id}); it stays on its server",
        file=sys.stderr,
    )
    return EXIT_OK
