"""``pi-memory mcp`` on stdio answers ``initialize`` early with the SDK's own earlier answer (byte for byte),
and the relay in front of the SDK is invisible to a real MCP client (both protocol modes)."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys

import anyio
import pytest
from mcp import Client, StdioServerParameters


def env_for(tmp_path, **extra) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PI_MEMORY_INDEX_INTERVAL", "PI_CODING_AGENT_SESSION_DIR")}
    env.update(PI_MEMORY_DIR=str(tmp_path / "data"), HOME=str(tmp_path / "home"),
               PI_MEMORY_STATE_DIR=str(tmp_path / "state"), CODEX_HOME=str(tmp_path / "codex"), **extra)
    return env


def initialize(env, version: str, request_id=1) -> bytes:
    request = {"jsonrpc": "2.0", "id": request_id, "method": "initialize",
               "params": {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
    done = subprocess.run([sys.executable, "-m", "pi_memory", "mcp", "--index-interval", "0"],
                          input=(json.dumps(request) + "\n").encode(), capture_output=True, env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize("version", ["2025-06-18", "1999-01-01"])
def test_the_early_answer_is_the_sdks_own(tmp_path, version):
    env = env_for(tmp_path)
    first = initialize(env, version)  # no earlier answer: the SDK's is relayed and remembered
    cached = initialize(env, version)  # answered from the cache, the SDK's own answer dropped
    plain = initialize(env_for(tmp_path, PI_MEMORY_MCP_QUICKSTART="0"), version)
    assert first == cached == plain
    assert first.count(b"\n") == 1 and json.loads(first)["id"] == 1
    if version == "1999-01-01":  # an unsupported version gets the SDK's latest, under the client's own id
        assert json.loads(first)["result"]["protocolVersion"] != version
        assert initialize(env, version, request_id="abc").startswith(b'{"jsonrpc":"2.0","id":"abc","result":')


def test_a_stale_early_answer_is_replaced_after_one_start(tmp_path):
    env = env_for(tmp_path)
    initialize(env, "2025-11-25")
    cache_file = tmp_path / "state" / "mcp-initialize.json"
    cache = json.loads(cache_file.read_text(encoding="utf-8"))
    (key,) = cache
    cache[key]["serverInfo"]["name"] = "stale"
    cache_file.write_text(json.dumps(cache), encoding="utf-8")
    assert b'"name":"stale"' in initialize(env, "2025-11-25")  # sent early, then corrected
    assert b'"name":"pi-memory"' in initialize(env, "2025-11-25")


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_a_real_client_works_through_the_relay(tmp_path, mode):
    params = StdioServerParameters(command=sys.executable, args=["-m", "pi_memory", "mcp", "--index-interval", "0"],
                                   env=env_for(tmp_path))

    async def scenario():
        for _ in range(2 if mode == "legacy" else 1):  # a second start answers initialize from the cache
            async with Client(params, mode=mode) as client:
                names = {t.name for t in (await client.list_tools()).tools}
                result = await client.call_tool("memory_add", {"target": "memory", "content": f"via {mode}"})
                assert "memory_add" in names and result.is_error is False

    anyio.run(scenario)
    assert (tmp_path / "data" / "MEMORY.md").read_text(encoding="utf-8") == f"via {mode}\n"


def list_tools(env, version: str = "2025-06-18") -> tuple[bytes, bytes, str]:
    """``(initialize answer, tools/list answer, standard error)`` of one server start, as a client asks: the
    ``tools/list`` after the ``initialize`` answer; standard input stays open until both answers are read."""
    proc = subprocess.Popen([sys.executable, "-m", "pi_memory", "mcp", "--index-interval", "0"], env=env,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    request = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
               "params": {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
    proc.stdin.write((json.dumps(request) + "\n").encode())
    proc.stdin.flush()
    init = proc.stdout.readline()
    proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n'
                     b'{"jsonrpc":"2.0","id":"t1","method":"tools/list"}\n')
    proc.stdin.flush()
    tools = proc.stdout.readline()
    proc.stdin.close()
    rest = proc.stdout.read()
    err = proc.stderr.read().decode()
    assert proc.wait(60) == 0, err
    assert rest == b""  # nothing more: the SDK's own answers to both were dropped
    return init, tools, err


def tool_names(answer: bytes) -> list[str]:
    return [t["name"] for t in json.loads(answer)["result"]["tools"]]


ALL_TOOLS = ["memory_add", "memory_replace", "memory_remove", "memory_read", "session_search", "memory_search",
             "updateMemory", "skill_manage", "mem0_memory"]


def test_the_early_tool_list_is_the_sdks_own_and_a_stale_one_is_replaced(tmp_path):
    env = env_for(tmp_path)
    first = list_tools(env)  # no earlier answer: the SDK's is relayed and remembered
    cached = list_tools(env)
    plain = list_tools(env_for(tmp_path, PI_MEMORY_MCP_QUICKSTART="0"))
    assert first[:2] == cached[:2] == plain[:2]
    assert json.loads(first[1])["id"] == "t1" and tool_names(first[1]) == ALL_TOOLS
    cache_file = tmp_path / "state" / "mcp-tools-list.json"
    cache = json.loads(cache_file.read_text(encoding="utf-8"))
    (key,) = cache
    cache[key]["tools"][0]["description"] = "stale"
    cache_file.write_text(json.dumps(cache), encoding="utf-8")
    _, tools, err = list_tools(env)
    assert json.loads(tools)["result"]["tools"][0]["description"] == "stale"  # it was answered from the cache
    assert "the early tools/list answer differed from the SDK's" in err
    assert list_tools(env)[1] == first[1]


def test_a_settings_change_or_another_data_root_is_never_answered_with_the_old_tool_list(tmp_path):
    env = env_for(tmp_path)
    assert tool_names(list_tools(env)[1]) == ALL_TOOLS
    agent = tmp_path / "home" / ".pi" / "agent"
    agent.mkdir(parents=True)
    (agent / "settings.json").write_text(json.dumps({"pi-memory": {"toolEnabled": False}}), encoding="utf-8")
    changed = list_tools(env)
    assert tool_names(changed[1]) == ALL_TOOLS[:-1] and "differed" not in changed[2]
    (agent / "settings.json").write_text(json.dumps({"pi-memory": {"memoryMode": "hybrid"}}), encoding="utf-8")
    again = list_tools({**env, "PI_MEMORY_DIR": str(tmp_path / "other")})
    assert tool_names(again[1]) == ALL_TOOLS and "differed" not in again[2]
    cache = json.loads((tmp_path / "state" / "mcp-tools-list.json").read_text(encoding="utf-8"))
    assert len(cache) == 3


@pytest.mark.parametrize(("args", "kept"), [
    (["mcp"], ["mcp"]),
    (["mcp", "--index-interval", "0"], ["mcp"]),  # a host's warm-up and the host itself may differ here
    (["mcp", "--index-interval=5", "--json", "--dir", "/d"], ["mcp", "--dir", "/d"]),
])
def test_the_tool_list_key_ignores_options_that_change_no_tool(args, kept):
    from pi_memory.integrations.mcp_quickstart import _tool_args

    assert _tool_args(args) == kept


def test_the_tool_list_key_follows_the_variables_settings_name(tmp_path, monkeypatch):
    from pi_memory.integrations import mcp_quickstart

    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("PI_CODING_AGENT_DIR", raising=False)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(mcp_quickstart, "_code_fingerprint", lambda: [])
    agent = tmp_path / "home" / ".pi" / "agent"
    agent.mkdir(parents=True)
    (agent / "settings.json").write_text('{"pi-memory": {"memoryMode": "${MY_MODE}"}}', encoding="utf-8")
    key = mcp_quickstart.tools_key("k", {})
    monkeypatch.setenv("PI_MEMORY_HOOK_CEILING_S", "9")  # chooses no tool
    assert mcp_quickstart.tools_key("k", {}) == key
    monkeypatch.setenv("MY_MODE", "passive")  # named by the settings: part of them
    assert mcp_quickstart.tools_key("k", {}) != key
    assert mcp_quickstart.tools_key("other", {}) != mcp_quickstart.tools_key("k", {})


def test_a_cache_that_cannot_be_written_never_stops_the_relay(tmp_path):
    (tmp_path / "not-a-folder").write_text("", encoding="utf-8")  # the state folder cannot be created
    env = {**env_for(tmp_path), "PI_MEMORY_STATE_DIR": str(tmp_path / "not-a-folder" / "state")}
    init, tools, err = list_tools(env)  # before: the relay thread died on the write and the client hung
    assert json.loads(init)["id"] == 1 and tool_names(tools) == ALL_TOOLS
    assert "the early answers' cache was not updated" in err


def test_a_client_that_hangs_up_at_once_still_gets_a_stale_tool_list_corrected(tmp_path):
    """CI once saw the SDK stop before answering the ``tools/list`` answered early, when the client closed its
    input right after: the stale answer then stayed. The SDK now gets its grace to answer what is awaited."""
    env = env_for(tmp_path)
    first = list_tools(env)
    cache_file = tmp_path / "state" / "mcp-tools-list.json"
    cache = json.loads(cache_file.read_text(encoding="utf-8"))
    (key,) = cache
    cache[key]["tools"][0]["description"] = "stale"
    cache_file.write_text(json.dumps(cache), encoding="utf-8")
    request = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
               "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                          "clientInfo": {"name": "t", "version": "1"}}}
    lines = (json.dumps(request) + "\n").encode() + (b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n'
                                                    b'{"jsonrpc":"2.0","id":"t1","method":"tools/list"}\n')
    done = subprocess.run([sys.executable, "-m", "pi_memory", "mcp", "--index-interval", "0"], input=lines,
                          capture_output=True, env=env, timeout=60)  # everything written, input closed at once
    answers = done.stdout.splitlines()
    assert done.returncode == 0 and len(answers) == 2
    assert json.loads(answers[1])["result"]["tools"][0]["description"] == "stale"
    assert "the early tools/list answer differed from the SDK's" in done.stderr.decode()
    assert list_tools(env)[1] == first[1]


def answer_line(proc, timeout: float = 30.0) -> bytes:
    """The server's next line (``proc`` unbuffered), failing the test when none comes within ``timeout``."""
    if not select.select([proc.stdout], [], [], timeout)[0]:
        proc.kill()
        pytest.fail(f"no answer within {timeout:.0f} s")
    return proc.stdout.readline()


