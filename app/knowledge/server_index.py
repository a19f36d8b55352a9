"""Bases whose index lives on a PostgreSQL server.

The base row keeps the server's connection string without its password; the password is
kept in the keychain under the base's own secret id (or read from the environment variable
that id names, on a machine without a keychain). The store is opened from both, in a
schema of its own: one database can hold many bases, each dropped as a whole.

psycopg is an optional extra (`trove[postgres]`): nothing here imports it until a base on a
server is created or opened, and its absence is a clear error, not an ImportError.
"""

from __future__ import annotations

import contextlib
import re
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from app.knowledge.catalog import Catalog
from app.knowledge.types import Base, ErrorCode, IndexBackend, TroveError
from app.providers import secrets

if TYPE_CHECKING:
    from app.knowledge.catalog.server import ServerCatalog

INSTALL_HINT = 'install the PostgreSQL support first: pip install "trove[postgres]"'


@dataclass(frozen=True, slots=True)
class ServerIndex:
    """Where a base's index lives on a server. `dsn` holds the password: never log it."""

    dsn: str
    schema: str
    address: str  # host:port/database, for messages


def secret_id(base_id: str) -> str:
    return f"postgres-{base_id}"


def schema_name(base_id: str) -> str:
    """The base's schema on its server (pg/schema.py names it)."""
    try:
        from app.knowledge.pipeline.store.pg.schema import schema_name as named
    except ImportError as exc:
        raise TroveError(ErrorCode.INVALID_ARGUMENT, INSTALL_HINT) from exc
    return named(base_id)


def _conninfo() -> Any:
    try:
        from psycopg import conninfo
    except ImportError as exc:
        raise TroveError(ErrorCode.INVALID_ARGUMENT, INSTALL_HINT) from exc
    return conninfo


def parse_dsn(dsn: str) -> dict[str, str]:
    """The connection parameters of a libpq URI or key=value string (refused if invalid)."""
    conninfo = _conninfo()
    try:
        params: dict[str, str] = conninfo.conninfo_to_dict(dsn.strip())
    except Exception as exc:  # psycopg.ProgrammingError; its text never holds the password
        raise TroveError(
            ErrorCode.INVALID_ARGUMENT, f"not a PostgreSQL connection string: {exc}"
        ) from None
    if not dsn.strip():
        raise TroveError(ErrorCode.INVALID_ARGUMENT, "a PostgreSQL base needs a server (--dsn)")
    return {k: str(v) for k, v in params.items() if v is not None}


def split_password(dsn: str) -> tuple[str, str | None]:
    """(the connection string without its password, the password or None)."""
    params = parse_dsn(dsn)
    password = params.pop("password", None)
    return _conninfo().make_conninfo(**params), password or None


def address(dsn: str) -> str:
    """host:port/database of a connection string, for messages (no user, no password)."""
    params = parse_dsn(dsn)
    host = params.get("host") or "localhost"
    port = params.get("port") or "5432"
    return f"{host}:{port}/{params.get('dbname') or params.get('user') or 'postgres'}"


def scrubbed(exc: BaseException) -> str:
    """An error's first line for a message: libpq's texts name host and user, never the
    password, but a connection string echoed back could; drop any password=... part."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return re.sub(r"(password\s*=\s*)\S+", r"\1***", text)


def with_password(dsn: str, password: str | None) -> str:
    if not password:
        return dsn
    params = parse_dsn(dsn)
    params["password"] = password
    return str(_conninfo().make_conninfo(**params))


def check_server(dsn: str) -> None:
    """Connect once (10 s at most): a wrong address or password is said before anything
    is written."""
    try:
        import psycopg
    except ImportError as exc:
        raise TroveError(ErrorCode.INVALID_ARGUMENT, INSTALL_HINT) from exc
    try:
        with psycopg.connect(dsn, connect_timeout=10) as conn:
            conn.execute("SELECT 1")
    except psycopg.Error as exc:
        where = address(dsn)
        raise TroveError(
            ErrorCode.SERVER_UNAVAILABLE,
            f"the PostgreSQL server at {where} cannot be used: {scrubbed(exc)}",
            {"server": where},
        ) from None


def remember_password(base_id: str, password: str | None) -> None:
    """Keep the server's password in the keychain. Without one, libpq's own ways remain
    (PGPASSWORD, ~/.pgpass), so the message names them rather than failing obscurely."""
    if not password:
        return
    try:
        secrets.set_key(secret_id(base_id), password)
    except secrets.SecretStoreUnavailable as exc:
        raise TroveError(
            ErrorCode.KEYCHAIN_UNAVAILABLE,
            "no system keychain can keep the server's password on this machine; leave "
            "the password out of the address and give it in PGPASSWORD or ~/.pgpass "
            f"instead ({exc.args[0] if exc.args else exc})",
        ) from None


def forget_password(base_id: str) -> None:
    # Without a keychain nothing can have been stored.
    with contextlib.suppress(secrets.SecretStoreUnavailable):
        secrets.delete_key(secret_id(base_id))


def server_index(base: Base) -> ServerIndex | None:
    """Where the base's index lives on its server; None for a base on this machine."""
    if base.backend is not IndexBackend.POSTGRES:
        return None
    if not base.dsn:
        raise TroveError(
            ErrorCode.SERVER_UNAVAILABLE,
            f"knowledge base {base.name!r} is on a PostgreSQL server but its address is missing",
        )
    try:
        password = secrets.get_key(secret_id(base.id))
    except secrets.SecretStoreUnavailable:
        password = None  # a server that trusts this machine (peer, trust, .pgpass) needs none
    return ServerIndex(
        dsn=with_password(base.dsn, password),
        schema=schema_name(base.id),
        address=address(base.dsn),
    )


def server_lookup(catalog: Catalog) -> Callable[[str], tuple[str, str] | None]:
    """For the store registry: (connection string, schema) of a base on a server, else None
    (also for a base whose row is gone: its file index, if any, is what is left)."""

    def lookup(base_id: str) -> tuple[str, str] | None:
        base = catalog.get_base(base_id)
        found = server_index(base) if base is not None else None
        return (found.dsn, found.schema) if found is not None else None

    return lookup


FOLDER_ID_SETTING = "folder_id"


def folder_id(catalog: Catalog) -> str:
    """This data folder's own id: the origin of the jobs it queues on a server, which only
    it can run (their sources are its files). Made once, kept in the settings."""
    found = catalog.get_setting(FOLDER_ID_SETTING)
    if found:
        return found
    made = uuid.uuid4().hex
    if not catalog.read_only:
        catalog.set_setting(FOLDER_ID_SETTING, made)
    return made


def catalog_opener(catalog: Catalog) -> Callable[[str], ServerCatalog]:
    """For the catalog: open a server base's item and job rows (catalog/server.py)."""

    def open_rows(base_id: str) -> ServerCatalog:
        from app.knowledge.catalog.server import ServerCatalog

        base = catalog.require_base(base_id)
        found = server_index(base)
        if found is None:
            raise ValueError(f"base {base_id} keeps its rows on this machine")
        try:
            return ServerCatalog(found.dsn, found.schema, origin=folder_id(catalog))
        except TroveError:
            raise
        except Exception as exc:
            raise TroveError(
                ErrorCode.SERVER_UNAVAILABLE,
                f"the PostgreSQL server of knowledge base {base.name!r} ({found.address}) "
                f"cannot be used: {scrubbed(exc)}",
                {"server": found.address},
            ) from None

    return open_rows
