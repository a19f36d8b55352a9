"""`trove provider add|list|remove|test|models`."""

from __future__ import annotations

import argparse
import sys

from app.cli.output import EXIT_OK, print_json, table
from app.knowledge.service import KnowledgeService


def cmd_provider_add(svc: KnowledgeService, args: argparse.Namespace) -> int:
    key = sys.stdin.readline().strip() if args.key_stdin else None
    settings = svc.save_provider(
        args.name,
        args.kind,
        base_url=args.url,
        display_name=args.display_name or "",
        models=args.model or [],
        key=key,
        # One outcome: a key that cannot be kept leaves no half-saved provider behind.
        all_or_nothing=True,
    )
    print(f"saved provider {settings.id!r} ({settings.kind}, {settings.base_url})", file=sys.stderr)
    return EXIT_OK


def cmd_provider_list(svc: KnowledgeService, args: argparse.Namespace) -> int:
    providers = svc.list_providers()
    if args.json:
        print_json(
            [
                {
                    "id": p.id,
                    "kind": p.kind,
                    "displayName": p.display_name,
                    "baseUrl": p.base_url,
                    "enabled": p.enabled,
                    "models": p.models,
                }
                for p in providers
            ]
        )
        return EXIT_OK
    rows = [(p.id, p.kind, p.base_url or "(built in)", ", ".join(p.models)) for p in providers]
    print(table(rows, ("ID", "KIND", "URL", "MODELS")))
    return EXIT_OK


def cmd_provider_remove(svc: KnowledgeService, args: argparse.Namespace) -> int:
    svc.remove_provider(args.name)
    print(f"removed provider {args.name!r} and its stored key", file=sys.stderr)
    return EXIT_OK


def cmd_provider_test(svc: KnowledgeService, args: argparse.Namespace) -> int:
    if args.chat:
        print(svc.check_chat(f"{args.name}:{args.chat}"))
        if not args.model:
            return EXIT_OK
    print(svc.check_provider(args.name, args.model))
    return EXIT_OK


def cmd_provider_models(svc: KnowledgeService, args: argparse.Namespace) -> int:
    for name in svc.provider_models(args.name):
        print(name)
    return EXIT_OK