@pytest.mark.parametrize("quickstart", ["1", "0"])
def test_a_line_that_is_not_json_gets_a_parse_error(tmp_path, quickstart):
    """F13: a line that is not JSON got no answer at all (the SDK logs it and answers nothing); JSON-RPC 2.0
    answers -32700 with id null, and JSON that is no JSON-RPC message -32600. A blank line is no message. The
    early answers and everything after still work."""
    request = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
               "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                          "clientInfo": {"name": "t", "version": "1"}}}
    proc = subprocess.Popen([sys.executable, "-m", "pi_memory", "mcp", "--index-interval", "0"],
                            env=env_for(tmp_path, PI_MEMORY_MCP_QUICKSTART=quickstart),
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, bufsize=0)
    proc.stdin.write(b'{not json\n\n{"foo": 1}\n' + json.dumps(request).encode() + b"\n"
                     b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n{"jsonrpc":"2.0","id":2,"method":"ping"}\n')
    proc.stdin.flush()
    answers = [json.loads(answer_line(proc)) for _ in range(4)]  # stdin open until all are read
    proc.stdin.close()
    assert proc.stdout.read() == b"" and proc.wait(60) == 0
    assert answers[0] == {"jsonrpc": "2.0", "id": None, "error": {
        "code": -32700, "message": "Parse error: the line is not JSON. Send one JSON-RPC message per line."}}
    assert answers[1] == {"jsonrpc": "2.0", "id": None, "error": {
        "code": -32600, "message": "Invalid request: the line is JSON but not a JSON-RPC 2.0 message (it needs "
                                   "\"jsonrpc\": \"2.0\" and a method, or a result or error)."}}
    assert [a.get("id") for a in answers[2:]] == [1, 2]
    assert answers[2]["result"]["serverInfo"]["name"] == "pi-memory" and answers[3]["result"] == {}
