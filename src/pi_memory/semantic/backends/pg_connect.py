"""Connections to the team database that never wait forever, and its address as it may be shown.

A PostgreSQL server that stops answering (paused, its host frozen, a network that drops packets without a
reset) leaves a TCP connection open that no one answers: a query on it would wait for ever, and with it the
request, and one by one every worker of the server. So every wait has a bound (:class:`Timeouts`):

* ``connect``: libpq's ``connect_timeout`` for each new connection (the whole start-up, not only the TCP
  handshake), unless the address names its own;
* ``statement``: the server's ``statement_timeout`` on each pooled connection, so a slow query is ended by
  the server itself and the connection stays usable; and, ``statement`` + :data:`CLIENT_GRACE` seconds later,
  the client's own bound on every exchange with the server (:class:`BoundedConnection`: a server that answers
  nothing cannot end anything). A connection that meets the client's bound is closed, never reused;
* ``checkout``: how long a request waits for a free connection of the pool (the pool's check of the
  connection it hands out is such an exchange, bounded the same way).

Each ends as a :class:`~pi_memory.semantic.backend.BackendError` through :func:`connection`: the REST
server's 503, whose text says to retry. ``statement=None`` lifts the bounds on statements (``serve import``
and ``serve export`` move a whole store in one statement or transaction); :func:`unbounded` lifts them for
one block (building an HNSW index, a migration).
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg import errors

from pi_memory.safety.urls import hide_url_secrets, redact_url
from pi_memory.semantic.backend import BackendError
from pi_memory.semantic.backends import pg_clean, pg_schema

log = logging.getLogger(__name__)
CHECKOUT_SLICE = 0.25  # a request waiting for a free connection looks at the pool's last connect attempt this often
CLIENT_GRACE = 1.0  # the client's bound is the server's statement_timeout plus this: a live server answers first
_WAIT_TIMEOUT: Any = getattr(errors, "_WaitTimeout", None)  # psycopg >= 3.3: a bounded wait ran out


@dataclass(frozen=True)
class Timeouts:
    """Seconds (module docstring). ``statement=None``: statements have no bound."""

    connect: int = 5
    statement: float | None = 5.0
    checkout: float = 5.0

    @property
    def client(self) -> float | None:
        return None if self.statement is None else self.statement + CLIENT_GRACE


SERVER_TIMEOUTS = Timeouts()
COPY_TIMEOUTS = Timeouts(statement=None, checkout=30.0)  # serve import / export: long statements are expected


class DatabaseTimeout(errors.OperationalError):
    """The server sent nothing back within the client's bound; the connection was closed."""


class BoundedConnection(psycopg.Connection):
    """A psycopg connection whose every exchange with the server ends after ``client_timeout`` seconds
    (``None``: no bound). On expiry the connection is closed at once: what the server was doing is unknown,
    so it must not be reused (the pool drops a closed connection)."""

    client_timeout: float | None = None

    def wait(self, gen: Any, interval: float = 0.1, timeout: float | None = None) -> Any:  # type: ignore[override]
        bound = timeout if timeout is not None else self.client_timeout
        if _WAIT_TIMEOUT is None:  # psycopg 3.2 bounds no wait: the server's statement_timeout is all there is
            return super().wait(gen, interval)
        try:
            return super().wait(gen, interval, timeout=bound)
        except _WAIT_TIMEOUT as exc:
            if timeout is not None:  # the caller's own bound (psycopg's cancel): theirs to handle
                raise
            self.pgconn.finish()
            raise DatabaseTimeout(f"no answer within {bound:g} s") from exc


@contextlib.contextmanager
def unbounded(conn: Any) -> Iterator[None]:
    """Inside the block, statements on ``conn`` run without the statement bounds (client and server): for work
    that may rightly take long, such as building an index over a large table. Use it inside a transaction
    (the server's ``statement_timeout`` is lifted with ``SET LOCAL``)."""
    before = getattr(conn, "client_timeout", None)
    if isinstance(conn, BoundedConnection):
        conn.client_timeout = None
    try:
        conn.execute("SET LOCAL statement_timeout = 0")
        yield
    finally:
        if isinstance(conn, BoundedConnection):
            conn.client_timeout = before


def shown(database_url: str) -> str:
    """The address as messages show it: no password, in URL or ``key=value`` form (:func:`redact_url`)."""
    return redact_url(database_url)


