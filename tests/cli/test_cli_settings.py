"""Settings problems as a person meets them at the CLI: each warning once, a misspelt key named with the key
it most likely means, and a lowered limit shown as OVER BUDGET (never as drift, never a .bak)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest


@pytest.fixture
def run(tmp_path):
    agent = tmp_path / "agent"
    agent.mkdir()
    env = {**os.environ, "PI_CODING_AGENT_DIR": str(agent)}
    env.pop("PI_MEMORY_DIR", None)
    env.pop("PIM_UNSET_VAR", None)

    def run(settings: dict, *args: str) -> subprocess.CompletedProcess:
        (agent / "settings.json").write_text(json.dumps({"pi-memory": settings}))
        return subprocess.run([sys.executable, "-m", "pi_memory", *args], capture_output=True, text=True,
                              env=env, timeout=60)

    run.agent = agent
    return run


def _warnings(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("warning: ")]


@pytest.mark.parametrize("command", [["status"], ["read", "memory"], ["semantic", "list"]])
def test_each_settings_warning_once(run, tmp_path, command):
    r = run({"dataDir": "${PIM_UNSET_VAR}/mem", "memoryCharLimt": 100}, *command)
    assert r.returncode == 0, r.stderr
    path = run.agent / "settings.json"
    assert _warnings(r.stderr) == [
        f"warning: {path}: pi-memory.dataDir uses unset variable(s) PIM_UNSET_VAR; setting ignored. Data is kept "
        f"in {run.agent / 'memories'} instead.",
        f"warning: {path}: unknown pi-memory key 'memoryCharLimt' ignored; did you mean 'memoryCharLimit'?",
    ]


def test_lowered_limit_is_over_budget_in_status_and_add_keeps_the_file(run, tmp_path):
    d = str(tmp_path / "m")
    for i in range(3):
        assert run({}, "add", "memory", f"Fact {i}: deploys go to staging first, then production.", "--dir",
                   d).returncode == 0
    before = (tmp_path / "m" / "MEMORY.md").read_bytes()
    status = run({"memoryCharLimit": 80}, "status", "--dir", d)
    line = next(x for x in status.stdout.splitlines() if x.startswith("MEMORY.md:"))
    assert line == "MEMORY.md: 3 entries, 206% — 165/80 chars — OVER BUDGET"
    data = json.loads(run({"memoryCharLimit": 80}, "status", "--dir", d, "--json").stdout)
    assert data["stores"]["memory"]["overBudget"] is True and data["stores"]["memory"]["drift"] is None
    assert data["stores"]["user"]["overBudget"] is False
    added = run({"memoryCharLimit": 80}, "add", "memory", "one more", "--dir", d)
    assert added.returncode == 1
    assert "refused (over_limit): MEMORY.md is over budget: it uses 165 of 80 chars" in added.stderr
    assert "raise memoryCharLimit in settings" in added.stderr and "drift" not in added.stderr
    assert (tmp_path / "m" / "MEMORY.md").read_bytes() == before
    assert list((tmp_path / "m").glob("*.bak*")) == []
