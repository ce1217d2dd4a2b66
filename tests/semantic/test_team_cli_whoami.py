"""One-shot CLI commands against a team server ask `GET /whoami` once for their processes, as the prompt hooks
do (a gap of the last stop: the answer was kept per process, and each `pi-memory semantic ...` is a process of
its own, so every command asked again, up to 1 s). They share the hooks' file (`hooks/team-servers.json` in the
state folder: digests of the URL and token, the user, never a token) and its expiry (`rest_memo.USER_TTL_S`)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import uuid

from pi_memory.semantic.backends.postgres import PostgresBackend, open_pool
from pi_memory.semantic.backends.rest_app import create_app
from pi_memory.semantic.backends.rest_memo import USER_TTL_S, url_key
from pi_memory.semantic.backends.rest_runner import ServerThread
from pi_memory.semantic.backends.team_auth import TokenStore
from pi_memory.semantic.models import Scope
from team_sockets import team_env


def test_two_cli_commands_ask_whoami_once_and_keep_no_token(pg_url, embedder, tmp_path):
    pool = open_pool(pg_url, max_size=4)
    tokens = TokenStore(pool)
    alice = "alice-" + uuid.uuid4().hex[:6]
    token = tokens.create(alice)[1]
    backend = PostgresBackend(pool, embedder)
    env = team_env(tmp_path, None)  # makes the project folder proj
    backend.add("The staging database is restored every Sunday night",
                scope=Scope.for_project(alice, tmp_path / "proj"))
    app = create_app(lambda: backend, None, tokens=tokens)
    asked: list[str] = []

    async def counting(scope, receive, send):
        if scope["type"] == "http":
            asked.append(scope["path"])
        await app(scope, receive, send)

    def listed() -> list[str]:
        done = subprocess.run([sys.executable, "-m", "pi_memory", "semantic", "list", "--json"], capture_output=True,
                              text=True, env=env, cwd=tmp_path / "proj", timeout=120)
        assert done.returncode == 0, done.stdout + done.stderr
        return [m["memory"] for m in json.loads(done.stdout)["results"]]

    kept_at = tmp_path / "state" / "hooks" / "team-servers.json"
    try:
        with ServerThread(counting) as server:
            semantic = {"backend": {"type": "self-hosted", "baseUrl": server.url, "apiKey": token}}
            (tmp_path / "agent" / "settings.json").write_text(json.dumps({"pi-memory": {"semantic": semantic}}),
                                                              encoding="utf-8")
            # a prompt hook found this server down a moment ago: that is the hooks' to carry, not the CLI's
            hook_down = {url_key(server.url): {"until": time.time() + 300, "kind": "timeout", "text": "no answer"}}
            kept_at.parent.mkdir(parents=True, exist_ok=True)
            kept_at.write_text(json.dumps({"users": {}, "down": hook_down}), encoding="utf-8")
            first, second = listed(), listed()
            assert first == second == ["The staging database is restored every Sunday night"]  # as alice, twice
            assert asked.count("/whoami") == 1
            kept = kept_at.read_text(encoding="utf-8")
            assert token not in kept and server.url not in kept and alice in kept
            held = json.loads(kept)
            assert [item["user"] for item in held["users"].values()] == [alice]
            assert held["down"] == hook_down  # left as the hook wrote it
            for item in held["users"].values():  # the same expiry as the hooks': an answer this old is asked again
                item["at"] = time.time() - USER_TTL_S - 1
            kept_at.write_text(json.dumps(held), encoding="utf-8")
            assert listed() == first
            assert asked.count("/whoami") == 2
    finally:
        pool.close()