def _problem(database_url: str, exc: BaseException) -> BackendError:
    detail = " ".join(hide_url_secrets(str(exc).strip() or type(exc).__name__, database_url).split())
    detail = detail if detail.endswith((".", "?", "!")) else detail + "."
    if isinstance(exc, psycopg.ProgrammingError) and "connection info string" in str(exc) or "invalid URI" in str(exc):
        return BackendError(f"cannot read the PostgreSQL address {shown(database_url)}: {detail} Write it as "
                            "postgresql://USER:PASSWORD@HOST:5432/DBNAME or as libpq pairs (host=HOST dbname=DBNAME "
                            "user=USER password=PASSWORD).")
    return BackendError(f"cannot use the PostgreSQL database at {shown(database_url)}: {detail} {_advice(exc)}")


# What to do about a failed start, by what PostgreSQL or libpq said (the first match wins): advice that fits the
# failure, not a list of everything that could be wrong.
_ADVICE = (
    (r'invalid port number|invalid integer value .* "port"',
     "The port in the address must be a number from 1 to 65535 (PostgreSQL's default is 5432)."),
    (r"connection is bad: invalid|invalid connection option|invalid \w+ value",
     "Fix that part of the address (postgresql://USER:PASSWORD@HOST:5432/DBNAME)."),
    (r"failed to resolve host|could not translate host name",
     "Check the host name in the address."),
    (r"connection refused|no route to host|network is unreachable|timeout expired|no such file or directory",
     "Check that the PostgreSQL server runs and listens on that host and port (to try things out: `pi-memory "
     "serve local-postgres`)."),
    (r'password authentication failed|role ".*" does not exist|no pg_hba\.conf entry|authentication',
     "Check the user name and password in the address, and that the server lets that user in (pg_hba.conf)."),
    (r'database ".*" does not exist',
     "Create that database first (createdb NAME, or CREATE DATABASE) or name one that exists."),
    (r'extension "vector"|vector\.control|type "vector"',
     "Install the pgvector extension on that server (its package for your PostgreSQL version); when the URL's user "
     "may not create extensions, have an administrator run CREATE EXTENSION vector in that database once."),
    (r"permission denied|must be owner",
     "The URL's user must be allowed to create tables in that database (GRANT CREATE ON SCHEMA public TO that "
     "user, or use the database's owner)."),
)


def _advice(exc: BaseException) -> str:
    """What to do about ``exc`` (a failed connection or migration), in a sentence that fits it."""
    import re

    said = str(exc)
    for pattern, advice in _ADVICE:
        if re.search(pattern, said, re.IGNORECASE):
            return advice
    return ("Check that the server runs, that the URL's user may create tables, and that the pgvector extension is "
            "installed.")


def _connect_kwargs(database_url: str, timeouts: Timeouts) -> dict[str, Any]:
    from psycopg.conninfo import conninfo_to_dict

    kwargs: dict[str, Any] = {"autocommit": True}
    try:
        given = conninfo_to_dict(database_url)
    except psycopg.Error:
        given = {}
    if not given.get("connect_timeout"):
        kwargs["connect_timeout"] = timeouts.connect
    return kwargs


def _log_cleaned(report: pg_clean.CleanReport) -> None:
    for line in report.lines():
        log.warning("%s", line)


