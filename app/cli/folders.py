"""Folders on the command line: the options `trove add` gives a folder item, and what `add`
and `sync` say about what a folder's scan left out: symbolic links that lead outside the
folder (not followed), and Trove's own data folder (folder_scan.py)."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterable
from pathlib import Path

from app.knowledge.folder_scan import FOLLOW_LINKS_KEY, ScanSkipped, scan_skipped
from app.knowledge.service import KnowledgeService
from app.knowledge.types import ItemType


def folder_options(args: argparse.Namespace) -> dict[str, object] | None:
    """`--include`, `--exclude` and `--follow-links` as a folder item's options."""
    options: dict[str, object] = {}
    if args.include:
        options["include"] = args.include
    if args.exclude:
        options["exclude"] = args.exclude
    if getattr(args, "follow_links", False):
        options[FOLLOW_LINKS_KEY] = True
    return options or None


def skipped_json(skipped: ScanSkipped) -> dict[str, object]:
    return {
        "linksNotFollowed": skipped.link_count,
        "links": list(skipped.links),
        "dataFoldersSkipped": list(skipped.data_folders),
    }


def skipped_lines(folder: str, skipped: ScanSkipped, *, verbose: bool) -> list[str]:
    lines: list[str] = []
    if skipped.link_count:
        hint = "" if verbose else "; -v lists them"
        lines.append(
            f"{folder}: {skipped.link_count} symbolic link(s) lead outside the folder and were "
            f"not followed (--follow-links follows them{hint})"
        )
        if verbose:
            lines.extend(f"  not followed: {_shown(folder, rel)}" for rel in skipped.links)
            if skipped.link_count > len(skipped.links):
                lines.append(f"  ... and {skipped.link_count - len(skipped.links)} more")
    for rel in skipped.data_folders:
        where = folder if rel == "." else str(Path(folder) / rel)
        lines.append(
            f"{folder}: skipped {where}: it is a Trove data folder (the knowledge bases' own "
            "copies are never indexed again)"
        )
    return lines


def _shown(folder: str, rel: str) -> str:
    try:
        return f"{rel} -> {os.readlink(Path(folder) / rel)}"
    except OSError:
        return rel


def print_skipped(svc: KnowledgeService, item_ids: Iterable[str], *, verbose: bool) -> None:
    """The notes for each folder item among `item_ids`, on standard error."""
    for item_id in item_ids:
        item = svc.find_item(item_id)
        if item is None or item.type is not ItemType.DIRECTORY:
            continue
        for line in skipped_lines(item.source, scan_skipped(item), verbose=verbose):
            print(line, file=sys.stderr)
