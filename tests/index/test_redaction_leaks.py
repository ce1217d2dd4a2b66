"""No credential comes out of the index (issue 9, item 1): every family the secret scanner knows, in every
context of :mod:`credential_cases`, in pi, Claude Code and Codex transcripts and in a hand-edited MEMORY.md,
through every output -- ``session_search`` / ``memory_search`` (library and tools), recall over sessions with
its injected text, the MCP tools over a real stdio client, the pi bridge's tools, the CLI (human and JSON) --
and not in the bytes of ``index.sqlite3`` and its ``-wal`` file.

The index is built once for the module; each family is one parametrised test over all outputs."""

from __future__ import annotations

import concurrent.futures
import contextlib
import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
import typer
from credential_cases import FAMILIES, Family, cases, render, runs
from mcp import Client, StdioServerParameters

from pi_memory.index import index_paths, open_index, sync_markdown
from pi_memory.project import project_id
from pi_memory.retrieval import memory_search, session_search
from pi_memory.tools.search import create_search_tools

DAY = "2026-11-20"


def marker(family: Family) -> str:
    return f"zq{FAMILIES.index(family):02d}k"


def _ts(n: int) -> str:
    return f"{DAY}T10:{n // 60 % 60:02d}:{n % 60:02d}.000Z"


def _pi_lines(cwd: Path) -> list[dict]:
    lines: list[dict] = [{"type": "session", "version": 3, "id": "pi-leaks", "timestamp": _ts(0), "cwd": str(cwd)}]
    parent = None

    def entry(message: dict) -> None:
        nonlocal parent
        n = len(lines)
        lines.append({"type": "message", "id": f"p{n}", "parentId": parent, "timestamp": _ts(n), "message": message})
        parent = f"p{n}"

    for family, context in cases():
        call, text = render(family, context)
        text = f"{text}\n{marker(family)}"
        if call or context in ("env", "json", "yaml"):
            cid = f"c{len(lines)}"
            command = call or "cat .env"
            entry({"role": "assistant", "stopReason": "toolUse", "content": [
                {"type": "toolCall", "id": cid, "name": "bash", "arguments": {"command": command}}]})
            entry({"role": "toolResult", "toolCallId": cid, "toolName": "bash", "isError": False,
                   "content": [{"type": "text", "text": text}]})
        else:
            role = "assistant" if context == "url" else "user"
            entry({"role": role, "content": [{"type": "text", "text": text}], **(
                {"stopReason": "stop"} if role == "assistant" else {})})
    return lines


def _claude_lines(cwd: Path) -> list[dict]:
    lines: list[dict] = []
    parent = None

    def entry(kind: str, content: object) -> None:
        nonlocal parent
        uid = f"u{len(lines):04d}"
        lines.append({"type": kind, "uuid": uid, "parentUuid": parent, "sessionId": "cc-leaks", "cwd": str(cwd),
                      "version": "2.1.0", "timestamp": _ts(len(lines)), "isSidechain": False,
                      "message": {"role": kind, "content": content}})
        parent = uid

    for family, context in cases():
        call, text = render(family, context)
        text = f"{text}\n{marker(family)}"
        if call or context in ("env", "json", "yaml"):
            tid = f"toolu_{len(lines)}"
            entry("assistant", [{"type": "tool_use", "id": tid, "name": "Bash",
                                 "input": {"command": call or "cat .env"}}])
            entry("user", [{"type": "tool_result", "tool_use_id": tid, "content": text}])
        else:
            entry("assistant" if context == "url" else "user", [{"type": "text", "text": text}])
    return lines


