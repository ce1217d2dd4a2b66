"""``pi-memory mcp --http``: the MCP tools over streamable HTTP with the real mcp client, a bearer token on
every request, and no bind beyond loopback without a token chosen by the user."""

from __future__ import annotations

import json
import os
import shutil
import signal
import ssl
import subprocess
import sys

import anyio
import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

import pi_memory
from pi_memory.integrations.mcp_http import resolve_token
from pi_memory.semantic.backends.rest_runner import ServeError

TOKEN = "http-test-token-0123456789"
SOURCE = os.path.dirname(os.path.dirname(pi_memory.__file__))  # the checkout under test, whatever the cwd


def env_for(root, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PI_MEMORY_MCP_TOKEN"}
    return {**env, "HOME": str(root), "PI_MEMORY_DIR": str(root / "data"),
            "PYTHONPATH": os.pathsep.join(filter(None, [SOURCE, env.get("PYTHONPATH")])), **extra}


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    root = tmp_path_factory.mktemp("mcp-http")
    env = env_for(root)
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


# --- lone surrogates: read as U+FFFD, as on stdio -------------------------------------------------------------
def rpc(url: str, body: str, session: str | None = None, token: str = TOKEN) -> httpx.Response:
    """POST one raw JSON-RPC text (escapes as written) to the server."""
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json",
               "Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-06-18"}
    if session:
        headers["mcp-session-id"] = session
    return httpx.post(url, content=body.encode("utf-8"), headers=headers, timeout=30)


def message_of(reply: httpx.Response) -> dict:
    """The JSON-RPC message of an answer sent as JSON or as one server-sent event."""
    if reply.headers.get("content-type", "").startswith("text/event-stream"):
        data = [line[5:].strip() for line in reply.text.splitlines() if line.startswith("data:")]
        return json.loads(data[-1])
    return reply.json()


def open_session(url: str) -> str:
    init = rpc(url, json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}}))
    assert init.status_code == 200, init.text
    session = init.headers["mcp-session-id"]
    assert rpc(url, '{"jsonrpc": "2.0", "method": "notifications/initialized"}', session).status_code == 202
    return session


@pytest.mark.parametrize(("content", "stored"), [
    ("Likes \\ud83d tea", "Likes \ufffd tea"),
    ("Low half \\udc00 alone", "Low half \ufffd alone"),
    ("A pair \\ud83d\\ude00 and a lone \\ud83d", "A pair \U0001F600 and a lone \ufffd"),
    ("Ends cut \\ud83d", "Ends cut \ufffd"),
])
def test_a_lone_surrogate_in_a_tool_call_is_stored_as_on_stdio(server, content, stored):
    started, root = server
    session = open_session(started["url"])
    body = ('{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "memory_add", "arguments": '
            '{"target": "user", "content": "' + content + '"}}}')
    reply = rpc(started["url"], body, session)
    assert reply.status_code == 200, reply.text
    result = message_of(reply)["result"]
    assert (result["isError"], result["structuredContent"]["success"]) == (False, True)
    assert stored in (root / "data" / "USER.md").read_text(encoding="utf-8").split("\n§\n")[-1]


def test_a_body_that_is_not_json_is_still_the_sdks_parse_error(server):
    started, _ = server
    reply = rpc(started["url"], '{"jsonrpc": "2.0", "id": 9, "method": "tools/list", \\ud83d', open_session(
        started["url"]))
    assert reply.status_code == 400 and message_of(reply)["error"]["code"] == -32700


# --- plain HTTP beyond loopback: refused unless TLS or --insecure-http, as `pi-memory serve` -----------------------
PLAIN = ("refusing to serve MCP over plain HTTP on {host!r}: the token and every memory would cross the network "
         "readable. Pass --tls-cert and --tls-key (HTTPS), or --insecure-http when a proxy in front adds TLS. Or "
         "keep --host 127.0.0.1.")


def run_cli(tmp_path, *args: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pi_memory", "mcp", "--http", "--port", "0", *args],
                          capture_output=True, text=True, timeout=60, env=env_for(tmp_path, **env), cwd=tmp_path)


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.5", "::", "memory.acme.dev"])
def test_plain_http_beyond_loopback_is_refused(tmp_path, host):
    done = run_cli(tmp_path, "--host", host, "--token", TOKEN)
    assert done.returncode == 2
    assert " ".join(done.stderr.split()) == "error: " + PLAIN.format(host=host)
    assert not (tmp_path / "data").exists()  # refused before the data folder is opened


