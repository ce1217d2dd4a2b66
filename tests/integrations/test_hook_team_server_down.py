"""The prompt hook with a team memory server (the self-hosted semantic backend) that is down or hangs (a tester's
finding: the mem0_memory tool told the model to carry on and tell the user, but the recall before a run said
nothing, a hung server cost each prompt hook its whole ceiling, and every hook process asked GET /whoami again).
A real ``pi-memory hook`` process now gives the model the tool's words, logs the fix, and the next prompt's
process neither waits for the server nor asks it anything for the down window."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time

import pytest

from pi_memory.semantic.backend import RECALL_SERVER_DOWN
from team_sockets import team_env

CEILING = 4.0
TOKEN = "pim_hookdown_0123456789abcdef"


def setup(tmp_path, url: str) -> dict[str, str]:
    env = team_env(tmp_path, None) | {"PI_MEMORY_HOOK_CEILING_S": str(CEILING)}
    semantic = {"backend": {"type": "self-hosted", "baseUrl": url, "apiKey": TOKEN, "requestTimeoutMs": 10_000}}
    (tmp_path / "agent" / "settings.json").write_text(json.dumps({"pi-memory": {"semantic": semantic}}),
                                                      encoding="utf-8")
    return env


def prompt(env, tmp_path, host: str, sid: str) -> tuple[str | None, float]:
    payload = {"session_id": sid, "hook_event_name": "UserPromptSubmit", "cwd": str(tmp_path / "proj"),
               "prompt": "how do we deploy the api service to staging"}
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "pi_memory", "hook", host, "prompt"], input=json.dumps(payload),
                          capture_output=True, text=True, env=env, cwd=tmp_path / "proj", timeout=60)
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout).get("hookSpecificOutput", {}).get("additionalContext")
    return answer, time.monotonic() - started


@pytest.mark.parametrize("host", ["claude-code", "codex"])
def test_a_hung_team_server_is_said_in_the_tools_words_and_not_asked_again_for_the_window(tmp_path, team_socket,
                                                                                         host):
    env = setup(tmp_path, team_socket.url)
    first, took = prompt(env, tmp_path, host, "s1")
    assert took < CEILING + 2.0  # answered by the hook, not abandoned at the ceiling
    assert first is not None and first.endswith(RECALL_SERVER_DOWN) and "Never push to main" in first
    assert RECALL_SERVER_DOWN == (
        "The team memory server is not working right now, so no team memories were recalled for this prompt. Carry "
        "on with the task without team memory, and tell the user that the team memory server is not answering.")
    asked = len(team_socket.spans)
    assert asked == 2  # GET /whoami (1 s at most), then the search's first request, bounded by recall's share
    log = (tmp_path / "state" / "hooks.log").read_text(encoding="utf-8")
    assert f"{host} prompt: recall failed: the memory server at {team_socket.url} did not answer GET /health within" \
        in log and "retry, or raise the timeout" in log  # the fix is for a person: the log
    second, took = prompt(env, tmp_path, host, "s2")
    assert second is not None and second.endswith(RECALL_SERVER_DOWN)
    assert len(team_socket.spans) == asked  # not asked again: neither /whoami nor /search
    kept = (tmp_path / "state" / "hooks" / "team-servers.json").read_text(encoding="utf-8")
    assert TOKEN not in kept and team_socket.url not in kept.split('"text"')[0]  # digests only, but the error text


def test_a_server_that_is_not_running_is_said_the_same_way(tmp_path):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{probe.getsockname()[1]}"
    env = setup(tmp_path, url)
    context, _ = prompt(env, tmp_path, "claude-code", "s1")
    assert context is not None and context.endswith(RECALL_SERVER_DOWN)
    log = (tmp_path / "state" / "hooks.log").read_text(encoding="utf-8")
    assert f"recall failed: the memory server at {url} is not reachable" in log
    assert "start it with `pi-memory serve` or switch the semantic backend to embedded" in log
