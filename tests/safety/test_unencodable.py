"""Unencodable text never loses a write (issue 9, item 6): a lone surrogate becomes U+FFFD on every input path
(the function itself, the tools, CLI arguments, the pi bridge, MCP through a real client, the REST server, the
transcript readers and the index, semantic capture)."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, ClientSession, types
from mcp.shared.message import SessionMessage
from starlette.testclient import TestClient

from pi_memory.cli import main as cli_main
from pi_memory.curated import MemoryStore
from pi_memory.index import open_index
from pi_memory.index.indexer import index_paths
from pi_memory.index.readers import read_session
from pi_memory.integrations.mcp_server import build_server
from pi_memory.retrieval.search import session_search
from pi_memory.safety import replace_unencodable
from pi_memory.tools import create_memory_tools

FFFD = "\ufffd"
HIGH, LOW = "\ud83d", "\ude00"
# (what comes in, what is kept): lone high, lone low, reversed pair, a real pair, escaped argv bytes
SHAPES = [
    (f"cut {HIGH} here", f"cut {FFFD} here"),
    (f"cut {LOW} here", f"cut {FFFD} here"),
    (f"rev {LOW}{HIGH} x", f"rev {FFFD}{FFFD} x"),
    (f"pair {HIGH}{LOW}!", "pair 😀!"),
    (os.fsdecode(b"caf\xe9 \xff ok"), f"caf{FFFD} {FFFD} ok"),
    (f"{HIGH}", FFFD),
    (f"end {HIGH}", f"end {FFFD}"),
]
ESCAPED = r"cut \ud83d here, low \ude00, reversed \ude00\ud83d, pair \ud83d\ude00"
ESCAPED_KEPT = f"cut {FFFD} here, low {FFFD}, reversed {FFFD}{FFFD}, pair 😀"


def _no_surrogates(text: str) -> bool:
    return not any("\ud800" <= c <= "\udfff" for c in text)


@pytest.mark.parametrize(("raw", "kept"), SHAPES)
def test_each_shape_is_replaced_and_the_rest_kept(raw, kept):
    assert replace_unencodable(raw) == kept
    replace_unencodable(raw).encode("utf-8")  # encodable now


def test_nested_values_and_clean_values():
    value = {f"k{HIGH}": [f"a{LOW}", 1, None, (f"t{HIGH}", 2.5)], "ok": "plain"}
    assert replace_unencodable(value) == {f"k{FFFD}": [f"a{FFFD}", 1, None, (f"t{FFFD}", 2.5)], "ok": "plain"}
    clean = {"a": ["b", {"c": "d"}]}
    assert replace_unencodable(clean) == clean
    text = "no surrogate here: 😀 é 中"
    assert replace_unencodable(text) is text
    assert replace_unencodable(None) is None and replace_unencodable(7) == 7
    assert replace_unencodable(json.loads(json.dumps(ESCAPED)[0:1] + ESCAPED + '"')) == ESCAPED_KEPT


# ---- tools ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("raw", "kept"), SHAPES)
def test_memory_add_keeps_the_entry(tmp_path, raw, kept):
    tools = {t.name: t for t in create_memory_tools(MemoryStore(tmp_path))}
    outcome = tools["memory_add"].call({"target": "memory", "content": f"Note: {raw}"})
    assert outcome.is_error is False, outcome.text
    assert (tmp_path / "MEMORY.md").read_text(encoding="utf-8") == f"Note: {kept}\n"
    replaced = tools["memory_replace"].call({"target": "memory", "oldText": f"Note: {raw}",
                                             "newContent": f"Note again {HIGH}"})
    assert replaced.is_error is False, replaced.text
    assert (tmp_path / "MEMORY.md").read_text(encoding="utf-8") == f"Note again {FFFD}\n"


# ---- CLI arguments --------------------------------------------------------------------------------------------
def _cli(args: list[str], capsys) -> tuple[int, str]:
    with pytest.raises(SystemExit) as done:
        cli_main(args)
    return done.value.code, capsys.readouterr().out


@pytest.mark.parametrize("raw", [os.fsdecode(b"caf\xe9 latin-1"), os.fsdecode(b"cesu \xed\xa0\xbd"),
                                 f"js {HIGH} cut", os.fsdecode(b"\xff tail")])
def test_cli_add_with_an_argument_that_is_not_utf8(tmp_path, capsys, raw):
    code, _out = _cli(["--dir", str(tmp_path), "add", "memory", raw], capsys)
    assert code == 0
    kept = replace_unencodable(raw)
    assert (tmp_path / "MEMORY.md").read_text(encoding="utf-8") == kept + "\n"
    code, out = _cli(["--dir", str(tmp_path), "read", "memory", "--json"], capsys)
    assert code == 0 and json.loads(out)["entries"] == [kept]
    code, out = _cli(["--dir", str(tmp_path), "memory-search", raw, "--json"], capsys)
    assert code == 0 and _no_surrogates(out)


@pytest.mark.parametrize("command", [["add", "memory", "-"], ["semantic", "add", "-"]])
def test_cli_text_from_stdin_that_is_not_utf8(tmp_path, capsys, monkeypatch, command):
    # Python reads a non-UTF-8 stdin with surrogateescape in its UTF-8 mode (C / POSIX locale)
    stdin = io.TextIOWrapper(io.BytesIO(b"from stdin \xff and \xed\xa0\xbd end"), encoding="utf-8",
                             errors="surrogateescape")
    monkeypatch.setattr(sys, "stdin", stdin)
    code, out = _cli(["--dir", str(tmp_path), *command, "--json"], capsys)
    assert code == 0, out
    kept = f"from stdin {FFFD} and {FFFD}{FFFD}{FFFD} end"
    if command[0] == "add":
        assert (tmp_path / "MEMORY.md").read_text(encoding="utf-8") == kept + "\n"
    else:
        assert json.loads(out)["memory"]["memory"] == kept


@pytest.mark.parametrize("raw", [os.fsdecode(b"\xff"), os.fsdecode(b"\xed\xa0\xbd"), HIGH])
def test_cli_add_of_an_argument_with_nothing_readable_is_refused(tmp_path, capsys, raw):
    """Nothing but undecodable bytes: there is no text to keep (tests/curated/test_unreadable_content.py)."""
    code, _out = _cli(["--dir", str(tmp_path), "add", "memory", raw], capsys)
    assert code == 1 and not (tmp_path / "MEMORY.md").exists()


def test_cli_keeps_an_existing_path_whose_name_is_not_utf8(tmp_path, capsys):
    folder = tmp_path / os.fsdecode(b"data-\xff")
    folder.mkdir()
    code, _out = _cli(["--dir", str(folder), "add", "memory", "kept in the odd folder"], capsys)
    assert code == 0
    assert (folder / "MEMORY.md").read_text(encoding="utf-8") == "kept in the odd folder\n"


# ---- REST server ---------------------------------------------------------------------------------------------
def test_rest_add_and_search_with_lone_surrogate_escapes(tmp_path):
    from pi_memory.semantic.backends.rest_server import create_app, embedded_backend_factory

    auth = {"Authorization": "Bearer t-0123456789abcdef", "Content-Type": "application/json"}
    client = TestClient(create_app(embedded_backend_factory(tmp_path), "t-0123456789abcdef"),
                        raise_server_exceptions=False)
    body = '{"messages": [{"role": "user", "content": "User drinks tea \\ud83d daily"}], "infer": false, ' \
           '"user_id": "alice"}'
    response = client.post("/memories", content=body.encode(), headers=auth)
    assert response.status_code == 200, response.text
    assert response.json()["results"][0]["memory"] == f"User drinks tea {FFFD} daily"
    found = client.post("/search", content=b'{"query": "tea \\ude00\\ud83d", "user_id": "alice"}', headers=auth)
    assert found.status_code == 200, found.text
    assert [r["memory"] for r in found.json()["results"]] == [f"User drinks tea {FFFD} daily"]
    broken = client.post("/memories", content=b'{"messages": [', headers=auth)
    assert broken.status_code == 400 and broken.json()["error"].startswith("invalid request body: it is not JSON")


# ---- transcript readers and the index ------------------------------------------------------------------------
def _pi_lines() -> list[str]:
    return [
        '{"type":"session","version":3,"id":"01a2277d-0000-7000-8000-00000000\\ud83d","timestamp":'
        '"2026-11-29T13:28:05.811Z","cwd":"/home/dev/proj"}',
        '{"type":"message","id":"m1","parentId":null,"timestamp":"2026-11-29T13:28:05.828Z","message":{"role":"user",'
        '"content":[{"type":"text","text":"' + ESCAPED + ' zebrafish"}],"timestamp":1795958885826}}',
        '{"type":"message","id":"m2","parentId":"m1","timestamp":"2026-11-29T13:28:05.912Z","message":{"role":'
        '"assistant","content":[{"type":"text","text":"answer \\ud83d"}],"stopReason":"stop","timestamp":1}}',
    ]


def _claude_lines() -> list[str]:
    base = '"isSidechain":false,"userType":"external","cwd":"/home/dev/shop","sessionId":"9b2f0c1e-0000-4000-8000-' \
           '000000000001","version":"2.1.332","gitBranch":"main"'
    return [
        '{"parentUuid":null,' + base + ',"type":"user","message":{"role":"user","content":"' + ESCAPED +
        ' zebrafish"},"uuid":"c1","timestamp":"2026-11-29T12:00:01.000Z"}',
        '{"parentUuid":"c1",' + base + ',"type":"assistant","message":{"role":"assistant","content":[{"type":"text",'
        '"text":"ok \\ude00"}]},"uuid":"c2","timestamp":"2026-11-29T12:00:02.000Z"}',
    ]


def _codex_lines() -> list[str]:
    return [
        '{"timestamp":"2026-11-29T12:00:00.000Z","type":"session_meta","payload":{"id":"019ad1e2-0000-7000-9000-'
        '000000000001","timestamp":"2026-11-29T12:00:00.000Z","cwd":"/home/dev/shop","originator":"codex_cli_rs",'
        '"cli_version":"0.169.0","source":"cli"}}',
        '{"timestamp":"2026-11-29T12:00:01.000Z","type":"response_item","payload":{"type":"message","role":"user",'
        '"content":[{"type":"input_text","text":"' + ESCAPED + ' zebrafish"}]}}',
        # an escape inside the arguments string: the inner JSON holds the lone surrogate
        '{"timestamp":"2026-11-29T12:00:02.000Z","type":"response_item","payload":{"type":"function_call","name":'
        '"exec_command","arguments":"{\\"cmd\\":\\"echo \\\\ud83d\\"}","call_id":"call_1"}}',
    ]


TRANSCRIPTS = {
    "pi": (".pi/agent/sessions/--home-dev-proj--/2026-11-29T13-28-05-811Z_01a2277d.jsonl", _pi_lines),
    "claude_code": (".claude/projects/-home-dev-shop/9b2f0c1e-0000-4000-8000-000000000001.jsonl", _claude_lines),
    "codex": (".codex/sessions/2026/11/29/rollout-2026-11-29T12-00-00-019ad1e2-0000-7000-9000-000000000001.jsonl",
              _codex_lines),
}


@pytest.mark.parametrize("source", sorted(TRANSCRIPTS))
def test_readers_and_index_keep_a_turn_with_lone_surrogates(tmp_path, source):
    rel, lines = TRANSCRIPTS[source]
    path = tmp_path / rel
    path.parent.mkdir(parents=True)
    path.write_text("\n".join(lines()) + "\n", encoding="utf-8")
    result = read_session(path)
    assert result.info.source == source
    texts = [r.text for r in result.records]
    assert all(_no_surrogates(t) for t in texts)
    assert f"{ESCAPED_KEPT} zebrafish" in texts
    assert _no_surrogates(result.info.session_id or "") and sum(result.skipped.values()) == 0
    conn = open_index(tmp_path / "data")
    try:
        stats = index_paths(conn, [path])
        assert stats.files_failed == 0, stats.errors
        hits = session_search(conn, "zebrafish")
        assert len(hits.results if hasattr(hits, "results") else hits) == 1
    finally:
        conn.close()


# ---- semantic capture ----------------------------------------------------------------------------------------
def test_capture_reads_a_turn_with_lone_surrogates(tmp_path):
    from pi_memory.devtools.scripted_llm import Reply, ScriptedLLM, text_of
    from pi_memory.embed import get_embedder
    from pi_memory.llm.openai_compatible import OpenAICompatibleChatModel
    from pi_memory.semantic.capture import capture_turn
    from pi_memory.semantic.embedded import EmbeddedBackend
    from pi_memory.semantic.models import Scope

    seen: list[str] = []

    def respond(messages: list[dict[str, Any]], _tools: set[str]) -> Reply:
        user = next(text_of(m.get("content")) for m in messages if m.get("role") == "user")
        seen.append(user)
        if "pick out the facts" in text_of(messages[0].get("content")):
            return Reply(text=json.dumps({"facts": ["User's cat is called Miso."]}))
        payload = json.loads(user)
        return Reply(text=json.dumps({"decisions": [{"fact": f["fact"], "event": "ADD", "memory_id": None,
                                                     "text": f["text"]} for f in payload["new_facts"]]}))

    llm = ScriptedLLM(responder=respond).start()
    conn = open_index(tmp_path / "data")
    model = OpenAICompatibleChatModel("fake-model", base_url=llm.base_url, timeout_s=10, max_retries=0)
    try:
        backend = EmbeddedBackend(conn, get_embedder())
        report = capture_turn(backend, model, user_text=f"My cat is Miso {HIGH}", assistant_text=f"Nice {LOW}{HIGH}",
                              scope=Scope(user_id="alice"), observed_at="2026-03-14T10:00:00Z")
        assert report.errors == [] and report.status == "ok"
        assert [m.text for m in backend.get_all(scope=Scope(user_id="alice"))] == ["User's cat is called Miso."]
        assert f"My cat is Miso {FFFD}" in seen[0] and f"Nice {FFFD}{FFFD}" in seen[0]
    finally:
        model.close()
        conn.close()
        llm.stop()


# ---- MCP, through the SDK's own client ---------------------------------------------------------------------
def test_mcp_in_process_client(tmp_path):
    async def scenario():
        async with Client(build_server(MemoryStore(tmp_path))) as client:
            added = await client.call_tool("memory_add", {"target": "memory", "content": f"emoji {HIGH} cut"})
            assert added.is_error is False and added.structured_content["success"] is True

    anyio.run(scenario)
    assert (tmp_path / "MEMORY.md").read_text(encoding="utf-8") == f"emoji {FFFD} cut\n"


def _mcp_env(data_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PI_", "CODEX_"))}
    env.update(PI_MEMORY_DIR=str(data_dir), HOME=str(data_dir / "home"), PI_CODING_AGENT_DIR=str(data_dir / "agent"),
               CODEX_HOME=str(data_dir / "codex"))
    return env


@pytest.mark.parametrize("entry", ["pi_memory", "pi_memory.cli"])  # the console script's quick start, and the CLI
def test_mcp_stdio_request_with_a_lone_surrogate_escape(tmp_path, entry):
    """The SDK's ClientSession over the real ``pi-memory mcp`` process; the transport writes each request the
    way a JavaScript client does (``JSON.stringify``: a lone surrogate as a ``\\ud83d`` escape), which the SDK's
    own Python writer cannot do."""

    async def scenario():
        proc = await anyio.open_process([sys.executable, "-m", entry, "mcp", "--index-interval", "0"],
                                        env=_mcp_env(tmp_path), stderr=subprocess.DEVNULL)
        read_in, read_out = anyio.create_memory_object_stream[SessionMessage | Exception](0)
        write_in, write_out = anyio.create_memory_object_stream[SessionMessage](0)

        async def reader():
            buffer = b""
            async with read_in:
                async for chunk in proc.stdout:
                    buffer += chunk
                    *lines, buffer = buffer.split(b"\n")
                    for line in lines:
                        await read_in.send(SessionMessage(types.jsonrpc_message_adapter.validate_json(line)))

        async def writer():
            async with write_out:
                async for message in write_out:
                    data = message.message.model_dump(by_alias=True, exclude_unset=True, mode="python")
                    await proc.stdin.send((json.dumps(data) + "\n").encode())

        async with anyio.create_task_group() as tg:
            tg.start_soon(reader)
            tg.start_soon(writer)
            with anyio.fail_after(30):
                async with ClientSession(read_out, write_in) as session:
                    await session.initialize()
                    added = await session.call_tool("memory_add", {"target": "memory",
                                                                   "content": f"cut {HIGH} and {LOW}{HIGH}"})
                    assert added.is_error is False, added.content
                    read = await session.call_tool("memory_read", {"target": "memory"})
                    assert read.structured_content["entries"] == [f"cut {FFFD} and {FFFD}{FFFD}"]
            await proc.stdin.aclose()
            with anyio.fail_after(10):
                await proc.wait()
            tg.cancel_scope.cancel()

    anyio.run(scenario)


# ---- the pi bridge ---------------------------------------------------------------------------------------------
def test_bridge_json_lines_with_lone_surrogate_escapes(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("PI_")}
    env.update(HOME=str(tmp_path), PI_MEMORY_DIR=str(tmp_path / "mem"), PI_MEMORY_CATCH_UP="0")
    session_file = tmp_path / ".pi/agent/sessions/--p--/2026-11-29T13-28-05-811Z_01a2277d.jsonl"
    session_file.parent.mkdir(parents=True)
    session_file.write_text("\n".join(_pi_lines()) + "\n", encoding="utf-8")
    requests = [
        {"id": 1, "method": "hello", "params": {"cwd": str(tmp_path)}},
        '{"id": 2, "method": "call_tool", "params": {"name": "memory_add", "arguments": '
        '{"target": "memory", "content": "bridge \\ud83d cut"}}}',
        '{"id": 3, "method": "recall", "params": {"prompt": "what about the \\ude00 zebrafish?"}}',
        '{"id": 4, "method": "after_run", "params": {"sessionFile": ' + json.dumps(str(session_file)) +
        ', "userText": "hi \\ud83d", "assistantText": "ok \\ude00"}}',
        {"id": 5, "method": "shutdown", "params": {}},
    ]
    lines = "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in requests)
    done = subprocess.run([sys.executable, "-m", "pi_memory.integrations.pi.bridge"], input=lines, text=True,
                          capture_output=True, env=env, cwd=tmp_path, timeout=60)
    responses = {r["id"]: r for r in map(json.loads, done.stdout.splitlines())}
    assert sorted(responses) == [1, 2, 3, 4, 5], done.stderr
    assert all("error" not in r for r in responses.values()), responses
    assert responses[2]["result"]["result"]["success"] is True
    assert (tmp_path / "mem" / "MEMORY.md").read_text(encoding="utf-8") == f"bridge {FFFD} cut\n"
    assert "UnicodeEncodeError" not in done.stderr


# ---- the host hooks and MCP over HTTP ----------------------------------------------------------------------
def test_hooks_read_lone_surrogate_escapes(tmp_path, monkeypatch):
    from pi_memory.integrations import hooks
    from pi_memory.integrations.hooks import handlers

    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PI_MEMORY_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("PI_MEMORY_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.delenv("PI_CODING_AGENT_DIR", raising=False)
    (tmp_path / "proj" / ".git").mkdir(parents=True)
    jobs: list[dict] = []
    monkeypatch.setattr(handlers, "spawn_background", jobs.append)
    cwd = json.dumps(str(tmp_path / "proj"))
    hooks.run_hook("codex", "prompt", '{"session_id": "t1", "cwd": ' + cwd + ', "prompt": "which port \\ud83d?"}')
    stop = '{"session_id": "t1", "cwd": ' + cwd + ', "transcript_path": "/x/r.jsonl", ' \
           '"last_assistant_message": "Port \\ude00\\ud83d 8443."}'
    assert hooks.run_hook("codex", "stop", stop) == "{}"
    assert [(j["userText"], j["assistantText"]) for j in jobs] == [(f"which port {FFFD}?", f"Port {FFFD}{FFFD} 8443.")]


def test_mcp_over_http_with_lone_surrogate_escapes(tmp_path):
    """The SDK's client over streamable HTTP; its requests are rewritten on the wire to carry ``\\ud83d``
    escapes the way a JavaScript client sends them (the SDK's own writer cannot). The HTTP transport parses
    them with the standard library, so the tools' own edge is what keeps the write."""
    import signal

    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    token = "http-surrogate-token-0123456789"
    env = {**os.environ, "HOME": str(tmp_path), "PI_MEMORY_DIR": str(tmp_path / "data")}
    proc = subprocess.Popen([sys.executable, "-m", "pi_memory", "mcp", "--http", "--port", "0", "--token", token,
                             "--index-interval", "0", "--json"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            text=True, env=env, cwd=tmp_path)
    marker = "SURROGATE-MARK"

    class JsWire(httpx2.AsyncBaseTransport):
        def __init__(self) -> None:
            self.inner = httpx2.AsyncHTTPTransport()

        async def handle_async_request(self, request):
            body = await request.aread()
            if marker.encode() in body:
                body = body.replace(marker.encode(), b"\\ud83d")
                headers = [(k, v) for k, v in request.headers.raw if k.lower() != b"content-length"]
                request = httpx2.Request(request.method, request.url, headers=headers, content=body)
            return await self.inner.handle_async_request(request)

    try:
        url = json.loads(proc.stdout.readline())["url"]

        async def main():
            with anyio.fail_after(30):
                async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"},
                                              transport=JsWire()) as hc, \
                        Client(streamable_http_client(url, http_client=hc)) as client:
                    added = await client.call_tool("memory_add", {"target": "memory",
                                                                  "content": f"http {marker} cut"})
                    assert added.is_error is False, added.content

        anyio.run(main)
        assert (tmp_path / "data" / "MEMORY.md").read_text(encoding="utf-8") == f"http {FFFD} cut\n"
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(15)


def test_mem0_import_reads_lone_surrogate_escapes(tmp_path):
    """pi-memory-mem0 (a pi extension in TypeScript) stores each payload with JSON.stringify."""
    import sqlite3

    from pi_memory.importers.mem0 import read_source

    vectors = tmp_path / "mem0-vectors.db"
    db = sqlite3.connect(vectors)
    db.execute("CREATE TABLE vectors (id TEXT PRIMARY KEY, vector BLOB NOT NULL, payload TEXT NOT NULL)")
    db.execute("INSERT INTO vectors VALUES ('m1', x'00', ?)",
               ('{"data": "User likes tea \\ud83d daily", "user_id": "u\\ude00", "topic": "t\\ud83d"}',))
    db.commit()
    db.close()
    [memory] = read_source(vectors, tmp_path / "mem0-history.db")
    assert memory.versions == [f"User likes tea {FFFD} daily"]
    assert (memory.user_id, memory.metadata) == (f"u{FFFD}", {"topic": f"t{FFFD}"})