@pytest.mark.parametrize(("args", "message"), [
    (["--tls-cert", "cert.pem"], "HTTPS needs both --tls-cert and --tls-key."),
    (["--tls-key", "key.pem"], "HTTPS needs both --tls-cert and --tls-key."),
    (["--token", TOKEN, "--token-file", "token.txt"], "Give the MCP token once: --token or --token-file, not both."),
    (["--token-file", "missing.txt"], "cannot read the MCP token from missing.txt (No such file or directory); give "
                                      "a file that holds only the token, or set $PI_MEMORY_MCP_TOKEN instead"),
    (["--token-file", "empty.txt"], "the token file empty.txt is empty; write the token in it, or set "
                                    "$PI_MEMORY_MCP_TOKEN instead"),
    (["--token-file", "two.txt"], "the MCP token must be printable ASCII on one line, without spaces; check the "
                                  "one given with --token, --token-file or $PI_MEMORY_MCP_TOKEN"),
    (["--host", "0.0.0.0", "--token-file", "short.txt"], "refusing to serve MCP on '0.0.0.0' with a token of 5 "
                                                         "characters; use at least 16 (e.g. `python -c 'import "
                                                         "secrets; print(secrets.token_urlsafe(32))'`)"),
])
def test_bad_tls_and_token_file_options_are_refused(tmp_path, args, message):
    (tmp_path / "empty.txt").write_text("\n  \n")
    (tmp_path / "two.txt").write_text("first-line-token-0123456789\nsecond-line-token-0123456789\n")
    (tmp_path / "short.txt").write_text("short\n")
    done = run_cli(tmp_path, *args)
    assert done.returncode == 2
    assert " ".join(done.stderr.split()) == "error: " + message


def start_cli(tmp_path, *args: str, **env: str) -> tuple[subprocess.Popen, dict]:
    proc = subprocess.Popen([sys.executable, "-m", "pi_memory", "mcp", "--http", "--port", "0", "--index-interval",
                             "0", "--json", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env_for(tmp_path, **env), cwd=tmp_path)
    line = proc.stdout.readline()
    assert line, proc.stderr.read()
    return proc, json.loads(line)


def stop(proc: subprocess.Popen) -> None:
    proc.send_signal(signal.SIGTERM)
    proc.wait(15)


def test_insecure_http_allows_a_public_bind(tmp_path):
    proc, started = start_cli(tmp_path, "--host", "0.0.0.0", "--token", TOKEN, "--insecure-http")
    try:
        assert started["url"].startswith("http://0.0.0.0:") and started["token"] == "given"
        port = started["url"].rsplit(":", 1)[1].split("/")[0]
        assert open_session(f"http://127.0.0.1:{port}/mcp")
    finally:
        stop(proc)


@pytest.mark.skipif(shutil.which("openssl") is None, reason="openssl makes the test certificate")
def test_tls_serves_https_beyond_loopback(tmp_path):
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out",
                    str(cert), "-days", "1", "-subj", "/CN=localhost", "-addext",
                    "subjectAltName=IP:127.0.0.1,DNS:localhost"], check=True, capture_output=True, timeout=60)
    proc, started = start_cli(tmp_path, "--host", "0.0.0.0", "--token", TOKEN, "--tls-cert", str(cert),
                              "--tls-key", str(key))
    try:
        assert started["url"].startswith("https://0.0.0.0:")
        port = started["url"].rsplit(":", 1)[1].split("/")[0]
        reply = httpx.post(f"https://127.0.0.1:{port}/mcp", verify=ssl.create_default_context(cafile=str(cert)), timeout=30,
                           headers={"Authorization": f"Bearer {TOKEN}", "Accept": "application/json, text/event-stream"},
                           json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                               "protocolVersion": "2025-06-18", "capabilities": {},
                               "clientInfo": {"name": "raw", "version": "1"}}})
        assert reply.status_code == 200 and message_of(reply)["result"]["serverInfo"]["name"] == "pi-memory"
        with pytest.raises(httpx.HTTPError):  # no plain HTTP on that port
            httpx.post(f"http://127.0.0.1:{port}/mcp", timeout=10, json={})
    finally:
        stop(proc)


# --- the token from a file or the environment, never only the command line ------------------------------------
@pytest.mark.parametrize("source", ["file", "env"])
def test_the_token_comes_from_a_file_or_the_environment(tmp_path, source):
    (tmp_path / "token.txt").write_text(TOKEN + "\n")
    args, env = (["--token-file", str(tmp_path / "token.txt")], {}) if source == "file" else ([], {
        "PI_MEMORY_MCP_TOKEN": TOKEN})
    proc, started = start_cli(tmp_path, *args, **env)
    try:
        assert started["token"] == "given"
        assert open_session(started["url"])
        assert rpc(started["url"], '{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}',
                   token="wrong-token-0123456789").status_code == 401
    finally:
        stop(proc)
    assert TOKEN not in proc.stderr.read()


def test_help_says_the_command_line_token_is_visible(tmp_path):
    done = subprocess.run([sys.executable, "-m", "pi_memory", "mcp", "--help"], capture_output=True, text=True,
                          timeout=60, env=env_for(tmp_path, COLUMNS="300", TERM="dumb"))
    text = " ".join(done.stdout.replace("│", " ").split())
    assert "Other users of this machine can read a command line (ps), so prefer --token-file or " \
           "$PI_MEMORY_MCP_TOKEN." in text
    for option in ("--token-file", "--tls-cert", "--tls-key", "--insecure-http"):
        assert option in text
