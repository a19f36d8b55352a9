"""Headless commands: `trove base create`, `trove add`, `trove search`, ...

Every command goes through KnowledgeService, the same facade the GUI uses. One module per
command group; `parser` wires them to argparse and `entry.main` runs one.
"""

from __future__ import annotations

from app.cli.entry import main
from app.cli.output import EXIT_FAILED, EXIT_OK, EXIT_USAGE

__all__ = ["EXIT_FAILED", "EXIT_OK", "EXIT_USAGE", "main"]
