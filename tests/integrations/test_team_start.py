"""A team project server that accepts connections and never answers (``team_socket``, a real socket on
127.0.0.1) costs a pi session's start and the MCP server's start :data:`START_WAIT_S` once, not the store's
``timeoutSeconds``: the pi bridge's ``hello`` waits it, and its frozen snapshot (the first prompt's), asked less
than :data:`DOWN_WINDOW_S` later, does not wait again (it cost another 2 s); ``pi-memory mcp`` waits it until it
reports that it started, and its ``memory://snapshot`` then none. The snapshot has the local stores and says the
project part could not be reached; the tool calls after the start still ask, and wait the full
``timeoutSeconds`` for the team store."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from pi_memory.curated.team_client import DOWN_WINDOW_S, START_WAIT_S, TOOL_WAIT_S, forget_down
from pi_memory.integrations.pi.bridge import Bridge
from team_sockets import team_env, unavailable

TIMEOUT = 5.0  # the store's timeoutSeconds: well above START_WAIT_S, so the two cannot be mistaken
MARGIN = 1.0  # the cut-off is a timer: thread start-up and a loaded machine's scheduling
SLACK = 0.5  # the server sees a connection a little after the client opened it (its accept thread)
AT_ONCE = 0.5  # a start that does not ask the server: building the snapshot from the local files only


def read_error(url: str, seconds: float) -> str:
    return (f"the team project store 'acme' on {url} did not answer within {seconds:g} s, so its entries could not "
            "be read. The server may be down or overloaded: retry later (teamProjectStore.timeoutSeconds sets how "
            "long pi-memory waits).")


def write_error(url: str, seconds: float) -> str:
    return (f"the team project store 'acme' on {url} did not answer within {seconds:g} s, so it is unknown whether "
            "the change was applied. Read the project store again (memory_read, or `pi-memory read project`) before "
            "you retry; if the server keeps not answering, tell the user.")


def in_this_process(monkeypatch, env: dict[str, str]) -> None:
    for name in [k for k in os.environ if k.startswith("PI_MEMORY_")]:
        monkeypatch.delenv(name)
    for name in ("HOME", "PI_MEMORY_DIR", "PI_MEMORY_STATE_DIR", "PI_CODING_AGENT_DIR", "PI_MEMORY_SERVER_TOKEN"):
        monkeypatch.setenv(name, env[name])
    monkeypatch.setenv("PI_MEMORY_CATCH_UP", "0")  # no background indexing beside the timed start


def start_bridge(tmp_path) -> tuple[Bridge, float, str, float]:
    """A pi bridge started for ``tmp_path/proj``: ``(bridge, seconds hello took, frozen snapshot, seconds the
    snapshot took)``."""
    bridge = Bridge()
    started = time.monotonic()
    bridge.hello(cwd=str(tmp_path / "proj"), sessionId="s1")
    hello = time.monotonic() - started
    started = time.monotonic()
    text = bridge.snapshot()["text"]
    return bridge, hello, text, time.monotonic() - started


def test_a_pi_session_starts_within_the_start_wait_and_tool_calls_get_the_timeout(tmp_path, monkeypatch,
                                                                                  team_socket):
    in_this_process(monkeypatch, team_env(tmp_path / "local", None))
    local, local_hello, local_text, _ = start_bridge(tmp_path / "local")
    local.shutdown()
    in_this_process(monkeypatch, team_env(tmp_path, team_socket.url, TIMEOUT))
    bridge, hello, text, snapshot = start_bridge(tmp_path)
    try:
        assert START_WAIT_S - 0.05 <= hello < local_hello + START_WAIT_S + MARGIN  # not timeoutSeconds
        assert snapshot < AT_ONCE < START_WAIT_S  # the frozen snapshot, within DOWN_WINDOW_S: not asked again
        assert len(team_socket.spans) == 1  # hello's read of the stores only
        held = team_socket.held_for(0)
        assert held is not None and START_WAIT_S - SLACK <= held < START_WAIT_S + MARGIN
        end = "\n</memory-snapshot>"
        assert text == local_text.replace(end, "\n\n" + unavailable(team_socket.url) + end, 1)
        assert "Builds run with make" in text and "Prefers short answers" in text  # the local stores are there
        started = time.monotonic()
        reply = bridge.call_tool(name="memory_add", arguments={"target": "project", "content": "Tag releases"})
        took = time.monotonic() - started
        assert TIMEOUT - 0.05 <= took < TIMEOUT + MARGIN  # a tool call asks, whatever the start found
        assert reply["isError"] is True and reply["result"]["error"] == write_error(team_socket.url, TIMEOUT)
        assert len(team_socket.spans) == 2
    finally:
        bridge.shutdown()


def test_a_pi_tool_call_waits_less_than_the_extension_gives_a_request(tmp_path, monkeypatch, team_socket):
    """With the default timeoutSeconds (10 s) a hung team server held a pi tool call past the 10 s the extension
    gives each request, and pi marked the bridge dead: the session lost its memory. A tool call's team requests
    now end at TOOL_WAIT_S, with words that say so."""
    in_this_process(monkeypatch, team_env(tmp_path, team_socket.url, 10))
    bridge, _hello, _text, _snapshot = start_bridge(tmp_path)
    try:
        started = time.monotonic()
        reply = bridge.call_tool(name="memory_read", arguments={"target": "project"})
        took = time.monotonic() - started
        assert TOOL_WAIT_S - 0.05 <= took < TOOL_WAIT_S + MARGIN < 10
        assert reply["isError"] is True
        assert reply["result"]["error"] == (
            f"the team project store 'acme' on {team_socket.url} did not answer within {TOOL_WAIT_S:g} s, so its "
            "entries could not be read. The server may be down or overloaded. A tool call in pi waits at most this "
            "long, so that pi does not give up on pi-memory; retry later.")
    finally:
        bridge.shutdown()


@pytest.mark.parametrize(("name", "args"), [("memory", "status"), ("status", ""), ("memory", "")])
def test_a_pi_command_waits_less_than_the_extension_gives_a_request(tmp_path, monkeypatch, team_socket, name, args):
    """`/memory status` against a hung team server waited the full timeoutSeconds (10 s by default: the extension's
    own limit for a request, after which pi marks the bridge dead). A command and the status sent with its reply
    now end at TOOL_WAIT_S together."""
    in_this_process(monkeypatch, team_env(tmp_path, team_socket.url, 10))
    bridge, _hello, _text, _snapshot = start_bridge(tmp_path)
    try:
        forget_down()  # as after DOWN_WINDOW_S: the command asks the server again
        started = time.monotonic()
        reply = bridge.command(name=name, args=args)
        took = time.monotonic() - started
        assert TOOL_WAIT_S - 0.05 <= took < TOOL_WAIT_S + MARGIN < 10
        assert "Traceback" not in reply["text"] and reply["status"]["memoryEntries"] == 1
        if (name, args) != ("memory", ""):  # status: the store's line says why, for a person
            assert (f"  The team server at {team_socket.url} did not answer within {TOOL_WAIT_S:g} s (a pi command "
                    "waits at most that long, so that pi does not give up on pi-memory). It may be down or "
                    "overloaded: check that it runs and that this machine can reach it, then run `pi-memory status` "
                    "again.") in reply["text"].splitlines()
    finally:
        bridge.shutdown()


def send(proc: subprocess.Popen, message: dict) -> dict | None:
    proc.stdin.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
    proc.stdin.flush()
    return json.loads(proc.stdout.readline()) if "id" in message else None


def test_the_mcp_server_starts_within_the_start_wait_and_tool_calls_get_the_timeout(tmp_path, team_socket):
    env = team_env(tmp_path, team_socket.url, TIMEOUT)
    proc = subprocess.Popen([sys.executable, "-m", "pi_memory", "--json", "mcp", "--index-interval", "0"], env=env,
                            cwd=tmp_path / "proj", text=True, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    try:
        line = proc.stderr.readline()
        while line and not line.startswith("{"):
            line = proc.stderr.readline()
        assert json.loads(line)["event"] == "started"
        # the start asked once (the CLI opens the stores without reading them; the server's start reads them)
        # and gave up after START_WAIT_S, not timeoutSeconds
        assert len(team_socket.spans) == 1
        held = team_socket.held_for(0)
        assert held is not None and START_WAIT_S - SLACK <= held < START_WAIT_S + MARGIN
        send(proc, {"id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}})
        send(proc, {"method": "notifications/initialized"})
        started = time.monotonic()  # the snapshot resource, less than DOWN_WINDOW_S after the start: not asked
        snap = send(proc, {"id": 3, "method": "resources/read", "params": {"uri": "memory://snapshot"}})
        assert time.monotonic() - started < AT_ONCE and len(team_socket.spans) == 1
        text = snap["result"]["contents"][0]["text"]
        assert unavailable(team_socket.url) in text and "Builds run with make" in text
        reply = send(proc, {"id": 2, "method": "tools/call", "params": {"name": "memory_read",
                                                                         "arguments": {"target": "project"}}})
        assert reply["result"]["isError"] is True
        assert reply["result"]["structuredContent"]["error"] == read_error(team_socket.url, TIMEOUT)
        assert len(team_socket.spans) == 2
        held = team_socket.held_for(1)
        assert held is not None and TIMEOUT - SLACK <= held < TIMEOUT + MARGIN
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
            for stream in (proc.stdin, proc.stdout, proc.stderr):
                stream.close()


def test_a_pi_session_start_is_bounded_against_a_dribbling_server_too(tmp_path, monkeypatch, team_socket):
    team_socket.mode = "dribble"  # a byte a second in the headers: httpx's read timeout alone never ends it
    in_this_process(monkeypatch, team_env(tmp_path, team_socket.url, TIMEOUT))
    bridge, hello, text, snapshot = start_bridge(tmp_path)
    try:
        assert START_WAIT_S - 0.05 <= hello < START_WAIT_S + MARGIN + 2.0  # hello's wait (and the bridge's start)
        assert snapshot < AT_ONCE  # not asked again: the dribble cost the start one START_WAIT_S
        assert unavailable(team_socket.url) in text and "Builds run with make" in text
        assert len(team_socket.spans) == 1
        held = team_socket.held_for(0)
        assert held is not None and START_WAIT_S - SLACK <= held < START_WAIT_S + MARGIN + 2 * team_socket.every
    finally:
        bridge.shutdown()


def test_the_frozen_snapshot_asks_again_after_the_window(tmp_path, monkeypatch, team_socket):
    """The window is short: a start past it asks the server again (and waits START_WAIT_S for it)."""
    from pi_memory.curated import team_client

    assert DOWN_WINDOW_S == 30.0
    monkeypatch.setattr(team_client, "DOWN_WINDOW_S", 1.0)
    in_this_process(monkeypatch, team_env(tmp_path, team_socket.url, TIMEOUT))
    bridge, _hello, _text, snapshot = start_bridge(tmp_path)
    try:
        assert snapshot < AT_ONCE and len(team_socket.spans) == 1
        time.sleep(1.0)
        started = time.monotonic()
        text = bridge.snapshot()["text"]  # after a compaction: built again
        assert START_WAIT_S - 0.05 <= time.monotonic() - started < START_WAIT_S + MARGIN
        assert len(team_socket.spans) == 2 and unavailable(team_socket.url) in text
    finally:
        bridge.shutdown()


def test_the_mcp_snapshot_resource_waits_a_start_not_the_timeout(tmp_path, team_socket):
    """``memory://snapshot`` read the stores with the whole timeoutSeconds: a hung server held it 10 s."""
    import anyio
    from mcp import Client

    from pi_memory.curated import MemoryStore
    from pi_memory.curated.team_client import TeamProjectClient, forget_down
    from pi_memory.integrations.mcp_server import build_server

    (tmp_path / "repo" / ".git").mkdir(parents=True)
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "USER.md").write_text("Prefers short answers\n", encoding="utf-8")
    store = MemoryStore(tmp_path / "data", project_root=tmp_path / "repo",
                        team_project=TeamProjectClient(team_socket.url, "acme", "team-token", timeout=TIMEOUT))
    server = build_server(store)  # its start: START_WAIT_S
    forget_down()  # as if the window had passed

    async def read() -> tuple[str, float]:
        async with Client(server) as client:
            started = time.monotonic()
            result = await client.read_resource("memory://snapshot")
            return result.contents[0].text, time.monotonic() - started

    text, took = anyio.run(read)
    assert START_WAIT_S - 0.05 <= took < START_WAIT_S + MARGIN  # not timeoutSeconds (5 s)
    assert len(team_socket.spans) == 2
    assert unavailable(team_socket.url, "repo") in text and "Prefers short answers" in text
