"""A PostgreSQL that stops answering without closing anything (a tester paused it with SIGSTOP: `GET /memories`
never returned, and one by one every worker of the server hung) gets the 503 the README promises within a few
seconds, and the server carries on once it answers again. The test pauses a PostgreSQL of its own (so no other
test waits on it) and always resumes it."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path

import httpx
import pytest

from pi_memory.semantic.backends.rest_app import create_app
from pi_memory.semantic.backends.rest_runner import ServerThread
from pi_memory.semantic.backends.team_server import open_team

SHARED = "outage-shared-token-0123456789"
RETRY = ("retry the request in a moment (a repeated add is stored once). If this goes on, check the PostgreSQL "
         "server.")


@pytest.fixture(scope="module")
def paused_pg():
    from pi_memory.devtools.pg_server import PostgresUnavailable, TempPostgres

    try:
        server = TempPostgres().start()
    except PostgresUnavailable as exc:
        pytest.fail(str(exc))
    yield server
    server.close()


def _processes(data: Path) -> list[int]:
    """The postmaster of ``data`` and every process it started."""
    postmaster = int((data / "postmaster.pid").read_text().split()[0])
    children = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, IndexError, ValueError):
                stat = (entry / "stat").read_text()
                if int(stat.rsplit(")", 1)[1].split()[1]) == postmaster:
                    children.append(int(entry.name))
    return [postmaster, *children]


@contextlib.contextmanager
def paused(server):
    pids = _processes(server.data)
    try:
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):  # a short-lived child (a backend) may have ended since
                os.kill(pid, signal.SIGSTOP)
        yield
    finally:
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)


def test_a_paused_database_answers_503_within_seconds_and_the_server_recovers(paused_pg, embedder):
    team = open_team(paused_pg.url, shared_token=SHARED)
    alice = team.tokens.create("alice")[1]
    app = create_app(lambda: team.backend, None, tokens=team.tokens, projects=team.projects)
    as_alice = {"Authorization": f"Bearer {alice}"}
    shared = {"Authorization": f"Bearer {SHARED}"}
    try:
        with ServerThread(app) as server:
            added = httpx.post(server.url + "/memories", headers=as_alice, timeout=30,
                               json={"text": "Alice ships on Thursdays", "infer": False})
            assert added.status_code == 200, added.text
            with paused(paused_pg):
                for headers, method, path, body in (
                        (shared, "GET", "/memories?user_id=alice", None),  # the handler's own query waits
                        (shared, "POST", "/search", {"query": "ships", "user_id": "alice"}),
                        (shared, "POST", "/memories", {"text": "Bob ships on Fridays", "user_id": "bob",
                                                       "infer": False}),
                        (as_alice, "GET", "/memories", None)):  # the token's own lookup waits
                    started = time.monotonic()
                    r = httpx.request(method, server.url + path, headers=headers, json=body, timeout=60)
                    took = time.monotonic() - started
                    assert r.status_code == 503, (path, r.text)
                    assert took < 12, (path, took)
                    error = r.json()["error"]
                    assert error.startswith(("the team database did not answer (",
                                             "cannot check the token now: the team database did not answer (")), error
                    assert error.endswith(RETRY), error
            deadline = time.monotonic() + 30
            while True:  # resumed: the pool drops the connections it closed and makes new ones
                back = httpx.get(server.url + "/memories", headers=as_alice, timeout=30)
                if back.status_code == 200 or time.monotonic() > deadline:
                    break
                time.sleep(0.5)
            assert [m["memory"] for m in back.json()["results"]] == ["Alice ships on Thursdays"]
            bob = httpx.post(server.url + "/memories", headers=shared, timeout=30,
                             json={"text": "Bob ships on Fridays", "user_id": "bob", "infer": False})
            assert bob.status_code == 200 and bob.json()["results"][0]["event"] == "ADD"
    finally:
        team.close()


def test_starting_against_a_paused_database_fails_within_the_connect_timeout(paused_pg):
    from pi_memory.semantic.backends.rest_runner import ServeError

    with paused(paused_pg):
        started = time.monotonic()
        with pytest.raises(ServeError) as err:
            open_team(paused_pg.url)
        assert time.monotonic() - started < 12
    assert str(err.value).startswith(f"cannot use the PostgreSQL database at postgresql://***@127.0.0.1:"
                                     f"{paused_pg.port}/postgres: ")
    assert "timeout" in str(err.value)


def test_a_slow_statement_is_ended_by_the_server_and_its_connection_stays_usable(pg_url):
    from pi_memory.semantic.backend import BackendError
    from pi_memory.semantic.backends.pg_connect import COPY_TIMEOUTS, Timeouts, connection, open_pool

    pool = open_pool(pg_url, max_size=1, timeouts=Timeouts(statement=1.0))
    try:
        started = time.monotonic()
        with pytest.raises(BackendError) as err, connection(pool) as conn:
            conn.execute("SELECT pg_sleep(4)")
        assert time.monotonic() - started < 3
        assert str(err.value) == ("the team database did not answer (canceling statement due to statement timeout); "
                                  + RETRY)
        with connection(pool) as conn:
            assert conn.execute("SHOW statement_timeout").fetchone()[0] == "1s"
    finally:
        pool.close()
    with open_pool(pg_url, max_size=1, timeouts=COPY_TIMEOUTS) as copy, connection(copy) as conn:
        assert conn.execute("SHOW statement_timeout").fetchone()[0] == "0"  # serve import / export: no bound
