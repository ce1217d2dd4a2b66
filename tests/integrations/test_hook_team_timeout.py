"""A team project server that accepts connections and never answers (a real socket on 127.0.0.1) costs a
session its project part only: a real ``pi-memory hook`` process still answers within its 2 s ceiling with
MEMORY.md, USER.md, the blocks and the standing instructions, and a line saying the team project memory could
not be reached; the prompt hook still answers; ``pi-memory snapshot`` waits a start's START_WAIT_S once and
says on standard error that the server did not answer in time. A context without the project part is not kept
for the next session."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time

import pytest

from pi_memory.curated.snapshot import snapshot_is_safe
from pi_memory.curated.team_client import START_WAIT_S
from team_sockets import team_env, unavailable

CEILING = 4.0


def setup(tmp_path, url: str | None, timeout: float = 10) -> dict[str, str]:
    """:func:`team_sockets.team_env` with the hook's ceiling as set for tests on a loaded machine (the team server
    gets the same shares of it: 0.3 to answer, nothing past 0.75); on 2 busy cores a cold process alone can take
    most of the default 2 s."""
    return team_env(tmp_path, url, timeout) | {"PI_MEMORY_HOOK_CEILING_S": str(CEILING)}


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


@pytest.mark.parametrize("host", ["claude-code", "codex"])
def test_a_hung_team_server_costs_the_session_start_its_project_part_only(tmp_path, team_socket, host):
    local, _ = hook(setup(tmp_path / "local", None), tmp_path / "local" / "proj", host, "session-start",
                    start_payload(tmp_path / "local", "s1"))
    env = setup(tmp_path, team_socket.url)
    context, took = hook(env, tmp_path / "proj", host, "session-start", start_payload(tmp_path, "s2"))
    assert took < CEILING + 2.0  # the ceiling, and the process's start and exit
    assert len(team_socket.held) == 1  # asked once: once it did not answer, the snapshot's second read asks nothing
    snapshot_end = "\n</memory-snapshot>"
    assert context == local.replace(snapshot_end, "\n\n" + unavailable(team_socket.url) + snapshot_end, 1)
    for part in ("Builds run with make", "Prefers short answers", "Never push to main", "<memory-blocks>"):
        assert part in context
    assert snapshot_is_safe(context[: context.index(snapshot_end) + len(snapshot_end)])
    log = (tmp_path / "state" / "hooks.log").read_text(encoding="utf-8")
    waited = re.search(f"session-start: the project part is missing: the team project store 'acme' on "
                       f"{re.escape(team_socket.url)} did not answer within ([0-9.]+) s, so its entries could not be "
                       "read. The server may be down or overloaded. A start waits only this long for it; memory_read "
                       "with target 'project' asks again with the full teamProjectStore.timeoutSeconds.\n", log)
    assert waited and float(waited.group(1)) <= 0.3 * CEILING  # its share of the ceiling at most


def test_the_next_session_gets_the_project_part_once_the_server_answers(tmp_path, team_socket):
    env = setup(tmp_path, team_socket.url)
    first, _ = hook(env, tmp_path / "proj", "claude-code", "session-start", start_payload(tmp_path, "s1"))
    assert "[not available]" in first
    team_socket.mode = "answer"
    second, _ = hook(env, tmp_path / "proj", "claude-code", "session-start", start_payload(tmp_path, "s2"))
    assert "[not available]" not in second and "Deploys go out on Tuesdays" in second
    assert "PROJECT MEMORY: proj (notes about this repository) [" in second


def test_the_prompt_hook_answers_with_a_hung_team_server(tmp_path, team_socket):
    def payload(root) -> dict:
        return {"session_id": "p1", "hook_event_name": "UserPromptSubmit", "cwd": str(root / "proj"),
                "prompt": "how do we deploy the api service to staging"}

    local, _ = hook(setup(tmp_path / "local", None), tmp_path / "local" / "proj", "claude-code", "prompt",
                    payload(tmp_path / "local"))
    context, took = hook(setup(tmp_path, team_socket.url), tmp_path / "proj", "claude-code", "prompt", payload(tmp_path))
    assert took < CEILING + 2.0
    assert context == local and "1. Never push to main" in context
    assert team_socket.held == []  # recall reads the index: the prompt hook does not ask the team server


@pytest.mark.parametrize("timeout", [5, 10])
def test_snapshot_waits_a_starts_time_once_and_says_why_the_project_part_is_missing(tmp_path, team_socket, timeout):
    """`pi-memory snapshot` shows what a new session would get: it waited the store's whole timeoutSeconds for a
    hung server; now a start's START_WAIT_S, once, whatever timeoutSeconds says."""
    env = setup(tmp_path, team_socket.url, timeout=timeout)
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "pi_memory", "snapshot"], capture_output=True, text=True, env=env,
                          cwd=tmp_path / "proj", timeout=60)
    took = time.monotonic() - started
    assert done.returncode == 0
    assert START_WAIT_S <= took < timeout and len(team_socket.held) == 1  # one start's wait, not timeoutSeconds
    held = team_socket.held_for(0)
    assert held is not None and START_WAIT_S - 0.5 <= held < START_WAIT_S + 1.0
    assert done.stderr == (f"The project part is left out of this snapshot (the local stores are shown): the team "
                           f"project store 'acme' on {team_socket.url} did not answer within 2 s, so its entries could "
                           "not be read. The server may be down or overloaded. A session start waits only this long "
                           "for it; `pi-memory read project` asks again with the full "
                           "teamProjectStore.timeoutSeconds.\n")
    assert "Builds run with make" in done.stdout and unavailable(team_socket.url) in done.stdout
