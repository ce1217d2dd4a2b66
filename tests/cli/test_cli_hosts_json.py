"""``--json`` on the commands that host something: ``serve`` (one line when listening, one when stopped),
``mcp`` (standard output is the protocol's: its JSON goes to standard error) and ``demo`` (one summary)."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

TOKEN = "json-test-token-0123456789"
DEMO_CHECKS = [  # what the demo checks, in order, when pi runs but does nothing (a stand-in that exits 0)
    ("Session 1: the agent saves a fact: pi exited cleanly", True),
    ("MEMORY.md holds exactly the saved fact", False),
    ("Session 2: a new session starts: pi exited cleanly", True),
    ("session 2's system prompt contains the fact", False),
    ("Session 3: someone tries to plant an instruction: pi exited cleanly", True),
    ("the hostile entry was refused", False),
    ("Session 4: another session adds a second fact: pi exited cleanly", True),
    ("the second fact is on disk", False),
    ("session 2 can be resumed", False),
    ("Session 5: the user mentions a fact in passing: pi exited cleanly", True),
    ("the fact was captured as a semantic memory", False),
    ("it is stored embedded, with a vector from the local embedder", False),
    ("Session 6: a later session asks about it: pi exited cleanly", True),
    ("session 6's request carries the fact inside the recall fence", False),
    ("the recalled memory stays out of the system prompt", False),
]


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    out = {k: v for k, v in os.environ.items() if k not in ("PI_MEMORY_DIR", "PI_MEMORY_SERVER_TOKEN",
                                                            "PI_CODING_AGENT_SESSION_DIR", "PI_MEMORY_PI_BIN")}
    out.update(PI_CODING_AGENT_DIR=str(tmp_path / "agent"), HOME=str(tmp_path / "home"),
               CODEX_HOME=str(tmp_path / "codex"), PYTHONUNBUFFERED="1")
    return out


def cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "pi_memory", *args]


def start_serve(env: dict[str, str], *args: str) -> tuple[subprocess.Popen, dict]:
    proc = subprocess.Popen(cli("--json", "serve", "--port", "0", *args), env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    line = proc.stdout.readline()  # the server prints it once it listens (or exits, and this is "")
    if not line:
        proc.kill()
        pytest.fail(f"serve printed nothing: {proc.communicate(timeout=10)}")
    return proc, json.loads(line)


def test_serve_prints_one_json_line_when_listening_and_one_when_stopped(env, tmp_path):
    data = tmp_path / "data"
    proc, listening = start_serve(env, "--token", TOKEN, "--dir", str(data))
    try:
        port = listening["port"]
        assert listening == {"event": "listening", "url": f"http://127.0.0.1:{port}", "host": "127.0.0.1",
                             "port": port, "backend": "embedded", "dataDir": str(data.resolve()), "auth": True,
                             "token": "given", "infer": False}
        assert port > 0
        health = httpx.get(f"{listening['url']}/health", timeout=5)  # listening means it answers now
        assert health.status_code == 200 and health.json()["service"] == "pi-memory"
        assert httpx.get(f"{listening['url']}/memories?user_id=a", timeout=5).status_code == 401
    finally:
        proc.send_signal(signal.SIGTERM)
        stdout, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 0, stderr
    assert [json.loads(line) for line in stdout.splitlines()] == [
        {"event": "stopped", "url": f"http://127.0.0.1:{port}", "signal": "SIGTERM"}]
    assert TOKEN not in stdout + stderr


def test_serve_reads_its_token_from_a_file_kept_off_the_command_line(env, tmp_path):
    token_file = tmp_path / "token"
    token_file.write_text(f"  {TOKEN}\n")
    proc, listening = start_serve(env, "--token-file", str(token_file), "--dir", str(tmp_path / "data"))
    try:
        assert listening["token"] == "given"
        url = f"{listening['url']}/memories?user_id=a"
        assert httpx.get(url, timeout=5, headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 200
        assert httpx.get(url, timeout=5, headers={"Authorization": "Bearer wrong-token-0123456789"}).status_code == 401
    finally:
        proc.send_signal(signal.SIGTERM)
        stdout, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 0 and TOKEN not in stdout + stderr


@pytest.mark.parametrize(("content", "both", "error"), [
    (None, False, "cannot read the server token from {path} (No such file or directory); give a file that holds "
                  "only the token, or set $PI_MEMORY_SERVER_TOKEN instead"),
    (" \n", False, "the token file {path} is empty; write the token in it, or set $PI_MEMORY_SERVER_TOKEN instead"),
    (TOKEN, True, "Give the server token once: --token or --token-file, not both."),
])
def test_serve_refuses_a_token_file_it_cannot_use(env, tmp_path, content, both, error):
    path = tmp_path / "token"
    if content is not None:
        path.write_text(content)
    extra = ("--token", TOKEN) if both else ()
    r = subprocess.run(cli("--json", "serve", "--port", "0", "--token-file", str(path), *extra, "--dir",
                           str(tmp_path / "data")), env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and json.loads(r.stdout) == {"success": False, "exitCode": 2,
                                                          "error": error.format(path=path)}


def test_serve_json_never_shows_a_generated_token(env, tmp_path):
    proc, listening = start_serve(env, "--dir", str(tmp_path / "data"))
    try:
        assert listening["token"] == "generated" and listening["auth"] is True
    finally:
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=30)
    token = re.search(r"token \(generated for this run; pass --token or set \$PI_MEMORY_SERVER_TOKEN to keep "
                      r"one\): (\S+)", stderr).group(1)
    assert len(token) >= 32 and token not in stdout and token not in json.dumps(listening)
    assert [json.loads(line) for line in stdout.splitlines()] == [
        {"event": "stopped", "url": listening["url"], "signal": "SIGINT"}]
    assert proc.returncode == 0


def test_serve_json_error_when_the_port_is_taken(env, tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        r = subprocess.run(cli("--json", "serve", "--port", str(port), "--token", TOKEN, "--dir",
                               str(tmp_path / "data")), env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and json.loads(r.stdout) == {
        "success": False, "exitCode": 2,
        "error": f"cannot listen on 127.0.0.1:{port}: Address already in use. Choose another --port (0 picks a "
                 "free one), stop the program using it, or check --host"}


def test_mcp_json_goes_to_stderr_and_stdout_stays_empty(env, tmp_path):
    data = tmp_path / "data"
    r = subprocess.run(cli("--json", "mcp", "--dir", str(data), "--index-interval", "0"), env=env,
                       stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stdout == ""  # stdin closed at once: the server starts and stops
    events = [json.loads(line) for line in r.stderr.splitlines() if line.startswith("{")]
    assert events == [
        {"event": "started", "transport": "stdio", "dataDir": str(data),
         "tools": ["memory_add", "memory_replace", "memory_remove", "memory_read", "session_search", "memory_search",
                   "updateMemory", "skill_manage", "mem0_memory"],
         "indexIntervalSeconds": None, "semantic": events[0]["semantic"]},
        {"event": "stopped", "workerFinished": True,
         "worker": {"indexEverySeconds": None, "passes": 0, "lastPass": None, "indexedFiles": 0,
                    "embedded": {"curated": 0, "sessions": 0}, "embedError": None, "errors": []}}]


def test_mcp_json_errors_go_to_stderr(env, tmp_path):
    usage = subprocess.run(cli("--json", "mcp", "--index-interval", "-1"), env=env, stdin=subprocess.DEVNULL,
                           capture_output=True, text=True, timeout=60)
    assert usage.returncode == 2 and usage.stdout == ""
    assert json.loads(usage.stderr) == {
        "success": False, "exitCode": 2,
        "error": "Invalid value for '--index-interval' (env var: 'PI_MEMORY_INDEX_INTERVAL'): Input should be greater "
                 "than or equal to 0 (see `pi-memory mcp --help`)"}
    (tmp_path / "agent").mkdir()
    (tmp_path / "agent" / "settings.json").write_text('{"pi-memory": {"memoryCharLimit": -5}}')
    bad = subprocess.run(cli("mcp", "--json"), env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                         timeout=60)
    assert bad.returncode == 2 and bad.stdout == ""
    error = json.loads(bad.stderr)
    assert error["success"] is False and error["exitCode"] == 2
    assert "memoryCharLimit: Input should be greater than 0." in error["error"]


def test_demo_json_summarises_every_check_and_fails_when_one_did(env, tmp_path):
    fake_pi = tmp_path / "pi"
    fake_pi.write_text("#!/bin/sh\nexit 0\n")
    fake_pi.chmod(0o755)
    r = subprocess.run(cli("--json", "demo"), env={**env, "PI_MEMORY_PI_BIN": str(fake_pi)}, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 1
    summary = json.loads(r.stdout)
    assert summary["success"] is False and summary["failed"] == 9
    assert [(c["name"], c["ok"]) for c in summary["checks"]] == DEMO_CHECKS
    assert all(set(c) == {"name", "ok", "detail"} for c in summary["checks"])
    assert summary["checks"][1]["detail"] == "''" and summary["checks"][8]["detail"] == "session 2 left no session file"
    semantic = [c["detail"] for c in summary["checks"][9:] if not c["ok"]]  # the pi runs' details are timings
    assert semantic == [
        "found []", "backend embedded, embedder all-MiniLM-L6-v2-int8, 0 active memories, 0 vectors, "
        "0 without a current vector", "0 requests with the question, 0 recall fences in the last one",
        "no request carried the question"]
    assert "9 check(s) failed." in r.stderr  # the walk-through goes to standard error


def test_demo_json_without_pi(env, tmp_path):
    r = subprocess.run(cli("demo", "--json"), env={**env, "PATH": os.environ.get("PATH", ""),
                                                   "PI_MEMORY_PI_BIN": str(tmp_path / "missing-pi")},
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 1 and json.loads(r.stdout) == {
        "success": False, "failed": 1,
        "checks": [{"name": "demo ran to the end", "ok": False,
                    "detail": f"FileNotFoundError: [Errno 2] No such file or directory: '{tmp_path / 'missing-pi'}'"}]}


def test_mcp_stops_cleanly_on_sigterm(env, tmp_path):
    proc = subprocess.Popen(cli("--json", "mcp", "--dir", str(tmp_path / "data"), "--index-interval", "0.2"),
                            env=env, text=True, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        line = proc.stderr.readline()
        while line and not line.startswith("{"):
            line = proc.stderr.readline()
        assert json.loads(line)["event"] == "started"
    finally:
        proc.send_signal(signal.SIGTERM)  # stdin still open: the signal alone stops it
        stdout, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 0 and stdout == ""
    stopped = [json.loads(x) for x in stderr.splitlines() if x.startswith("{")]
    assert [e["event"] for e in stopped] == ["stopped"] and stopped[0]["workerFinished"] is True
    assert stopped[0]["worker"]["errors"] == [] and stopped[0]["worker"]["indexEverySeconds"] == 0.2
