"""Errors of the PostgreSQL store that callers map to their own messages."""

from __future__ import annotations

from psycopg.conninfo import conninfo_to_dict


class PgUnavailableError(RuntimeError):
    """The server cannot be reached or refused the login; the message names host:port
    and the server's reason, never the password."""

    def __init__(self, where: str, reason: str) -> None:
        super().__init__(f"PostgreSQL at {where} is unavailable: {reason}")
        self.where = where
        self.reason = reason


class PgSchemaMissingError(FileNotFoundError):
    """The base's schema does not exist and the store was opened with create=False."""


def server_address(dsn: str) -> str:
    """host:port of a connection string (libpq's defaults where it names none)."""
    try:
        info = conninfo_to_dict(dsn)
    except Exception:  # a malformed string: say so without echoing it (it may hold a password)
        return "(unparsable connection string)"
    host = str(info.get("host") or info.get("hostaddr") or "localhost")
    port = str(info.get("port") or "5432")
    return f"{host}:{port}"


def without_password(message: str, dsn: str) -> str:
    """`message` (a libpq error) with the DSN's password removed, should it appear."""
    try:
        password = conninfo_to_dict(dsn).get("password")
    except Exception:
        password = None
    first = message.strip().splitlines()[0] if message.strip() else "connection failed"
    return first.replace(str(password), "***") if password else first
