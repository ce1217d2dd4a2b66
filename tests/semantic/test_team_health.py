"""`GET /health` and requests of the team server while its PostgreSQL is down (a tester's findings): /health
answered ok with PostgreSQL stopped or paused, and with PostgreSQL stopped (connections refused) every request
waited the whole 5 s checkout and then said the database "did not answer". /health now checks the database
(SELECT 1, 2 s at most) and answers 503 saying what is wrong; a refused connection fails within about a
quarter of a second and says the database cannot be reached. The test stops and pauses a PostgreSQL of its own
and always starts or resumes it again."""

from __future__ import annotations

import time

import httpx
import pytest
from test_team_outage import paused

from pi_memory.semantic.backends.rest_app import create_app
from pi_memory.semantic.backends.rest_runner import ServerThread
from pi_memory.semantic.backends.team_server import open_team

SHARED = "health-shared-token-0123456789"
UNREACHABLE_END = ("; retry the request in a moment (a repeated add is stored once). If this goes on, check that "
                   "the PostgreSQL server runs and that its address is right.")
OK = {"status": "ok", "service": "pi-memory", "api": 1, "scope_checked": True, "infer": False}


@pytest.fixture(scope="module")
def own_pg():
    from pi_memory.devtools.pg_server import PostgresUnavailable, TempPostgres

    try:
        server = TempPostgres().start()
    except PostgresUnavailable as exc:
        pytest.fail(str(exc))
    yield server
    server.close()


@pytest.fixture(scope="module")
def served(own_pg):
    team = open_team(own_pg.url, shared_token=SHARED, max_connections=2)
    app = create_app(lambda: team.backend, SHARED, tokens=team.tokens, projects=team.projects)
    with ServerThread(app) as server:
        yield server.url
    team.close()


def _get(url: str, path: str) -> tuple[httpx.Response, float]:
    started = time.monotonic()
    answer = httpx.get(url + path, headers={"Authorization": f"Bearer {SHARED}"}, timeout=30)
    return answer, time.monotonic() - started


def _until_ok(url: str) -> None:
    deadline = time.monotonic() + 30
    while _get(url, "/memories?user_id=alice")[0].status_code != 200:
        assert time.monotonic() < deadline, "the server did not carry on after PostgreSQL came back"
        time.sleep(0.2)


def test_health_is_ok_while_the_database_answers(served):
    answer, _ = _get(served, "/health")
    assert (answer.status_code, answer.json()) == (200, OK)


def test_a_stopped_database_fails_fast_in_words_and_health_says_so(served, own_pg):
    own_pg.stop()
    try:
        for path in ("/memories?user_id=alice", "/memories?user_id=bob", "/projects/acme/entries"):
            answer, took = _get(served, path)
            error = answer.json()["error"]
            assert answer.status_code == 503 and took < 2.0, (path, took, error)
            assert error.startswith("the team database cannot be reached (") and error.endswith(UNREACHABLE_END)
            assert "Connection refused" in error
        answer, took = _get(served, "/health")
        assert answer.status_code == 503 and took < 2.5
        body = answer.json()
        assert {k: v for k, v in body.items() if k != "error"} == {**OK, "status": "unavailable"}
        assert body["error"].startswith("the team database cannot be reached (") and body["error"].endswith(
            UNREACHABLE_END)
    finally:
        own_pg.start()
    _until_ok(served)
    assert _get(served, "/health")[0].json() == OK


def test_a_paused_database_makes_health_a_503_within_its_wait(served, own_pg):
    _until_ok(served)
    with paused(own_pg):
        answer, took = _get(served, "/health")
    assert answer.status_code == 503 and took < 3.0, took
    assert answer.json()["error"] == (
        "the team database did not answer a check (SELECT 1) within 2 s (paused, overloaded or its host "
        "unreachable); the server cannot read or write memories until it answers. Check the PostgreSQL server.")
    _until_ok(served)
