"""The `trove` command and `python -m app`: the window when started without a command (or with
window options), the headless CLI otherwise."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from app import __version__

# Options the window understands; anything else (a command, --help) goes to the CLI.
GUI_OPTIONS = {
    "--self-test": False,
    "--screenshot": True,
    "--lang": True,
    "--home": True,
    "--dark": False,
    "--ask": False,
}


def wants_gui(args: Sequence[str]) -> bool:
    """True when the arguments are only window options (or none)."""
    i = 0
    while i < len(args):
        name, has_value, _ = args[i].partition("=")
        if name not in GUI_OPTIONS:
            return False
        i += 2 if GUI_OPTIONS[name] and not has_value else 1
    return True


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args in (["--version"], ["-V"]):
        print(f"trove {__version__}")
        return 0
    if wants_gui(args):
        from app.ui.launcher import main as gui_main

        return gui_main(args)
    from app.cli import main as cli_main

    return cli_main(args)
