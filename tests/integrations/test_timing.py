"""Lifecycle timing: ``PI_TIMING=1`` / ``PI_MEMORY_TIMING=1`` make the bridge write spans to stderr; off, none."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys

import pytest

from pi_memory import timing

SPAN = re.compile(r"^pi-memory timing ([a-z.-]+) \d+\.\dms")


def run_bridge(tmp_path, **env) -> tuple[list[dict], str]:
    environ = {**os.environ, "PI_CODING_AGENT_DIR": str(tmp_path / "agent"), "PI_MEMORY_DIR": str(tmp_path / "d"),
               "HOME": str(tmp_path / "home"), "PI_CODING_AGENT_SESSION_DIR": str(tmp_path / "sessions"),
               "PI_TIMING": "", "PI_MEMORY_TIMING": "", **env}
    requests = [{"id": 1, "method": "hello", "params": {"cwd": str(tmp_path)}},
                {"id": 2, "method": "call_tool", "params": {"name": "memory_search", "arguments": {"query": "uv"}}},
                {"id": 3, "method": "recall", "params": {"prompt": "what do we use?", "state": {}}},
                {"id": 4, "method": "shutdown", "params": {"wait": 5}}]
    proc = subprocess.run([sys.executable, "-m", "pi_memory.integrations.pi.bridge"], cwd=tmp_path, env=environ,
                          input="".join(json.dumps(r) + "\n" for r in requests), capture_output=True, text=True,
                          timeout=120)
    return [json.loads(line) for line in proc.stdout.splitlines()], proc.stderr


@pytest.fixture(scope="module")
def timed_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("timed")
    return run_bridge(tmp, PI_TIMING="1")


def test_spans_are_written_to_stderr_when_on(timed_run):
    replies, stderr = timed_run
    assert [r["id"] for r in replies] == [1, 2, 3, 4] and all("result" in r for r in replies)
    names = [m.group(1) for line in stderr.splitlines() if (m := SPAN.match(line))]
    for name in ("session-start.load", "database.open", "session-backfill.callback", "recall",
                 "shutdown.index-waits", "shutdown.database-close"):
        assert name in names, (name, stderr)


def test_nothing_is_written_when_off(tmp_path):
    replies, stderr = run_bridge(tmp_path)
    assert len(replies) == 4 and "pi-memory timing" not in stderr


@pytest.mark.parametrize(("environ", "on"), [
    ({"PI_TIMING": "1"}, True), ({"PI_MEMORY_TIMING": "yes"}, True), ({"PI_TIMING": "0"}, False),
    ({"PI_TIMING": "false", "PI_MEMORY_TIMING": ""}, False), ({}, False),
])
def test_switches(environ, on):
    assert timing.wanted(environ) is on


def test_a_span_that_raises_is_marked_failed():
    out = io.StringIO()
    timing.enable(True, out)
    try:
        with pytest.raises(ValueError), timing.span("database.open"):
            raise ValueError("boom")
        with timing.span("recall", "3 hits"):
            pass
    finally:
        timing.enable(False)
    lines = out.getvalue().splitlines()
    assert SPAN.match(lines[0]) and lines[0].endswith(" failed") and lines[1].endswith("ms 3 hits")
    with timing.span("recall"):
        pass
    assert len(out.getvalue().splitlines()) == 2  # off: nothing more
