"""``pi-memory mcp`` on stdio answers ``initialize`` early with the SDK's own earlier answer (byte for byte),
and the relay in front of the SDK is invisible to a real MCP client (both protocol modes)."""

from __future__ import annotations

import json
import os
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
