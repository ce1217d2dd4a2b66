"""The team server as a team runs it: `pi-memory serve --database-url` processes sharing one PostgreSQL, tokens
made with `pi-memory serve token create`, and the database stopped under a running server. (The load and the
faults under load -- 16 clients, a server killed with SIGKILL, the database restarted -- are test_team_load.py.)
Everything listens on 127.0.0.1 and is stopped by the test."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import httpx
import pytest

from pg_fixture import own_database


@pytest.fixture(scope="module")
def database(pg_url):
    """A database of this module's own on the shared server."""
    with own_database(pg_url, "team_") as url:
        yield url


def cli(*args: str, home: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PI_CODING_AGENT_DIR": str(home), "PI_MEMORY_DIR": str(home / "data")}
    return subprocess.run([sys.executable, "-m", "pi_memory", *args], capture_output=True, text=True, env=env,
                          timeout=120)


class Serve:
    def __init__(self, url: str, home: Path):
        env = {**os.environ, "PI_CODING_AGENT_DIR": str(home), "PI_MEMORY_DIR": str(home / "data")}
        self.log = home / f"serve-{uuid.uuid4().hex[:6]}.log"  # a file: a full stderr pipe would stall the server
        with self.log.open("w") as err:
            self.proc = subprocess.Popen([sys.executable, "-m", "pi_memory", "serve", "--database-url", url, "--port",
                                          "0", "--json"], stdout=subprocess.PIPE, stderr=err, text=True, env=env)
        line = self.proc.stdout.readline()
        if not line:
            raise AssertionError("serve did not start: " + self.log.read_text())
        self.event = json.loads(line)
        self.url = self.event["url"]

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)


@pytest.fixture(scope="module")
def team(database, tmp_path_factory):
    home = tmp_path_factory.mktemp("team-home")
    made = {}
    for user, extra in (("alice", []), ("bob", []), ("ops", ["--admin"])):
        r = cli("serve", "token", "create", "--user", user, *extra, "--database-url", database, "--json", home=home)
        assert r.returncode == 0, r.stdout + r.stderr
        made[user] = json.loads(r.stdout)["token"]
    servers = [Serve(database, home), Serve(database, home)]
    yield {"url": database, "home": home, "tokens": made, "servers": servers}
    for s in servers:
        s.stop()


def post(base: str, token: str, path: str, body: dict, timeout: float = 30) -> httpx.Response:
    return httpx.post(base + path, json=body, headers={"Authorization": f"Bearer {token}"}, timeout=timeout)


def test_two_servers_share_one_database_and_the_tokens(team):
    a, b = team["servers"]
    assert a.event["backend"] == "postgres" and a.event["token"] == "per-user"
    assert "postgresql://" in a.event["dataDir"]
    added = post(a.url, team["tokens"]["alice"], "/memories",
                 {"messages": [{"role": "user", "content": "Alice's team ships on Thursdays"}], "infer": False})
    assert added.status_code == 200, added.text
    found = post(b.url, team["tokens"]["alice"], "/search", {"query": "when does the team ship"})
    assert [m["memory"] for m in found.json()["results"]][:1] == ["Alice's team ships on Thursdays"]
    assert post(b.url, team["tokens"]["bob"], "/search", {"query": "ship", "user_id": "alice"}).status_code == 403
    listed = cli("serve", "token", "list", "--database-url", team["url"], "--json", home=team["home"])
    assert sorted(t["userId"] for t in json.loads(listed.stdout)["tokens"]) == ["alice", "bob", "ops"]
    assert not [t for t in team["tokens"].values() if t in listed.stdout or t[-12:] in listed.stdout]
    audit = cli("serve", "audit", "--user", "alice", "--database-url", team["url"], "--json", home=team["home"])
    assert [(r["action"], r["userId"]) for r in json.loads(audit.stdout)["audit"]] == [("add", "alice")]


def test_a_shared_project_store_through_two_serve_processes(team):
    a, b = team["servers"]
    name = "acme-" + uuid.uuid4().hex[:6]
    r = post(a.url, team["tokens"]["alice"], f"/projects/{name}/entries",
             {"operations": [{"action": "add", "content": "The API ships behind a feature flag"}]})
    assert (r.status_code, r.json()["version"]) == (200, 1)
    r = post(b.url, team["tokens"]["bob"], f"/projects/{name}/entries",
             {"operations": [{"action": "add", "content": "x" * 2300}]})
    assert (r.status_code, r.json()["code"]) == (422, "over_limit")  # the serve process's projectCharLimit: 2,200
    got = httpx.get(f"{b.url}/projects/{name}/entries", headers={"Authorization": f"Bearer {team['tokens']['bob']}"},
                    timeout=30).json()
    assert (got["entries"], got["limit"]) == (["The API ships behind a feature flag"], 2200)


def test_a_database_restart_gives_clear_errors_then_recovers(team, pg_server):
    if pg_server is None:
        pytest.skip("an external test database is not restarted")
    b = team["servers"][1]
    token = team["tokens"]["ops"]
    pg_server.stop()
    try:
        down = post(b.url, token, "/search", {"query": "anything", "user_id": "bob"})
        assert down.status_code == 503
        assert "database" in down.json()["error"].lower() or "token" in down.json()["error"].lower()
    finally:
        pg_server.start()
    deadline = time.monotonic() + 30
    while True:
        up = post(b.url, token, "/search", {"query": "client fact", "user_id": "bob"})
        if up.status_code == 200 or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert up.status_code == 200, up.text
