"""A client of the team server whose settings name no "userId" (a tester's finding): with the README's settings
`{"backend": {"type": "self-hosted", "baseUrl": S, "apiKey": "<alice's token>"}}` every memory call was a 403
"this token belongs to user 'alice' and may not act for user 'root' ... give the client the server's token",
since userId defaults to the computer's user name. Such a client now acts as the token's user (`GET /whoami`,
asked once at open); an explicit userId still wins, and its 403 names the real fix."""

from __future__ import annotations

import uuid

import pytest

from pi_memory.semantic.backend import BackendError
from pi_memory.semantic.backends.postgres import PostgresBackend, open_pool
from pi_memory.semantic.backends.rest_app import create_app
from pi_memory.semantic.backends.rest_client import RestBackend
from pi_memory.semantic.backends.rest_runner import ServerThread
from pi_memory.semantic.backends.team_auth import TokenStore
from pi_memory.semantic.config import parse_semantic
from pi_memory.semantic.service import open_semantic


@pytest.fixture(scope="module")
def team(pg_url, embedder):
    pool = open_pool(pg_url, max_size=4)
    tokens = TokenStore(pool)
    backend = PostgresBackend(pool, embedder)
    alice = "alice-" + uuid.uuid4().hex[:6]
    made = {"alice": tokens.create(alice)[1], "admin": tokens.create("ops-" + alice, admin=True)[1]}
    with ServerThread(create_app(lambda: backend, None, tokens=tokens)) as server:
        yield {"url": server.url, "tokens": made, "alice": alice}
    pool.close()


@pytest.fixture
def opened(team, tmp_path, monkeypatch):
    monkeypatch.setenv("LOGNAME", "os-user")  # the computer's user name, getpass's first choice
    services = []

    def open_(who: str, **extra):
        settings = parse_semantic({"backend": {"type": "self-hosted", "baseUrl": team["url"],
                                               "apiKey": team["tokens"][who]}, **extra})
        service = open_semantic(settings, tmp_path, data_dir=tmp_path / "data", model=None,
                                background_reembed=False, warm=False)
        services.append(service)
        return service

    yield open_
    for service in services:
        service.close()


def test_without_a_user_id_the_client_acts_as_the_tokens_user(team, opened):
    service = opened("alice")
    assert service.scope.user_id == team["alice"] and service.settings.user_id == team["alice"]
    mem, created = service.add("The staging database is restored every Sunday night")
    assert created and mem.user_id == team["alice"]
    assert [m.text for m in service.list()] == ["The staging database is restored every Sunday night"]


def test_an_explicit_user_id_wins_and_its_403_names_the_fix(team, opened):
    service = opened("alice", userId="os-user")
    assert service.scope.user_id == "os-user"
    with pytest.raises(BackendError) as refused:
        service.add("Deploys need a second reviewer")
    assert str(refused.value) == (
        f"the memory server at {team['url']} refused the request (403: this token belongs to user "
        f"'{team['alice']}' and may not act for user 'os-user'. If the token is yours, set \"userId\": "
        f"\"{team['alice']}\" in the client's pi-memory settings (or leave \"userId\" out: pi-memory then acts as "
        "the token's user); to act for the other user, use that user's own token or an admin token)")


def test_an_admin_token_keeps_the_settings_user(opened):
    assert opened("admin").scope.user_id == "os-user"


@pytest.mark.parametrize(("answer", "expected"), [
    ({"user_id": "alice", "admin": False, "token_id": "x", "auth": True}, "alice"),
    ({"user_id": None, "admin": True, "token_id": "shared", "auth": True}, None),
    ({"user_id": "ops", "admin": True, "token_id": "x", "auth": True}, None),
    ({"user_id": None, "admin": True, "token_id": None, "auth": False}, None),
    ("not an object", None),
])
def test_token_user_reads_whoami(answer, expected):
    import httpx

    transport = httpx.MockTransport(lambda request: httpx.Response(200, json=answer))
    assert RestBackend("http://127.0.0.1:9", "t", transport=transport).token_user() == expected


def test_token_user_of_a_server_without_whoami_or_down_is_none():
    import httpx

    missing = httpx.MockTransport(lambda request: httpx.Response(404, json={"detail": "Not Found"}))
    assert RestBackend("http://127.0.0.1:9", "t", transport=missing).token_user() is None

    def refuse(request):
        raise httpx.ConnectError("[Errno 111] Connection refused")

    assert RestBackend("http://127.0.0.1:9", "t", transport=httpx.MockTransport(refuse)).token_user() is None


