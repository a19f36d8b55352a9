"""`trove mcp`: the agent tools over MCP on stdio."""

from __future__ import annotations

import argparse
import os

from app.cli.output import EXIT_OK
from app.knowledge.data_layout import HOME_ENV
from app.knowledge.service import KnowledgeService


def cmd_mcp(svc: KnowledgeService, args: argparse.Namespace) -> int:
    # Imported here: only this command needs the MCP SDK.
    from app.agent.client_config import client_config_json
    from app.agent.server import serve

    if args.print_config:
        explicit = args.home or os.environ.get(HOME_ENV)
        print(client_config_json(svc.layout.home if explicit else None))
        return EXIT_OK
    return serve(svc)
