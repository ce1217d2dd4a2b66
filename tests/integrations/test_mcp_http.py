"""``pi-memory mcp --http``: the MCP tools over streamable HTTP with the real mcp client, a bearer token on
every request, and no bind beyond loopback without a token chosen by the user."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import anyio
import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from pi_memory.integrations.mcp_http import resolve_token
from pi_memory.semantic.backends.rest_runner import ServeError

TOKEN = "http-test-token-0123456789"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    root = tmp_path_factory.mktemp("mcp-http")
    env = {**os.environ, "HOME": str(root), "PI_MEMORY_DIR": str(root / "data")}
    proc = subprocess.Popen([sys.executable, "-m", "pi_memory", "mcp", "--http", "--port", "0", "--token", TOKEN,
                             "--index-interval", "0", "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env, cwd=root)
    started = json.loads(proc.stdout.readline())
    yield started, root
    proc.send_signal(signal.SIGTERM)
    proc.wait(15)
    assert json.loads(proc.stdout.readline())["event"] == "stopped"


def test_started_event_names_the_url_and_never_the_token(server):
    started, _ = server
    assert started["event"] == "started" and started["transport"] == "streamable-http"
    assert started["url"].startswith("http://127.0.0.1:") and started["url"].endswith("/mcp")
    assert started["token"] == "given" and TOKEN not in json.dumps(started)
    assert {"memory_add", "memory_read", "session_search"} <= set(started["tools"])


def test_tools_work_with_the_token(server):
    started, root = server

    async def main():
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}) as hc, \
                Client(streamable_http_client(started["url"], http_client=hc)) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            result = await client.call_tool("memory_add", {"target": "memory", "content": "Served over HTTP"})
            return names, result

    names, result = anyio.run(main)
    assert "memory_add" in names and result.is_error is False
    assert (root / "data" / "MEMORY.md").read_text(encoding="utf-8") == "Served over HTTP\n"


@pytest.mark.parametrize("header", [None, "Bearer wrong-token-0123456789", f"Basic {TOKEN}", TOKEN])
def test_requests_without_the_token_get_401(server, header):
    started, _ = server
    headers = {"Authorization": header} if header else {}
    reply = httpx.post(started["url"], headers={**headers, "Accept": "application/json, text/event-stream"},
                       json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, timeout=10)
    assert reply.status_code == 401
    assert reply.headers["www-authenticate"] == 'Bearer realm="pi-memory"'


@pytest.mark.parametrize(("token", "host", "message"), [
    (None, "0.0.0.0", "without a token"),
    ("short", "192.168.1.5", "a token of 5 characters"),
    ("  ", "127.0.0.1", "printable ASCII"),
    ("has space in it 0123456789", "127.0.0.1", "printable ASCII"),
])
def test_unsafe_tokens_and_binds_are_refused(token, host, message, monkeypatch):
    monkeypatch.delenv("PI_MEMORY_MCP_TOKEN", raising=False)
    with pytest.raises(ServeError, match=message):
        resolve_token(token, host)


def test_loopback_without_a_token_generates_one(monkeypatch):
    monkeypatch.delenv("PI_MEMORY_MCP_TOKEN", raising=False)
    token, generated = resolve_token(None, "localhost")
    assert generated is True and len(token) >= 32
    monkeypatch.setenv("PI_MEMORY_MCP_TOKEN", TOKEN)
    assert resolve_token(None, "0.0.0.0") == (TOKEN, False)


def test_the_cli_refuses_a_public_bind_without_a_token(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "PI_MEMORY_MCP_TOKEN"}
    done = subprocess.run([sys.executable, "-m", "pi_memory", "mcp", "--http", "--host", "0.0.0.0", "--port", "0"],
                          capture_output=True, text=True, timeout=60, env={**env, "PI_MEMORY_DIR": str(tmp_path)})
    assert done.returncode == 2 and "refusing to serve MCP on '0.0.0.0'" in done.stderr
