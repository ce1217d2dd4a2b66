"""``pi-memory mcp`` ends within 2 s of SIGTERM or SIGINT while its standard input stays open: idle, in the
middle of a tool call blocked on a locked index, and while the background worker is busy. Real subprocesses,
spoken to in MCP's JSON-RPC over stdio; ``serverInfo.version`` is the package's."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import pi_memory

LIMIT_S = 2.0


def _env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PI_CODING_AGENT_SESSION_DIR", "PI_MEMORY_INDEX_INTERVAL")}
    env.update(HOME=str(tmp_path / "home"), PI_CODING_AGENT_DIR=str(tmp_path / "agent"),
               CODEX_HOME=str(tmp_path / "codex"))
    return env


def _start(tmp_path: Path, *extra: str) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-m", "pi_memory", "--json", "mcp", "--dir", str(tmp_path / "data"),
                             *extra], env=_env(tmp_path), text=True, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    line = proc.stderr.readline()
    while line and not line.startswith("{"):
        line = proc.stderr.readline()
    assert json.loads(line)["event"] == "started"
    return proc


def _send(proc: subprocess.Popen, message: dict) -> None:
    proc.stdin.write(json.dumps(message) + "\n")
    proc.stdin.flush()


def _initialize(proc: subprocess.Popen) -> dict:
    _send(proc, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}})
    reply = json.loads(proc.stdout.readline())
    _send(proc, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    return reply


def _stop(proc: subprocess.Popen, signum: int) -> tuple[float, list[dict]]:
    """Send ``signum`` (stdin left open) and return the seconds until the process ended and its JSON events."""
    sent = time.monotonic()
    proc.send_signal(signum)
    try:
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    took = time.monotonic() - sent
    rest = proc.stderr.read()
    proc.stdin.close()
    return took, [json.loads(x) for x in rest.splitlines() if x.startswith("{")]


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGTERM, 0), (signal.SIGINT, 130)])
def test_idle_server_stops_on_a_signal_with_stdin_open(tmp_path, signum, code):
    proc = _start(tmp_path, "--index-interval", "0.2")
    reply = _initialize(proc)
    assert reply["result"]["serverInfo"] == {"name": "pi-memory", "version": pi_memory.__version__}
    assert pi_memory.__version__ not in ("", "0+unknown")
    took, events = _stop(proc, signum)
    assert took < LIMIT_S and proc.returncode == code
    assert [e["event"] for e in events] == ["stopped"]
    assert events[0]["signal"] == signal.Signals(signum).name and events[0]["workerFinished"] is True


def test_signal_during_a_tool_call_blocked_on_a_locked_index(tmp_path):
    """The tool call waits on SQLite's busy timeout (10 s) in C code; the signal must not wait for it."""
    data = tmp_path / "data"
    subprocess.run([sys.executable, "-m", "pi_memory", "add", "memory", "deploys go through staging", "--dir",
                    str(data)], env=_env(tmp_path), check=True, capture_output=True, timeout=60)
    proc = _start(tmp_path, "--index-interval", "0")
    _initialize(proc)
    holder = subprocess.Popen(  # locks the index once the server is up (its start opens the index too)
        [sys.executable, "-c", "import sqlite3, sys\n"
         f"c = sqlite3.connect({str(data / 'index.sqlite3')!r}, isolation_level=None)\n"
         "c.execute('BEGIN EXCLUSIVE'); c.execute('DELETE FROM meta'); print('held', flush=True); sys.stdin.read()"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        _send(proc, {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                     "params": {"name": "memory_add", "arguments": {"target": "memory", "content": "uses pnpm"}}})
        time.sleep(1.0)  # the write is done, the index mirror now waits for the lock
        took, events = _stop(proc, signal.SIGTERM)
    finally:
        holder.stdin.close()
        holder.wait(timeout=10)
    assert took < LIMIT_S and proc.returncode == 0
    assert [e["event"] for e in events] == ["stopped"]


def test_signal_while_the_worker_is_busy_indexing(tmp_path):
    """A catch-up over a large transcript is cut short: the process still ends in time and says so."""
    sessions = tmp_path / "agent" / "sessions" / "--work--"
    sessions.mkdir(parents=True)
    lines = [json.dumps({"type": "session", "version": 3, "id": "s1", "timestamp": "2026-01-01T00:00:00.000Z",
                         "cwd": "/work"})]
    for i in range(60_000):
        lines.append(json.dumps({"type": "message", "id": f"m{i}", "parentId": f"m{i - 1}" if i else None,
                                 "timestamp": "2026-01-01T00:00:01.000Z",
                                 "message": {"role": "user" if i % 2 == 0 else "assistant",
                                             "content": [{"type": "text", "text": f"turn {i} about topic {i % 97} "
                                                          "with some words to index " * 4}]}}))
    (sessions / "big.jsonl").write_text("\n".join(lines) + "\n")
    proc = _start(tmp_path, "--index-interval", "60")
    time.sleep(0.3)  # the catch-up has started on the worker thread
    took, events = _stop(proc, signal.SIGTERM)
    assert took < LIMIT_S and proc.returncode == 0
    assert [e["event"] for e in events] == ["stopped"] and events[0]["signal"] == "SIGTERM"
    assert events[0]["workerFinished"] is False  # the catch-up was still running: cut short, not awaited
