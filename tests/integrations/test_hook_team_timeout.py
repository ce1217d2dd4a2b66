"""A team project server that accepts connections and never answers (a real socket on 127.0.0.1) costs a
session its project part only: a real ``pi-memory hook`` process still answers within its 2 s ceiling with
MEMORY.md, USER.md, the blocks and the standing instructions, and a line saying the team project memory could
not be reached; the prompt hook still answers; ``pi-memory snapshot`` waits once and says on standard error
that the server did not answer in time. A context without the project part is not kept for the next session."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import threading
import time

import pytest

import pi_memory
from pi_memory.curated.snapshot import RULE, snapshot_is_safe

ENTRIES = {"entries": ["Deploys go out on Tuesdays"], "version": 1}
CEILING = 4.0


class TeamSocket:
    """A server on 127.0.0.1 that, while ``hang`` is set, accepts connections and never answers; otherwise it
    answers every request with :data:`ENTRIES`."""

    def __init__(self) -> None:
        self.hang = True
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.held: list[socket.socket] = []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            if self.hang:
                self.held.append(conn)
                continue
            conn.recv(65536)
            body = json.dumps(ENTRIES).encode()
            conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: "
                         + str(len(body)).encode() + b"\r\nconnection: close\r\n\r\n" + body)
            conn.close()

    def close(self) -> None:
        self.sock.close()
        for conn in self.held:
            conn.close()


@pytest.fixture
def team(tmp_path):
    server = TeamSocket()
    yield server
    server.close()


def setup(tmp_path, url: str | None, timeout: float = 10) -> dict[str, str]:
    """A HOME, data root, hook state and agent folder under ``tmp_path``, MEMORY.md, USER.md and a standing
    instruction; the settings point the project store at ``url`` (none: a local project store)."""
    data, agent, proj = tmp_path / "data", tmp_path / "agent", tmp_path / "proj"
    for folder in (data, agent, proj / ".git", tmp_path / "home"):
        folder.mkdir(parents=True, exist_ok=True)
    (data / "MEMORY.md").write_text("Builds run with make\n", encoding="utf-8")
    (data / "USER.md").write_text("Prefers short answers\n", encoding="utf-8")
    (data / "STANDING.md").write_text("Never push to main\n", encoding="utf-8")
    block = {"teamProjectStore": {"url": url, "project": "acme", "timeoutSeconds": timeout}} if url else {}
    (agent / "settings.json").write_text(json.dumps({"pi-memory": block}), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PI_MEMORY_")}
    source = os.path.dirname(os.path.dirname(pi_memory.__file__))  # this checkout, whatever the cwd
    # the hook's ceiling as set for tests on a loaded machine (the team server gets the same shares of it: 0.3 to
    # answer, nothing past 0.75); on 2 busy cores a cold process alone can take most of the default 2 s
    env.update(PYTHONPATH=os.pathsep.join(filter(None, [source, env.get("PYTHONPATH")])),
               PI_MEMORY_HOOK_CEILING_S=str(CEILING), HOME=str(tmp_path / "home"), PI_MEMORY_DIR=str(data),
               PI_MEMORY_STATE_DIR=str(tmp_path / "state"), PI_CODING_AGENT_DIR=str(agent),
               PI_MEMORY_SERVER_TOKEN="team-token")
    return env


def hook(env: dict[str, str], cwd, host: str, event: str, payload: dict) -> tuple[str | None, float]:
    """``(the context a real hook process answered, seconds it took)``."""
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "pi_memory", "hook", host, event], input=json.dumps(payload),
                          capture_output=True, text=True, env=env, cwd=cwd, timeout=60)
    took = time.monotonic() - started
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout).get("hookSpecificOutput", {}).get("additionalContext"), took


def start_payload(tmp_path, sid: str) -> dict:
    return {"session_id": sid, "hook_event_name": "SessionStart", "cwd": str(tmp_path / "proj"),
            "source": "startup"}


def unavailable(url: str) -> str:
    return (f"{RULE}\nPROJECT MEMORY: proj (notes about this repository) [not available]\n{RULE}\n[The team "
            f"project store 'acme' on {url} could not be reached when this session started, so its entries are "
            "missing here. They are not lost: memory_read with target 'project' asks the server again; if that "
            "fails too, tell the user.]")


@pytest.mark.parametrize("host", ["claude-code", "codex"])
def test_a_hung_team_server_costs_the_session_start_its_project_part_only(tmp_path, team, host):
    local, _ = hook(setup(tmp_path / "local", None), tmp_path / "local" / "proj", host, "session-start",
                    start_payload(tmp_path / "local", "s1"))
    env = setup(tmp_path, team.url)
    context, took = hook(env, tmp_path / "proj", host, "session-start", start_payload(tmp_path, "s2"))
    assert took < CEILING + 2.0  # the ceiling, and the process's start and exit
    assert len(team.held) == 1  # asked once: once it did not answer, the snapshot's second read asks nothing
    snapshot_end = "\n</memory-snapshot>"
    assert context == local.replace(snapshot_end, "\n\n" + unavailable(team.url) + snapshot_end, 1)
    for part in ("Builds run with make", "Prefers short answers", "Never push to main", "<memory-blocks>"):
        assert part in context
    assert snapshot_is_safe(context[: context.index(snapshot_end) + len(snapshot_end)])
    log = (tmp_path / "state" / "hooks.log").read_text(encoding="utf-8")
    waited = re.search(f"session-start: the project part is missing: the team project store 'acme' on "
                       f"{re.escape(team.url)} did not answer within ([0-9.]+) s, so its entries could not be read", log)
    assert waited and float(waited.group(1)) <= 0.3 * CEILING  # its share of the ceiling at most


def test_the_next_session_gets_the_project_part_once_the_server_answers(tmp_path, team):
    env = setup(tmp_path, team.url)
    first, _ = hook(env, tmp_path / "proj", "claude-code", "session-start", start_payload(tmp_path, "s1"))
    assert "[not available]" in first
    team.hang = False
    second, _ = hook(env, tmp_path / "proj", "claude-code", "session-start", start_payload(tmp_path, "s2"))
    assert "[not available]" not in second and "Deploys go out on Tuesdays" in second
    assert "PROJECT MEMORY: proj (notes about this repository) [" in second


def test_the_prompt_hook_answers_with_a_hung_team_server(tmp_path, team):
    def payload(root) -> dict:
        return {"session_id": "p1", "hook_event_name": "UserPromptSubmit", "cwd": str(root / "proj"),
                "prompt": "how do we deploy the api service to staging"}

    local, _ = hook(setup(tmp_path / "local", None), tmp_path / "local" / "proj", "claude-code", "prompt",
                    payload(tmp_path / "local"))
    context, took = hook(setup(tmp_path, team.url), tmp_path / "proj", "claude-code", "prompt", payload(tmp_path))
    assert took < CEILING + 2.0
    assert context == local and "1. Never push to main" in context
    assert team.held == []  # recall reads the index: the prompt hook does not ask the team server


def test_snapshot_waits_once_and_says_why_the_project_part_is_missing(tmp_path, team):
    env = setup(tmp_path, team.url, timeout=3)
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "pi_memory", "snapshot"], capture_output=True, text=True, env=env,
                          cwd=tmp_path / "proj", timeout=60)
    took = time.monotonic() - started
    assert done.returncode == 0
    assert took >= 3 and len(team.held) == 1  # one wait of 3 s, not one per read of the stores
    assert done.stderr == (f"The project part is left out of this snapshot: the team project store 'acme' on "
                           f"{team.url} did not answer within 3 s, so its entries could not be read. The server may "
                           "be down or overloaded: retry later (teamProjectStore.timeoutSeconds sets how long "
                           "pi-memory waits).\n")
    assert "Builds run with make" in done.stdout and unavailable(team.url) in done.stdout
