"""The MCP client snippet that starts this installation's `trove mcp` (the window shows it).

Nothing here imports the MCP SDK or Qt, so the snippet costs nothing to build.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from app.knowledge.data_layout import HOME_ENV

SERVER_NAME = "trove"


def server_command() -> list[str]:
    """The command line that starts `trove mcp` in this installation."""
    if getattr(sys, "frozen", False):
        # On Windows Trove.exe is a windowed program without stdio; the bundle ships a
        # console twin for the commands and the MCP server.
        cli = Path(sys.executable).with_name("trove-cli.exe")
        if sys.platform == "win32" and cli.is_file():
            return [str(cli), "mcp"]
        return [sys.executable, "mcp"]
    exe_dir = Path(sys.executable).parent
    names = ["trove.exe", "Scripts/trove.exe"] if sys.platform == "win32" else ["trove"]
    for name in names:
        script = exe_dir / name
        if script.is_file():
            return [str(script), "mcp"]
    return [sys.executable, "-m", "app", "mcp"]


def client_config(home: Path | None = None) -> dict[str, Any]:
    """A Claude Desktop style `mcpServers` entry that starts this Trove's MCP server.

    `home` is written as TROVE_HOME when the data directory is not the default one.
    """
    command, *args = server_command()
    entry: dict[str, Any] = {"command": command, "args": args}
    env: dict[str, str] = {}
    if args[:2] == ["-m", "app"]:
        # Running from a source tree: let the client find the package from any directory.
        env["PYTHONPATH"] = str(Path(__file__).resolve().parents[2])
    if home is not None:
        env[HOME_ENV] = str(home)
    if env:
        entry["env"] = env
    return {"mcpServers": {SERVER_NAME: entry}}


def client_config_json(home: Path | None = None) -> str:
    """`client_config` as the JSON text a person copies into their MCP client."""
    return json.dumps(client_config(home), indent=2, ensure_ascii=False)
