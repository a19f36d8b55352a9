"""The argparse wiring of every command, in one place."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import TypeAlias

from app import __version__
from app.cli.ask import cmd_ask
from app.cli.bases import (
    cmd_base_attach,
    cmd_base_create,
    cmd_base_delete,
    cmd_base_detach,
    cmd_base_list,
    cmd_base_set,
)
from app.cli.items import cmd_add, cmd_delete, cmd_item_list, cmd_note, cmd_reindex, cmd_resume
from app.cli.maintenance import cmd_doctor, cmd_restore
from app.cli.mcp import cmd_mcp
from app.cli.models import (
    cmd_model_download,
    cmd_model_import,
    cmd_model_list,
    cmd_model_mirror,
    cmd_model_remove,
)
from app.cli.portable import cmd_base_export, cmd_base_import, cmd_item_copy, cmd_item_move
from app.cli.providers import (
    cmd_provider_add,
    cmd_provider_list,
    cmd_provider_models,
    cmd_provider_remove,
    cmd_provider_test,
)
from app.cli.search import cmd_search
from app.cli.status import cmd_status
from app.cli.sync import add_link_commands, add_sync_arguments, add_sync_command
from app.cli.vectors import add_vectors_command
from app.knowledge.ask.engine import ANSWER_SECONDS
from app.knowledge.types import OnConflict


def _positive(value: str) -> int:
    number = int(value)
    if number < 1:
        raise argparse.ArgumentTypeError("must be a positive whole number")
    return number


def _seconds(value: str) -> float:
    number = float(value)
    if not 0 < number < float("inf"):
        raise argparse.ArgumentTypeError("must be a positive number of seconds")
    return number


def _non_negative(value: str) -> int:
    number = int(value)
    if number < 0:
        raise argparse.ArgumentTypeError("must be zero or more")
    return number


# What `add_subparsers` returns (a private class of argparse, generic only to the type checker).
Subcommands: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="trove",
        description="Trove knowledge bases from the command line. Without a command, trove opens the desktop window (options: --home, --lang, --screenshot PATH, --self-test).",
    )
    parser.add_argument("--version", action="version", version=f"trove {__version__}")
    parser.add_argument(
        "--home",
        metavar="DIR",
        help="data directory (default: $TROVE_HOME, else the platform data dir)",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="log progress details")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    # Added in this order, listed in this order by --help.
    _add_base_commands(commands)
    _add_provider_commands(commands)
    _add_model_commands(commands)
    _add_item_commands(commands)
    _add_upkeep_commands(commands)
    _add_mcp_command(commands)
    _add_search_command(commands)
    _add_ask_command(commands)
    return parser


def _add_base_commands(commands: Subcommands) -> None:
    """`base create|delete|set|list`."""
    base = commands.add_parser("base", help="create and list knowledge bases")
    base_cmds = base.add_subparsers(dest="base_command", metavar="ACTION", required=True)
    create = base_cmds.add_parser("create", help="create a knowledge base")
    create.add_argument("name")
    create.add_argument(
        "--embedding", metavar="PROVIDER:MODEL", help="embedding model (omit for BM25 only)"
    )
    create.add_argument("--rerank", metavar="PROVIDER:MODEL", help="rerank model")
    create.add_argument(
        "--top-k", type=_positive, default=10, help="results per search (default 10)"
    )
    create.add_argument(
        "--chunk-size", type=_positive, default=512, help="tokens per chunk (default 512)"
    )
    create.add_argument(
        "--chunk-overlap", type=_non_negative, default=64, help="tokens of overlap (default 64)"
    )
    create.add_argument(
        "--threshold", type=float, help="minimum relevance score (0..1) for reranked results"
    )
    _add_ocr_options(create)
    create.add_argument(
        "--backend",
        choices=["sqlite", "postgres"],
        default="sqlite",
        help="where the index lives: a file on this machine (default) or a PostgreSQL "
        "server with pgvector, shared by a team",
    )
    create.add_argument(
        "--dsn",
        metavar="CONNINFO",
        help="the PostgreSQL server (postgresql://user@host:5432/db or key=value); its "
        "password, from the DSN or PGPASSWORD, is kept in the system keychain",
    )
    create.add_argument("--json", action="store_true")
    create.set_defaults(func=cmd_base_create)
    bdelete = base_cmds.add_parser(
        "delete",
        help="delete a knowledge base and all its files (a base on a server: for everyone)",
    )
    bdelete.add_argument("base", metavar="BASE")
    bdelete.set_defaults(func=cmd_base_delete)
    attach = base_cmds.add_parser(
        "attach", help="use a knowledge base another desktop created on a PostgreSQL server"
    )
    attach.add_argument("--dsn", required=True, metavar="CONNINFO", help="the server")
    attach.add_argument("--base", metavar="ID", help="which base, when the server holds several")
    attach.add_argument("--json", action="store_true")
    attach.set_defaults(func=cmd_base_attach)
    detach = base_cmds.add_parser(
        "detach", help="stop using a server base on this desktop (it stays on the server)"
    )
    detach.add_argument("base", metavar="BASE")
    detach.set_defaults(func=cmd_base_detach)
    bset = base_cmds.add_parser("set", help="change a knowledge base's settings")
    bset.add_argument("base", metavar="BASE", help="base id or unique name")
    bset.add_argument(
        "--agent-writes",
        choices=["on", "off"],
        help="let agent tools (trove mcp: kb_manage) add, delete and refresh items",
    )
    bset.add_argument(
        "--agent-private-urls",
        choices=["on", "off"],
        help="let web pages that agents add reach this "
        "computer and the local network (localhost, 10.x, 192.168.x, 169.254.x); "
        "off by default: only public internet addresses",
    )
    _add_ocr_options(bset)
    bset.add_argument(
        "--ask-rewrite",
        choices=["on", "off"],
        help="`trove ask` and the Ask view rewrite a question into a standalone query first",
    )
    bset.set_defaults(func=cmd_base_set)
    blist = base_cmds.add_parser("list", help="list knowledge bases")
    blist.add_argument("--json", action="store_true")
    blist.set_defaults(func=cmd_base_list)
    _add_portable_base_commands(base_cmds)


def _add_portable_base_commands(base_cmds: Subcommands) -> None:
    """`base export|import`: a base as one .trovebase file."""
    bexport = base_cmds.add_parser(
        "export", help="write a base (settings, items, copies, index, vectors) to one file"
    )
    bexport.add_argument("base", metavar="BASE", help="base id or unique name")
    bexport.add_argument("file", metavar="FILE.trovebase")
    bexport.add_argument(
        "--strip-sources",
        action="store_true",
        help="leave out where the files and folders are on this computer (their paths name "
        "you and your folders); web addresses and notes stay",
    )
    bexport.add_argument(
        "--with-originals",
        action="store_true",
        help="also carry the original files of linked folders (they are indexed in place, "
        "so without this the file holds their text and index, not their bytes)",
    )
    bexport.add_argument("--json", action="store_true")
    bexport.set_defaults(func=cmd_base_export)
    bimport = base_cmds.add_parser(
        "import", help="add a base from a .trovebase file (never replaces a base)"
    )
    bimport.add_argument("file", metavar="FILE.trovebase")
    bimport.add_argument("--name", help="the new base's name (default: the exported name)")
    bimport.add_argument(
        "--dsn",
        metavar="CONNINFO",
        help="put the new base on this PostgreSQL server (with pgvector) instead of here",
    )
    bimport.add_argument("--json", action="store_true")
    bimport.set_defaults(func=cmd_base_import)


def _add_ocr_options(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--ocr",
        choices=["on", "off"],
        help="recognise text in scanned PDF pages and pictures (default: on when the "
        "ocr extra is installed)",
    )
    command.add_argument(
        "--ocr-languages",
        metavar="CODES",
        help="languages to recognise, comma-separated: ch, en (default ch,en)",
    )
    command.add_argument(
        "--ocr-max-pages",
        type=_positive,
        metavar="N",
        help="most pages recognised per document (default 100)",
    )


def _add_provider_commands(commands: Subcommands) -> None:
    """`provider add|list|remove|test|models`."""
    provider = commands.add_parser("provider", help="embedding, rerank and chat providers")
    provider_cmds = provider.add_subparsers(
        dest="provider_command", metavar="ACTION", required=True
    )
    padd = provider_cmds.add_parser("add", help="add or update a provider")
    padd.add_argument("name", help="provider id, used in model ids as NAME:MODEL")
    padd.add_argument("--kind", required=True, choices=["openai", "ollama", "rerank"])
    padd.add_argument("--url", required=True, help="base URL, e.g. https://api.openai.com")
    padd.add_argument(
        "--key-stdin", action="store_true", help="read the API key from standard input"
    )
    padd.add_argument("--display-name")
    padd.add_argument("--model", action="append", help="a model to offer (repeatable)")
    padd.set_defaults(func=cmd_provider_add)
    plist = provider_cmds.add_parser("list", help="list providers")
    plist.add_argument("--json", action="store_true")
    plist.set_defaults(func=cmd_provider_list)
    premove = provider_cmds.add_parser("remove", help="remove a provider and its stored key")
    premove.add_argument("name")
    premove.set_defaults(func=cmd_provider_remove)
    ptest = provider_cmds.add_parser("test", help="make one real call to a provider")
    ptest.add_argument("name")
    ptest.add_argument("--model")
    ptest.add_argument(
        "--chat", metavar="MODEL", help="test a chat model of the provider (a short streamed reply)"
    )
    ptest.set_defaults(func=cmd_provider_test)
    pmodels = provider_cmds.add_parser("models", help="list the models a provider offers")
    pmodels.add_argument("name")
    pmodels.set_defaults(func=cmd_provider_models)


def _add_model_commands(commands: Subcommands) -> None:
    """`model list|download|remove|import|mirror`."""
    model = commands.add_parser(
        "model", help="local models: download, import and remove (a base uses one as local:ID)"
    )
    model_cmds = model.add_subparsers(dest="model_command", metavar="ACTION", required=True)
    mlist = model_cmds.add_parser(
        "list", help="installed models and the ones Trove can download, with sizes and licences"
    )
    mlist.add_argument("--json", action="store_true")
    mlist.set_defaults(func=cmd_model_list)
    mdownload = model_cmds.add_parser(
        "download",
        help="download a model from the Hugging Face hub (Ctrl-C stops; run again to resume)",
    )
    mdownload.add_argument("id", metavar="ID", help="a model id from `trove model list`")
    mdownload.add_argument(
        "--mirror",
        metavar="URL",
        help="a mirror of the hub for this download, e.g. https://hf-mirror.com",
    )
    mdownload.add_argument(
        "--force", action="store_true", help="download again even when the model is installed"
    )
    mdownload.set_defaults(func=cmd_model_download)
    mremove = model_cmds.add_parser("remove", help="delete an installed model no base uses")
    mremove.add_argument("id", metavar="ID")
    mremove.set_defaults(func=cmd_model_remove)
    mimport = model_cmds.add_parser(
        "import",
        help="install a model folder copied from another machine (trove-model.json and its files)",
    )
    mimport.add_argument("dir", metavar="DIR")
    mimport.set_defaults(func=cmd_model_import)
    mmirror = model_cmds.add_parser(
        "mirror", help="show or set where model downloads come from (a mirror of the hub)"
    )
    mmirror.add_argument("url", metavar="URL", nargs="?", help="e.g. https://hf-mirror.com")
    mmirror.add_argument("--clear", action="store_true", help="download from huggingface.co again")
    mmirror.set_defaults(func=cmd_model_mirror)


def _add_item_commands(commands: Subcommands) -> None:
    """The commands that change items: `item list`, `add`, `note`, `reindex`, `resume`, `delete`."""
    item = commands.add_parser("item", help="list the items of a knowledge base")
    item_cmds = item.add_subparsers(dest="item_command", metavar="ACTION", required=True)
    ilist = item_cmds.add_parser("list", help="list items")
    ilist.add_argument("base", metavar="BASE", help="base id or unique name")
    ilist.add_argument("--json", action="store_true")
    ilist.set_defaults(func=cmd_item_list)
    for action, func, verb in (
        ("copy", cmd_item_copy, "copy"),
        ("move", cmd_item_move, "move (copy, then delete the originals)"),
    ):
        transfer = item_cmds.add_parser(
            action, help=f"{verb} items into another base, reusing vectors when models match"
        )
        transfer.add_argument("base", metavar="BASE", help="the base the items are in")
        transfer.add_argument("items", metavar="ITEM", nargs="+", help="item ids")
        transfer.add_argument("--to", required=True, metavar="BASE2", help="the target base")
        transfer.set_defaults(func=func)
    add_link_commands(item_cmds)  # linked folders: app/cli/sync.py

    add = commands.add_parser("add", help="add files, folders and web pages, then index them")
    add.add_argument("base", metavar="BASE", help="base id or unique name")
    add.add_argument("paths", metavar="PATH|URL", nargs="+")
    add.add_argument(
        "--sitemap", action="store_true", help="the URLs are sitemaps: add every page they list"
    )
    add.add_argument(
        "--wait", action="store_true", help="exit non-zero if any item failed, listing the failures"
    )
    add.add_argument(
        "--until-searchable",
        action="store_true",
        help="on a base with an embedding model: return once everything is searchable by "
        "full text, leaving the vectors to compute in the background (by default the "
        "command waits for the vectors too, and says when the documents became searchable)",
    )
    add.add_argument(
        "--on-conflict",
        choices=[c.value for c in OnConflict],
        default="skip",
        help="what to do with sources the base already has (default: skip)",
    )
    add.add_argument(
        "--include", action="append", metavar="GLOB", help="folders: only files matching GLOB"
    )
    add.add_argument(
        "--exclude", action="append", metavar="GLOB", help="folders: skip files matching GLOB"
    )
    add_sync_arguments(add)  # --link, --ignore: app/cli/sync.py
    add.set_defaults(func=cmd_add)

    note = commands.add_parser(
        "note", help="add a note (TEXT, or - to read it from standard input)"
    )
    note.add_argument("base", metavar="BASE")
    note.add_argument("title", metavar="TITLE")
    note.add_argument("text", metavar="TEXT|-")
    note.set_defaults(func=cmd_note)

    reindex = commands.add_parser("reindex", help="re-read sources and index them again")
    reindex.add_argument("base", metavar="BASE")
    reindex.add_argument("items", metavar="ITEM", nargs="*", help="item ids (default: everything)")
    reindex.set_defaults(func=cmd_reindex)

    resume = commands.add_parser(
        "resume",
        help="run the work a stopped Trove left queued, finish what a crash interrupted, "
        "and report it",
    )
    resume.add_argument("base", metavar="BASE")
    resume.set_defaults(func=cmd_resume)

    delete = commands.add_parser("delete", help="delete items and everything inside them")
    delete.add_argument("base", metavar="BASE")
    delete.add_argument("items", metavar="ITEM", nargs="*")
    delete.add_argument("--all", action="store_true", help="delete every item of the base")
    delete.set_defaults(func=cmd_delete)

    add_sync_command(commands)  # trove sync: app/cli/sync.py


def _add_upkeep_commands(commands: Subcommands) -> None:
    """Looking after a base: `restore`, `status`, `doctor`."""
    restore = commands.add_parser("restore", help="rebuild a base from its own copies")
    restore.add_argument("base", metavar="BASE")
    restore.add_argument(
        "--embedding", metavar="PROVIDER:MODEL", help="switch to this embedding model"
    )
    restore.set_defaults(func=cmd_restore)

    status = commands.add_parser("status", help="show what a base is doing")
    status.add_argument("base", metavar="BASE")
    status.add_argument("--watch", action="store_true", help="refresh until nothing is in progress")
    status.set_defaults(func=cmd_status)
    add_vectors_command(commands)

    doctor = commands.add_parser(
        "doctor", help="check that the catalog, indexes and stored files agree"
    )
    doctor.add_argument("base", metavar="BASE", nargs="?", help="one base (default: all)")
    doctor.add_argument(
        "--repair", action="store_true", help="fix what can be fixed, then check again"
    )
    doctor.add_argument("--json", action="store_true")
    doctor.set_defaults(func=cmd_doctor)


def _add_mcp_command(commands: Subcommands) -> None:
    """`mcp`."""
    mcp = commands.add_parser(
        "mcp", help="serve the agent tools (kb_search, kb_read, ...) over MCP on stdio"
    )
    mcp.add_argument(
        "--print-config",
        action="store_true",
        help="print the JSON that tells an MCP client (e.g. Claude Desktop) how to start this",
    )
    mcp.set_defaults(func=cmd_mcp)


def _add_search_command(commands: Subcommands) -> None:
    """`search`."""
    search = commands.add_parser("search", help="search a knowledge base")
    search.add_argument("base", metavar="BASE", help="base id or unique name")
    search.add_argument("query", metavar="QUERY", nargs="?")
    search.add_argument(
        "--queries", metavar="FILE", help="JSON Lines of {_id, text}; one JSON line out per query"
    )
    search.add_argument(
        "--top-k", type=_positive, help="results (default: the base's document count)"
    )
    search.add_argument("--json", action="store_true")
    search.add_argument(
        "--debug", action="store_true", help="show per-stage timings and hit counts"
    )
    search.set_defaults(func=cmd_search)


def _add_ask_command(commands: Subcommands) -> None:
    """`ask`."""
    ask = commands.add_parser(
        "ask", help="answer a question from a knowledge base with a chat model, with citations"
    )
    ask.add_argument("base", metavar="BASE", help="base id or unique name")
    ask.add_argument("question", metavar="QUESTION", nargs="?")
    ask.add_argument(
        "--model",
        metavar="PROVIDER:MODEL",
        help="chat model of an openai or ollama provider (default: the one used last)",
    )
    ask.add_argument("--json", action="store_true", help="answer, citations and metrics as JSON")
    ask.add_argument(
        "--fresh",
        action="store_true",
        help="ignore the base's conversation so far, and do not add this turn to it",
    )
    ask.add_argument("--clear", action="store_true", help="clear the base's conversation first")
    ask.add_argument(
        "--context-tokens",
        type=_positive,
        metavar="N",
        help="the chat model's context size in tokens (default 8192)",
    )
    ask.add_argument(
        "--time-limit",
        type=_seconds,
        metavar="SECONDS",
        help=f"end the answer after this long, keeping what came (default {ANSWER_SECONDS:g})",
    )
    ask.set_defaults(func=cmd_ask)


def parse(parser: argparse.ArgumentParser, argv: Sequence[str] | None) -> argparse.Namespace:
    """parse_args, except that a search QUERY may start with '-' (`trove search B -bar`,
    `trove search B --json -- -bar`) when it is not one of search's options."""
    args, extras = parser.parse_known_args(argv)
    if getattr(args, "func", None) is cmd_search and args.query is None:
        rest = list(extras)
        if "--" in rest:
            rest.remove("--")
        if len(rest) == 1:
            args.query, extras = rest[0], []
    if extras:
        parser.error(f"unrecognized arguments: {' '.join(extras)}")
    return args