def test_whoami_is_asked_once_per_server_and_token_in_a_process(pg_url, embedder, tmp_path, monkeypatch):
    """A tester's finding: every open of the self-hosted backend without a userId asked GET /whoami again (up to
    1 s each). The answer is kept for the process per (server URL, token); the token only as a digest."""
    import json

    from pi_memory.semantic.backends import rest_memo

    monkeypatch.setenv("LOGNAME", "os-user")
    pool = open_pool(pg_url, max_size=4)
    tokens = TokenStore(pool)
    alice = "alice-" + uuid.uuid4().hex[:6]
    made = {"alice": tokens.create(alice)[1], "admin": tokens.create("ops-" + alice, admin=True)[1]}
    app = create_app(lambda: PostgresBackend(pool, embedder), None, tokens=tokens)
    asked: list[str] = []

    async def counting(scope, receive, send):
        if scope["type"] == "http" and scope["path"] == "/whoami":
            asked.append(dict(scope["headers"]).get(b"authorization", b"").decode())
        await app(scope, receive, send)

    def users(server, who: str, times: int) -> list[str]:
        found = []
        for _ in range(times):
            settings = parse_semantic({"backend": {"type": "self-hosted", "baseUrl": server.url,
                                                   "apiKey": made[who]}})
            service = open_semantic(settings, tmp_path, data_dir=tmp_path / "data", model=None,
                                    background_reembed=False, warm=False)
            found.append(service.scope.user_id)
            service.close()
        return found

    try:
        with ServerThread(counting) as server:
            assert users(server, "alice", 3) == [alice] * 3
            assert users(server, "admin", 2) == ["os-user"] * 2  # "no user" is an answer too, kept as well
            assert asked == [f"Bearer {made['alice']}", f"Bearer {made['admin']}"]
            kept = json.dumps(rest_memo.snapshot())
            assert made["alice"] not in kept and made["admin"] not in kept and alice in kept
            rest_memo.forget()
            assert users(server, "alice", 1) == [alice] and len(asked) == 3  # a new process asks again
    finally:
        pool.close()


def test_a_whoami_that_failed_is_asked_again_at_the_next_open():
    import httpx

    answers = iter([httpx.ConnectError("[Errno 111] Connection refused"),
                    httpx.Response(503, json={"error": "the team database cannot be reached"}),
                    httpx.Response(200, json={"user_id": "alice", "admin": False, "token_id": "x", "auth": True})])

    def answer(request):
        got = next(answers)
        if isinstance(got, Exception):
            raise got
        return got

    transport = httpx.MockTransport(answer)
    assert [RestBackend("http://127.0.0.1:9", "t", transport=transport).token_user() for _ in range(4)] == [
        None, None, "alice", "alice"]  # the fourth open is answered from what the third learnt


def test_the_prompt_hooks_ask_whoami_once_for_their_processes_and_keep_no_token(pg_url, embedder, tmp_path):
    """Each prompt hook is a process of its own: without a file they asked GET /whoami at every prompt. The answer
    is kept in the hook state as a digest of the server URL and token, never the token."""
    import json
    import subprocess
    import sys

    from team_sockets import team_env

    pool = open_pool(pg_url, max_size=4)
    tokens = TokenStore(pool)
    alice = "alice-" + uuid.uuid4().hex[:6]
    token = tokens.create(alice)[1]
    backend = PostgresBackend(pool, embedder)
    env = team_env(tmp_path, None) | {"PI_MEMORY_HOOK_CEILING_S": "6"}  # makes the project folder proj
    project = __import__("pi_memory.semantic.models", fromlist=["Scope"]).Scope.for_project(alice, tmp_path / "proj")
    backend.add("The staging database is restored every Sunday night", scope=project)
    app = create_app(lambda: backend, None, tokens=tokens)
    asked: list[str] = []

    async def counting(scope, receive, send):
        if scope["type"] == "http":
            asked.append(scope["path"])
        await app(scope, receive, send)

    try:
        with ServerThread(counting) as server:
            semantic = {"backend": {"type": "self-hosted", "baseUrl": server.url, "apiKey": token}}
            (tmp_path / "agent" / "settings.json").write_text(json.dumps({"pi-memory": {"semantic": semantic}}),
                                                              encoding="utf-8")
            contexts = []
            for sid in ("s1", "s2"):
                payload = {"session_id": sid, "hook_event_name": "UserPromptSubmit", "cwd": str(tmp_path / "proj"),
                           "prompt": "when is the staging database restored?"}
                done = subprocess.run([sys.executable, "-m", "pi_memory", "hook", "claude-code", "prompt"],
                                      input=json.dumps(payload), capture_output=True, text=True, env=env,
                                      cwd=tmp_path / "proj", timeout=60)
                assert done.returncode == 0, done.stderr
                contexts.append(json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"])
    finally:
        pool.close()
    assert all("restored every Sunday night" in c for c in contexts)  # both recalls acted as the token's user
    assert asked.count("/whoami") == 1 and asked.count("/search") == 2
    kept = (tmp_path / "state" / "hooks" / "team-servers.json").read_text(encoding="utf-8")
    assert token not in kept and server.url not in kept and alice in kept
