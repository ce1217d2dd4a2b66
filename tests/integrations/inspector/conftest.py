"""A data root with something in every view (``pi_memory.devtools.sample_data``, module scope: built once per
test module), and a running inspector over it on 127.0.0.1.

The team fixtures: a real ``pi-memory serve --database-url`` process on the session's PostgreSQL
(``tests/pg_fixture.py``) with per-user tokens of alice and bob (made with the server's own token store) and
memories of both in the same project, and an inspector over a data root whose semantic settings point at that
server with alice's token (as a team member configures the agent)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # tests/: the shared PostgreSQL fixture
from pg_fixture import pg_server, pg_url  # noqa: E402,F401
from pi_memory.devtools.sample_data import build_sample, sample_reply
from pi_memory.devtools.scripted_llm import ScriptedLLM
from pi_memory.integrations.inspector import Running, run_inspector
from pi_memory.runtime import Memory, open_memory


@dataclass
class Data:
    agent: Path
    data: Path
    project: Path
    memory: Memory
    session_file: Path
    memory_ids: dict[str, str]
    job_id: int


@pytest.fixture(scope="module")
def inspector_data(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Data]:
    tmp = tmp_path_factory.mktemp("inspector")
    agent, data, project = tmp / "agent", tmp / "data", tmp / "repo"
    with pytest.MonkeyPatch.context() as mp, ScriptedLLM(responder=sample_reply) as llm:
        mp.setenv("PI_CODING_AGENT_DIR", str(agent))
        mp.setenv("PI_MEMORY_DIR", str(data))
        mp.delenv("PI_MEMORY_DEBUG", raising=False)
        sample = build_sample(agent, data, project, llm.base_url)
        memory = open_memory(project)
        yield Data(agent, data, project, memory, sample.session_file, sample.memory_ids, sample.job_id)
        memory.close()


@pytest.fixture(scope="module")
def inspector(inspector_data: Data) -> Iterator[Running]:
    with run_inspector(inspector_data.memory) as running:
        yield running


TEAM_HOSTILE = "Alice's note: <script>document.title='pwned'</script><img src=x onerror=alert(1)> <b>bold</b>"


@dataclass
class Team:
    url: str
    alice: str
    bob: str
    tokens: dict[str, str]
    store: object  # the server's TokenStore (revoke tokens with it)
    project: Path
    agent: Path
    data: Path
    ids: dict[str, str] = field(default_factory=dict)
    hostile: str = TEAM_HOSTILE


@pytest.fixture(scope="module")
def team_server(pg_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Team]:  # noqa: F811
    from pi_memory.semantic.backends.rest_client import RestBackend
    from pi_memory.semantic.backends.team_server import open_tokens
    from pi_memory.semantic.models import Scope

    tmp = tmp_path_factory.mktemp("team")
    store = open_tokens(pg_url)  # migrates the schema, as the server does at start
    suffix = uuid.uuid4().hex[:6]
    alice, bob = f"alice-{suffix}", f"bob-{suffix}"
    tokens = {"alice": store.create(alice)[1], "bob": store.create(bob)[1]}
    env = {**os.environ, "PI_CODING_AGENT_DIR": str(tmp / "serve-home"), "PI_MEMORY_DIR": str(tmp / "serve-data")}
    proc = subprocess.Popen([sys.executable, "-m", "pi_memory", "serve", "--database-url", pg_url, "--port", "0",
                             "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        line = proc.stdout.readline()
        assert line, "pi-memory serve did not start: " + proc.stderr.read()
        url = json.loads(line)["url"]
        project = tmp / "repo"
        subprocess.run(["git", "init", "-q", str(project)], check=True)
        team = Team(url, alice, bob, tokens, store, project, tmp / "agent", tmp / "data")
        for who, user, key, text, source in (
                ("alice", alice, "deploy", "Billing is deployed from the release branch",
                 {"kind": "capture", "session_id": "sess-team", "entry_ids": ["e7"]}),
                ("alice", alice, "editor", "Alice edits code in Helix", {"kind": "cli"}),
                ("alice", alice, "hostile", TEAM_HOSTILE, {"kind": "cli"}),
                ("bob", bob, "bob-deploy", "Billing is deployed by Bob with Helm charts", {"kind": "cli"}),
                ("bob", bob, "bob-vault", "Bob keeps the staging deploy keys in the vault", {"kind": "cli"})):
            with RestBackend(url, tokens[who]) as client:
                team.ids[key] = client.add(text, scope=Scope.for_project(user, project), source=source).id
        with RestBackend(url, tokens["alice"]) as client:
            team.ids["editor-new"] = client.update(team.ids["editor"], "Alice edits code in Zed",
                                                   scope=Scope.for_project(alice, project), reason="switched").id
        yield team
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
        store.pool.close()


@pytest.fixture(scope="module")
def team_memory(team_server: Team) -> Iterator[Memory]:
    """alice's data root: semantic memory on the team server with her token in the settings."""
    team_server.agent.mkdir(parents=True, exist_ok=True)
    (team_server.agent / "settings.json").write_text(json.dumps({"pi-memory": {"semantic": {
        "userId": team_server.alice, "autoCapture": False,
        "backend": {"type": "self-hosted", "baseUrl": team_server.url, "apiKey": team_server.tokens["alice"]}}}}),
        encoding="utf-8")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PI_CODING_AGENT_DIR", str(team_server.agent))
        mp.setenv("PI_MEMORY_DIR", str(team_server.data))
        mp.delenv("PI_MEMORY_SERVER_TOKEN", raising=False)
        memory = open_memory(team_server.project)
        assert memory.semantic() is not None, memory.semantic_status  # settings read now, while the env is set
        yield memory
        memory.close()


@pytest.fixture(scope="module")
def team_inspector(team_memory: Memory) -> Iterator[Running]:
    with run_inspector(team_memory) as running:
        yield running
