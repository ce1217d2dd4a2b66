"""The team server's smaller texts and checks (a tester's findings): `serve token create --user bob:project:x`
made a token refused on every request; `serve audit --user eve` with no rows printed nothing; a 401 on a
server of per-user tokens pointed at "the team's shared --token"; a port that is not a number got pgvector
advice; the infer line came before a start that then failed; an ESC in a REST memory was stored while the
curated stores refuse it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import uuid
from urllib.parse import urlsplit

import httpx
import pytest
from typer.testing import CliRunner

from pi_memory.cli.app import app
from pi_memory.semantic.backends.postgres import PostgresBackend, open_pool
from pi_memory.semantic.backends.rest_app import create_app
from pi_memory.semantic.backends.rest_runner import ServerThread
from pi_memory.semantic.backends.team_auth import TokenStore
from pi_memory.semantic.backends.team_import import import_rows, jsonl_rows
from pi_memory.semantic.embedded import check_text
from pi_memory.semantic.models import Scope

ESC_TEXT = "escape \u001b[31m in text"
CONTROL_SAID = ("Not saved: the memory text holds a control character (\\x1b: terminal escape codes or similar), "
                "which can hide or change text on a screen showing it. Remove it and send plain text.")


@pytest.fixture
def run(invoke_cli):
    def run(*args: str):
        result = invoke_cli(*args)
        return result.exit_code, " ".join(result.output.split())

    return run


@pytest.fixture(scope="module")
def pool(pg_url):
    pool = open_pool(pg_url, max_size=6)
    yield pool
    pool.close()


# --- token create: a user name no request can act for --------------------------------------------------
@pytest.mark.parametrize(("user", "base", "project"), [("bob:project:x", "bob", "x"),
                                                       ("alice:project:acme-api", "alice", "acme-api")])
def test_token_create_refuses_a_user_the_server_reads_as_a_user_in_a_project(run, pg_url, user, base, project):
    assert run("serve", "token", "create", "--user", user, "--database-url", pg_url) == (2, (
        f"error: the user id {user!r} holds ':project:': the server reads a user_id 'NAME:project:PROJECT' as user "
        f"{base!r} in project {project!r}, so a token for {user!r} would be refused on every request (403). Name the "
        f"user alone (e.g. --user {base}): a user's token reaches all of that user's projects. No token was created."))


def test_a_token_for_a_plain_user_still_acts_for_that_user(pool, embedder):
    tokens = TokenStore(pool)
    user = "plain-" + uuid.uuid4().hex[:6]
    _record, token = tokens.create(user)
    with ServerThread(create_app(lambda: PostgresBackend(pool, embedder), None, tokens=tokens)) as server:
        r = httpx.get(server.url + "/whoami", headers={"Authorization": f"Bearer {token}"}, timeout=30)
    assert (r.status_code, r.json()["user_id"]) == (200, user)


# --- audit: no rows -----------------------------------------------------------------------------------
def test_audit_of_a_user_without_rows_says_so_and_json_gives_an_empty_list(run, pg_url):
    eve = "eve-" + uuid.uuid4().hex[:6]
    assert run("serve", "audit", "--user", eve, "--database-url", pg_url) == (0, (
        f"No audit rows for user {eve!r}: that user has written nothing through the team server (--user names who "
        "wrote; `pi-memory serve audit` without it lists every writer)."))
    code, said = run("serve", "audit", "--user", eve, "--json", "--database-url", pg_url)
    assert (code, json.loads(said)) == (0, {"audit": []})


def test_audit_help_says_user_filters_by_who_wrote():
    result = CliRunner().invoke(app, ["serve", "audit", "--help"], env={"COLUMNS": "400"})
    said = " ".join(result.stdout.split())
    assert result.exit_code == 0
    assert ("Only the writes this user made (who wrote, with their own tokens), not the writes into their memories: "
            "an admin's writes are under the admin's name, the shared token's under 'shared'.") in said


# --- the 401's words, by what the server accepts ------------------------------------------------------
WRONG = "unauthorised: the bearer token is wrong: it is no token this server knows. Send 'Authorization: Bearer <token>' with "


@pytest.mark.parametrize(("shared", "expected"), [
    (None, WRONG + "your own token, which the server's admin makes with `pi-memory serve token create --user NAME`; "
                   "this server takes per-user tokens only."),
    ("team-shared-token-0123456789", WRONG + "your own token (`pi-memory serve token create --user NAME`, made by the "
     "server's admin) or the team's shared token this server was started with (its --token, --token-file or "
     "$PI_MEMORY_SERVER_TOKEN)."),
])
def test_a_401_names_the_tokens_this_server_takes(pool, embedder, shared, expected):
    tokens = TokenStore(pool, shared_token=shared)
    with ServerThread(create_app(lambda: PostgresBackend(pool, embedder), None, tokens=tokens)) as server:
        r = httpx.get(server.url + "/memories", headers={"Authorization": "Bearer nope-not-a-token"}, timeout=30)
    assert (r.status_code, r.json()) == (401, {"error": expected})


def test_a_team_server_without_per_user_tokens_takes_the_token_it_generated(pool, embedder):
    """`serve --database-url` on a database without per-user tokens generates a shared token and prints it: that
    token was refused (401), as only the token table was asked."""
    tokens = TokenStore(pool)  # no --token given: the shared token is the generated one, not the store's
    generated = "generated-for-this-run-0123456789abcdef"
    with ServerThread(create_app(lambda: PostgresBackend(pool, embedder), generated, tokens=tokens)) as server:
        ok = httpx.get(server.url + "/whoami", headers={"Authorization": f"Bearer {generated}"}, timeout=30)
        wrong = httpx.get(server.url + "/whoami", headers={"Authorization": "Bearer nope"}, timeout=30)
    assert (ok.status_code, ok.json()) == (200, {"user_id": None, "admin": True, "token_id": "shared", "auth": True})
    assert wrong.json()["error"].endswith("or the team's shared token this server was started with (its --token, "
                                          "--token-file or $PI_MEMORY_SERVER_TOKEN).")


# --- a failed start: advice that fits -----------------------------------------------------------------
def test_a_failed_start_gives_advice_that_fits_the_failure(run, pg_url):
    port = urlsplit(pg_url).port
    cases = [
        ("postgresql://postgres@127.0.0.1:99999/postgres", 'connection is bad: invalid port number: "99999". The port '
         "in the address must be a number from 1 to 65535 (PostgreSQL's default is 5432)."),
        ("postgresql://postgres@127.0.0.1:abc/postgres", 'connection is bad: invalid integer value "abc" for connection '
         "option \"port\". The port in the address must be a number from 1 to 65535 (PostgreSQL's default is 5432)."),
        (f"postgresql://postgres@127.0.0.1:{port}/nodb_{uuid.uuid4().hex[:6]}", "does not exist. Create that database "
         "first (createdb NAME, or CREATE DATABASE) or name one that exists."),
        ("postgresql://postgres@127.0.0.1:1/postgres", "Connection refused Is the server running on that host and "
         "accepting TCP/IP connections? Check that the PostgreSQL server runs and listens on that host and port (to "
         "try things out: `pi-memory serve local-postgres`)."),
    ]
    for url, ending in cases:
        code, said = run("serve", "migrate", "--database-url", url)
        assert code == 1 and said.endswith(ending), said
        assert "pgvector" not in said


@pytest.mark.parametrize(("said", "advice"), [
    ('extension "vector" is not available DETAIL: Could not open extension control file', "Install the pgvector"),
    ('permission denied to create extension "vector"', "Install the pgvector"),
    ("permission denied for schema public", "The URL's user must be allowed to create tables"),
    ('password authentication failed for user "***"', "Check the user name and password"),
    ("something else entirely", "Check that the server runs, that the URL's user may create tables, and that the "
                                "pgvector extension is installed."),
])
def test_the_advice_follows_what_postgresql_said(said, advice):
    from pi_memory.semantic.backends.pg_connect import _advice

    assert _advice(RuntimeError(said)).startswith(advice)


def test_the_infer_line_comes_only_once_the_server_is_up(run, tmp_path):
    code, said = run("serve", "--port", "0", "--database-url", "postgresql://postgres@127.0.0.1:99999/postgres")
    assert code == 2 and "infer=true" not in said, said
    env = {**os.environ, "PI_CODING_AGENT_DIR": str(tmp_path / "agent"), "PI_MEMORY_DIR": str(tmp_path / "data"),
           "PI_MEMORY_SERVER_TOKEN": "infer-line-test-token-0123456789"}
    env.pop("PI_MEMORY_DATABASE_URL", None)
    proc = subprocess.Popen([sys.executable, "-m", "pi_memory", "serve", "--port", "0"], stderr=subprocess.PIPE,
                            stdout=subprocess.DEVNULL, text=True, env=env)
    lines = []
    try:
        for line in proc.stderr:
            lines.append(line.strip())
            if line.startswith("infer=true adds:"):
                break
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=30)
    assert lines[-1].startswith("infer=true adds:"), lines
    assert [i for i, line in enumerate(lines) if line.startswith("pi-memory server: http://127.0.0.1:")] == [0], lines


# --- control characters: one rule for every store -----------------------------------------------------
@pytest.mark.parametrize(("text", "expected"), [
    (ESC_TEXT, (ESC_TEXT, "control", "holds a control character")),
    ("bell\u0007 rings", ("bell\u0007 rings", "control", "holds a control character")),
    ("c1 \u009b csi", ("c1 \u009b csi", "control", "holds a control character")),
    ("line one\r\nline two\rthree\tcolumn", ("line one\nline two\nthree\tcolumn", None, None)),
])
def test_one_reading_of_a_text_refuses_control_characters_as_the_curated_stores_do(text, expected):
    from pi_memory.curated.entries import content_problem

    checked = check_text(text)
    assert (checked.text, checked.refusal, checked.reason) == expected
    assert (content_problem(checked.text) == "control") == (checked.refusal == "control")


def test_the_team_server_refuses_an_escape_code_in_a_memory(pool, embedder, tmp_path):
    tokens = TokenStore(pool)
    user = "esc-" + uuid.uuid4().hex[:6]
    _record, token = tokens.create(user)
    backend = PostgresBackend(pool, embedder)
    with ServerThread(create_app(lambda: backend, None, tokens=tokens)) as server:
        r = httpx.post(server.url + "/memories", headers={"Authorization": f"Bearer {token}"}, timeout=30,
                       json={"text": ESC_TEXT, "infer": False})
        ok = httpx.post(server.url + "/memories", headers={"Authorization": f"Bearer {token}"}, timeout=30,
                        json={"text": "windows\r\nline ends", "infer": False})
    assert (r.status_code, r.json()) == (400, {"error": CONTROL_SAID + " Nothing was stored from this request; fix "
                                                        "or leave out that message and send the request again."})
    assert ok.status_code == 200 and ok.json()["results"][0]["memory"] == "windows\nline ends"
    with pytest.raises(ValueError, match=r"^Not saved: the memory text holds a control character \(\\x1b"):
        backend.add(ESC_TEXT, scope=Scope(user_id=user))
    assert [m.text for m in backend.get_all(scope=Scope(user_id=user))] == ["windows\nline ends"]
    row = {"id": user + "-1", "user_id": user, "text": "imported \u001b]0;title\u0007 text"}
    (tmp_path / "esc.jsonl").write_text(json.dumps(row) + "\n", encoding="utf-8")
    report = import_rows(backend, jsonl_rows(tmp_path / "esc.jsonl"))
    assert (report.memories, dict(report.reasons)) == (0, {"holds a control character": 1})