def _codex_lines(cwd: Path) -> list[dict]:
    lines: list[dict] = [{"timestamp": _ts(0), "type": "session_meta", "payload": {
        "id": "cx-leaks", "timestamp": _ts(0), "cwd": str(cwd), "cli_version": "0.169.0"}}]

    def item(payload: dict) -> None:
        lines.append({"timestamp": _ts(len(lines)), "type": "response_item", "payload": payload})

    for family, context in cases():
        call, text = render(family, context)
        text = f"{text}\n{marker(family)}"
        if call or context in ("env", "json", "yaml"):
            cid = f"call_{len(lines)}"
            item({"type": "function_call", "name": "exec_command", "call_id": cid,
                  "arguments": json.dumps({"cmd": call or "cat .env"})})
            item({"type": "function_call_output", "call_id": cid, "output": text})
        elif context == "url":
            item({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}]})
        else:
            item({"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]})
    return lines


def _write(path: Path, lines: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines), encoding="utf-8")


class Built:
    def __init__(self, root: Path) -> None:
        self.root, self.home, self.data = root, root / "home", root / "data"
        self.repo = self.home / "shop"
        (self.repo / ".git").mkdir(parents=True)
        _write(self.home / ".pi" / "agent" / "sessions" / "--shop--" / f"{DAY}T10-00-00-000Z_pi-leaks.jsonl",
               _pi_lines(self.repo))
        _write(self.home / ".claude" / "projects" / "-home-shop" / "cc-leaks.jsonl", _claude_lines(self.repo))
        _write(self.home / ".codex" / "sessions" / "2026" / "11" / "20" / f"rollout-{DAY}T10-00-00-cx-leaks.jsonl",
               _codex_lines(self.repo))
        self.data.mkdir()
        # A MEMORY.md edited by hand (the tools refuse secrets; an editor does not): mirrored into the index.
        entries = [f"{marker(f)} deploy settings: {render(f, 'env')[1]}" for f in FAMILIES]
        (self.data / "MEMORY.md").write_text("\n§\n".join(entries) + "\n", encoding="utf-8")
        self.conn = open_index(self.data)
        self.stats = index_paths(self.conn, [self.home / ".pi", self.home / ".claude", self.home / ".codex"])
        sync_markdown(self.conn, self.data)
        self.outputs: dict[str, list[str]] = {}

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PI_", "CODEX_"))}
        env.update(HOME=str(self.home), PI_MEMORY_DIR=str(self.data), PI_CODING_AGENT_DIR=str(self.home / "agent"),
                   CODEX_HOME=str(self.home / "no-codex"), PI_MEMORY_CATCH_UP="0")
        return env


def _queries(family: Family) -> list[str]:
    return [marker(family), family.env.lower().replace("_", " ")]


def _mcp_outputs(built: Built) -> dict[str, list[str]]:
    params = StdioServerParameters(command=sys.executable, args=["-m", "pi_memory.cli", "mcp", "--index-interval", "0"],
                                   env=built.env())
    found: dict[str, list[str]] = {}

    async def scenario() -> None:
        async with Client(params) as client:
            for family in FAMILIES:
                texts = found.setdefault(family.id, [])
                for tool in ("session_search", "memory_search"):
                    result = await client.call_tool(tool, {"query": marker(family), "limit": 50})
                    texts.append(json.dumps(result.structured_content, ensure_ascii=False))
                    texts.extend(c.text for c in result.content if hasattr(c, "text"))

    anyio.run(scenario)
    return found


def _bridge_outputs(built: Built) -> dict[str, list[str]]:
    requests = [{"id": 0, "method": "hello", "params": {"cwd": str(built.repo), "sessionId": "leaks"}}]
    for family in FAMILIES:
        for tool in ("session_search", "memory_search"):
            requests.append({"id": len(requests), "method": "call_tool", "params": {
                "name": tool, "arguments": {"query": marker(family), "limit": 50}}, "family": family.id})
    stdin = "".join(json.dumps({k: v for k, v in r.items() if k != "family"}) + "\n" for r in requests)
    proc = subprocess.run([sys.executable, "-m", "pi_memory.integrations.pi.bridge"], input=stdin, text=True,
                          capture_output=True, env=built.env(), cwd=built.repo, timeout=120)
    answers = {json.loads(line)["id"]: line for line in proc.stdout.splitlines() if line.startswith("{")}
    assert len(answers) == len(requests), proc.stderr[-2000:]
    found: dict[str, list[str]] = {}
    for r in requests[1:]:
        assert '"success": true' in answers[r["id"]] or '"success":true' in answers[r["id"]], answers[r["id"]]
        found.setdefault(r["family"], []).append(answers[r["id"]])
    return found


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Built:
    b = Built(tmp_path_factory.mktemp("leaks"))
    with concurrent.futures.ThreadPoolExecutor(1) as pool:  # the two host processes run side by side
        bridge = pool.submit(_bridge_outputs, b)
        b.mcp = _mcp_outputs(b)
        b.bridge = bridge.result()
    yield b
    b.conn.close()


@pytest.fixture(scope="module")
def recall_backend(built: Built):
    from pi_memory.embed import get_embedder
    from pi_memory.semantic.embedded import EmbeddedBackend

    return EmbeddedBackend(built.conn, get_embedder())


ALL_RUNS = {r.encode() for f in FAMILIES for r in runs(f.secret)}
_PRINTABLE = re.compile(rb"[\x20-\x7e]{8,}")


def _runs_in(blob: bytes) -> set[bytes]:
    """The 8-byte runs of any secret found in ``blob`` (only its printable stretches can hold one)."""
    return {w for m in _PRINTABLE.finditer(blob) for t in (m.group(),) for i in range(len(t) - 7)
            if (w := t[i : i + 8]) in ALL_RUNS}


_COMMAND = None


def _cli(args: list[str]) -> tuple[int, str]:
    """Run the real CLI in this process (the click command built once: building it costs 0.1 s) and return its
    exit code and everything it printed."""
    global _COMMAND
    if _COMMAND is None:
        from pi_memory.cli.app import app

        _COMMAND = typer.main.get_command(app)
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(buf):
        code = _COMMAND.main(args=args, prog_name="pi-memory", standalone_mode=False)
    return (code if isinstance(code, int) else 0), buf.getvalue()


def _no_run_of(secret: str, texts: list[str], where: str) -> None:
    blob = "\n".join(texts)
    leaked = sorted(r for r in runs(secret) if r in blob)
    assert not leaked, f"{where} shows {leaked[:3]} of the secret"


def test_every_case_was_indexed(built: Built) -> None:
    assert built.stats.files_new == 3 and built.stats.files_failed == 0
    for family in FAMILIES:
        hits = session_search(built.conn, marker(family), limit=50)
        contexts = sum(1 for f, _c in cases() if f is family)
        assert hits.count == 3 * contexts, (family.id, hits.count)  # each case once per format, never twice


@pytest.mark.parametrize("family", FAMILIES, ids=[f.id for f in FAMILIES])
def test_no_output_shows_any_8_character_run_of_the_secret(built: Built, recall_backend, family: Family) -> None:
    from pi_memory.retrieval.recall import format_recall, recall
    from pi_memory.semantic.models import Scope

    conn = built.conn
    library, tools, cli, recalled = [], [], [], []
    specs = {t.name: t for t in create_search_tools(lambda: conn, str(built.repo))}
    for query in _queries(family):
        library.append(session_search(conn, query, limit=50).to_json())
        library.append(memory_search(conn, query, limit=50, record_use=False).to_json())
        for name in specs:
            tools.append(json.dumps(specs[name].call({"query": query, "limit": 50}).result, ensure_ascii=False))
        if query != marker(family):  # the hosts below get the query that finds every case
            continue
        for command, extra in (("session-search", []), ("session-search", ["--json"]), ("memory-search", [])):
            code, output = _cli([command, query, "--limit", "50", "--dir", str(built.data), *extra])
            assert code == 0, output
            cli.append(output)
        hits = recall(recall_backend, query, scope=Scope(user_id="u", project_id=project_id(built.repo)), top_k=20,
                      include=("sessions", "curated"), conn=conn, min_similarity=0.0)
        recalled.append(format_recall(hits, budget_tokens=100_000))
        recalled.extend(h.text for h in hits)
    assert any(marker(family) in t for t in library)  # the searches found the cases
    assert any("[REDACTED:" in t for t in cli) and any(marker(family) in t for t in recalled)
    for where, texts in (("the library", library), ("the tools", tools), ("the CLI", cli),
                         ("recall", recalled), ("the MCP server", built.mcp[family.id]),
                         ("the pi bridge", built.bridge[family.id])):
        _no_run_of(family.secret, texts, where)


def test_the_index_file_and_its_wal_hold_no_secret(built: Built) -> None:
    conn = built.conn
    files = [built.data / "index.sqlite3", built.data / "index.sqlite3-wal"]
    for checkpoint in (False, True):
        if checkpoint:
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        blob = b"".join(p.read_bytes() for p in files if p.exists())
        assert marker(FAMILIES[0]).encode() in blob  # the text is there, only without its secrets
        leaked = _runs_in(blob)
        assert not leaked, (checkpoint, sorted(leaked)[:5])