def open_pool(database_url: str, *, min_size: int = 1, max_size: int = 8, timeouts: Timeouts = SERVER_TIMEOUTS,
              on_clean: Callable[[pg_clean.CleanReport], None] | None = None):
    """A psycopg connection pool on ``database_url``, migrated, every wait bounded by ``timeouts``. Raises
    :class:`BackendError` saying what to check (the address shown without its password) when the server
    cannot be reached or pgvector is missing.

    After the migrations, stored ids that hold a credential are rewritten (:func:`.pg_clean.clean_stored_ids`);
    when it rewrote anything, ``on_clean`` gets its report (default: its lines are logged as warnings)."""
    from psycopg_pool import ConnectionPool

    kwargs = _connect_kwargs(database_url, timeouts)
    try:  # one connection first: its error is the real one ("password authentication failed"...), at once
        with psycopg.connect(database_url, **kwargs) as conn:
            pg_schema.migrate(conn)
            cleaned = pg_clean.clean_stored_ids(conn)
    except Exception as exc:
        raise _problem(database_url, exc) from exc
    if cleaned.total:
        (on_clean or _log_cleaned)(cleaned)

    def configure(conn: BoundedConnection) -> None:
        if timeouts.statement is not None:
            conn.execute(f"SET statement_timeout = {int(timeouts.statement * 1000)}")
        conn.client_timeout = timeouts.client

    class Pool(ConnectionPool):
        """A pool that remembers whether its last attempt to connect was refused (:func:`connection` then fails
        fast instead of waiting the whole checkout for a database that refuses connections)."""

        connect_failure: str | None = None

        def _connect(self, timeout: float | None = None):  # type: ignore[override]
            try:
                conn = super()._connect(timeout)
            except Exception as exc:  # a connect that timed out is a silent database: waited for as before
                said = _first_line(hide_url_secrets(str(exc), database_url), exc)
                self.connect_failure = None if "timeout" in said.lower() else said
                raise
            self.connect_failure = None
            return conn

    pool = Pool(database_url, min_size=min_size, max_size=max_size, timeout=timeouts.checkout, open=False,
                kwargs=kwargs, connection_class=BoundedConnection, configure=configure,
                check=ConnectionPool.check_connection)
    try:
        pool.open(wait=True, timeout=max(timeouts.checkout, timeouts.connect * 2))
    except Exception as exc:
        pool.close()
        raise _problem(database_url, exc) from exc
    return pool


class DatabaseUnreachable(errors.OperationalError):
    """The pool had no free connection and its last attempt to connect failed (refused, no route, a wrong
    password): waiting the whole checkout for it would only delay the same answer."""


def _first_line(text: str, exc: BaseException) -> str:
    text = text.strip()
    return text.splitlines()[0].strip() if text else type(exc).__name__


def _checkout(pool: Any) -> tuple[Any, Any]:
    """``pool.connection()`` entered: a free connection at once, else one within the pool's timeout, waited for
    in slices of :data:`CHECKOUT_SLICE` s; after a slice, a failed last attempt to connect ends the wait
    (:class:`DatabaseUnreachable`)."""
    from psycopg_pool import PoolTimeout

    total = getattr(pool, "timeout", None) or SERVER_TIMEOUTS.checkout
    deadline = time.monotonic() + total
    while True:
        left = deadline - time.monotonic()
        block = pool.connection(timeout=max(0.01, min(CHECKOUT_SLICE, left)))
        try:
            return block, block.__enter__()
        except PoolTimeout:
            failure = getattr(pool, "connect_failure", None)
            if failure:
                raise DatabaseUnreachable(failure) from None
            if time.monotonic() >= deadline:
                raise


@contextlib.contextmanager
def connection(pool: Any) -> Iterator[Any]:
    """A pooled connection; a database that is down, restarting, unreachable or silent (psycopg's
    ``OperationalError``, a bound of :class:`Timeouts`, the pool's timeout) becomes a :class:`BackendError`
    (the server's 503) saying so, instead of a crash or a wait without end. A database that refuses
    connections is said to be so within about :data:`CHECKOUT_SLICE` s, not after the whole checkout."""
    from psycopg_pool import PoolTimeout

    try:
        block, conn = _checkout(pool)
        with contextlib.ExitStack() as stack:
            stack.push(block)  # its exit: the pool's (commit or roll back, give the connection back)
            yield conn
    except DatabaseUnreachable as exc:
        raise BackendError(f"the team database cannot be reached ({exc}); retry the request in a moment (a "
                           "repeated add is stored once). If this goes on, check that the PostgreSQL server runs "
                           "and that its address is right.") from exc
    except (errors.OperationalError, PoolTimeout) as exc:
        detail = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise BackendError(f"the team database did not answer ({detail}); retry the request in a moment (a "
                           "repeated add is stored once). If this goes on, check the PostgreSQL server.") from exc


def ping(pool: Any) -> str | None:
    """``None`` when the database answers ``SELECT 1`` through ``pool``, else what is wrong, in words (the REST
    server's ``GET /health``)."""
    try:
        with connection(pool) as conn:
            conn.execute("SELECT 1")
    except BackendError as exc:
        return str(exc)
    return None


__all__ = ["COPY_TIMEOUTS", "SERVER_TIMEOUTS", "BoundedConnection", "DatabaseTimeout", "DatabaseUnreachable",
           "Timeouts", "connection", "open_pool", "ping", "shown", "unbounded"]
